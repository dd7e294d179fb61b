"""Calls a Python file's own text shows can never work (`tools/badcalls.py`): only what is
certain counts (the verbatim CPU case: tests/test_function_writes.py)."""

from __future__ import annotations

import pytest

from localagent.tools.badcalls import findings, note

AREA = "def area(kind, size):\n    return size\n\n\n"


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("def f(x):\n    return f(x)\n", ["f calls itself before anything else"]),
        ('def f(x):\n    """Doc."""\n    f(x)\n', ["f calls itself before anything else"]),
        ("def f(x):\n    if x:\n        return f(x - 1)\n    return 0\n", []),
        ("def f(x):\n    f = print\n    return f(x)\n", []),  # its own name rebound
        ("import functools\n\n\n@functools.cache\ndef f(x):\n    return f(x)\n", []),
        (AREA + "def g(s):\n    return area(s)\n", ["`area(s)` gives area 1 argument"]),
        (AREA + "def g(s):\n    return area(s, 1, 2)\n", ["gives area 3 arguments"]),
        (AREA + "print(area())\n", ["`area()` gives area 0 arguments"]),
        (AREA + "def g(s):\n    return area(s, 1)\n", []),
        (AREA + "def g(s):\n    return area(*s)\n", []),
        (AREA + "def g(s):\n    return area(s, size=2)\n", []),
        (AREA + "def g(area):\n    return area(1)\n", []),  # a parameter of that name
        (AREA + "area = print\nprint(area(1))\n", []),  # rebound at the top level
        ("def h(a, b=1, *rest):\n    return 0\n\n\nh(1)\nh(1, 2, 3, 4)\n", []),
        (
            "def h(a, b=1):\n    return 0\n\n\nh(1, 2, 3)\n",
            ["gives h 3 arguments, and it takes 1-2"],
        ),
        ("def h(*, key):\n    return 0\n\n\nh()\n", []),  # a keyword it needs: not counted
        ("def f(x):\n    return f(\n", []),  # does not parse
    ],
)
def test_which_calls_can_never_work(code: str, found: list[str]) -> None:
    said = findings(code)
    assert len(said) == len(found), said
    assert all(f in s for f, s in zip(found, said, strict=True)), said


def test_the_note_is_for_python_files_only() -> None:
    code = "def f(x):\n    return f(x)\n"
    assert note(code, "a.py").startswith("; but f calls itself")
    assert note(code, "a.txt") == ""
