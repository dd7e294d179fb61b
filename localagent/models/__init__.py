"""The model seam: the `Model` protocol and its adapters, one per kind of server.

`protocol` is what the rest of localagent imports; `ollama` and `openai` are the
adapters (each the only code that knows its wire format; `openai_reply` reads that
one's answers); `base` retries what is worth waiting out; `wire` bounds every exchange
in bytes and time; `numbers` bounds every number a server reports; `fake` is the
scripted server the tests and the demo run against. Nothing heavy is imported here.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

# httpx imports its command-line client (`httpx._main`: click and rich, about 50 ms) on
# import whenever click is installed, and typer installs it; the adapters never use it.
# A None entry makes that one import fail, and httpx falls back to a stub: a resumed run
# reaches its model sooner.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from localagent.models.config import ModelConfig  # noqa: E402
from localagent.models.protocol import (  # noqa: E402
    Health,
    Message,
    Model,
    ModelInfo,
    Reply,
    ToolSpec,
)

if TYPE_CHECKING:
    from localagent.system.stopping import StopSignal

__all__ = [
    "Health",
    "Message",
    "Model",
    "ModelConfig",
    "ModelInfo",
    "Reply",
    "ToolSpec",
    "make_model",
]


def make_model(
    config: ModelConfig,
    stop: StopSignal | None = None,
    wait: Callable[[float], None] = time.sleep,
) -> Model:
    """The adapter `config.backend` names; `wait` sleeps between retries when no
    `stop` is given (a stop's own wait ends early)."""
    if config.backend == "openai":
        from localagent.models.openai import OpenAIModel

        return OpenAIModel(config, wait, stop)
    from localagent.models.ollama import OllamaModel

    return OllamaModel(config, wait, stop)
