"""A test function that does not take what its `@pytest.mark.parametrize` passes it is
written to take it (small profile, `tools/mends/params.py`). Qwen2.5-Coder-1.5B's mathx on
the CPU, verbatim through the real CLI on the scripted fake server: pytest collected none
of its tests ("function uses no argument 'a'"), and the model ran pytest again until it
was blocked, three subtasks running."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_import_mend import written_and_run

from localagent.tools.mends import params

# Round 3 of mathx-12 (code of d1e6ddd), verbatim: its last string never closed.
TESTS = (
    '```json\n{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": '
    "\"import pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [\\n    (1, 2, 3),\\n   "
    " (3, 4, 7),\\n    (5, 6, 11),\\n    (0, 0, 0),\\n    (1, 0, 1),\\n    (0, 1, 1),\\n])\\nde"
    "f test_add(a, b, expected):\\n    assert add(a, b) == expected\\n\\n@pytest.mark.paramet"
    "rize('a, b, expected', [\\n    (1, 2, -1),\\n    (3, 4, -1),\\n    (5, 6, -1),\\n    (0,"
    " 0, 0),\\n    (1, 0, -1),\\n    (0, 1, -1),\\n])\\ndef test_subtract(a, b, expected):\\n"
    "    assert subtract(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, expected', ["
    "\\n    (1, 2, 2),\\n    (3, 4, 12),\\n    (5, 6, 30),\\n    (0, 0, 0),\\n    (1, 0, 1),\\"
    "n    (0, 1, 1),\\n])\\ndef test_multiply(a, b, expected):\\n    assert multiply(a, b) "
    "== expected\\n\\n@pytest.mark.parametrize('a, b, expected', [\\n    (1, 2, 0.5),\\n    "
    "(3, 4, 0.75),\\n    (5, 6, 1.25),\\n    (0, 0, 0),\\n    (1, 0, 0.5),\\n    (0, 1, 0.5),"
    "\\n])\\ndef test_divide(a, b, expected):\\n    assert divide(a, b) == expected\\n\\n@pyt"
    "est.mark.parametrize('a, b, expected', [\\n    (1, 0, 1),\\n    (0, 1, 1),\\n])\\ndef te"
    "st_divide_by_zero():\\n    with pytest.raises(ValueError):\\n        divide(1, 0)}}}}"
)


def test_a_test_function_takes_what_its_parametrize_passes_it(tmp_path: Path) -> None:
    write, run = written_and_run(tmp_path, TESTS)
    assert (
        "; test_divide_by_zero did not take a, b and expected, which its parametrize passes it "
        "(pytest would collect none of the file's tests), so it was written to take them"
    ) in write["result"], write["result"]
    text = (tmp_path / "tests" / "test_mathx.py").read_text()
    assert "def test_divide_by_zero(a, b, expected):\n" in text, text
    # Collected and run: the model's own wrong rows fail, no collection error.
    assert "uses no argument" not in run["result"], run["result"]
    assert " failed" in run["result"] and " passed" in run["result"], run["result"]


@pytest.mark.parametrize(
    ("content", "header"),
    [
        # Some of them taken already: the rest after them, in the decorator's order.
        ("@pytest.mark.parametrize('x,y', [(1, 2)])\ndef test_f(y):\n    pass\n", "test_f(y, x)"),
        # A list of names, a method taking self.
        (
            "class TestA:\n    @pytest.mark.parametrize(['x'], [(1,)])\n    def test_f(self):"
            "\n        pass\n",
            "test_f(self, x)",
        ),
        # All taken: nothing to mend.
        ("@pytest.mark.parametrize('x', [1])\ndef test_f(x):\n    pass\n", None),
        # A default before them, or annotations: the header is the model's to mend.
        ("@pytest.mark.parametrize('x', [1])\ndef test_f(y=1):\n    pass\n", None),
        ("@pytest.mark.parametrize('x', [1])\ndef test_f(y: int):\n    pass\n", None),
        # Takes **kwargs: pytest passes nothing through them either, but the model chose it.
        ("@pytest.mark.parametrize('x', [1])\ndef test_f(**kw):\n    pass\n", None),
    ],
)
def test_which_headers_are_mended(content: str, header: str | None) -> None:
    made = params.mended("import pytest\n\n" + content, "tests/test_a.py")
    assert (made is not None) is (header is not None)
    if made is not None:
        assert f"def {header}:" in made[0], made[0]
    # Not a test file: never.
    assert params.mended("import pytest\n\n" + content, "a.py") is None


# Round 3 of mathx-9 (the CPU), verbatim: its tests take a and b, and nothing gives them.
UNBOUND = (
    '```json\n{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": '
    '"import pytest\\n\\ndef test_add(a, b):\\n    assert add(a, b) == a + b\\n\\ndef test_su'
    "btract(a, b):\\n    assert subtract(a, b) == a - b\\n\\ndef test_multiply(a, b):\\n    as"
    "sert multiply(a, b) == a * b\\n\\ndef test_divide(a, b):\\n    if b == 0:\\n        pytest"
    ".skip('Cannot divide by zero')\\n    assert divide(a, b) == a / b\"}}\n```"
)


def test_a_test_of_arguments_nothing_gives_is_parametrized(tmp_path: Path) -> None:
    """pytest stopped each test at setup ("fixture 'a' not found"); the hand-back sent
    the model to mathx/__init__.py, which was right, until the round limit."""
    write, run = written_and_run(tmp_path, UNBOUND)
    assert (
        "; test_add, test_subtract, test_multiply and test_divide took a and b, which no "
        "fixture or parametrize gives them (pytest would stop each at its setup), so each "
        "was written under `@pytest.mark.parametrize('a, b', [(1, 2), (3, 4)])`"
    ) in write["result"], write["result"]
    text = (tmp_path / "tests" / "test_mathx.py").read_text()
    assert "@pytest.mark.parametrize('a, b', [(1, 2), (3, 4)])\ndef test_add(a, b):\n" in text
    assert "fixture 'a' not found" not in run["result"], run["result"]
    assert "8 passed" in run["result"], run["result"]


@pytest.mark.parametrize(
    "content",
    [
        # A fixture of the file's own, or pytest's, gives it.
        "@pytest.fixture\ndef a():\n    return 1\n\n\ndef test_f(a):\n    assert a\n",
        "def test_f(tmp_path):\n    assert tmp_path\n",
        # What it compares with is an argument: no value of ours is right for it.
        "def test_f(a, expected):\n    assert f(a) == expected\n",
        # Decorated, a default, a method: the model's to mend.
        "@pytest.mark.skip\ndef test_f(a):\n    assert a\n",
        "def test_f(a=1):\n    assert a\n",
        "class TestA:\n    def test_f(self, a):\n        assert a\n",
    ],
)
def test_which_unbound_tests_are_left_as_written(content: str) -> None:
    assert params.unbound("import pytest\n\n" + content, "tests/test_a.py") is None


def test_a_workspace_with_a_conftest_keeps_such_tests_as_written(tmp_path: Path) -> None:
    """Its fixtures may give them (here it gives none, and pytest says so)."""
    (tmp_path / "conftest.py").write_text("")
    write, run = written_and_run(tmp_path, UNBOUND)
    assert "no fixture or parametrize" not in write["result"], write["result"]
    assert "fixture 'a' not found" in run["result"], run["result"]
