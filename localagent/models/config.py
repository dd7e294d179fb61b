"""What a model adapter needs to know: one server, one model, its options and timeouts.

The adapters take this, not the run's whole settings: a model is made the same way for
a run, for `doctor`, and for `resume --all` waiting on each goal's own server.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    backend: str  # "ollama" or "openai"
    url: str  # Ollama's address, or the OpenAI-compatible server's base URL
    model: str
    temperature: float = 0.2
    num_ctx: int = 8192
    num_predict: int = 2048
    embed_model: str = ""
    request_timeout: float = 600.0
    call_deadline: float = 900.0
    retry_deadline: float = 300.0

    @classmethod
    def of(cls, settings: Any) -> ModelConfig:
        """The model part of the run's settings (any object with their field names)."""
        url = settings.base_url if settings.backend == "openai" else settings.ollama_host
        fields = (f.name for f in dataclasses.fields(cls) if f.name not in ("backend", "url"))
        values = {name: getattr(settings, name) for name in fields}
        return cls(backend=settings.backend, url=url, **values)

    def replace(self, **changes: Any) -> ModelConfig:
        return dataclasses.replace(self, **changes)
