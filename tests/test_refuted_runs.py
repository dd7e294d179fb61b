"""A run whose output is not what the goal states failed, exit code 0 or not. Qwen2.5-
Coder-1.5B's wordcount.py on the CPU, verbatim through the real CLI on the scripted fake
server: `Number of lines: 2` for "the number of lines, words and characters". Its run
subtask failed on that, yet the replan carried the same run step as done ("already
succeeded in this run"), and the verification did not run that form again: the goal
ended "completed (unverified)" with the program broken."""

from __future__ import annotations

from pathlib import Path

from support import cli_env, done, plan_rule, records_of, run_cli, small_model_goal

from localagent.models.fake import FakeServer
from localagent.state.checkruns import outcome

GOAL = (
    "Write wordcount.py, a command-line program using argparse: python wordcount.py FILE "
    "prints the number of lines, words and characters in FILE; with --lines it prints "
    "only the number of lines"
)
STEPS = [
    "write_file wordcount.py with its code",
    "write_file sample.txt with a few lines of sample text",
    "run python wordcount.py sample.txt",
]
LINES_ONLY = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpars'
    "e\\nimport sys\\n\\ndef count_lines(file_path):\\n    with open(file_path, 'r') as file:"
    "\\n        return len(file.readlines())\\n\\ndef main(args):\\n    if args.lines:\\n   "
    "     print(count_lines(args.file))\\n    else:\\n        print(f'Number of lines: {coun"
    "t_lines(args.file)}')\\n\\ndef parse_args(args):\\n    parser = argparse.ArgumentParser("
    "description='Count lines, words, and characters in a file.')\n    parser.add_argument("
    "'file', type=str, help='The file to count lines, words, and characters in.')\n    pars"
    "er.add_argument('--lines', action='store_true', help='Print only the number of lines.'"
    ")\n    return parser.parse_args(args)\\n\\nif __name__ == '__main__':\\n    args = pars"
    'e_args(sys.argv[1:])\\n    main(args)"}}'
)
SAMPLE = (
    '{{"name": "write_file", "arguments": {"path": "sample.txt", "content": "Hello, world!\\n'
    'This is a sample text file."}}}}'
)
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}}'


def test_a_run_the_goal_s_counts_refute_is_no_success(tmp_path: Path) -> None:
    replies = [LINES_ONLY, SAMPLE, RUN, RUN, LINES_ONLY, RUN, RUN]
    ran, _ = small_model_goal(
        tmp_path,
        GOAL,
        plan_rule((GOAL, STEPS)),
        [{"content": r} for r in replies],
        LOCALAGENT_MAX_ROUNDS="7",
    )
    first = next(r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd")
    assert first["result"].startswith("exit code 0\nNumber of lines: 2")
    (off,) = first["facts"]["off"]
    assert "`python wordcount.py sample.txt` printed `Number of lines: 2`, one number" in off
    (failed, *_) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"] == off
    replans = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert replans and not any(p.get("carried") for p in replans), replans
    assert not records_of(tmp_path, "goal_completed")
    assert ran.returncode != 0


def test_a_replan_carries_no_run_the_goal_s_counts_refute(tmp_path: Path) -> None:
    """The replan after the failed run step gives the step back, and the run that failed
    it, exit code 0, is not carried as done: it has to show the counts."""
    replies = [{"content": r} for r in (LINES_ONLY, SAMPLE, RUN)]
    replies.append(done("it prints only the lines", success=False))
    scenario = {"rules": [plan_rule((GOAL, STEPS))], "replies": replies, "default": done()}
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_VERIFY="0", LOCALAGENT_MAX_ROUNDS="6")
        run_cli(env, "start", GOAL, "-w", str(tmp_path), "--foreground")
    (replan,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    carried = [c["subtask"] for c in replan.get("carried", [])]
    assert carried == ["write_file wordcount.py with its code"], carried
    assert not records_of(tmp_path, "goal_completed")


def test_what_a_refuted_run_counts_as() -> None:
    result = "exit code 0\nNumber of lines: 2\n"
    assert outcome("python wordcount.py sample.txt", result) == (
        True,
        "exit code 0: Number of lines: 2",
    )
    said = "the goal says ... one number"
    refuted = outcome("python wordcount.py sample.txt", result, off=said)
    assert refuted == (False, "exit code 0: Number of lines: 2")
    failed = "exit code 1\nTraceback ...\n"
    assert outcome("python wordcount.py sample.txt", failed, off=said)[0] is False
