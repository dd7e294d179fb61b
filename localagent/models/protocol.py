"""What the rest of localagent knows about a model: this protocol and these types.

Messages are in our own shape, whatever the server speaks; each adapter encodes them:

    {"role": "system" | "user" | "assistant" | "tool", "content": str}
    an assistant message may add "tool_calls": [{"id": str, "name": str, "arguments": dict}]
    a tool message adds "call" (the id of the call it answers) and "tool" (the tool's name)

Tools are `ToolSpec`s, our own type: each adapter writes them in its server's shape.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from localagent.models.toolschema import flat_parameters
from localagent.textcalls import ToolCall

Message = dict[str, Any]


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a model is told of it: its name, what it does, and its parameters (a
    JSON schema object, its references resolved; nested objects, unions and defaults
    allowed). The backends send `flat`."""

    name: str
    description: str
    parameters: dict[str, Any]

    @functools.cached_property
    def flat(self) -> dict[str, Any]:
        """The parameters as a backend sends them (see `toolschema`): each property one
        flat parameter, its `type` absent when it has no one JSON type (`str | int`).
        Shared: a caller that changes it copies it first."""
        return flat_parameters(self.parameters)

    def line(self) -> str:
        """The tool as the text protocol lists it: `- name(param: type, ...): what it does`."""
        properties = self.flat.get("properties") or {}
        params = ", ".join(f"{name}: {_type_name(spec)}" for name, spec in properties.items())
        return f"- {self.name}({params}): {self.description}"


def _type_name(spec: Any) -> str:
    kind = spec.get("type") if isinstance(spec, dict) else None
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    return kind if isinstance(kind, str) and kind else "any"


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    duration_ms: float = 0.0
    # "length" (num_predict reached), "deadline" (call_deadline passed) or "loop" (the
    # reply repeated itself: reading stopped, the text before the repetition is the reply)
    cut_off: str = ""
    # Of `prompt_tokens`, those the server took from its prompt cache; None: not said.
    cached_tokens: int | None = None
    # The counts are ours, not the server's: a reply cut off before its usage came
    estimated: bool = False

    def estimate(self, chunks: int) -> None:
        """Counts for a reply whose stream was closed before the server's usage came:
        one completion token per streamed chunk of text (`estimate_prompt` fills in the
        prompt's)."""
        if not self.prompt_tokens and not self.completion_tokens:
            self.completion_tokens, self.estimated = chunks, True

    def usage(self) -> dict[str, Any]:
        """The fields of the `llm_call` record that say what the call cost."""
        cached = {} if self.cached_tokens is None else {"cached_tokens": self.cached_tokens}
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "duration_ms": round(self.duration_ms, 1),
            **cached,
            **({"estimated": True} if self.estimated else {}),
        }


@dataclass
class ModelInfo:
    capabilities: list[str]  # as the server says; empty when it does not say
    context_length: int | None
    parameters: float | None = None  # billions, when the server says
    slots: int | None = None  # llama.cpp's requests served at once (`/props`' `total_slots`)


@dataclass(frozen=True)
class Health:
    """What `doctor` says about the server: whether it answered, what it is, the fix."""

    up: bool
    detail: str
    fix: str = ""


class Model(Protocol):
    backend: str  # "ollama" or "openai", as the setting names it
    native_tools: bool  # False once the server refused tools: the text protocol is used
    num_ctx: int  # the context window of the run, bounded by the server's
    num_predict: int  # the cap on a reply's tokens in this run (the small profile lowers it)
    missing_fix: str  # what to type when the model is not on the server
    tools_fix: str  # what to do when the server refuses tool calls
    # Told once per call, on the calling thread, when the call starts waiting out a
    # server that fails (down, refusing, answering garbage): the reason.
    on_wait: Callable[[str], None] | None

    def health(self) -> Health:
        """One quick look at the server, no retries (for `doctor`)."""
        ...

    def wait_for_server(self) -> str:
        """Wait (with backoff, up to the retry deadline) until the server answers."""
        ...

    def preflight(self, within: float | None = None, patient: bool = False) -> ModelInfo:
        """Check the model is there, learn its capabilities, fix `num_ctx` for the run;
        raises ModelUnavailable (with the fix) when it is not. A server that refuses
        the connection is waited for only when `patient` (else it is said at once)."""
        ...

    def received(self) -> int:
        """Bytes of the latest answer read so far (the live line shows them)."""
        ...

    def probe_tools(self) -> str:
        """Why the server refuses tool calls, or "" (for `doctor`; at most a one-token call)."""
        ...

    def chat(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        schema: dict[str, Any] | None = None,
        temperature: float | None = None,
    ) -> Reply:
        """One call; `schema` asks for a JSON answer of that shape (no tools then);
        `temperature` overrides the run's for this call."""
        ...

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text from the `embed_model` setting's model (retried as calls
        are); raises ModelUnavailable when that model is not on the server."""
        ...


CHARS_PER_TOKEN = 4  # for the size of a prompt the server did not count whole


def prompt_size(messages: list[Message]) -> int:
    """A prompt's size in tokens as estimated where the server does not say it."""
    return sum(len(str(m.get("content", ""))) for m in messages) // CHARS_PER_TOKEN
