"""One settings model; precedence flag > environment > config file > default (SPEC §3).

The precedence is implemented once, in `load_settings`. `LOCALAGENT_HOME` moves the
per-user config and data folders (tests and portable installs use it).
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path, PureWindowsPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from localagent.errors import UsageError
from localagent.mcp.config import McpSettings

APP = "localagent"

ENV_NAMES: dict[str, str] = {
    "ollama_host": "OLLAMA_HOST",
    "model": "OLLAMA_MODEL",
    "temperature": "LOCALAGENT_TEMPERATURE",
    "max_rounds": "LOCALAGENT_MAX_ROUNDS",
    "history_keep": "LOCALAGENT_HISTORY_KEEP",
    "num_ctx": "LOCALAGENT_NUM_CTX",
    "allowed_commands": "LOCALAGENT_ALLOWED_COMMANDS",
    "retry_deadline": "LOCALAGENT_RETRY_DEADLINE",
    "request_timeout": "LOCALAGENT_REQUEST_TIMEOUT",
    "num_predict": "LOCALAGENT_NUM_PREDICT",
    "call_deadline": "LOCALAGENT_CALL_DEADLINE",
    "max_replans": "LOCALAGENT_MAX_REPLANS",
    "verify": "LOCALAGENT_VERIFY",
    "tools": "LOCALAGENT_TOOLS",
    "output_store_mb": "LOCALAGENT_OUTPUT_STORE_MB",
    "snapshot_store_mb": "LOCALAGENT_SNAPSHOT_STORE_MB",
    "backend": "LOCALAGENT_BACKEND",
    "base_url": "LOCALAGENT_BASE_URL",
    "embed_model": "LOCALAGENT_EMBED_MODEL",
    "sandbox": "LOCALAGENT_SANDBOX",
    "network": "LOCALAGENT_NETWORK",
    "pass_env": "LOCALAGENT_PASS_ENV",
    "profile": "LOCALAGENT_PROFILE",
}
# Variables that also set a field and win over its ENV_NAMES one: LOCALAGENT_MODEL means
# something to users of any server, OLLAMA_MODEL stays for Ollama's users.
ENV_ALIASES: dict[str, str] = {"LOCALAGENT_MODEL": "model"}

# Settings that belong to a run: journaled when the goal starts, reused on resume.
RUN_SETTINGS = (
    "backend",
    "model",
    "temperature",
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
DELEGATE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
DELEGATE_EXAMPLE = 'e.g. [delegates.aider] command = ["aider", "--message", "{task}", "--yes"]'


VARIABLE_PATTERN = re.compile(r"[A-Za-z0-9_().*-]+")


def _variable_names(value: Any) -> Any:
    """pass_env as a tuple of names or `NAME_*` patterns (a string: comma-separated)."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple) or not all(
        isinstance(name, str) and VARIABLE_PATTERN.fullmatch(name) for name in value
    ):
        raise ValueError(
            'pass_env is a list of variable names or patterns, e.g. ["HTTPS_PROXY", "AWS_*"]'
        )
    return tuple(value)


PassEnv = Annotated[tuple[str, ...], BeforeValidator(_variable_names)]


class Delegate(BaseModel):
    """A coding agent the delegate tool may run: its command with `{task}` in it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: tuple[str, ...]
    timeout_sec: float = Field(600.0, gt=0)
    # A coding agent talks to its model: the network and its key's variable, by default.
    network: bool = True
    pass_env: PassEnv = ()
    sandbox: bool = True  # false: it runs outside the sandbox (one that brings its own)

    @field_validator("command", mode="before")
    @classmethod
    def _check_command(cls, value: Any) -> Any:
        if not isinstance(value, list | tuple) or not all(isinstance(x, str) for x in value):
            raise ValueError(f"command is a list of strings, {DELEGATE_EXAMPLE}")
        if not value or not value[0].strip():
            raise ValueError(f"command is empty or has no program, {DELEGATE_EXAMPLE}")
        if "{task}" in value[0]:
            raise ValueError("command's program may not be the {task}: the task is an argument")
        if not any("{task}" in part for part in value):
            raise ValueError(
                f"command has no {{task}} placeholder for the task, {DELEGATE_EXAMPLE}"
            )
        program = value[0].replace("\\", "/")
        if "/" in program and not (program.startswith("/") or PureWindowsPath(program).root):
            raise ValueError(
                f"command's program {value[0]!r} must be a name on PATH or an absolute path"
            )
        return tuple(value)


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["ollama", "openai"] = "ollama"
    ollama_host: str = "http://127.0.0.1:11434"
    base_url: str = "http://127.0.0.1:8080/v1"  # of an OpenAI-compatible server
    model: str = Field("gpt-oss:20b", min_length=1)
    temperature: float = Field(0.2, ge=0, le=2)
    max_rounds: int = Field(24, ge=1)
    history_keep: int = Field(5, ge=1, le=20)
    num_ctx: int = Field(8192, ge=512)
    allowed_commands: tuple[str, ...] = ("python", "pytest", "ruff", "pip")
    retry_deadline: float = Field(300.0, ge=0)
    request_timeout: float = Field(600.0, gt=0)
    num_predict: int = Field(2048, ge=16)
    call_deadline: float = Field(900.0, gt=0)
    max_replans: int = Field(2, ge=0)
    max_blocked: int = Field(3, ge=1)
    max_format_errors: int = Field(3, ge=1)
    checks: tuple[str, ...] = ()  # commands that must pass before a goal is verified
    verify: bool = True  # verify the goal when its last subtask completes
    delegates: dict[str, Delegate] = Field(default_factory=dict)  # coding agents by name
    tools: tuple[str, ...] | None = None  # the enabled tools; None: every default tool
    output_store_mb: int = Field(50, ge=0)  # whole long outputs kept, in all; 0: none kept
    snapshot_store_mb: int = Field(500, ge=0)  # contents kept for `rewind`; 0: no snapshots
    mcp: McpSettings = Field(default_factory=McpSettings)  # [mcp.servers.NAME] sections
    prompts: dict[str, str] = Field(default_factory=dict)  # prompt name: the text replacing it
    embed_model: str = ""  # the embedding model of research search; "": lexical only
    mode: Literal["goal", "ask"] = "goal"  # what a run does: work on a goal, or research
    # Commands in an OS sandbox: where one works (auto), never without one, or never.
    sandbox: Literal["auto", "require", "off"] = "auto"
    network: Literal["off", "pip", "on"] = "pip"  # which sandboxed commands reach the network
    pass_env: PassEnv = ()  # variables (or NAME_* patterns) commands get beyond the list
    # small: the short tool set and prompts; auto: small for a model under 8B parameters.
    profile: Literal["auto", "small", "full"] = "auto"

    @field_validator("prompts")
    @classmethod
    def _check_prompts(cls, value: dict[str, str]) -> dict[str, str]:
        from localagent.promptset import problems

        errors = [str(p) for p in problems(value, lambda name: f"prompt {name}") if not p.warning]
        if errors:
            raise ValueError("; ".join(errors))
        return value

    @field_validator("checks", mode="before")
    @classmethod
    def _check_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list | tuple) and not all(
            isinstance(item, str) and item.strip() for item in value
        ):
            raise ValueError('checks is a list of commands, e.g. ["python -m pytest -q"]')
        return tuple(item.strip() for item in value) if isinstance(value, list | tuple) else value

    @field_validator("ollama_host", "base_url")
    @classmethod
    def _check_host(cls, value: str, info: ValidationInfo) -> str:
        from urllib.parse import urlsplit

        url = value.strip() if "://" in value else "http://" + value.strip()
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError as exc:
            raise ValueError(
                f"{value!r} is not a server address ({exc}); e.g. "
                + (
                    "http://127.0.0.1:8080/v1"
                    if info.field_name == "base_url"
                    else "127.0.0.1:11434"
                )
            ) from None
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"{value!r} must be an http:// or https:// address")
        return value

    @field_validator("allowed_commands", "tools", mode="before")
    @classmethod
    def _split_commands(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("tools")
    @classmethod
    def _known_tools(
        cls, value: tuple[str, ...] | None, info: ValidationInfo
    ) -> tuple[str, ...] | None:
        if value is not None:
            from localagent.tools import catalog

            catalog().select(value)  # ValueError names the unknown ones
        if value and "delegate" in value and not info.data.get("delegates", True):
            raise ValueError(
                "the delegate tool needs a coding agent configured as a [delegates.NAME] "
                f"section of the config file, {DELEGATE_EXAMPLE}"
            )
        return value

    @field_validator("delegates", mode="before")
    @classmethod
    def _check_delegates(cls, value: Any) -> Any:
        if not isinstance(value, dict) or not all(
            isinstance(v, dict | Delegate) for v in value.values()
        ):
            raise ValueError(
                f"delegates is a table of [delegates.NAME] sections, {DELEGATE_EXAMPLE}"
            )
        for name in value:
            if not DELEGATE_NAME.fullmatch(name):
                raise ValueError(
                    f"delegate name {name!r} must be letters, digits, '_', '.' or '-' (at most 40)"
                )
        return value


def user_config_dir() -> Path:
    home = os.environ.get("LOCALAGENT_HOME")
    if home:
        return Path(home) / "config"
    import platformdirs

    return Path(platformdirs.user_config_dir(APP, appauthor=False))


def user_data_dir() -> Path:
    home = os.environ.get("LOCALAGENT_HOME")
    if home:
        return Path(home) / "data"
    import platformdirs

    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def config_path() -> Path:
    return user_config_dir() / "config.toml"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # TOMLDecodeError, or bytes that are not UTF-8
        raise UsageError(
            f"cannot read the config file {path}: {exc}; fix it or move it away"
        ) from None


def prompts_table(path: Path) -> Any:
    """The config file's `[prompts]` table as written (None: there is none)."""
    return _read_toml(path).get("prompts")


def _from_file(path: Path) -> dict[str, Any]:
    data = _read_toml(path)
    if "prompts" in data:  # checked here, where each problem can name the file
        from localagent.promptset import from_table

        data["prompts"] = from_table(data["prompts"], path)
    unknown = sorted(set(data) - set(Settings.model_fields))
    if unknown:
        said = "; ".join(_unknown(name) for name in unknown)
        known = ", ".join(sorted(Settings.model_fields))
        raise UsageError(f"{said} in {path}; known settings: {known}")
    return data


def _unknown(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(Settings.model_fields), n=1, cutoff=0.6)
    return f"unknown setting {name!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


def _from_env() -> dict[str, Any]:
    found = {field: os.environ[env] for field, env in ENV_NAMES.items() if os.environ.get(env)}
    for env, field in ENV_ALIASES.items():
        if os.environ.get(env):
            found[field] = os.environ[env]
    return found


def load_settings(**flags: Any) -> Settings:
    """Merge default < config file < environment < flags (flags that are None are unset)."""
    layers = [
        (str(config_path()), _from_file(config_path())),
        ("the environment", _from_env()),
        ("the command line", {k: v for k, v in flags.items() if v is not None}),
    ]
    merged: dict[str, Any] = {}
    for _, layer in layers:
        merged.update(layer)
    try:
        return Settings(**merged)
    except ValidationError as exc:
        said = [_invalid(error, layers) for error in exc.errors()]
        raise UsageError("; ".join(dict.fromkeys(said))) from None


def _invalid(error: Any, layers: list[tuple[str, dict[str, Any]]]) -> str:
    """One validation error, naming the setting, its variable and where its value came from."""
    field = str(error["loc"][0]) if error["loc"] else "?"
    source = next((name for name, layer in reversed(layers) if field in layer), "defaults")
    env = f" ({ENV_NAMES[field]})" if field in ENV_NAMES else ""
    where = ".".join(str(part) for part in error["loc"]) or "?"  # delegates.NAME.command
    return f"invalid setting {where}{env} from {source}: {error['msg']}"
