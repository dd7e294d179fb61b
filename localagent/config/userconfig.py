"""Where the settings come from: the per-user config file, the environment and the
command line, merged with the precedence flag > environment > config file > default,
implemented once, in `load_settings`. `LOCALAGENT_HOME` moves the per-user config and
data folders (tests and portable installs use it).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localagent.config.settings import Settings
from localagent.system.errors import UsageError
from localagent.system.userdirs import user_config_dir

ENV_NAMES: dict[str, str] = {
    "ollama_host": "OLLAMA_HOST",
    "model": "OLLAMA_MODEL",
    "temperature": "LOCALAGENT_TEMPERATURE",
    "repeat_temperature": "LOCALAGENT_REPEAT_TEMPERATURE",
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
        from localagent.prompts.promptset import from_table

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


def environment_fields() -> frozenset[str]:
    """The settings the environment gives a value."""
    return frozenset(_from_env())


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
