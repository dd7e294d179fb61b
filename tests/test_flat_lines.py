"""A small model's Python block written on one line is written as the lines it stands for.
Qwen2.5-Coder-1.5B's mathx run on the CPU, replayed verbatim on the scripted fake server
through the real CLI: its plan carried divide's code flattened, it wrote that line until
the loop guard stopped it, twice, and ran out of time."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal

from localagent.tools import unflatten

GOAL = "Create mathx/divide.py with divide(a, b) that raises ValueError when dividing by zero"
# The plan step and the round, verbatim.
STEP = (
    "write_file mathx/divide.py with the following content: def divide(a, b): if b == 0: "
    "raise ValueError('Cannot divide by zero') return a / b"
)
FLAT = (
    '{{"name": "write_file", "arguments": {"path": "mathx/divide.py", "content": "def divide(a,'
    " b): if b == 0: raise ValueError('Cannot divide by zero') return a / b\"}}}"
)
CHECK = (
    '{"name": "write_file", "arguments": {"path": "check.py", "content": "from mathx.divide '
    'import divide\\nprint(divide(6, 2))"}}'
)
RUN = '{"name": "run_cmd", "arguments": {"cmd": "python check.py"}}'
DIVIDE = (
    "def divide(a, b):\n    if b == 0:\n        raise ValueError('Cannot divide by zero')\n"
    "    return a / b"
)


def test_a_flattened_function_is_written_as_its_lines(tmp_path: Path) -> None:
    replies = [{"content": r} for r in (FLAT, FLAT, CHECK, RUN)]
    ran, _ = small_model_goal(
        tmp_path,
        GOAL,
        plan_rule((GOAL, [STEP, "write_file check.py calling divide", "run python check.py"])),
        replies,
        LOCALAGENT_MAX_ROUNDS="6",
    )
    results = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert results[0].startswith(
        "wrote 99 bytes to 'mathx/divide.py' (created); `def divide(a, b): if b == 0: raise "
        "ValueError('Cannot divide by zero') return...` did not compile as one line, so it "
        "was written as the 4 lines it stands for"
    )
    assert "syntax error" not in results[0]
    assert (tmp_path / "mathx" / "divide.py").read_text() == DIVIDE
    # The same flat line again is the same content: not progress, not a syntax error.
    assert results[1].startswith("'mathx/divide.py' already has this content")
    assert "syntax error" not in results[1]
    assert "3.0" in results[-1]
    assert ran.returncode == 0, ran.stdout + ran.stderr


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "def f(x): if x > 0: return 1 elif x < 0: return -1 return 0",
            "def f(x):\n    if x > 0:\n        return 1\n    elif x < 0:\n        return -1\n"
            "    return 0",
        ),
        ("def f(x): y = x + 1 return y", "def f(x):\n    y = x + 1\n    return y"),
        (
            "import pytest, mathx def test_add(): assert mathx.add(1, 2) == 3",
            "import pytest, mathx\ndef test_add():\n    assert mathx.add(1, 2) == 3",
        ),
        (
            "def test_zero(): with pytest.raises(ValueError): mathx.divide(6, 0)",
            "def test_zero():\n    with pytest.raises(ValueError):\n        mathx.divide(6, 0)",
        ),
        (
            '    def area(self): return self.w * self.h def name(self): return "r"',
            "    def area(self):\n        return self.w * self.h\n    def name(self):\n"
            '        return "r"',
        ),
        (
            "def f(x): try: return 1 / x except ZeroDivisionError: raise ValueError('0') from None",
            "def f(x):\n    try:\n        return 1 / x\n    except ZeroDivisionError:\n"
            "        raise ValueError('0') from None",
        ),
        (
            "def f(k): x = 1 if k else 2 return sorted(k, key=lambda v: v)[x]",
            "def f(k):\n    x = 1 if k else 2\n    return sorted(k, key=lambda v: v)[x]",
        ),
        # The 1.5B's mathx test file on the CPU (Ollama API), verbatim, written six times.
        (
            "import pytest from mathx import add, subtract, multiply, divide",
            "import pytest\nfrom mathx import add, subtract, multiply, divide",
        ),
        ("import os from . import util", "import os\nfrom . import util"),
        (
            "def f(): x = yield from g() raise ValueError('x') from None",
            "def f():\n    x = yield from g()\n    raise ValueError('x') from None",
        ),
        # Which block would `return total` close: the loop's, or the function's?
        ("def f(): total = 0 for i in range(3): total += i return total", None),
        ("def f(): # add them return a + b", None),  # the comment may hold the rest
        ("def f(): return 1", None),  # one statement: nothing to split
        ("def f(): return (1", None),
        ("if b == 0: raise ValueError('zero') return a / b", None),  # return outside a def
    ],
)
def test_which_lines_are_split_and_how(line: str, expected: str | None) -> None:
    assert unflatten.lines(line) == expected
