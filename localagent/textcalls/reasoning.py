"""Only what follows the model's reasoning counts: a call written while thinking aloud
(`<think>…</think>`, Mistral's `[THINK]…[/THINK]`, gpt-oss's `analysis` channel) is the
model considering a call, not making it."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PAIRS = (("<think>", "</think>"), ("<thinking>", "</thinking>"), ("[THINK]", "[/THINK]"))
_TERMINATORS = re.compile(r"<\|(end|call|return)\|>")
_CHANNEL = re.compile(r"<\|channel\|>\s*([\w-]+)")
_RECIPIENT = re.compile(r"\bto=([^\s<]+)")


@dataclass(frozen=True)
class HarmonyMessage:
    """One gpt-oss message: `<|start|>assistant<|channel|>commentary to=functions.x
    <|constrain|>json<|message|>{…}<|call|>` has header, body and terminator."""

    header: str
    body: str | None  # None: text that is not a message
    terminator: str = ""

    @property
    def channel(self) -> str:
        found = _CHANNEL.search(self.header)
        return found.group(1) if found else ""

    @property
    def recipient(self) -> str:
        found = _RECIPIENT.search(self.header)
        return found.group(1) if found else ""

    def text(self) -> str:
        if self.body is None:
            return self.header
        return f"<|start|>{self.header}<|message|>{self.body}{self.terminator}"


def after_reasoning(content: str) -> str:
    """`content` without its reasoning. An unclosed opener means everything after it is
    reasoning; a closer with no opener (the template opened it) ends the reasoning."""
    text = content
    for opener, closer in _PAIRS:
        text = re.sub(re.escape(opener) + ".*?" + re.escape(closer), "", text, flags=re.S)
        if closer in text:
            text = text[text.rfind(closer) + len(closer) :]
        if opener in text:
            text = text[: text.find(opener)]
    if "<|channel|>" in text and "<|message|>" in text:
        text = "".join(
            message.text() for message in harmony_messages(text) if not _thinking(message)
        )
    return text


def _thinking(message: HarmonyMessage) -> bool:
    return message.channel == "analysis" and not message.recipient


def harmony_messages(text: str) -> list[HarmonyMessage]:
    """The messages of a gpt-oss reply in order; text outside any message is kept as a
    message with no header so nothing is lost."""
    messages = []
    for chunk in text.split("<|start|>"):
        while chunk:
            header, found, rest = chunk.partition("<|message|>")
            if not found:
                messages.append(HarmonyMessage(header, None))
                break
            end = _TERMINATORS.search(rest)
            body = rest[: end.start()] if end else rest
            terminator = end.group(0) if end else ""
            messages.append(HarmonyMessage(header, body, terminator))
            chunk = rest[end.end() :] if end else ""
    return messages
