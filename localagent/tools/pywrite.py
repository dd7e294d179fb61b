"""What a write of a Python file would do, read before it is made: what the content
defines, the one-line syntax fixes that make it compile, the file's text as a refusal
shows it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from localagent.system import safefs
from localagent.system.textcap import listed
from localagent.tools import pyscript
from localagent.tools.syntaxfix import fixes

_DEFINES = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)", re.M)
SHOWN_LINES = 24


def defined(content: str) -> list[str]:
    """What new Python content defines at its top level (read as text where it does not
    parse: a write with a syntax error still drops what it does not have)."""
    script = pyscript.parse(content)
    return script.defines if script is not None else _DEFINES.findall(content)


def aliases(content: str, names: list[str], source: str = "") -> tuple[list[str], str]:
    """Of `names`, those new Python content binds at its top level as another name for one
    function it defines, or the file's `source` defines (`total_area = area`), and that
    function; ([], "") when none do. Asked for shapes.py whole with total_area, largest
    and report calling area, Qwen2.5-Coder-1.5B wrote `def area` and `total_area = area`,
    `largest = area`, `report = area` below it, twice; after a write of area alone, those
    three lines alone (the CPU)."""
    script = pyscript.parse(content)
    if script is None:
        return [], ""
    had = pyscript.parse(source) if source else None
    functions = set(script.defines) | set(had.defines if had is not None else [])
    bound = {
        node.targets[0].id: node.value.id
        for node in ast.parse(content).body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Name)
        and node.value.id in functions
        and node.value.id != node.targets[0].id
    }
    found = [n for n in names if n in bound]
    targets = {bound[n] for n in found}
    return (found, targets.pop()) if len(targets) == 1 else ([], "")


def header(source: str, name: str) -> str:
    """`def largest(shapes)`: the function `name` as the Python `source` defines it at its
    top level; `def name(...)` where it does not, or does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = ast.Module(body=[], type_ignores=[])
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return f"def {name}({ast.unparse(node.args)})"
    return f"def {name}(...)"


def numbered(root: Path, target: Path) -> str:
    """The file's first lines, numbered, as the refusal shows them."""
    try:
        data = safefs.read_inside(root, target, pyscript.MAX_SOURCE_BYTES)
    except (OSError, safefs.UnsafeFile):
        return ""
    lines = data.decode("utf-8", errors="replace").splitlines()
    shown = [f"{n:>5}| {line}" for n, line in enumerate(lines[:SHOWN_LINES], 1)]
    more = len(lines) - SHOWN_LINES
    return "\n".join(shown + ([f"  ... {more} more lines"] if more > 0 else []))


def mended(content: str, name: str) -> list[tuple[str, str, str]]:
    """The one-line syntax fixes that make a Python file compile, made in turn: (the
    line, as fixed, the content after it). Qwen2.5-Coder-1.5B wrote
    `print(play_game(player1, player2)}` in every write of one game and never copied the
    fix it was offered; another wrote `'It's a tie!'` again and again. [] when the file
    compiles, is not Python, or no such fix makes it compile."""
    if not name.lower().endswith((".py", ".pyw")):
        return []
    return fixes(content, name)


_DEFS = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def merged(source: str, content: str) -> tuple[str, list[str], list[str], str] | None:
    """For new `content` that is only functions and classes, some of them new to the
    Python file's `source` or standing for some of its own but not for all of them, the
    file with each of its own replaced where it stands and the new ones added above its
    first function or class: (the new text, the names replaced, the names added, that
    first name); None for any other content (a write of the file whole).

    Asked to "move the formulas into a function area(kind, size)", Qwen2.5-Coder-1.5B
    wrote shapes.py as `def area(kind, size): ...` alone, refused three times for
    dropping what its tests import (the CPU): it was adding a function. A small model
    asked to change one function writes that function."""
    nl = "\r\n" if "\r\n" in source else "\n"  # the file's line ends, CRLF kept on Windows
    content = content.replace("\r\n", "\n").replace("\n", nl)
    try:
        new, old = ast.parse(content), ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not new.body or not all(isinstance(n, _DEFS) for n in new.body):
        return None
    own = {n.name: n for n in old.body if isinstance(n, _DEFS)}
    names = [n.name for n in new.body]
    if not own or len(set(names)) != len(names) or set(own) <= set(names):
        return None
    lines, parts = source.splitlines(keepends=True), content.splitlines(keepends=True)
    replaced = [n for n in new.body if n.name in own]
    for node in sorted(replaced, key=lambda n: own[n.name].lineno, reverse=True):
        was = own[node.name]
        lines[_first_line(was) - 1 : was.end_lineno] = _lines_of(parts, node, nl)
    added = [n for n in new.body if n.name not in own]
    first = min(own.values(), key=lambda n: n.lineno)
    if added:
        text = "".join(line for n in added for line in [*_lines_of(parts, n, nl), nl, nl])
        lines.insert(_first_line(first) - 1, text)
    return "".join(lines), [n.name for n in replaced], [n.name for n in added], first.name


def _first_line(node: ast.stmt) -> int:
    """The line a function or class starts on, its decorators included."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])


def _lines_of(parts: list[str], node: ast.stmt, nl: str = "\n") -> list[str]:
    """The lines of `node` in the content split as `parts`, the last one ending a line."""
    taken = parts[_first_line(node) - 1 : node.end_lineno]
    if taken and not taken[-1].endswith("\n"):
        taken[-1] += nl
    return taken


_DEF_LINE = re.compile(r"^\s*(?:async\s+def|def|class)\s+(\w+)")


def as_module(source: str, old: str, new: str) -> tuple[str, str] | None:
    """For an edit of a Python file that is a docstring and functions (or classes) only,
    whose `old` is text of the docstring and whose `new` is functions: the file with them
    as code below the docstring, and what was made of them; None for any other edit. New
    functions (and imports) that stand for every one of the file's are its code; some,
    only functions, are written as `merged` writes them (the file's own where they stand,
    new ones above its first function).

    Qwen2.5-Coder-1.5B's refactor on the CPU sent shapes.py's docstring text as old and,
    as new, area and the three functions rewritten to call it; refused as code inside a
    string, it sent the same with its new text as old, until the subtask failed. Another
    run sent `def area` alone so, refused, and then renames until the round limit."""
    if old.strip() and new.strip().startswith(old.strip()):
        new = new.strip()[len(old.strip()) :]  # the docstring's text kept, the code below it
    try:
        tree, made = ast.parse(source), ast.parse(new)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    head, *rest = tree.body or [None]
    if not (
        isinstance(head, ast.Expr)
        and isinstance(head.value, ast.Constant)
        and isinstance(head.value.value, str)
        and old.strip()
        and old.strip() in head.value.value
        and head.end_lineno is not None
    ):
        return None
    if not rest or not all(isinstance(n, _DEFS) for n in rest):
        return None
    if not made.body or not all(
        isinstance(n, _DEFS | ast.Import | ast.ImportFrom) for n in made.body
    ):
        return None
    names = [n.name for n in made.body if isinstance(n, _DEFS)]
    if len(set(names)) != len(names):
        return None
    if {n.name for n in rest} <= set(names):
        kept = "".join(source.splitlines(keepends=True)[: head.end_lineno]).rstrip()
        done = f"new defines {listed(names)}, every function the file had, in their place"
        return f"{kept}\n\n\n{new.strip()}\n", done
    if (merge := merged(source, new)) is None:
        return None
    text, replaced, added, above = merge
    done = [f"{listed(replaced)} changed where {_stood(replaced)}"] if replaced else []
    done += [f"{listed(added)} added above {above}"] if added else []
    return text, "; ".join(done)


def same_code(a: str, b: str) -> bool:
    """Whether two Python texts are the same code, blank lines and comments aside."""
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _stood(names: list[str]) -> str:
    return "it stood" if len(names) == 1 else "they stood"


def not_code(edited: str, new: str, first_line: int, name: str) -> str:
    """The functions and classes `new` defines that are no code where it lands in the
    edited Python file, which parses (in a string: Qwen2.5-Coder-1.5B's refactor on the
    CPU sent shapes.py's docstring text as `old` and the whole new module as `new`; the
    code went inside the docstring, the tests still passed, and the goal was called
    verified); "" when each is code, or the file is not Python or does not parse."""
    if not name.lower().endswith((".py", ".pyw")):
        return ""
    try:
        tree = ast.parse(edited)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    lines = {
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    lost = [
        found[1]
        for at, line in enumerate(new.split("\n"))
        if (found := _DEF_LINE.match(line)) and first_line + at not in lines
    ]
    return ", ".join(lost[:5])


def unquoted(content: str, name: str) -> str | None:
    """For a Python file whose whole content is one string that is itself code with a
    call in it (`'print("Hello, world!")'`), that code; None otherwise. The 1.5B's plan
    said "write_file hello_world.py with the following content: 'print("Hello, world!")'",
    and it wrote the quotes too: the file ran and printed nothing, five rounds (the CPU)."""
    if not name.lower().endswith((".py", ".pyw")):
        return None
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    value = tree.body[0].value
    if not isinstance(value, ast.Constant) or not isinstance(value.value, str):
        return None
    inner = value.value.strip()
    try:
        code = ast.parse(inner)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not any(isinstance(node, ast.Call) for node in ast.walk(code)):
        return None
    return inner + "\n"
