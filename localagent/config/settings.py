"""One settings model: every setting, its type, its default and its checks (SPEC §3).

Where the values come from (flags, the environment, the config file) and which wins is
`localagent.config.userconfig`; which of them belong to a run and are journaled with its goal
is `localagent.config.runconfig`.
"""

from __future__ import annotations

import re
from pathlib import PureWindowsPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)

from localagent.mcp.config import McpSettings

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

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

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
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    backend: Literal["ollama", "openai"] = "ollama"
    ollama_host: str = "http://127.0.0.1:11434"
    base_url: str = "http://127.0.0.1:8080/v1"  # of an OpenAI-compatible server
    model: str = Field("gpt-oss:20b", min_length=1)
    temperature: float = Field(0.2, ge=0, le=2)
    # A round's temperature after the model repeated a call since the workspace last
    # changed (no lower than `temperature`; set it to `temperature` for none).
    repeat_temperature: float = Field(0.8, ge=0, le=2)
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
        from localagent.prompts.promptset import problems

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
