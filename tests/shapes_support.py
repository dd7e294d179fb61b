"""The refactor goal of the real-model benchmark (`scripts/realgoals.py`), as the tests
of its verbatim replies use it: the goal, shapes.py and its tests, the hand-back's step
that asks for the file whole with its functions calling area (`loop/addback.py`)."""

from __future__ import annotations

from pathlib import Path

from support import real_goal

REFACTOR = real_goal("refactor")
GOAL, SHAPES, TESTS = REFACTOR.text, REFACTOR.seed["shapes.py"], REFACTOR.seed["test_shapes.py"]
USE_STEP = (
    "write_file shapes.py whole: area as it is, and total_area, largest and report changed "
    "so that they call area instead of repeating its code"
)


def seeded(ws: Path, area: str = "") -> None:
    """shapes.py and test_shapes.py in the workspace; with `area`, shapes.py with it
    above its first function, as the hand-back's write of it leaves the file."""
    docstring, rest = SHAPES.split("\n\n\n", 1)
    shapes = f"{docstring}\n\n\n{area}\n\n{rest}" if area else SHAPES
    (ws / "shapes.py").write_text(shapes)
    (ws / "test_shapes.py").write_text(TESTS)
