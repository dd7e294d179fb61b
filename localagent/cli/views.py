"""Seeing goals: status, list, logs, history, trace, graph, search.

Everything these commands print can hold text from outside (a goal from a planted
journal, a model's reply, a tool's output, a file name), so all of it goes out through
`_say`, and JSON through `json_line`: nothing printed can drive the terminal.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from localagent.cli.app import WorkspaceOpt, _need_folder, _usage, _workspace, app
from localagent.system.console import say as _say


def _say_json(value: Any) -> None:
    from localagent.observe.events import json_line

    _say(json_line(value))


@contextlib.contextmanager
def _json_errors(as_json: bool) -> Iterator[None]:
    """Under --json an error is JSON too, on stdout: {"error": "...", "exit": N}, with
    N as the exit code; a program reading the output never parses plain text."""
    from localagent.system.errors import AgentError

    try:
        yield
    except AgentError as exc:
        if not as_json:
            raise
        _say_json({"error": exc.message, "exit": exc.exit_code})
        raise typer.Exit(exc.exit_code) from None


@app.command()
def status(
    workspace: WorkspaceOpt = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="A live view until the goal ends.")
    ] = False,
) -> None:
    """Goal, status, current task/subtask, rounds, tokens, blocked actions, liveness."""
    from localagent.observe.report import format_status, status_info

    if watch:
        from localagent.observe.watch import show

        show(_workspace(workspace), _say)
        return
    with _json_errors(as_json):
        info = status_info(_workspace(workspace))
    if as_json:
        _say_json(info)
    else:
        _say(format_status(info))


@app.command("list")
def list_workspaces(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (schema, workspaces, notes).")
    ] = False,
    prune: Annotated[
        bool,
        typer.Option("--prune", help="First forget the workspaces whose folders are gone."),
    ] = False,
) -> None:
    """Every workspace this user has run goals in, with its status, the most recently
    active first."""
    from localagent.observe.listing import as_json as listing_json
    from localagent.observe.listing import format_listing, listing

    with _json_errors(as_json):
        gone = _prune() if prune else []
        rows, notes = listing()
    if as_json:
        _say_json(listing_json(rows, notes))
        return
    for path in gone:
        _say(f"forgot {path} (its folder or its journal is gone)", err=True)
    for note in notes:
        _say(f"note: {note}", err=True)
    _say(format_listing(rows))


@app.command()
def logs(
    workspace: WorkspaceOpt = Path("."),
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing.")] = False,
    events: Annotated[
        bool, typer.Option("--events", help="The journal's records as JSON lines.")
    ] = False,
) -> None:
    """The run's log; -f follows it. --events: the journal's records, one JSON per line."""
    from localagent.daemon.logs import follow as follow_log
    from localagent.observe.report import open_journal
    from localagent.system.names import display

    if events:
        from localagent.observe.events import show

        show(_workspace(workspace), 0, follow, _say)
        return
    journal = open_journal(_workspace(workspace))
    path = journal.log_path
    if follow:
        follow_log(path, lambda text: _say(text, nl=False))
    elif text := journal.read_text(path):
        _say(text, nl=False)
    else:
        _say(f"no log yet at {display(path)}", err=True)


def _prune() -> list[str]:
    from localagent.journal.registry import prune

    return prune()


@app.command()
def history(
    workspace: WorkspaceOpt = Path("."),
    n: Annotated[int, typer.Option("-n", help="Show the last N records (0: all).", min=0)] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per record.")] = False,
    archive: Annotated[
        int | None,
        typer.Option(
            "--archive",
            metavar="N",
            help="An archived (put away) goal's history instead: 1 the latest, 2 the one "
            "before, ...",
            min=1,
        ),
    ] = None,
) -> None:
    """The action history, human-readable."""
    from localagent.observe.report import open_journal

    with _json_errors(as_json):
        if archive is None:
            _history(open_journal(_workspace(workspace)), n, as_json)
            return
        from localagent.observe.archives import open_archive

        found, head = open_archive(_workspace(workspace), archive)
        if not as_json:
            _say(head)
        _history(found, n, as_json)


def _history(journal: Any, n: int, as_json: bool) -> None:
    from localagent.journal.salvage import Damage, damaged, intact
    from localagent.observe.events import json_line
    from localagent.observe.report import format_record

    found: list[Damage] = []
    for item in intact(journal, n):
        if isinstance(item, Damage):
            found.append(item)
            if not as_json:  # JSON lines stay records only; the damage is said at the end
                _say(f"{'!':>6} {'':<8} {'damaged':<17} {item.text}")
        else:
            _say(json_line(item) if as_json else format_record(item))
    if found:
        raise damaged(journal, found)


@app.command()
def trace(
    workspace: WorkspaceOpt = Path("."),
    round_: Annotated[
        int | None, typer.Option("--round", metavar="N", help="Only round N.", min=1)
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="Replies and results uncut.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per entry.")] = False,
) -> None:
    """The run as a transcript: plan, rounds, tool calls and results, verdicts, timings."""
    from localagent.observe.trace import show

    with _json_errors(as_json):
        for line in show(_workspace(workspace), round_, full, as_json):
            _say(line)


@app.command()
def graph(
    workspace: WorkspaceOpt = Path("."),
    flow: Annotated[bool, typer.Option("--flow", help="The agent's state machine.")] = False,
) -> None:
    """Mermaid text: the plan tree with statuses and the path taken (--flow: the agent's
    state machine)."""
    from localagent.observe.flow import show

    _say(show(_workspace(workspace), flow), nl=False)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in words or identifiers.")],
    workspace: WorkspaceOpt = Path("."),
    k: Annotated[int, typer.Option("-k", help="Show the best K chunks.", min=1, max=500)] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Search the workspace's code: ranked chunks with path, line range, symbol, score."""
    from localagent.config.userconfig import load_settings
    from localagent.research.search import search as run_search

    ws = _workspace(workspace)
    with _json_errors(as_json):
        if not query.strip():
            raise _usage("the query is empty; say what to look for")
        _need_folder(ws)
        found = run_search(ws, query, k, load_settings())
    if as_json:
        _say_json({"schema": 1, **found.as_dict()})
    else:
        _say(found.text())
