from __future__ import annotations

import signal
from pathlib import Path

import pytest

from localagent.config.userconfig import ENV_ALIASES, ENV_NAMES

# A suite started as a shell's background job (`pytest ... &`) inherits SIGINT ignored,
# and so would every command it starts: the tests that stop one with Ctrl-C's SIGINT
# would wait for ever. A handler (unlike "ignored") is reset to the default by exec.
if hasattr(signal, "SIGINT") and signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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
