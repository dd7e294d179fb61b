"""What failed when a test failed on an exception a workspace file raised: Qwen2.5-Coder-
1.5B's refactor on the CPU gave `area` no case for a triangle, and pytest's summary line
was all the handback could name, cut where pytest cuts it ("TypeError: unsupported operand
type(..."). The function, the line and the whole message name what to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from localagent.tools.asserted import wrong_value
from localagent.tools.noneresult import none_from

# run_cmd's observation of the 1.5B's run, verbatim (the second block as run_cmd trims it)
REFACTOR_RUN = """\
=================================== FAILURES ===================================
_______________________________ test_total_area ________________________________

    def test_total_area():
>       assert round(total_area(SHAPES), 3) == 19.708

test_shapes.py:7:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

shapes = [('circle', 1), ('square', 2), ('triangle', 3), ('circle', 2)]

    def total_area(shapes):
        total = 0.0
        for kind, size in shapes:
>           total += area(kind, size)
E           TypeError: unsupported operand type(s) for +=: 'float' and 'NoneType'

shapes.py:12: TypeError
_________________________________ test_report __________________________________
>       assert report(SHAPES) == "circle 1: 3.14\\nsquare 2: 4.00\\ncircle 2: 12.57"
>           lines.append(f"{kind} {size}: {area(kind, size):.2f}")
E           TypeError: unsupported format string passed to NoneType.__format__
shapes.py:31: TypeError
=========================== short test summary info ============================
FAILED test_shapes.py::test_total_area - TypeError: unsupported operand type(...
FAILED test_shapes.py::test_report - TypeError: unsupported format string pas...
========================= 2 failed, 1 passed in 0.08s ==========================
"""


def test_an_exception_raised_in_a_workspace_function_names_it_and_its_line() -> None:
    assert wrong_value(REFACTOR_RUN) == (
        "total_area() raised TypeError: unsupported operand type(s) for +=: 'float' and "
        "'NoneType' at shapes.py:12 (`total += area(kind, size)`)"
    )


def test_without_the_function_s_lines_it_names_the_line() -> None:
    second = REFACTOR_RUN[REFACTOR_RUN.index("_____ test_report") :]
    assert wrong_value(second) == (
        "raised TypeError: unsupported format string passed to NoneType.__format__ at "
        'shapes.py:31 (`lines.append(f"{kind} {size}: {area(kind, size):.2f}")`)'
    )


def test_an_exception_in_the_test_itself_names_nothing() -> None:
    run = """\
    def test_x():
>       assert add(1, 2) == three
E       NameError: name 'three' is not defined

test_calc.py:4: NameError
"""
    assert wrong_value(run) == ""


def test_an_assertion_s_value_still_comes_first() -> None:
    run = """\
>       assert median([4, 1, 3, 2]) == 2.5
E       assert 3 == 2.5
E        +  where 3 = median([4, 1, 3, 2])
"""
    assert wrong_value(run) == "median([4, 1, 3, 2]) must return 2.5 (it returned 3)"


NONE_FAILURE = (
    "total_area() raised TypeError: unsupported operand type(s) for +=: 'float' and "
    "'NoneType' at shapes.py:12 (`total += area(kind, size)`)"
)


@pytest.mark.parametrize(
    ("area", "named"),
    [
        (
            "    if kind == 'circle':\n        return 3.14 * size\n"
            "    else:\n        return None\n",
            "area",
        ),
        ("    if kind == 'circle':\n        return 3.14 * size\n", "area"),  # falls to its end
        ("    if kind == 'circle':\n        return 3.14 * size\n    return 0\n", ""),
        ("    if kind == 'circle':\n        return 1\n    else:\n        raise ValueError\n", ""),
        ("    print(kind)\n", ""),  # returns no value anywhere
    ],
)
def test_which_function_a_none_came_from(tmp_path: Path, area: str, named: str) -> None:
    (tmp_path / "shapes.py").write_text(f"def area(kind, size):\n{area}")
    assert none_from(tmp_path, "shapes.py", NONE_FAILURE) == named
    other = NONE_FAILURE.replace("'NoneType'", "'str'")
    assert none_from(tmp_path, "shapes.py", other) == ""
