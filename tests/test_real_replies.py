"""Verbatim replies of real local models (tests/corpus/real/real_replies.json) read by the
text-call parser: each must give exactly the intended calls, and none a call that was not
intended. The corpus sits in a folder of its own because tests/corpus/*.json are loop cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localagent.textcalls import ToolCall, parse_reply

CORPUS = Path(__file__).parent / "corpus" / "real" / "real_replies.json"
CASES: list[dict[str, Any]] = json.loads(CORPUS.read_text(encoding="utf-8"))["cases"]
KEYS = {"name", "family", "source", "known", "content", "calls", "note", "known_miss"}


def _expected(case: dict[str, Any]) -> list[ToolCall]:
    return [ToolCall(call["name"], call["arguments"]) for call in case["calls"]]


def test_the_corpus_is_large_and_traceable() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names)), "case names are unique"
    assert len(CASES) >= 60
    assert sum(1 for case in CASES if not case["calls"]) >= 15
    for case in CASES:
        assert set(case) <= KEYS and {"family", "source", "known", "content"} <= set(case)
        assert case["source"].startswith("https://"), case["name"]


def _param(case: dict[str, Any]) -> Any:
    miss = case.get("known_miss")
    marks = [pytest.mark.xfail(reason=miss, strict=True)] if miss else []
    return pytest.param(case, id=case["name"], marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_a_real_reply_gives_exactly_the_intended_calls(case: dict[str, Any]) -> None:
    parsed = parse_reply(case["content"], set(case["known"]))
    assert parsed.calls == _expected(case)
    if case["calls"]:
        assert parsed.recogniser and not parsed.problem
    else:
        assert parsed.recogniser is None


def test_the_share_read_correctly_and_no_unintended_call() -> None:
    results = [(parse_reply(c["content"], set(c["known"])).calls, _expected(c)) for c in CASES]
    right = sum(1 for got, want in results if got == want)
    unintended = [got for got, want in results if any(call not in want for call in got)]
    print(f"\nreal replies: {right}/{len(CASES)} = {100 * right / len(CASES):.1f}% read exactly;")
    print(f"replies giving a call that was not intended: {len(unintended)}")
    assert right / len(CASES) >= 0.95
    assert unintended == []


def test_a_known_miss_runs_nothing_and_says_what_is_expected() -> None:
    for case in (case for case in CASES if case.get("known_miss")):
        parsed = parse_reply(case["content"], set(case["known"]))
        assert parsed.calls == []
        assert "exactly" in parsed.problem


def test_a_reply_cut_off_anywhere_never_runs_an_unintended_call() -> None:
    # What a model had not finished may only ever give calls the whole reply intended.
    for case in CASES:
        intended, known = _expected(case), set(case["known"])
        for end in range(len(case["content"])):
            calls = parse_reply(case["content"][:end], known).calls
            assert all(call in intended for call in calls), (case["name"], end, calls)
