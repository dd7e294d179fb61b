"""What an OpenAI-compatible server says about the model it serves: its context size and
its size in parameters, each read through `numbers`.

Each server says them its own way. llama.cpp: `/props` (`n_ctx`) and the `meta` of its one
`/v1/models` entry (`n_params`). vLLM: `max_model_len` in `/v1/models`, and no size. LM
Studio: its REST API at the server's root, `/api/v0/models/ID` (the context the model is
loaded with) and, from 0.4, `/api/v1/models` (`params_string`, "7B"). Where no server
field says the size, a size written in the model's name ("Qwen2.5-Coder-1.5B-Instruct",
"qwen2.5-coder:1.5b") is taken: a small model must not get the long prompts of a large one
only because its server is silent.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from localagent.models import numbers

Get = Callable[[str], Any]  # the JSON a GET of this URL answers; None when it failed
# Where servers say their context size in /models: vLLM, LM Studio, llama.cpp (trained).
CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length")
# "-1.5B-", ":7b", "-360M." in a name; not "8x7B" (a mixture: its size is not 7B).
_NAMED_SIZE = re.compile(r"(?:^|[-_:/ ])(\d{1,4}(?:\.\d{1,3})?[BbMm])(?=$|[-_:/ .])")


def root(host: str) -> str:
    """The server's root, where llama.cpp's /props and LM Studio's REST API live."""
    return host[: -len("/v1")] if host.endswith("/v1") else host


def context(entry: dict[str, Any], props: dict[str, Any]) -> int | None:
    """The context size from llama.cpp's /props or the model's /models entry."""
    settings = props.get("default_generation_settings")
    sizes = [settings.get("n_ctx") if isinstance(settings, dict) else None, props.get("n_ctx")]
    sizes += [entry.get(key) for key in CONTEXT_KEYS]
    return next((found for size in sizes if (found := numbers.context(size))), None)


def lm_studio_context(get: Get, host: str, model: str) -> int | None:
    """LM Studio's `/api/v0/models/ID` names the context its model is loaded with
    (`loaded_context_length`) and the most it takes (`max_context_length`)."""
    shown = get(f"{root(host)}/api/v0/models/{quote(model, safe='')}")
    if not isinstance(shown, dict):
        return None
    sizes = [shown.get("loaded_context_length"), shown.get("max_context_length")]
    return next((found for size in sizes if (found := numbers.context(size))), None)


def parameters(entry: dict[str, Any]) -> float | None:
    """llama.cpp's `meta.n_params` of its /models entry, in billions."""
    meta = entry.get("meta")
    return numbers.billions(meta.get("n_params")) if isinstance(meta, dict) else None


def lm_studio_parameters(get: Get, host: str, model: str) -> float | None:
    """LM Studio's `params_string` ("7B", "270M") of the model in `/api/v1/models`."""
    listing = get(f"{root(host)}/api/v1/models")
    models = listing.get("models") if isinstance(listing, dict) else None
    for shown in models if isinstance(models, list) else []:
        if isinstance(shown, dict) and shown.get("key") == model:
            return numbers.billions(size=shown.get("params_string"))
    return None


def named_parameters(*names: Any) -> float | None:
    """A size written in the first of these model names that has one, in billions."""
    for name in names:
        found = _NAMED_SIZE.search(name) if isinstance(name, str) else None
        if found:
            return numbers.billions(size=found.group(1))
    return None
