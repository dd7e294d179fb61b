"""What a round's model call leaves in its `llm_call` record, beyond what it cost: the
reply's calls with their ids, the facts it was shown, how its calls were written, where
the prompt's window started, and the notices it earned for the next round (journaled, so
a resumed run's next prompt is the one the crashed run would have sent)."""

from __future__ import annotations

import re
from typing import Any

from localagent.models import Reply
from localagent.prompts.promptset import PromptSet
from localagent.state import Exchange
from localagent.textcalls import ToolCall

_NAME = re.compile(r'"name"\s*:\s*"(\w{1,64})"')
_PATH = re.compile(r'"path"\s*:\s*"([^"\\\n]{1,200})"')
MAX_CALLS_PER_REPLY = 5
CONTENT_CHARS = 8000  # of the reply's text, journaled (and sent back: see context._reply_messages)


def earned(prompts: PromptSet, reply: Reply, sent: int, num_predict: int) -> str:
    """What the next round must tell the model about this reply: its calls past the limit
    were not run, it was cut off."""
    notices = []
    if sent > MAX_CALLS_PER_REPLY:
        notices.append(prompts.render("too_many_calls", limit=MAX_CALLS_PER_REPLY, count=sent))
    if reply.cut_off:
        why = {
            "length": "the length cap was reached",
            "deadline": "the call took too long",
            "loop": "it repeated the same text over and over",
        }
        name = "cut_off_write" if _cut_in_content(reply, sent) else "cut_off"
        notices.append(prompts.render(name, why=why[reply.cut_off], limit=num_predict))
    return "\n".join(notices)


def _cut_in_content(reply: Reply, sent: int) -> bool:
    """Whether the length cap, or a loop with no call read before it, cut a reply in the
    middle of a file's content: "no long explanations" is the wrong advice there.
    Qwen2.5-Coder-1.5B's mathx test file, a parametrize table of doubling numbers, was cut
    at 1,024 tokens three times running."""
    if reply.cut_off != "length" and (reply.cut_off != "loop" or sent):
        return False
    text = reply.content + "".join(str(c.arguments) for c in reply.tool_calls)
    return '"content"' in text or "'content'" in text


def fields(
    round_: int,
    reply: Reply,
    calls: list[ToolCall],
    facts: dict[str, Any],
    messages: list[dict[str, Any]],
    how: tuple[str, str, int],
) -> dict[str, Any]:
    """The record's fields for round `round_`; `how`: the recogniser of its calls, the
    notice it earned and the round the window of exchanges started after."""
    recogniser, notice, window = how
    return {
        **({"notice": notice} if notice else {}),
        "window": window,
        "recogniser": recogniser,
        "content": reply.content[:CONTENT_CHARS],
        "probe": facts,
        "tool_calls": [
            {
                "id": f"{round_}.{i}",
                "name": c.name,
                "arguments": c.arguments,
                **({"server_id": c.server_id} if c.server_id else {}),
            }
            for i, c in enumerate(calls, 1)
        ],
        "prompt_chars": sum(len(str(m.get("content", ""))) for m in messages),
    }


def shown_reply(exchange: Exchange, prompts: PromptSet) -> str:
    """The reply as the model sees it again in later rounds: as it was written, but a reply
    cut off with no call read from it as a line that says what it was. Shown its own
    runaway, Qwen2.5-Coder-1.5B wrote it again: the mathx table cut at the cap was
    written back as that table and no test, or cut again, 4 times of 4 at 0.2 on the
    engine; told only that its write of tests/test_mathx.py was cut off, it wrote the
    tests 4 times of 5."""
    if not exchange.cut_off or exchange.tool_calls:
        return exchange.content
    name, path = _NAME.search(exchange.content), _PATH.search(exchange.content)
    if name and path and '"content"' in exchange.content:
        what = f"a {name[1]} call of {path[1]} whose content ran on until it was cut off"
        what += "; nothing was written"
    elif name:
        what = f"a {name[1]} call that ran on until it was cut off; nothing in it was run"
    else:
        what = "text that ran on until it was cut off, with no whole tool call"
    return prompts.render("cut_reply", what=what)
