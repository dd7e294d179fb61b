"""A reply whose file content leaves an f-string's quote open is read, and the write closes
the string where its line's brackets close: Qwen2.5-Coder-1.5B's wordcount on the CPU,
verbatim, through the real CLI on the scripted fake server. Before, the reply was no call
("it mentions a tool but holds no valid JSON tool call"), three times running, and its
subtask failed."""

from __future__ import annotations

from pathlib import Path

from support import plan_rule, real_goal, records_of, small_model_goal
from test_textcalls import FQUOTE

GOAL = real_goal("wordcount").text


def test_an_f_string_left_open_in_a_reply_is_written_closed(tmp_path: Path) -> None:
    steps = ["write_file wordcount.py with its code"]
    ran, _ = small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), [{"content": FQUOTE}], LOCALAGENT_MAX_ROUNDS="1"
    )
    assert not records_of(tmp_path, "feedback"), ran.stdout
    (write,) = records_of(tmp_path, "action_finished")
    assert write["ok"], write["result"]
    assert (
        '; `print(f"Lines: {len(lines)}, Words: {words}, Characters: {chars})` did not '
        'compile, so it was written as `print(f"Lines: {len(lines)}, Words: {words}, '
        'Characters: {chars}")`'
    ) in write["result"]
    source = (tmp_path / "wordcount.py").read_text()
    compile(source, "wordcount.py", "exec")
    assert 'print(f"Lines: {len(lines)}, Words: {words}, Characters: {chars}")\n' in source
