from __future__ import annotations

from pathlib import Path

import pytest

from localagent.config.userconfig import ENV_ALIASES, ENV_NAMES


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point per-user config and data at a temp folder and clear settings from the env."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("LOCALAGENT_HOME", str(home))
    for name in [*ENV_NAMES.values(), *ENV_ALIASES]:
        monkeypatch.delenv(name, raising=False)
    return home
