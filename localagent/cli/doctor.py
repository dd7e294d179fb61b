"""`localagent doctor`: each check says what it found and, when it fails, what to type."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from localagent.config.settings import Settings

if TYPE_CHECKING:
    from localagent.models import Model

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True)
class Check:
    name: str
    result: str  # ok, warn or fail
    detail: str
    fix: str = ""


def _server(model: Model) -> tuple[Check, bool]:
    health = model.health()
    return Check("model server", OK if health.up else FAIL, health.detail, health.fix), health.up


def _model(model: Model, settings: Settings) -> list[Check]:
    from localagent.system.errors import AgentError

    try:
        info = model.preflight()
    except AgentError as exc:
        return [Check("model", FAIL, exc.message, model.missing_fix)]
    checks = [Check("model", OK, f"{settings.model} is available")]
    refused = model.probe_tools()
    if not refused:
        checks.append(Check("tool calling", OK, "native tool calls"))
    else:
        checks.append(
            Check(
                "tool calling",
                WARN,
                f"{refused}; the text protocol is used instead",
                model.tools_fix,
            )
        )
    if info.context_length and info.context_length < settings.num_ctx:
        checks.append(
            Check(
                "context",
                WARN,
                f"num_ctx {settings.num_ctx} exceeds the model's "
                f"context of {info.context_length}; {info.context_length} is used",
                f"set LOCALAGENT_NUM_CTX={info.context_length}",
            )
        )
    else:
        checks.append(
            Check(
                "context",
                OK,
                f"num_ctx {settings.num_ctx} (model: {info.context_length or 'unknown'})",
            )
        )
    return checks + ([_slots(info.slots)] if info.slots else [])


def _slots(slots: int) -> Check:
    """Whether llama-server keeps a resumed run's prompt. With its default of four slots,
    a call killed with the agent runs on in its slot, and the resumed run's first call goes
    to an empty one and reads its whole prompt again: 0.00, 0.00 and 0.45 of it came from
    the cache in three resumes with Qwen2.5-Coder-1.5B on the CPU, and 1.00 each with one
    slot."""
    if slots == 1:
        return Check("prompt cache", OK, "llama-server has one slot: it keeps each prompt")
    detail = (
        f"llama-server has {slots} slots: after a kill or a stop, the resumed run's first "
        "call goes to another slot and reads its whole prompt again"
    )
    return Check("prompt cache", WARN, detail, "start llama-server with -np 1 for one agent")


def _backend(settings: Settings) -> str:
    if settings.backend == "openai":
        return f"openai (an OpenAI-compatible server at {settings.base_url})"
    return "ollama"


def _workspace(workspace: Path) -> Check:
    if not workspace.exists():
        parent = next((p for p in workspace.parents if p.exists()), None)
        if parent is not None and os.access(parent, os.W_OK):
            return Check("workspace", OK, f"{workspace} does not exist yet; start creates it")
        return Check(
            "workspace",
            FAIL,
            f"{workspace} does not exist and cannot be created",
            "choose a folder you can write to with -w DIR",
        )
    try:
        with tempfile.NamedTemporaryFile(dir=workspace, prefix=".localagent-doctor-"):
            pass
    except OSError as exc:
        return Check(
            "workspace",
            FAIL,
            f"{workspace} is not writable: {exc}",
            "choose a folder you can write to with -w DIR",
        )
    return Check("workspace", OK, f"{workspace} is writable")


def _version_control(workspace: Path) -> Check:
    """Whether the agent's changes can be reviewed and undone with git; where the
    workspace itself is too wide a place to work."""
    from localagent.loop.placement import ALLOW_FLAG, repository, too_wide

    if what := too_wide(workspace):
        fix = f"give a project folder with -w DIR (or pass {ALLOW_FLAG} to start)"
        return Check("location", WARN, f"{workspace} is {what}; a goal there is refused", fix)
    if (top := repository(workspace)) is not None:
        return Check("git", OK, f"under version control (the repository at {top})")
    return Check(
        "git",
        WARN,
        f"{workspace} is not under version control: the agent's changes cannot be "
        "reviewed or undone with git",
        "run `git init` in the workspace and commit, before starting a goal",
    )


def _call_format(workspace: Path) -> Check | None:
    """How the model's tool calls arrived in this workspace's goal, when it has one."""
    from localagent.journal import Journal
    from localagent.system.errors import AgentError

    journal = Journal(workspace)
    try:
        state = journal.load(repair=False) if journal.exists() else None
    except (AgentError, OSError):
        return None
    if state is None or not state.call_format:
        return None
    if state.call_format == "native":
        return Check("tool calls", OK, "the model's tool calls arrive as native calls")
    return Check(
        "tool calls",
        WARN,
        f"the model's tool calls arrive as text ({state.call_format} format); they are read, "
        "but a model with native tool calling is more reliable",
    )


def _interpreter(workspace: Path) -> Check:
    from localagent.system.workspace_env import describe_interpreter

    return Check("interpreter", OK, describe_interpreter(workspace))


def _sandbox(settings: Settings) -> Check:
    from localagent.system.sandbox import CommandPolicy, describe

    policy = CommandPolicy(settings.sandbox, settings.network, settings.pass_env)
    sandboxed, how = describe(policy)
    if sandboxed:
        return Check("sandbox", OK, f"commands are {how}")
    result = FAIL if settings.sandbox == "require" else WARN
    fix = (
        "" if settings.sandbox == "off" else "on Linux, install bubblewrap (apt install bubblewrap)"
    )
    return Check("sandbox", result, f"commands are {how}", fix)


def _goal_checks(settings: Settings, workspace: Path) -> Check:
    """The checks a goal verification would run here (SPEC §11), or the configured ones
    that could never run (`start` refuses them)."""
    from localagent.verify.checks import goal_checks, unrunnable

    if not settings.verify:
        return Check("goal checks", WARN, "verification is off (verify = false)")
    if why := unrunnable(settings.checks, settings.allowed_commands, workspace.resolve()):
        return Check("goal checks", FAIL, why, "fix or remove it in the config file")
    found = goal_checks(settings.checks, workspace)
    if not found:
        return Check(
            "goal checks",
            OK,
            "none found: the goal is judged on its journal's evidence; add tests, "
            "main.py with expected.txt, or --check CMD",
        )
    listed = "; ".join(f"{c['cmd']} ({c['source']})" for c in found)
    return Check("goal checks", OK, listed)


def _detach() -> Check | None:
    """A terminal whose job object will not let a background agent leave it (Windows)."""
    from localagent.daemon.detach import job_note

    note = job_note()
    if not note:
        return None
    return Check(
        "background",
        WARN,
        note,
        "start agents from a window outside this terminal's job, or rely on autostart",
    )


def _registry() -> Check:
    from localagent.journal.registry import registry_path, workspaces

    notes: list[str] = []
    try:
        count = len(workspaces(notes))
    except OSError as exc:
        return Check(
            "registry", FAIL, f"{registry_path()}: {exc}", "check the permissions of that folder"
        )
    if notes:
        return Check("registry", WARN, notes[0])
    listed = "1 workspace" if count == 1 else f"{count} workspaces"
    return Check("registry", OK, f"{listed} in {registry_path()}")


def _autostart() -> Check:
    from localagent.daemon import autostart
    from localagent.system.errors import AgentError

    try:
        status = autostart.status()
    except AgentError as exc:
        return Check("autostart", WARN, exc.message)
    if status.installed:
        return Check("autostart", OK, f"installed ({status.mechanism}): {status.detail}")
    if not status.available:
        return Check("autostart", WARN, f"not available: {status.detail}")
    return Check(
        "autostart", WARN, f"not installed ({status.mechanism})", "localagent autostart install"
    )


def _mcp(settings: Settings, workspace: Path) -> list[Check]:
    from localagent.config.userconfig import config_path
    from localagent.mcp.doctor import check_servers

    root = workspace if workspace.is_dir() else Path.cwd()  # a server runs in the workspace
    found = check_servers(settings.mcp.servers, root, config_path())
    return [Check(*finding) for finding in found]


def _version() -> Check:
    import platform

    from localagent import __version__

    detail = f"{__version__} on Python {platform.python_version()} ({platform.platform()})"
    return Check("localagent", OK, detail)


def run_checks(settings: Settings, workspace: Path) -> list[Check]:
    from localagent.models import ModelConfig, make_model

    model = make_model(ModelConfig.of(settings).replace(retry_deadline=0))
    server, up = _server(model)
    checks = [_version(), Check("backend", OK, _backend(settings)), server]
    if up:
        checks += _model(model, settings)
    found = [*checks, _workspace(workspace), _sandbox(settings)]
    if workspace.is_dir() or not workspace.exists():  # what a run there would use
        found.append(_interpreter(workspace))
        found.append(_goal_checks(settings, workspace))
    if workspace.is_dir():
        found.append(_version_control(workspace))
    if workspace.is_dir() and (how := _call_format(workspace)) is not None:
        found.append(how)
    found += _mcp(settings, workspace)
    detach = _detach()
    return [*found, *([detach] if detach else []), _registry(), _autostart()]


def exit_code(checks: list[Check]) -> int:
    if any(c.result == FAIL and c.name in ("model server", "model") for c in checks):
        return 3
    return 1 if any(c.result == FAIL for c in checks) else 0


def render(checks: list[Check]) -> str:
    lines = []
    for check in checks:
        lines.append(f"[{check.result:^4}] {check.name:<13} {check.detail}")
        if check.fix and check.result != OK:
            lines.append(f"{'':20}fix: {check.fix}")
    return "\n".join(lines)
