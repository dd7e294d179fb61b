"""Seeing and undoing what the agent changed: diff, rewind."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from localagent.cli.app import WorkspaceOpt, _need_folder, _usage, _workspace, app
from localagent.system.console import say


@app.command()
def diff(
    workspace: WorkspaceOpt = Path("."),
    round_: Annotated[
        int | None, typer.Option("--round", metavar="N", min=1, help="Only round N's changes.")
    ] = None,
    since: Annotated[
        int | None,
        typer.Option("--since", metavar="SEQ", min=1, help="Only the steps from seq SEQ on."),
    ] = None,
) -> None:
    """What the run changed in the files: a unified diff per file, under the step (seq,
    round, tool) that made it; commands' changes included."""
    from localagent.rewind.diff import show

    if round_ is not None and since is not None:
        raise _usage("--round and --since cannot be combined")
    root = _workspace(workspace)
    _need_folder(root)
    for line in show(root, round_, since):
        say(line)


@app.command()
def rewind(
    workspace: WorkspaceOpt = Path("."),
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="ROUND|sSEQ",
            help="Go back to just before round ROUND (3) or step SEQ (s57, as diff shows).",
        ),
    ] = None,
    last: Annotated[bool, typer.Option("--last", help="Undo the agent's last step.")] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Also undo files changed outside the agent since."),
    ] = False,
) -> None:
    """Put the files back exactly as they were just before a step; `resume` goes on from
    there, the model told what was undone. Run again, it finishes a rewind a kill cut
    short."""
    from localagent.rewind.command import rewind as rewind_to

    if to is not None and last:
        raise _usage("--to and --last cannot be combined")
    root = _workspace(workspace)
    _need_folder(root)
    done = rewind_to(root, to, last, force)
    if done.finished is not None:
        say(f"finished the rewind to before s{done.finished} that a kill cut short")
    for path, _, want in done.files:
        say(f"{'removed' if want is None else 'restored'} {path}")
    for path in done.left:
        say(f"left as it is: {path}")
    say(
        f"rewound to just before s{done.to}: {len(done.files)} files put back; "
        f"`localagent resume -w {root}` goes on from there"
    )
