"""Seeing goals: status, list, logs, history, trace, graph, search."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from localagent.cli.app import WorkspaceOpt, _usage, _workspace, app


@app.command()
def status(
    workspace: WorkspaceOpt = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="A live view until the goal ends.")
    ] = False,
) -> None:
    """Goal, status, current task/subtask, rounds, tokens, blocked actions, liveness."""
    from localagent.report import format_status, status_info

    if watch:
        from localagent.observe.watch import show

        show(_workspace(workspace), typer.echo)
        return
    info = status_info(_workspace(workspace))
    if as_json:
        import orjson

        typer.echo(orjson.dumps(info).decode())
    else:
        typer.echo(format_status(info))


@app.command("list")
def list_workspaces(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON array.")] = False,
) -> None:
    """Every workspace this user has run goals in, with its status."""
    from localagent.observe.listing import format_listing, listing

    rows, notes = listing()
    if as_json:
        import orjson

        typer.echo(orjson.dumps(rows).decode())
        return
    for note in notes:
        typer.echo(f"note: {note}", err=True)
    typer.echo(format_listing(rows))


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
    from localagent.report import open_journal

    if events:
        from localagent.observe.events import show

        show(_workspace(workspace), 0, follow, typer.echo)
        return
    journal = open_journal(_workspace(workspace))
    path = journal.log_path
    if follow:
        follow_log(path, lambda text: typer.echo(text, nl=False))
    elif text := journal.read_text(path):
        typer.echo(text, nl=False)
    else:
        typer.echo(f"no log yet at {path}", err=True)


@app.command()
def history(
    workspace: WorkspaceOpt = Path("."),
    n: Annotated[int, typer.Option("-n", help="Show the last N records (0: all).", min=0)] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per record.")] = False,
) -> None:
    """The action history, human-readable."""
    from localagent.report import format_record, open_journal

    if as_json:
        from localagent.observe.events import show

        show(_workspace(workspace), n, False, typer.echo)
        return
    journal = open_journal(_workspace(workspace))
    records = journal.tail(n) if n else journal.records()
    for record in records:
        typer.echo(format_record(record))


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

    for line in show(_workspace(workspace), round_, full, as_json):
        typer.echo(line)


@app.command()
def graph(
    workspace: WorkspaceOpt = Path("."),
    flow: Annotated[bool, typer.Option("--flow", help="The agent's state machine.")] = False,
) -> None:
    """Mermaid text: the plan tree with statuses and the path taken (--flow: the agent's
    state machine)."""
    from localagent.observe.graph import show

    typer.echo(show(_workspace(workspace), flow), nl=False)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in words or identifiers.")],
    workspace: WorkspaceOpt = Path("."),
    k: Annotated[int, typer.Option("-k", help="Show the best K chunks.", min=1, max=500)] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Search the workspace's code: ranked chunks with path, line range, symbol, score."""
    from localagent.research.search import search as run_search
    from localagent.settings import load_settings

    ws = _workspace(workspace)
    if not query.strip():
        raise _usage("the query is empty; say what to look for")
    if not ws.is_dir():
        raise _usage(f"the workspace {ws} is not a folder")
    found = run_search(ws, query, k, load_settings())
    if as_json:
        import orjson

        typer.echo(orjson.dumps(found.as_dict()).decode())
    else:
        typer.echo(found.text())
