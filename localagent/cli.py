"""The command line. The only place that turns errors into messages and exit codes.

Commands import what they need when they run, so `localagent --help` stays fast.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer

from localagent.console import utf8_streams
from localagent.errors import AgentError

app = typer.Typer(
    name="localagent",
    help="A local-first autonomous coding agent driven by a local model (Ollama or an "
    "OpenAI-compatible server).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

WorkspaceOpt = Annotated[
    Path,
    typer.Option(
        "--workspace", "-w", help="Workspace folder (default: current folder).", file_okay=False
    ),
]


def _workspace(path: Path) -> Path:
    return path.expanduser().resolve()


ModelOpt = Annotated[str | None, typer.Option("--model", help="Model name on the server.")]
RoundsOpt = Annotated[
    int | None, typer.Option("--max-rounds", help="Stop after N model rounds.", min=1)
]
CheckOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--check",
        metavar="CMD",
        help="A command that must pass before the goal counts as achieved (repeatable).",
    ),
]
NoVerifyOpt = Annotated[
    bool,
    typer.Option("--no-verify", help="Do not verify the goal at the end (subtasks still are)."),
]
ToolsOpt = Annotated[
    str | None,
    typer.Option(
        "--tools",
        metavar="NAMES",
        help="Comma-separated tools to enable (default: every default tool).",
    ),
]
BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="The model server's API: ollama or openai (an OpenAI-compatible server).",
    ),
]
PromptsOpt = Annotated[
    Path | None,
    typer.Option(
        "--prompts",
        metavar="DIR",
        help="A folder of prompt files (NAME.txt or NAME.md) that replace the defaults; "
        "see `localagent prompts list`.",
    ),
]
ForegroundOpt = Annotated[
    bool, typer.Option("--foreground", help="Run attached; the exit code is the outcome.")
]


RepairOpt = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Accept a damaged history: rebuild from what is left and say what was lost.",
    ),
]


def _run(
    workspace: Path,
    goal: str | None,
    model: str | None,
    max_rounds: int | None,
    foreground: bool,
    repair: bool = False,
    verification: dict[str, Any] | None = None,
    prompts: Path | None = None,
) -> None:
    from localagent.settings import load_settings

    folder = prompts.expanduser().resolve() if prompts else None
    flags = {"model": model, "max_rounds": max_rounds, **(verification or {})}
    flags.update(_prompt_flags(folder))
    settings = load_settings(**flags)
    if goal is not None or folder is not None:
        _warn_prompts(settings.prompts)
    ws = _workspace(workspace)
    if goal is not None and not ws.exists():
        try:
            ws.mkdir(parents=True)
        except OSError as exc:
            raise _usage(f"cannot create the workspace {ws}: {exc.strerror}") from None
    if not ws.is_dir():
        raise _usage(f"the workspace {ws} is not a folder")
    if foreground:
        from localagent.runner import run

        outcome = run(ws, goal, settings, flags, progress=True, repair=repair)
        typer.echo(f"\ngoal {outcome}{_verified(ws)}: {ws}", err=True)
        return
    from localagent.daemon import spawn

    typer.echo(spawn(ws, goal, {**flags, "prompts_dir": folder}, settings, repair=repair))


def _prompt_flags(folder: Path | None) -> dict[str, Any]:
    """`--prompts DIR` as the `prompts` setting: the folder's prompts, checked."""
    if folder is None:
        return {"prompts": None}
    from localagent.promptset import load_folder

    return {"prompts": load_folder(folder)}


def _warn_prompts(texts: dict[str, str]) -> None:
    from localagent.promptset import warnings

    for line in warnings(texts):
        typer.echo(f"localagent: {line}", err=True)


def _verified(workspace: Path) -> str:
    """ " (verified)" and the like, for the last line of a foreground run."""
    from localagent.journal import Journal
    from localagent.report import final_verification

    try:
        found = final_verification(Journal(workspace))
    except (AgentError, OSError):
        return ""
    return f" ({found})" if found else ""


def _usage(message: str) -> Exception:
    from localagent.errors import UsageError

    return UsageError(message)


@app.command()
def start(
    goal: Annotated[str, typer.Argument(help="What to achieve, in plain words.")],
    workspace: WorkspaceOpt = Path("."),
    model: ModelOpt = None,
    max_rounds: RoundsOpt = None,
    foreground: ForegroundOpt = False,
    check: CheckOpt = None,
    no_verify: NoVerifyOpt = False,
    tools: ToolsOpt = None,
    backend: BackendOpt = None,
    prompts: PromptsOpt = None,
) -> None:
    """Start work on GOAL (or resume it if the workspace holds it unfinished)."""
    if not goal.strip():
        raise _usage("the goal is empty; say what to achieve")
    verification = _run_flags(check, no_verify, tools, backend)
    _run(
        workspace,
        goal.strip(),
        model,
        max_rounds,
        foreground,
        verification=verification,
        prompts=prompts,
    )


def _run_flags(
    check: list[str] | None, no_verify: bool, tools: str | None, backend: str | None
) -> dict[str, Any]:
    """`--check`, `--no-verify`, `--tools` and `--backend` as setting flags (None: not
    given)."""
    if check and not all(c.strip() for c in check):
        raise _usage('--check needs a command, e.g. --check "python -m pytest -q"')
    names = tuple(n.strip() for n in (tools or "").split(",") if n.strip())
    if tools is not None and not names:
        raise _usage("--tools needs tool names, e.g. --tools read_file,write_file,run_cmd")
    return {
        "checks": tuple(c.strip() for c in check) if check else None,
        "verify": False if no_verify else None,
        "tools": names or None,
        "backend": backend,
    }


@app.command()
def resume(
    workspace: WorkspaceOpt = Path("."),
    all_: Annotated[
        bool, typer.Option("--all", help="Resume every unfinished goal of this user.")
    ] = False,
    model: ModelOpt = None,
    max_rounds: RoundsOpt = None,
    foreground: ForegroundOpt = False,
    repair: RepairOpt = False,
    tools: ToolsOpt = None,
    backend: BackendOpt = None,
    prompts: PromptsOpt = None,
) -> None:
    """Resume the unfinished goal of the workspace (--all: of every workspace).

    A flag given here (--model, --max-rounds, --tools, --backend, --prompts) changes the
    run's journaled setting.
    """
    if all_ and prompts is not None:
        raise _usage("--prompts applies to one workspace; it cannot be given with --all")
    given = {k: v for k, v in _run_flags(None, False, tools, backend).items() if v is not None}
    if all_:
        from localagent.daemon import resume_all
        from localagent.settings import load_settings

        flags = {"model": model, "max_rounds": max_rounds, **given}
        typer.echo(resume_all(load_settings(**flags), flags))
        return
    _run(workspace, None, model, max_rounds, foreground, repair, given, prompts=prompts)


@app.command("run-agent", hidden=True)
def run_agent(
    workspace: WorkspaceOpt = Path("."),
    goal: Annotated[str | None, typer.Option("--goal")] = None,
    model: ModelOpt = None,
    max_rounds: RoundsOpt = None,
    repair: RepairOpt = False,
    preflight_deadline: Annotated[float | None, typer.Option("--preflight-deadline")] = None,
    check: CheckOpt = None,
    no_verify: NoVerifyOpt = False,
    tools: ToolsOpt = None,
    backend: BackendOpt = None,
    prompts: PromptsOpt = None,
    research: Annotated[bool, typer.Option("--ask")] = False,
) -> None:
    """The background process started by `start`, `ask` and `resume`."""
    from localagent.runner import run
    from localagent.settings import load_settings

    flags = {
        "model": model,
        "max_rounds": max_rounds,
        **_run_flags(check, no_verify, tools, backend),
        **_prompt_flags(prompts),
    }
    flags["mode"] = "ask" if research else None
    settings = load_settings(**flags)
    ws = _workspace(workspace)
    run(ws, goal, settings, flags, repair=repair, preflight_deadline=preflight_deadline)


@app.command()
def stop(
    workspace: WorkspaceOpt = Path("."),
    grace: Annotated[
        float, typer.Option("--grace", help="Seconds to wait before forcing.", min=0)
    ] = 15.0,
) -> None:
    """Stop the running agent after its current step; the goal stays resumable."""
    from localagent.daemon import stop as stop_agent

    typer.echo(stop_agent(_workspace(workspace), grace))


@app.command("list")
def list_workspaces(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON array.")] = False,
) -> None:
    """Every workspace this user has run goals in, with its status."""
    from localagent.report import format_listing, listing

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
    from localagent.daemon import follow as follow_log
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
def doctor(workspace: WorkspaceOpt = Path("."), model: ModelOpt = None) -> None:
    """Check the model server, the model, tool calling, context size, the workspace."""
    from localagent import doctor as checks
    from localagent.settings import load_settings

    found = checks.run_checks(load_settings(model=model), _workspace(workspace))
    typer.echo(checks.render(found))
    raise typer.Exit(checks.exit_code(found))


autostart_app = typer.Typer(help="Resume unfinished goals at logon.", no_args_is_help=True)
app.add_typer(autostart_app, name="autostart")


@autostart_app.command("install")
def autostart_install() -> None:
    """Run `localagent resume --all` at every logon of this user."""
    from localagent import autostart

    typer.echo(autostart.install())


@autostart_app.command("uninstall")
def autostart_uninstall() -> None:
    """Remove the logon registration."""
    from localagent import autostart

    typer.echo(autostart.uninstall())


@autostart_app.command("status")
def autostart_status() -> None:
    """Whether the logon registration is in place."""
    from localagent import autostart

    found = autostart.status()
    state = "installed" if found.installed else "not installed"
    typer.echo(f"{state} ({found.mechanism}) {found.detail}".rstrip())


prompts_app = typer.Typer(
    help="The prompts localagent sends: list them, show the defaults, check your own.",
    no_args_is_help=True,
)
app.add_typer(prompts_app, name="prompts")


@prompts_app.command("list")
def prompts_list() -> None:
    """Every prompt by name, what it is for, and its placeholders."""
    from localagent import promptset

    typer.echo(promptset.listing())


@prompts_app.command("show")
def prompts_show(name: Annotated[str, typer.Argument(help="A name from `prompts list`.")]) -> None:
    """The default text of prompt NAME, to copy into NAME.txt and change."""
    from localagent import promptset

    typer.echo(promptset.show(name))


@prompts_app.command("check")
def prompts_check(
    folder: Annotated[
        Path | None,
        typer.Argument(help="A folder of prompt files (default: the config file's [prompts])."),
    ] = None,
) -> None:
    """Check prompts as a run would, naming every problem with its file and line; exit 2
    when there are problems."""
    from localagent import promptset
    from localagent.settings import config_path

    report, code = promptset.check_report(folder, config_path())
    typer.echo(report)
    raise typer.Exit(code)


@app.command()
def demo(
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="Folder (default: a new one).")
    ] = None,
) -> None:
    """Run a scripted goal end to end against the bundled fake model server."""
    from localagent.demo import run_demo

    typer.echo(run_demo(workspace))


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
def ask(
    question: Annotated[str, typer.Argument(help="A question about the workspace's code.")],
    workspace: WorkspaceOpt = Path("."),
    model: ModelOpt = None,
    foreground: ForegroundOpt = False,
) -> None:
    """Research a question about the code; the answer (saved under .agent_context/answers/)
    cites the code it read, and never changes the workspace."""
    from localagent.settings import load_settings

    ws = _workspace(workspace)
    if not question.strip():
        raise _usage("the question is empty; ask something about the code")
    if not ws.is_dir():
        raise _usage(f"the workspace {ws} is not a folder")
    flags = {"model": model, "mode": "ask"}
    settings = load_settings(**flags)
    if not foreground:
        from localagent.daemon import spawn

        typer.echo(spawn(ws, question, flags, settings))
        return
    from localagent.journal import Journal
    from localagent.research.answer import saved_answer
    from localagent.runner import run

    run(ws, question, settings, flags, progress=True)
    typer.echo(saved_answer(Journal(ws)) or "")


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


def _crash_report(exc: BaseException) -> str:
    """Save the traceback of one of our own bugs where the user can find it."""
    try:
        from localagent.settings import user_data_dir

        path = user_data_dir() / "crash.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write("".join(traceback.format_exception(exc)) + "\n")
        return f" (details in {path})"
    except Exception:  # a broken install (pydantic missing) must not crash the crash report
        return ""


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and map every outcome to an exit code.

    Typer handles usage errors (exit 2) and `--help` itself by raising SystemExit;
    everything else that escapes a command ends here.
    """
    utf8_streams()
    try:
        app(args=argv, prog_name="localagent")
    except AgentError as exc:
        typer.echo(f"localagent: {exc.message}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("localagent: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        typer.echo(f"localagent: internal error: {exc!r}{_crash_report(exc)}", err=True)
        sys.exit(1)
