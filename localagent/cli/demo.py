"""`localagent demo`: the real agent, end to end, against the bundled fake model server."""

from __future__ import annotations

import tempfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from localagent.config.userconfig import load_settings
from localagent.models.fake import FakeServer, validate_scenario

if TYPE_CHECKING:
    from localagent.loop.lifecycle import Outcome

GOAL = "Write hello.py that prints Hello, world!"


def run_demo(workspace: Path | None) -> tuple[str, Outcome]:
    """The scripted goal run in `workspace` (a new folder for None): what to show, and how
    the run ended."""
    import orjson

    from localagent.loop.runner import run

    if workspace is None:
        workspace = Path(tempfile.mkdtemp(prefix="localagent-demo-"))
    workspace = workspace.expanduser().resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    text = resources.files("localagent").joinpath("scenarios/hello.json").read_bytes()
    scenario = validate_scenario(orjson.loads(text))
    with FakeServer(scenario) as fake:
        settings = load_settings(ollama_host=fake.url, model="gpt-oss:20b", retry_deadline=5)
        outcome = run(workspace, GOAL, settings, progress=True)
    hello = workspace / "hello.py"
    shown = (
        f"\ngoal {outcome.status} in {workspace}\n{hello.name}: "
        f"{hello.read_text(encoding='utf-8').strip() if hello.exists() else '(missing)'}\n"
        f"see what happened: localagent history -w {workspace}"
    )
    return shown, outcome
