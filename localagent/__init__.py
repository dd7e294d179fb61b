"""localagent: a local-first autonomous coding agent driven by a local model.

From Python: `from localagent import run_goal` (see localagent.api).
"""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["RunResult", "request_stop", "run_goal"]

if TYPE_CHECKING:
    from localagent.api import RunResult, request_stop, run_goal


def __getattr__(name: str) -> Any:
    # Imported on first use: `python -m localagent` and the CLI never pay for it.
    if name in __all__:
        from localagent import api

        return getattr(api, name)
    raise AttributeError(f"module 'localagent' has no attribute {name!r}")
