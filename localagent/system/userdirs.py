"""Where the user's own files live: the per-user config and data folders.
`LOCALAGENT_HOME` moves both (tests and portable installs use it)."""

from __future__ import annotations

import os
from pathlib import Path

APP = "localagent"


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
