"""A Python file that reads a name nothing binds is named so by its write, which does
not end its subtask: running it would raise NameError.

Qwen2.5-Coder-1.5B's greet.py on the CPU, replayed verbatim through the real CLI on the
scripted fake server: told to write it and then to make it call its code, it wrote the
function, then the `__main__` block alone, calling `greet` with no `def greet`; the
write was done, the run raised NameError, and the round limit came first."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal

from localagent.tools.undefined import names

GREET = (
    "Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without "
    "arguments it prints a usage message and exits with status 2"
)
FUNCTION = (
    '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "def greet(NAME):\\n'
    "    print(f'Hello, {NAME}!')\\n    return 0\"}}}"
)
MAIN_ALONE = (
    '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "if __name__ == '
    "'__main__':\\n    import sys\\n    if len(sys.argv) > 1:\\n        greet(sys.argv[1])\\n"
    "    else:\\n        print('Usage: python greet.py NAME')\"}}}"
)


def test_a_write_that_calls_what_it_does_not_define_is_not_done(tmp_path: Path) -> None:
    steps = [
        "write_file greet.py with its code",
        "write_file greet.py that keeps its code and calls it at the end",
    ]
    replies = [{"content": FUNCTION}, {"content": MAIN_ALONE}]
    small_model_goal(tmp_path, GREET, plan_rule((GREET, steps)), replies, LOCALAGENT_MAX_ROUNDS="2")
    first, second = records_of(tmp_path, "action_finished")
    assert "SUBTASK COMPLETE" in first["result"]
    assert second["result"].startswith(
        "wrote 149 bytes to 'greet.py' (replaced); but it uses `greet`, which it neither "
        "defines nor imports: running it raises NameError. Write the whole file again with "
        "what it uses"
    )
    assert "SUBTASK COMPLETE" not in second["result"]
    assert len(records_of(tmp_path, "subtask_completed")) == 1


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (
            "def greet(NAME):\n    print(NAME)\nif __name__ == '__main__':\n    greet(NAME)",
            ["NAME"],
        ),
        ("import pytest\ndef test_divide():\n    assert divide(1, 2) == 0.5\n", ["divide"]),
        ("class A:\n    z = 1\n    def m(self):\n        return z\n", ["z"]),
        ("print(__name__, __file__)\nf = lambda q: q + r", ["r"]),
        ("def f(x):\n    return [y for y in x if y]\nclass A:\n    z = 1\n    w = z + 1\n", []),
        ("def f():\n    return later()\ndef later():\n    return 1\n", []),
        ("def outer():\n    a = 1\n    def inner():\n        return a\n    return inner\n", []),
        ("def f():\n    global g\n    g = 1\nprint(g)\n", []),
        ("x: Foo = 1\nprint(x)", []),  # an annotation may never be evaluated
        ("try:\n    pass\nexcept ValueError as e:\n    print(e)\n", []),
        ("if any((n := v) for v in [1]):\n    print(n)", []),
        ("match 1:\n    case [a, *rest]:\n        print(a, rest)\n", []),
        ("match {}:\n    case {'k': v, **others}:\n        print(v, others)\n", []),
        ("import os.path\nprint(os.path.join('a'))", []),
        ("for i in range(3):\n    pass\nprint(i)\nwith open('f') as fh:\n    fh.read()", []),
        ("from os import *\nfoo()", []),  # binds what no reading can see
        ("globals()['x'] = 1\nprint(x)", []),
        ("def broken(:\n", []),  # not Python: the syntax note speaks
    ],
)
def test_which_names_nothing_binds(source: str, found: list[str]) -> None:
    assert names(source) == found
