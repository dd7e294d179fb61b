from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point per-user config and data at a temp folder and clear settings from the env."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("LOCALAGENT_HOME", str(home))
    for name in (
        "OLLAMA_HOST",
        "OLLAMA_MODEL",
        "LOCALAGENT_TEMPERATURE",
        "LOCALAGENT_MAX_ROUNDS",
        "LOCALAGENT_HISTORY_KEEP",
        "LOCALAGENT_NUM_CTX",
        "LOCALAGENT_ALLOWED_COMMANDS",
        "LOCALAGENT_RETRY_DEADLINE",
        "LOCALAGENT_REQUEST_TIMEOUT",
    ):
        monkeypatch.delenv(name, raising=False)
    return home
