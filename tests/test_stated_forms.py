"""The command lines a goal states are each run before a small verifier's word counts.
Qwen2.5-Coder-1.5B's wordcount on the CPU, replayed verbatim on the scripted fake server
through the real CLI: its program printed no line count without --lines, it was only run
with --lines, and the goal ended "completed (verified)"."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support import (
    VERIFIED,
    backend_env,
    done,
    plan_rule,
    records_of,
    run_cli,
    small_model_goal,
)

from localagent.models.fake import FakeServer
from localagent.state.ledger import CheckRun, Write
from localagent.verify.stated import form_checks, stated_forms, unrun_forms

WORDCOUNT = (
    "Write wordcount.py, a command-line program using argparse: python wordcount.py FILE "
    "prints the number of lines, words and characters in FILE; with --lines it prints "
    "only the number of lines"
)
# The 1.5B's write, verbatim.
LINES_ONLY = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.fi"
    "le, 'r') as f:\\n            lines = f.readlines()\\n            print(len(lines))\\n"
    "    else:\\n        with open(args.file, 'r') as f:\\n            lines = f.readline"
    "s()\\n            words = [word for line in lines for word in line.split()]\\n        "
    "    print(len(words))\\n            print(len(''.join(lines)))\\n\\nif __name__ == '"
    "__main__':\\n    parser = argparse.ArgumentParser(description='Count lines, words, a"
    "nd characters in a file.')\n    parser.add_argument('file', type=str, help='The fi"
    "le to count.')\n    parser.add_argument('--lines', action='store_true', help='Pr"
    "int only the number of lines.')\n    args = parser.parse_args()\\n    main(args)\"}}}"
)
# wordcount-6 on the H200, verbatim: the rewrite that lost --lines.
NO_LINES = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\n\\ndef main(file_path):\\n    with open(file_path, 'r', encoding='utf-8') as fil"
    "e:\\n        lines = file.readlines()\\n        words = sum(len(line.split()) for line"
    " in lines)\\n        characters = sum(len(line) for line in lines)\\n        print(f'L"
    "ines: {len(lines)}, Words: {words}, Characters: {characters}')\\n\\nif __name__ == '__"
    "main__':\\n    parser = argparse.ArgumentParser(description='Count lines, words, and c"
    "haracters in a file.')\n    parser.add_argument('file_path', type=str, help='The file "
    "to count.')\n    args = parser.parse_args()\\n    main(args.file_path)\"}}"
)
# The same with the line count printed too: without it the run of `python wordcount.py
# FILE`, the model's or the verification's, prints two numbers for three, which fails its
# step or the verification (tests/test_counted_outputs.py).
ALL_THREE = LINES_ONLY.replace(
    "print(len(words))", "print(len(lines))\\n            print(len(words))"
)
SAMPLE = {"name": "write_file", "arguments": {"path": "sample.txt", "content": "a b\nc\n"}}


# The same goal counting what has no one meaning for a file: its counts, right or not,
# vouch for nothing (`verify/counts.py` checks lines, words, characters and bytes).
UNCOUNTED = WORDCOUNT.replace("words and characters", "words and sentences")


def run(cmd: str) -> str:
    return json.dumps({"name": "run_cmd", "arguments": {"cmd": cmd}})


@pytest.mark.parametrize(
    ("runs", "note"),
    [
        (["python wordcount.py --lines sample.txt"], "the goal states `python wordcount.py FILE`"),
        (
            ["python wordcount.py --lines sample.txt", "python wordcount.py sample.txt"],
            # its counts (the last line it printed): nothing checks them; the one count
            # `--lines` prints is the file's lines, and vouched for
            "`python wordcount.py sample.txt` printed `6`: a run shows",
        ),
    ],
)
def test_a_stated_command_line_never_run_leaves_the_goal_unverified(
    tmp_path: Path, runs: list[str], note: str
) -> None:
    """Each run is a step of the plan (the 1.5B's had the --lines run alone)."""
    steps = [cmd.replace("sample.txt", "FILE") for cmd in runs]
    plan = plan_rule(
        (UNCOUNTED, ["write_file wordcount.py with its code", *map("run {}".format, steps)])
    )
    rounds = [ALL_THREE, json.dumps(SAMPLE), *map(run, runs)]
    assert UNCOUNTED != WORDCOUNT
    ran, _ = small_model_goal(
        tmp_path,
        UNCOUNTED,
        plan,
        [{"content": r} for r in rounds],
        VERIFIED,
        LOCALAGENT_MAX_ROUNDS=str(len(rounds)),
        LOCALAGENT_VERIFY="1",
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (verdict,) = records_of(tmp_path, "verdict")
    assert verdict["verification"] == "unverified", verdict
    (done,) = records_of(tmp_path, "goal_completed")
    assert done["verification"] == "unverified"
    said = ran.stdout + ran.stderr
    assert f"NOT VERIFIED: {note}" in said, said
    unrun = (
        "the goal states `python wordcount.py FILE`, and no run since the last change made "
        "it with success (the verification's own run of such a line shows how it exits, "
        "not what it prints)"
    )
    assert (unrun in said) == (len(runs) == 1)


def test_which_command_lines_a_goal_states() -> None:
    assert stated_forms(WORDCOUNT) == [
        ("wordcount.py", (), 1),
        ("wordcount.py", ("--lines",), 1),
    ]
    greet = "Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0"
    assert stated_forms(greet) == [("greet.py", (), 1)]
    assert stated_forms("Write app.py: python app.py --verbose prints more") == [
        ("app.py", ("--verbose",), 0)
    ]
    assert stated_forms("Write a hello world script") == []
    assert stated_forms("Write hi.py; python hi.py prints hi") == []  # a plain run: no form


def test_which_runs_make_a_stated_command_line() -> None:
    def ledger(*runs: tuple[str, bool | None, int]) -> SimpleNamespace:
        checks = {
            cmd: CheckRun(cmd=cmd, kind="script", seq=seq, subtask=1, passed=ok, summary="x")
            for cmd, ok, seq in runs
        }
        return SimpleNamespace(writes={"wordcount.py": Write(seq=5, subtask=1)}, checks=checks)

    plain, lines = "python wordcount.py FILE", "python wordcount.py --lines FILE"
    assert unrun_forms(WORDCOUNT, ledger()) == [plain, lines]
    both = ledger(
        ("python wordcount.py a.txt", True, 6), ("python wordcount.py --lines b", True, 7)
    )
    assert unrun_forms(WORDCOUNT, both) == []
    before = ledger(
        ("python wordcount.py a.txt", True, 4), ("python wordcount.py --lines b", True, 7)
    )
    assert unrun_forms(WORDCOUNT, before) == [plain]  # run before the last change
    failed = ledger(
        ("python wordcount.py a.txt", False, 6), ("python wordcount.py --lines b", True, 7)
    )
    assert unrun_forms(WORDCOUNT, failed) == [plain]


def test_a_stated_command_line_the_program_refuses_fails_the_verification(
    tmp_path: Path,
) -> None:
    """wordcount-6 on the H200: its rewrite (to open the file it is given) lost --lines;
    `python wordcount.py sample.txt` printed the three counts, and the goal ended
    "completed (unverified)" with a program that answers --lines "unrecognized
    arguments". The verification runs the stated form with the file the model gave it."""
    plan = plan_rule(
        (WORDCOUNT, ["write_file wordcount.py with its code", "run python wordcount.py FILE"])
    )
    rounds = [NO_LINES, json.dumps(SAMPLE), run("python wordcount.py sample.txt")]
    ran, _ = small_model_goal(
        tmp_path, WORDCOUNT, plan, [{"content": r} for r in rounds], VERIFIED,
        LOCALAGENT_MAX_ROUNDS=str(len(rounds)), LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    (started,) = records_of(tmp_path, "verify_started")
    assert "python wordcount.py --lines sample.txt" in [c["cmd"] for c in started["checks"]]
    (check,) = [
        c for c in records_of(tmp_path, "check_finished") if c["cmd"].endswith("--lines sample.txt")
    ]
    assert check["ok"] is False and check["returncode"] == 2
    assert "unrecognized arguments: --lines" in check["output"]
    verdict = records_of(tmp_path, "verdict")[0]
    assert (verdict["source"], verdict["verification"]) == ("checks", "failed")
    assert not records_of(tmp_path, "goal_completed")
    assert ran.returncode != 0


def test_a_stated_form_is_run_with_the_arguments_a_successful_run_gave() -> None:
    def ledger(*cmds: str) -> SimpleNamespace:
        checks = {
            c: CheckRun(cmd=c, kind="script", seq=n, subtask=1, passed=True, summary="exit code 0")
            for n, c in enumerate(cmds, 10)
        }
        return SimpleNamespace(checks=checks, writes={"wordcount.py": Write(seq=5, subtask=1)})

    assert form_checks(WORDCOUNT, ledger("python wordcount.py sample.txt")) == [
        "python wordcount.py --lines sample.txt"
    ]
    both = ledger("python wordcount.py a.txt", "python wordcount.py --lines a.txt")
    assert form_checks(WORDCOUNT, both) == []
    assert form_checks(WORDCOUNT, ledger("python wordcount.py")) == []  # no file to give it
    assert form_checks(WORDCOUNT, ledger()) == []
    # Rewritten since: both forms are run again, with the file the earlier run gave.
    rewritten = ledger("python wordcount.py a.txt", "python wordcount.py --lines a.txt")
    rewritten.writes["wordcount.py"] = Write(seq=50, subtask=2)
    assert form_checks(WORDCOUNT, rewritten) == [
        "python wordcount.py a.txt",
        "python wordcount.py --lines a.txt",
    ]


def test_a_stated_form_no_run_passed_is_run_with_the_file_the_latest_run_gave() -> None:
    """wordcount-1 on the CPU (350101c): `python wordcount.py sample.txt` read stdin ("0 0
    0", inconclusive), then crashed twice; the last rewrite was never run, the
    verification ran only `python wordcount.py` (its usage error), and the goal ended
    "completed (unverified)" with a program that counted 51 characters for 57."""
    outcomes = [("python wordcount.py sample.txt", None), ("python wordcount.py in.txt", False)]
    checks = {
        cmd: CheckRun(cmd=cmd, kind="script", seq=n, subtask=1, passed=ok, summary="exit code 1")
        for n, (cmd, ok) in enumerate(outcomes, 10)
    }
    ledger = SimpleNamespace(checks=checks, writes={"wordcount.py": Write(seq=50, subtask=2)})
    assert form_checks(WORDCOUNT, ledger) == [
        "python wordcount.py in.txt",
        "python wordcount.py --lines in.txt",
    ]
    # A successful run's file goes first, however old.
    checks["python wordcount.py a.txt"] = CheckRun(
        cmd="python wordcount.py a.txt", kind="script", seq=5, subtask=1, passed=True, summary=""
    )
    assert form_checks(WORDCOUNT, ledger)[0] == "python wordcount.py a.txt"


def test_a_run_that_exited_non_zero_covers_no_stated_form() -> None:
    """A script's non-zero exit is a fact to its run subtask, not a form the goal states
    shown to work: the verification runs that form itself, and must see it exit 0. (The
    1.5B's wordcount with `--lines` exited 2 on "unrecognized arguments" and stood for that
    form: "completed (verified)" without --lines, the CPU; a run that prints an error and
    exits 1 is the same.)"""
    outcomes = [("python wordcount.py a.txt", "exit code 1: Error: cannot count a.txt")]
    outcomes += [("python wordcount.py --lines a.txt", "exit code 0: 3")]
    checks = {
        cmd: CheckRun(cmd=cmd, kind="script", seq=n, subtask=1, passed=True, summary=said)
        for n, (cmd, said) in enumerate(outcomes, 10)
    }
    ledger = SimpleNamespace(checks=checks, writes={"wordcount.py": Write(seq=5, subtask=1)})
    assert form_checks(WORDCOUNT, ledger) == ["python wordcount.py a.txt"]
    assert unrun_forms(WORDCOUNT, ledger) == ["python wordcount.py FILE"]


# wordcount-1 on the CPU (the 1.5B), verbatim: a first program whose --lines was missing,
# then, replanned, one that counts sys.stdin and never opens the file it is given.
FILE_TYPE = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\n\\ndef main(args):\\n    lines = args.file.readlines()\\n    words = [word for l"
    "ine in lines for word in line.split()]\\n    characters = sum(len(word) for word in wor"
    "ds)\\n    print(f'Number of lines: {len(lines)}\\nNumber of words: {len(words)}\\nNumber"
    " of characters: {characters}')\\n\\nif __name__ == '__main__':\\n    parser = argparse.A"
    "rgumentParser(description='Count lines, words, and characters in a file.')\n    parser"
    ".add_argument('file', type=argparse.FileType('r'), help='The file to count.')\n    args"
    ' = parser.parse_args()\\n    main(args)"}}'
)
# Its characters counted right: the words' letters alone are no count of the file's
# characters, and such a run goes back to a write (tests/test_counted_outputs.py).
COUNTED = FILE_TYPE.replace("sum(len(word) for word in words)", "sum(len(line) for line in lines)")
CPU_SAMPLE = (
    '{{"name": "write_file", "arguments": {"path": "sample.txt", "content": "Hello, world!\\n'
    'This is a sample text file.\\nIt contains multiple lines."}}}}'
)
CPU_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}}}'
STDIN = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        print(len(sys.stdin"
    ".readlines()))\\n    else:\\n        print(len(sys.stdin.readlines()), len(sys.stdin.rea"
    "d().split()), len(sys.stdin.read()))\\n\\nif __name__ == '__main__':\\n    parser = arg"
    "parse.ArgumentParser(description='Count lines, words, and characters in a file.')\n    "
    "parser.add_argument('file', type=str, help='The file to count.')\n    parser.add_argume"
    "nt('--lines', action='store_true', help='Print only the number of lines.')\n    args = "
    'parser.parse_args()\\n    main(args)"}}'
)


def test_a_rewrite_that_never_opens_the_file_is_caught_by_the_run_it_goes_back_to(
    tmp_path: Path,
) -> None:
    """After its goal check `--lines sample.txt` failed, the 1.5B's replan was one write;
    the second verification had no check at all (no successful run since the rewrite gave
    the stated forms a file), and the goal ended "completed (unverified)" with a program
    that prints "0 0 0" for any file. Now the verdict goes back, without the model, to a
    write that adds --lines and then that run (tests/test_missing_option.py); the run of
    the rewrite that counts stdin proves nothing, and the work goes back to a write that
    opens the file, keeping --lines, then the run."""
    first = ["write_file wordcount.py with its code",
             "write_file sample.txt with a few lines of sample text",
             "run python wordcount.py sample.txt"]  # fmt: skip
    lines_run = (
        '{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py --lines sample.txt"}}'
    )
    rounds = [COUNTED, CPU_SAMPLE, CPU_RUN, STDIN, lines_run]
    scenario = {"models": [{"name": "qwen2.5-coder:1.5b"}], "llama_cpp": True}
    scenario |= {"rules": [plan_rule((WORDCOUNT, first))], "verdict": VERIFIED}
    scenario |= {"replies": [{"content": r} for r in rounds]}
    with FakeServer(scenario) as server:
        env = {"OLLAMA_MODEL": "qwen2.5-coder:1.5b", "LOCALAGENT_MAX_ROUNDS": "5"}
        ran = run_cli(backend_env("openai", server.url, **env), "start", WORDCOUNT, "-w",
                      str(tmp_path), "--foreground")  # fmt: skip
    assert "round limit of 5 reached" in ran.stderr, ran.stdout + ran.stderr
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"] == (
        "wordcount.py: its code never opens sample.txt, the file it was given"
    ), failed
    back = [p for p in records_of(tmp_path, "plan") if p.get("by") == "handback"]
    assert [p["tasks"][0]["subtasks"][-1] for p in back] == [
        "run python wordcount.py --lines sample.txt"
    ] * 2
    write = (
        "write_file wordcount.py again, changed so that it opens and reads the file it is "
        "given, keeping its --lines option"
    )
    assert back[1]["tasks"][0]["subtasks"][:2] == [
        write,
        "run python wordcount.py --lines sample.txt",
    ]
    assert not records_of(tmp_path, "goal_completed")
    assert ran.returncode != 0


def test_a_stated_form_no_run_gave_a_file_is_run_with_a_sample_the_plan_writes(
    tmp_path: Path,
) -> None:
    """wordcount-3 on the CPU (the 1.5B): its plan ran `python wordcount.py` and `python
    wordcount.py --lines`, each a usage error, and no run ever gave it a file. The small
    verifier named "python wordcount.py FILE" as unmet, the replan said "run python
    wordcount.py ARG", and the model ran that line until the round limit (FileNotFoundError:
    'ARG'). The form is named with the goal's own placeholder, and the hand-back writes a
    sample file and runs each form with it."""
    plan = plan_rule(
        (
            WORDCOUNT,
            [
                "write_file wordcount.py with its code",
                "run python wordcount.py",
                "run python wordcount.py --lines",
            ],
        )
    )
    unmet = {"verdict": "NOT_VERIFIED", "unmet": ["python wordcount.py ARG"], "evidence": []}
    refusal = {
        "kind": "verify",
        "times": 1,
        "reply": {"content": json.dumps({**unmet, "next": "replan"})},
    }
    sample = {"name": "write_file", "arguments": {"path": "sample.txt", "content": "a b\nc\n"}}
    rounds = [
        ALL_THREE,
        run("python wordcount.py"),
        run("python wordcount.py --lines"),
        json.dumps(sample),
        run("python wordcount.py sample.txt"),
        run("python wordcount.py --lines sample.txt"),
    ]
    ran = _with_rules(tmp_path, [refusal, plan], rounds)
    plans = records_of(tmp_path, "plan")
    assert len(plans) == 2, plans
    steps = [s for t in plans[1]["tasks"] for s in t["subtasks"]]
    assert steps == [
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py sample.txt",
        "run python wordcount.py --lines sample.txt",
    ]
    assert not [r for r in records_of(tmp_path, "llm_call") if r["purpose"] == "replan"]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert records_of(tmp_path, "goal_completed")


def _with_rules(ws: Path, rules: list[dict[str, Any]], rounds: list[str]) -> Any:
    """The wordcount goal run by the small model as llama-server serves it, with the
    verifier on: the first of `rules` that fits answers a plan or verdict request."""
    scenario = {"models": [{"name": "qwen2.5-coder:0.5b"}], "llama_cpp": True}
    scenario |= {"rules": rules, "replies": [{"content": r} for r in rounds]}
    scenario |= {"default": done("done")}
    with FakeServer(scenario) as server:
        given = {"OLLAMA_MODEL": "qwen2.5-coder:0.5b", "LOCALAGENT_VERIFY": "1"}
        environ = backend_env("openai", server.url, LOCALAGENT_MAX_ROUNDS="10", **given)
        return run_cli(environ, "start", WORDCOUNT, "-w", str(ws), "--foreground")
