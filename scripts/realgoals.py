"""The goals of the real-model benchmark: their text, the files a workspace starts with,
and the independent judge of each (see realjudges.py).

hello, rps and mathx are the goals of the issue's table; the others each stand for a
kind of work a user gives a coding agent: fix a failing test, write a command-line
program, refactor without changing behaviour, a program whose failure exit is asked for.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import realjudges as j
from realjudges import Judgement


@dataclass(frozen=True)
class Goal:
    key: str
    text: str
    judge: Callable[[Path], Judgement]
    seed: dict[str, str] = field(default_factory=dict)

    def plant(self, workspace: Path) -> None:
        for name, text in self.seed.items():
            path = workspace / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def unchanged(workspace: Path, name: str, text: str) -> Judgement:
    """A seeded file the goal says not to change is as it was planted."""
    path = workspace / name
    if not path.is_file():
        return Judgement(False, f"{name} was removed")
    if path.read_bytes() != text.encode():
        return Judgement(False, f"{name} was changed")
    return Judgement(True, f"{name} unchanged")


# ---- mathx -------------------------------------------------------------------------

MATHX = (
    "Create a Python package mathx with the functions add, subtract, multiply and divide "
    "(divide raises ValueError when dividing by zero), with pytest tests in "
    "tests/test_mathx.py; the tests must pass with pytest and ruff check must be clean"
)
_MATHX_PROBE = """
import importlib, pkgutil
import mathx
# What `from mathx import add` gives a user first; importing a submodule mathx.add would
# put the module in its place. Then the functions the package's modules define.
names = ("add", "subtract", "multiply", "divide")
found = {n: getattr(mathx, n) for n in names if callable(getattr(mathx, n, None))}
for m in pkgutil.iter_modules(getattr(mathx, "__path__", [])):
    module = importlib.import_module("mathx." + m.name)
    for name in names:
        if callable(getattr(module, name, None)):
            found.setdefault(name, getattr(module, name))
missing = [n for n in names if n not in found]
if missing:
    print("mathx lacks " + ", ".join(missing)); raise SystemExit
checks = [("add", (2, 3), 5), ("subtract", (5, 3), 2), ("multiply", (4, 3), 12),
          ("divide", (8, 2), 4), ("divide", (1, 4), 0.25)]
for name, args, want in checks:
    got = found[name](*args)
    if got != want:
        print(f"{name}{args} gives {got!r}, not {want!r}"); raise SystemExit
try:
    found["divide"](1, 0)
except ValueError:
    print("OK")
except Exception as exc:
    print(f"divide(1, 0) raises {type(exc).__name__}, not ValueError")
else:
    print("divide(1, 0) raises nothing")
"""


def mathx(workspace: Path) -> Judgement:
    if not (workspace / "mathx" / "__init__.py").is_file():
        return Judgement(False, "no package mathx (mathx/__init__.py)")
    return j.all_of(
        lambda: j.probe(workspace, _MATHX_PROBE),
        lambda: j.pytest_passes(workspace),
        lambda: j.ruff_clean(workspace),
    )


# ---- a failing test to fix ---------------------------------------------------------

FIX_TEST = (
    "python -m pytest fails in this folder: fix the bug in stats.py so that the tests pass, "
    "without changing test_stats.py"
)
STATS = """def mean(values):
    return sum(values) / len(values)


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle]
"""
TEST_STATS = """from stats import mean, median


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_median_odd():
    assert median([3, 1, 2]) == 2


def test_median_even():
    assert median([4, 1, 3, 2]) == 2.5
"""
_STATS_PROBE = """
from stats import mean, median
for values, want in (([10, 2, 38, 23, 38, 23], 23.0), ([5], 5), ([7, 1], 4.0), ([3, 9, 4], 4)):
    if median(values) != want:
        print(f"median({values}) gives {median(values)!r}, not {want!r}"); raise SystemExit
print("OK" if mean([2, 4]) == 3 else "mean changed")
"""


def fix_test(workspace: Path) -> Judgement:
    return j.all_of(
        lambda: unchanged(workspace, "test_stats.py", TEST_STATS),
        lambda: j.probe(workspace, _STATS_PROBE),
        lambda: j.pytest_passes(workspace),
    )


# ---- a command-line program --------------------------------------------------------

WORDCOUNT = (
    "Write wordcount.py, a command-line program using argparse: python wordcount.py FILE "
    "prints the number of lines, words and characters in FILE; with --lines it prints "
    "only the number of lines"
)
_SAMPLE = "alpha beta gamma\ndelta epsilon\nzeta eta theta iota kappa\n"  # 3, 10, 57


def wordcount(workspace: Path) -> Judgement:
    path = j.named(workspace, "wordcount.py")
    if path is None:
        return Judgement(False, "no wordcount.py")
    sample = workspace.parent / "judge-sample.txt"
    sample.write_text(_SAMPLE, encoding="utf-8")
    script = j.rel(workspace, path)
    whole = j.python(workspace, script, str(sample))
    if whole.code != 0 or not {"3", "10", "57"} <= _numbers(whole.out, sample):
        return Judgement(False, f"wordcount.py FILE: {whole.brief()}; want 3, 10 and 57")
    lines = j.python(workspace, script, "--lines", str(sample))
    if lines.code != 0 or _numbers(lines.out, sample) != {"3"}:
        return Judgement(False, f"wordcount.py --lines FILE: {lines.brief()}; want only 3")
    usage = j.python(workspace, script, "--help")
    if usage.code != 0 or "--lines" not in usage.out:
        return Judgement(False, f"wordcount.py --help: {usage.brief()}; want --lines named")
    return Judgement(True, f"prints {whole.out.strip()[:40]!r}; --lines and --help work")


def _numbers(text: str, sample: Path) -> set[str]:
    """The numbers a program printed ("3.0" is 3), the sample's path (it may hold digits)
    left out."""
    found = re.findall(r"\d+(?:\.\d+)?", text.replace(str(sample), " "))
    return {str(int(float(n))) if float(n).is_integer() else n for n in found}


# ---- a refactoring -----------------------------------------------------------------

REFACTOR = (
    "Refactor shapes.py: the area formulas are repeated in total_area, largest and report; "
    "move them into one function area(kind, size) and use it in all three. Behaviour must "
    "not change: python -m pytest must still pass"
)
SHAPES = '''"""Areas of shapes given as (kind, size) pairs; unknown kinds are left out."""


def total_area(shapes):
    total = 0.0
    for kind, size in shapes:
        if kind == "circle":
            total += 3.14159 * size * size
        elif kind == "square":
            total += size * size
    return total


def largest(shapes):
    best, best_area = None, -1.0
    for kind, size in shapes:
        if kind == "circle":
            this = 3.14159 * size * size
        elif kind == "square":
            this = size * size
        else:
            continue
        if this > best_area:
            best, best_area = (kind, size), this
    return best


def report(shapes):
    lines = []
    for kind, size in shapes:
        if kind == "circle":
            lines.append(f"{kind} {size}: {3.14159 * size * size:.2f}")
        elif kind == "square":
            lines.append(f"{kind} {size}: {size * size:.2f}")
    return "\\n".join(lines)
'''
TEST_SHAPES = """from shapes import largest, report, total_area

SHAPES = [("circle", 1), ("square", 2), ("triangle", 3), ("circle", 2)]


def test_total_area():
    assert round(total_area(SHAPES), 3) == 19.708


def test_largest():
    assert largest(SHAPES) == ("circle", 2)


def test_report():
    assert report(SHAPES) == "circle 1: 3.14\\nsquare 2: 4.00\\ncircle 2: 12.57"
"""
_SHAPES_PROBE = """
import ast, inspect
import shapes
source = inspect.getsource(shapes)
if source.count("3.14159") + source.count("math.pi") != 1:
    print("the circle's formula is not in exactly one place"); raise SystemExit
if round(shapes.area("circle", 2), 3) != 12.566 or shapes.area("square", 3) != 9:
    print("area(kind, size) gives wrong areas"); raise SystemExit
for name in ("total_area", "largest", "report"):
    tree = ast.parse(inspect.getsource(getattr(shapes, name)))
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)
              and isinstance(n.func, ast.Name)}
    if "area" not in called:
        print(f"{name} does not use area()"); raise SystemExit
mixed = [("square", 5), ("hexagon", 9), ("circle", 3)]
if (round(shapes.total_area(mixed), 3), shapes.largest(mixed)) != (53.274, ("circle", 3)):
    print("total_area or largest changed behaviour"); raise SystemExit
print("OK" if shapes.report(mixed) == "square 5: 25.00\\ncircle 3: 28.27" else "report changed")
"""


def refactor(workspace: Path) -> Judgement:
    return j.all_of(
        lambda: unchanged(workspace, "test_shapes.py", TEST_SHAPES),
        lambda: j.probe(workspace, _SHAPES_PROBE),
        lambda: j.pytest_passes(workspace),
    )


# ---- a failure exit that is the goal -----------------------------------------------

GREET = (
    "Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without "
    "arguments it prints a usage message and exits with status 2"
)


def greet(workspace: Path) -> Judgement:
    path = j.named(workspace, "greet.py")
    if path is None:
        return Judgement(False, "no greet.py")
    script = j.rel(workspace, path)
    named = j.python(workspace, script, "Ada")
    if named.code != 0 or "Hello, Ada!" not in named.out:
        return Judgement(False, f"greet.py Ada: {named.brief()}; want Hello, Ada!")
    bare = j.python(workspace, script)
    if bare.code != 2 or "usage" not in (bare.out + bare.err).lower():
        return Judgement(False, f"greet.py: {bare.brief()}; want a usage message, status 2")
    return Judgement(True, "greets Ada; usage and status 2 without a name")


GOALS: dict[str, Goal] = {
    goal.key: goal
    for goal in (
        Goal("hello", "Write a hello world script", j.hello),
        Goal("rps", "Create a rock-paper-scissors game", j.rock_paper_scissors),
        Goal("mathx", MATHX, mathx),
        Goal("fixtest", FIX_TEST, fix_test, {"stats.py": STATS, "test_stats.py": TEST_STATS}),
        Goal("wordcount", WORDCOUNT, wordcount),
        Goal("refactor", REFACTOR, refactor, {"shapes.py": SHAPES, "test_shapes.py": TEST_SHAPES}),
        Goal("greet", GREET, greet),
    )
}
