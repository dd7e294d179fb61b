"""What a round's model call leaves in its `llm_call` record, beyond what it cost: the
reply's calls with their ids, the facts it was shown, how its calls were written, where
the prompt's window started, and the notices it earned for the next round (journaled, so
a resumed run's next prompt is the one the crashed run would have sent)."""

from __future__ import annotations

from typing import Any

from localagent.models import Reply
from localagent.prompts.promptset import PromptSet
from localagent.textcalls import ToolCall

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
