"""Names a Python file uses and never imports are imported from the one module here that
has them all (small profile, `tools/mends/imports.py`). Qwen2.5-Coder-1.5B's mathx on the
CPU, verbatim through the real CLI on the scripted fake server: its tests called add,
subtract, multiply and divide with only `import pytest` above them; told that running
them raises NameError, it wrote the same file back twice, a minute a round."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal
from test_goal_checks_done import GOAL

from localagent.tools import pywrite
from localagent.tools.mends import imports

# mathx/__init__.py as that run had it (its own import mended), and its modules.
INIT = (
    "from .add import add as add\nfrom .divide import divide as divide\n"
    "from .multiply import multiply as multiply\nfrom .subtract import subtract as subtract\n"
)
MODULES = {
    "add": "def add(a, b):\n    return a + b\n",
    "subtract": "def subtract(a, b):\n    return a - b\n",
    "multiply": "def multiply(a, b):\n    return a * b\n",
    "divide": "def divide(a, b):\n    return a / b\n",
}
STEP = "write_file tests/test_mathx.py with the pytest tests"
# Round 2 of mathx-1 (code of 2d8b7ab), verbatim.
TESTS = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "imp'
    "ort pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, "
    "6, 11), (7, 8, 15)])\\ndef test_add(a, b, expected):\\n    assert add(a, b) == expecte"
    "d\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, -1), (3, 4, -1), (5, 6, -1),"
    " (7, 8, -1)])\\ndef test_subtract(a, b, expected):\\n    assert subtract(a, b) == expe"
    "cted\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), (3, 4, 6), (5, 6, 10)"
    ", (7, 8, 14)])\\ndef test_multiply(a, b, expected):\\n    assert multiply(a, b) == exp"
    "ected\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 0), (3, 4, 0), (5, 6, 0)"
    ", (7, 8, 0)])\\ndef test_divide(a, b, expected):\\n    with pytest.raises(ValueError):"
    "\\n        divide(a, b)\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 1), (3,"
    " 4, 1), (5, 6, 1), (7, 8, 1)])\\ndef test_divide(a, b, expected):\\n    assert divide("
    'a, b) == expected"}}}'
)
# Round 11 of the mathx run of b931a98 (Ollama API, the CPU), verbatim: the tests call
# `mathx.add(...)` with only `import pytest` above them; told so, the model sent the same
# write back until it was blocked.
DOTTED = (
    '```json\n{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": '
    "\"import pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), "
    "(5, 6, 11)])\\ndef test_add(a, b, expected):\\n    assert mathx.add(a, b) == expected"
    "\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, 6, 11)])"
    "\\ndef test_subtract(a, b, expected):\\n    assert mathx.subtract(a, b) == expected"
    "\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), (3, 4, 1), (5, 6, 3)])"
    "\\ndef test_multiply(a, b, expected):\\n    assert mathx.multiply(a, b) == expected"
    "\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 0), (3, 4, 0), (5, 6, 0)])"
    "\\ndef test_divide(a, b, expected):\\n    with pytest.raises(ValueError):\\n        "
    "mathx.divide(a, b)\\n\\nif __name__ == '__main__':\\n    pytest.main()\"}}\n```"
)
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest tests/test_mathx.py"}}}'


def _package(ws: Path) -> None:
    (ws / "mathx").mkdir()
    (ws / "mathx" / "__init__.py").write_text(INIT)
    for name, code in MODULES.items():
        (ws / "mathx" / f"{name}.py").write_text(code)


def written_and_run(ws: Path, reply: str) -> tuple[dict, dict]:
    """The `action_finished` records of `reply` (a write of the tests) in the package
    here, and of the pytest run after it."""
    _package(ws)
    rounds = [{"content": r} for r in (reply, RUN)]
    steps = [STEP, "run python -m pytest tests/test_mathx.py"]
    small_model_goal(ws, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="2")
    write, run = records_of(ws, "action_finished")
    return write, run


def test_names_a_test_file_never_imports_are_imported_from_the_package(tmp_path: Path) -> None:
    write, run = written_and_run(tmp_path, TESTS)
    assert (
        "; it used add, subtract, multiply, divide, which mathx has, without importing them, "
        "so `from mathx import add, subtract, multiply, divide` was written at its top"
    ) in write["result"]
    assert "NameError" not in write["result"], write["result"]
    text = (tmp_path / "tests" / "test_mathx.py").read_text()
    assert text.startswith(
        "import pytest\n\nfrom mathx import add, subtract, multiply, divide\n\n\n@pytest.mark"
    ), text
    # The model's own expectations are wrong (multiply(3, 4) == 6), but nothing is missing.
    assert "NameError" not in run["result"] and " passed" in run["result"], run["result"]


@pytest.mark.parametrize(
    ("files", "content"),
    [
        # Two modules have them: which one is meant is not certain.
        ({"a.py": "def f():\n    pass\n", "b.py": "def f():\n    pass\n"}, "f()\n"),
        # No one module has both.
        ({"a.py": "def f():\n    pass\n", "b.py": "def g():\n    pass\n"}, "f()\ng()\n"),
        # A test file is no module to import from.
        ({"tests/test_a.py": "def f():\n    pass\n"}, "f()\n"),
        # A module its path cannot import.
        ({"my-lib.py": "def f():\n    pass\n"}, "f()\n"),
        # Nothing is missing.
        ({"a.py": "def f():\n    pass\n"}, "def f():\n    pass\n\n\nf()\n"),
    ],
)
def test_no_import_is_added_where_the_module_is_not_certain(
    tmp_path: Path, files: dict[str, str], content: str
) -> None:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert imports.mended(tmp_path, "main.py", content) is None


def test_the_import_goes_after_the_docstring_and_the_imports(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "geo.py").write_text("PI = 3.14\n\n\ndef area(r):\n    return PI * r\n")
    content = '"""Areas."""\nimport math\n\nprint(area(2), math.pi, PI)\n'
    text, note = imports.mended(tmp_path, "main.py", content) or ("", "")
    assert note == (
        "; it used area, PI, which pkg.geo has, without importing them, so `from pkg.geo "
        "import area, PI` was written at its top"
    )
    assert text == (
        '"""Areas."""\nimport math\n\nfrom pkg.geo import area, PI\n\n\n'
        "print(area(2), math.pi, PI)\n"
    )
    bare = imports.mended(tmp_path, "main.py", "print(area(2))\n")
    assert bare is not None and bare[0] == "from pkg.geo import area\n\n\nprint(area(2))\n"
    # pkg/main.py, run as a script, would not find pkg.geo from its own folder.
    assert imports.mended(tmp_path, "pkg/main.py", "print(area(2))\n") is None


def test_python_s_own_modules_go_above_the_other_imports(tmp_path: Path) -> None:
    """`pytest.raises` or `math.pi` read and never imported: the import goes first, above
    the file's own (and in a script in a folder too); `this.x`, `self` written the way
    JavaScript writes it, would import the Zen of Python, and is left alone."""
    content = '"""Tests."""\nimport mathx\n\n\ndef test_div():\n'
    content += "    with pytest.raises(ValueError):\n        mathx.div(1, 0)\n"
    text, note = imports.mended(tmp_path, "tests/test_mathx.py", content) or ("", "")
    assert (
        note == "; it used pytest without importing it, so `import pytest` was written at its top"
    )
    assert text.startswith('"""Tests."""\n\nimport pytest\n\nimport mathx\n\n\ndef test_div'), text
    script = imports.mended(tmp_path, "tools/circle.py", "print(math.pi * 2)\n")
    assert script is not None and script[0] == "import math\n\n\nprint(math.pi * 2)\n"
    assert (
        imports.mended(tmp_path, "game.py", "class A:\n    def f(s):\n        return this.x\n")
        is None
    )


def test_a_package_a_test_file_uses_and_never_imports_is_imported(tmp_path: Path) -> None:
    write, run = written_and_run(tmp_path, DOTTED)
    assert (
        "; it used mathx, the package here, without importing it, so `import mathx` was "
        "written at its top"
    ) in write["result"]
    assert "NameError" not in write["result"], write["result"]
    text = (tmp_path / "tests" / "test_mathx.py").read_text()
    assert text.startswith("import pytest\n\nimport mathx\n\n\n@pytest.mark"), text
    # The model's own expectations are wrong (subtract(1, 2) == 3), but mathx is there.
    assert "NameError" not in run["result"] and " failed" in run["result"], run["result"]


@pytest.mark.parametrize(
    ("files", "name", "content", "added"),
    [
        ({"calc.py": "X = 1\n"}, "main.py", "print(calc.X)\n", "import calc"),
        ({"calc/__init__.py": ""}, "tests/test_c.py", "calc.run()\n", "import calc"),
        # Called as a function, not used as a module: no import.
        ({"calc.py": "X = 1\n"}, "main.py", "print(calc(1), calc.X)\n", None),
        # No such module here.
        ({"other.py": "X = 1\n"}, "main.py", "print(calc.X)\n", None),
        # The file is that module itself.
        ({"calc.py": "X = 1\n"}, "calc.py", "print(calc.X)\n", None),
        # A folder without its __init__.py.
        ({"calc/run.py": ""}, "main.py", "calc.run.go()\n", None),
    ],
)
def test_a_module_here_read_as_a_module_is_imported_whole(
    tmp_path: Path, files: dict[str, str], name: str, content: str, added: str | None
) -> None:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    made = imports.mended(tmp_path, name, content)
    if added is None:
        assert made is None, made
    else:
        assert made is not None and made[0] == f"{added}\n\n\n{content}", made


# Round 15 of the same run, verbatim: the content in Python's three quotes, its first line
# indented as the JSON around it. Told "unexpected indent", it sent it until blocked.
QUOTED = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "tests/test_mathx.py",'
    '\n    "content": """\n    import pytest\n\n@pytest.mark.parametrize(\'a, b, expected\', '
    "[(1, 2, 3), (3, 4, 7), (5, 6, 11)])\ndef test_add(a, b, expected):\n    assert "
    "mathx.add(a, b) == expected\n\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), "
    "(3, 4, 7), (5, 6, 11)])\ndef test_subtract(a, b, expected):\n    assert mathx.subtract("
    "a, b) == expected\n\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), (3, 4, 1), "
    "(5, 6, 3)])\ndef test_multiply(a, b, expected):\n    assert mathx.multiply(a, b) == "
    "expected\n\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 0), (3, 4, 0), (5, 6, 0)"
    "])\ndef test_divide(a, b, expected):\n    with pytest.raises(ValueError):\n        "
    'mathx.divide(a, b)\n\nif __name__ == \'__main__\':\n    pytest.main()\n    """\n  }\n}\n```'
)


def test_a_first_line_indented_as_the_json_is_written_at_the_margin(tmp_path: Path) -> None:
    write, run = written_and_run(tmp_path, QUOTED)
    assert (
        "; `    import pytest` did not compile, so it was written as `import pytest`"
        in (write["result"])
    ), write["result"]
    assert "syntax error" not in write["result"] and "import mathx" in write["result"]
    text = (tmp_path / "tests" / "test_mathx.py").read_text()
    assert text.startswith("\nimport pytest\n\nimport mathx\n\n\n@pytest.mark"), text
    assert "NameError" not in run["result"] and " failed" in run["result"], run["result"]


@pytest.mark.parametrize(
    ("content", "fixed"),
    [
        ("\n  import os\nprint(os.sep)\n", "\nimport os\nprint(os.sep)\n"),
        ("    x = 1\ny = x\n", "x = 1\ny = x\n"),
        # Every line indented: no one line's edit makes it compile.
        ("    x = 1\n    y = x\n", None),
        # Indented after a line of code: aligned with it (test_indented_write.py).
        ("x = 1\n    y = x\n", "x = 1\ny = x\n"),
    ],
)
def test_which_indented_first_lines_are_mended(content: str, fixed: str | None) -> None:
    made = pywrite.mended(content, "m.py")
    assert (made[-1][2] if made else None) == fixed
