"""The run configuration: which settings belong to a run, the form they are journaled in
(`goal_started` holds them all, `resumed` what a resume changed), and how a resume reads
them back. The starter hands the background agent a `RunRequest` as data, and
`resume --all` reads each goal's configuration from its journal, so a goal goes on with
the backend, server and model it started with.

Precedence on resume: flags > journaled > environment > config file > defaults, except
for the model server's address: the environment knows where the server is now, so an
address it gives wins over the journaled one, which fills in only when nothing says.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localagent.config.settings import Settings
from localagent.system.errors import JournalCorrupt

RUN_SETTINGS = (
    "backend",
    "model",
    "temperature",
    "repeat_temperature",
    "max_rounds",
    "history_keep",
    "num_ctx",
    "num_predict",
    "call_deadline",
    "allowed_commands",
    "max_replans",
    "max_blocked",
    "max_format_errors",
    "checks",
    "verify",
    "tools",
    "delegates",
    "mode",
    "prompts",
    "mcp",
    "sandbox",
    "network",
    "pass_env",
    "profile",
)
# The setting holding the address of each backend's server: journaled with the run.
SERVER_FIELDS = {"ollama": "ollama_host", "openai": "base_url"}
JOURNALED = (*RUN_SETTINGS, *SERVER_FIELDS.values())
HISTORY = ".agent_context/history.jsonl"


def with_server(flags: dict[str, Any], backend: str) -> dict[str, Any]:
    """The flags with `server` (`--base-url`: the address of whichever server the run's
    backend talks to) given as that backend's setting."""
    found = dict(flags)
    server = found.pop("server", None)
    if server is not None:
        found[SERVER_FIELDS.get(backend, "ollama_host")] = server
    return found


def base_settings(flags: dict[str, Any]) -> Settings:
    """The settings before the journal is read: defaults < config file < environment <
    flags, a `server` flag for the backend they name (a journaled backend may name
    another: `for_run` settles that)."""
    from localagent.config.userconfig import load_settings

    first = load_settings(**{k: v for k, v in flags.items() if k != "server"})
    return load_settings(**with_server(flags, first.backend)) if "server" in flags else first


def journaled(settings: Settings) -> dict[str, Any]:
    """The run's settings as its journal holds them: RUN_SETTINGS and its server."""
    fields = {*RUN_SETTINGS, SERVER_FIELDS[settings.backend]}
    return settings.model_dump(mode="json", include=fields)


def for_run(
    base: Settings,
    recorded: dict[str, Any],
    flags: dict[str, Any],
    from_environment: frozenset[str] = frozenset(),
) -> tuple[Settings, dict[str, Any]]:
    """The run's settings from `base` (defaults, file, environment), the journaled ones
    (`recorded`) and the flags given now; `from_environment` names the fields the
    environment set. Returns them and the flags that changed a journaled value."""
    kept = {
        k: v
        for k, v in recorded.items()
        if k in RUN_SETTINGS or (k in JOURNALED and k not in from_environment)
    }
    given = {k: v for k, v in flags.items() if v is not None}
    given = with_server(given, str(given.get("backend") or kept.get("backend") or base.backend))
    merged = {**base.model_dump(), **kept, **given}
    try:
        settings = Settings(**merged)
    except ValidationError as exc:
        raise _invalid(exc, kept, given) from None
    return settings, {k: v for k, v in given.items() if kept.get(k) != v}


def server_moved(settings: Settings, recorded: dict[str, Any]) -> dict[str, Any]:
    """The run's server address when the journal does not hold it (it moved, the backend
    changed, or the journal is older than journaled addresses): journaled on resume, so
    the next `resume --all` finds the server this run used."""
    server = SERVER_FIELDS[settings.backend]
    address = getattr(settings, server)
    return {} if recorded.get(server) == address else {server: address}


def _invalid(exc: ValidationError, kept: dict[str, Any], given: dict[str, Any]) -> Exception:
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else "?"
    if field not in kept or field in given:
        return exc  # the environment and flags were checked when they were read
    return JournalCorrupt(
        f"the run setting {field} journaled in {HISTORY} is invalid ({error['msg']}); give "
        "it on the command line to replace it (see `localagent resume --help`), or start "
        "the goal afresh"
    )


class RunRequest(BaseModel):
    """What the starter hands the background agent (`run-agent`), as one JSON document
    on its standard input: the settings given for this run and how to start it."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    workspace: Path
    goal: str | None = None
    given: dict[str, Any] = Field(default_factory=dict)  # settings given as flags, by field
    repair: bool = False
    adopt: bool = False
    new: bool = False
    allow_home: bool = False
    preflight_deadline: float | None = None
    patient: bool = False  # wait for a server that is not up yet (logon)
