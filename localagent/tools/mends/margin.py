"""The last lines of a function that a small model wrote at the margin, put back inside it.

Qwen2.5-Coder-1.5B's wordcount.py on the CPU: `def main():` parsed the command line into
`args`, and the code that used it followed at the margin, `if args.lines: ...`, so every
run raised "NameError: name 'args' is not defined". Those lines read a name that only the
function binds: they are its body, written one level too far left.
"""

from __future__ import annotations

import ast
import builtins

from localagent.tools import undefined
from localagent.tools.pkgimports import tree_of

_FUNCTION = ast.FunctionDef | ast.AsyncFunctionDef
_BUILTINS = frozenset(dir(builtins))


def indented(name: str, content: str) -> tuple[str, str, list[str]] | None:
    """(the content with the lines put inside the function, its name, the names that were
    unbound) for Python content where a top-level function is followed by statements
    that read names nothing above them binds and the function does (or that `return`),
    and nothing else reads what they bind; None for any other content."""
    tree = tree_of(content) if name.lower().endswith((".py", ".pyw")) else None
    if tree is None:
        return None
    above: set[str] = set()  # what the statements so far bind (a `__main__` block below may)
    for at, node in enumerate(tree.body):
        above |= undefined.bound(ast.Module(body=[node], type_ignores=[]))
        run = _run(tree.body[at + 1 :]) if isinstance(node, _FUNCTION) else []
        if not run:
            continue
        wanted = _read(run) - above - _bound(run) - _BUILTINS
        if not (wanted or _returns(run)) or not (wanted <= _locals(node)):
            continue
        if _bound(run) & _globals_read([n for n in tree.body if n is not node and n not in run]):
            continue  # what the lines bind is used at the top level: they belong there
        text = _moved(content, node, run)
        if text is not None:
            return text, node.name, sorted(wanted)
    return None


def indented_note(function: str, names: list[str]) -> str:
    """What the write says of the lines it put back inside the function."""
    listed = ", ".join(f"`{n}`" for n in names)
    what = f"read {listed}, which only {function} binds" if names else f"return from {function}"
    return (
        f"; the lines after {function} {what}, but were written at the margin, so they "
        f"were written inside {function}"
    )


def _run(after: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that follow a function up to the next definition, import or
    `if __name__ == "__main__":` block."""
    run: list[ast.stmt] = []
    for node in after:
        if isinstance(node, _FUNCTION | ast.ClassDef | ast.Import | ast.ImportFrom):
            break
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
            break
        run.append(node)
    return run


def _read(nodes: list[ast.stmt]) -> set[str]:
    return _names(nodes, ast.Load)


def _globals_read(nodes: list[ast.stmt]) -> set[str]:
    """The names the statements read from the module: a function's own names aside."""
    found: set[str] = set()
    for node in nodes:
        found |= _read([node]) - _locals(node) if isinstance(node, _FUNCTION) else _read([node])
    return found


def _bound(nodes: list[ast.stmt]) -> set[str]:
    return _names(nodes, ast.Store)


def _names(nodes: list[ast.stmt], context: type[ast.expr_context]) -> set[str]:
    """The names the statements read (`ast.Load`) or bind (`ast.Store`), nested ones too."""
    return {
        n.id
        for node in nodes
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, context)
    }


def _returns(nodes: list[ast.stmt]) -> bool:
    """Whether a `return` stands among the statements, outside any function of their own."""
    todo: list[ast.AST] = list(nodes)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            return True
        if not isinstance(node, _FUNCTION | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))
    return False


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    params = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    params += [a for a in (function.args.vararg, function.args.kwarg) if a is not None]
    body = ast.Module(body=function.body, type_ignores=[])
    return {a.arg for a in params} | undefined.bound(body)


def _moved(
    content: str, function: ast.FunctionDef | ast.AsyncFunctionDef, run: list[ast.stmt]
) -> str | None:
    """The content with the run's lines indented as the function's body; None when its
    body's indent is unknown, a string spans lines (indenting would change it) or the
    result does not compile."""
    lines = content.splitlines(keepends=True)
    first = function.body[0]
    if first.lineno == function.lineno:
        return None  # `def f(): x = 1` on one line
    indent = lines[first.lineno - 1][: first.col_offset]
    if indent.strip() or not indent:
        return None
    for node in ast.walk(ast.Module(body=run, type_ignores=[])):
        if isinstance(node, ast.Constant | ast.JoinedStr) and node.end_lineno != node.lineno:
            return None
    start, end = run[0].lineno - 1, run[-1].end_lineno or run[-1].lineno
    moved = []
    for line in lines[start:end]:
        moved.append(indent + line if line.strip() else line)
    text = "".join([*lines[:start], *moved, *lines[end:]])
    try:
        compile(text, "<content>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return text
