"""An import of names from one of Python's own modules that has none of them, in a file
that defines them itself, is left out of the write (small profile). Qwen2.5-Coder-1.5B's
mathx on the CPU (the code of 0a51680), verbatim through the real CLI on the scripted fake
server: `from math import add, subtract, multiply, divide` above its own four functions,
told each time that math has no add, written so four times, and its tests never ran."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import plan_rule, pytest_in, records_of, small_model_goal

from localagent.tools.mends import foreign, inits, nearmodule

MATHX = (
    "Create a Python package mathx with the functions add, subtract, multiply and divide "
    "(divide raises ValueError when dividing by zero), with pytest tests in "
    "tests/test_mathx.py; the tests must pass with pytest and ruff check must be clean"
)
INIT = (
    '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from math '
    "import add, subtract, multiply, divide\\n\\ndef add(a, b):\\n    return a + b\\n\\ndef "
    "subtract(a, b):\\n    return a - b\\n\\ndef multiply(a, b):\\n    return a * b\\n\\ndef "
    "divide(a, b):\\n    if b == 0:\\n        raise ValueError('Cannot divide by zero')\\n    "
    'return a / b"}}}'
)
TESTS = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    'mathx\\n\\n\\ndef test_add():\\n    assert mathx.add(1, 2) == 3\\n"}}}'
)


def test_an_import_python_s_module_cannot_give_of_names_the_file_defines_is_left_out(
    tmp_path: Path,
) -> None:
    steps = ["write_file mathx/__init__.py with the add function", "write_file tests/test_mathx.py"]
    small_model_goal(
        tmp_path, MATHX, plan_rule((MATHX, steps)), [{"content": INIT}, {"content": TESTS}],
        LOCALAGENT_MAX_ROUNDS="2",
    )  # fmt: skip
    write = records_of(tmp_path, "action_finished")[0]
    assert (
        "; `from math import add, subtract, multiply, divide` imports what Python's math "
        "does not have, and this file defines add, subtract, multiply and divide: that "
        "import was left out"
    ) in write["result"], write["result"]
    init = (tmp_path / "mathx" / "__init__.py").read_text()
    assert init.startswith("def add(a, b):\n") and "import" not in init
    assert pytest_in(tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("content", "kept"),
    [
        # some of the names are math's: those stay
        (
            "from math import sqrt, add\n\ndef add(a, b):\n    return a + b\n",
            "from math import sqrt\n",
        ),
        # a name the file does not define: the import is the model's to mend
        ("from math import add, mean\n\ndef add(a, b):\n    return a + b\n", None),
        ("from math import add as plus\n\ndef add(a, b):\n    return a + b\n", None),
        ("from mathx import add\n\ndef add(a, b):\n    return a + b\n", None),  # not Python's
        ("from math import pi\n\ndef area(r):\n    return pi * r * r\n", None),
        ("from math import (\n    add,\n)\n\ndef add(a, b):\n    return a + b\n", ""),
    ],
)
def test_which_imports_are_left_out(content: str, kept: str | None) -> None:
    made = foreign.mended(content, "mathx/__init__.py")
    if kept is None:
        assert made is None
    else:
        assert made is not None and made[0].startswith(kept + ("\n" if kept else "") + "def")


# The 1.5B's mathx/__init__.py on the CPU (97fbfe1), verbatim: the four as methods.
CLASS_INIT = (
    "from math import add, subtract, multiply, divide\n\nclass Mathx:\n    def add(self, a,"
    " b):\n        return a + b\n\n    def subtract(self, a, b):\n        return a - b\n\n"
    "    def multiply(self, a, b):\n        return a * b\n\n    def divide(self, a, b):\n "
    "       if b == 0:\n            raise ValueError('Cannot divide by zero')\n        retu"
    "rn a / b"
)


def test_names_its_classes_define_are_the_file_s_own_too() -> None:
    """It wrote that file three times more, blocked, with the import that could never work."""
    made = foreign.mended(CLASS_INIT, "mathx/__init__.py")
    assert made is not None
    assert made[0] == CLASS_INIT.split("\n\n", 1)[1]
    assert made[1:] == (
        "from math import add, subtract, multiply, divide",
        "math",
        ["add", "subtract", "multiply", "divide"],
    )


# The 1.5B's mathx on the CPU (97fbfe1), verbatim: its package imports its own functions
# from itself above them; told to delete that line, it wrote the file so four times more.
SELF_INIT = INIT.replace("from math ", "from mathx ", 1)


def test_a_package_s_import_from_itself_of_what_it_defines_is_left_out(tmp_path: Path) -> None:
    steps = ["write_file mathx/__init__.py with the add function", "write_file tests/test_mathx.py"]
    small_model_goal(
        tmp_path, MATHX, plan_rule((MATHX, steps)), [{"content": SELF_INIT}, {"content": TESTS}],
        LOCALAGENT_MAX_ROUNDS="2",
    )  # fmt: skip
    write = records_of(tmp_path, "action_finished")[0]
    assert (
        "; `from mathx import add, subtract, multiply, divide` imports mathx from itself, and "
        "this file defines add, subtract, multiply and divide: that import was left out"
    ) in write["result"], write["result"]
    init = (tmp_path / "mathx" / "__init__.py").read_text()
    assert init.startswith("def add(a, b):\n") and "import" not in init
    assert pytest_in(tmp_path).returncode == 0
    # what it does not define, or a module's import of its package, stays
    for path, content in (
        ("mathx/__init__.py", "from mathx import add\n\n\ndef sub(a, b):\n    return a - b\n"),
        ("mathx/add.py", "from mathx import add\n\n\ndef add(a, b):\n    return a + b\n"),
    ):
        assert inits.self_imported(path, content) is None


# The 1.5B's tests on the CPU (97fbfe1), verbatim, written after mathx/__init__.py: mathx's
# four read through Python's math, in 3 runs of 16.
MATH_TESTS = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "math\\n\\ndef test_add():\\n    assert math.add(1, 2) == 3\\n\\ndef test_subtract():\\n  "
    "  assert math.subtract(1, 2) == -1\\n\\ndef test_multiply():\\n    assert math.multiply("
    '1, 2) == 2\\n\\ndef test_divide():\\n    assert math.divide(1, 2) == 0.5"}}}'
)
PLAIN_INIT = INIT.replace("from math import add, subtract, multiply, divide\\n\\n", "", 1)


def test_names_python_s_module_lacks_are_read_through_the_package_named_after_it(
    tmp_path: Path,
) -> None:
    """Told "module 'math' has no attribute 'add'", it edited mathx/__init__.py until the
    round limit."""
    steps = ["write_file mathx/__init__.py with the add function", "write_file tests/test_mathx.py"]
    replies = [{"content": PLAIN_INIT}, {"content": MATH_TESTS}]
    small_model_goal(tmp_path, MATHX, plan_rule((MATHX, steps)), replies, LOCALAGENT_MAX_ROUNDS="2")
    write = records_of(tmp_path, "action_finished")[1]
    assert (
        "; Python's math has no add, divide, multiply, subtract, and the package mathx here "
        "has each: math.add, math.divide, math.multiply, math.subtract were written as "
        "mathx's, and mathx imported"
    ) in write["result"], write["result"]
    tests = (tmp_path / "tests" / "test_mathx.py").read_text()
    assert tests.startswith("import mathx\n\ndef test_add():\n    assert mathx.add(1, 2) == 3")
    assert pytest_in(tmp_path).returncode == 0
    # math read for what it has stays imported; with no such package, nothing changes
    both = "import math\n\n\ndef test_a():\n    assert math.add(1, 2) == math.floor(3.2)\n"
    made = nearmodule.mended(tmp_path, "tests/test_b.py", both)
    assert made is not None and made[0].startswith("import math\nimport mathx\n")
    assert "mathx.add(1, 2) == math.floor(3.2)" in made[0]
    assert nearmodule.mended(tmp_path / "tests", "test_b.py", both) is None
