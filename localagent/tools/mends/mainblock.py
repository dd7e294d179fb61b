"""A write of a program that leaves out the `__main__` block the file had, while its
content still has everything that block uses: the block kept at its end.

Qwen2.5-Coder-1.5B's wordcount.py on the CPU: asked to fix the line that raised, it wrote
`main(args)` fixed and left out the block that parsed the command line and called main.
The write said "but it no longer calls its code when run", the step ended, the run printed
nothing, and the model wrote the file again without the block until blocked.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

from localagent.tools.pkgimports import text_of


def kept(root: Path, name: str, content: str) -> tuple[str, str] | None:
    """The content with the file's `__main__` block added at its end, and that block's
    first line, when the file has one, the content parses and calls nothing at its top
    level, and it defines or imports every name the block uses; None otherwise."""
    if not name.lower().endswith((".py", ".pyw")):
        return None
    source = text_of(root, name)
    old, new = _tree(source or ""), _tree(content)
    if source is None or old is None or new is None or _acts(new):
        return None
    block = next((n for n in old.body if _is_main(n)), None)
    if block is None or not _has_all(new, block):
        return None
    text = ast.get_source_segment(source, block)
    if not text:
        return None
    return f"{content.rstrip()}\n\n\n{text}\n", text.splitlines()[0]


def kept_note(first: str) -> str:
    """What the write says of it."""
    return (
        f"; it left out the `{first}` block the file had, which calls its code when it "
        "runs, so that block was kept at its end"
    )


def _tree(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _is_main(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


def _acts(tree: ast.Module) -> bool:
    """A call at its top level, or a `__main__` block (as `pyscript` reads it)."""
    return any(
        (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)) or _is_main(n)
        for n in tree.body
    )


def _has_all(tree: ast.Module, block: ast.If) -> bool:
    """Whether every name the block reads and does not bind itself is bound at the top
    of `tree` (a def, a class, an import, an assignment) or is a builtin."""
    bound = {"__name__"} | set(dir(builtins))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    names = [n for n in ast.walk(block) if isinstance(n, ast.Name)]
    bound |= {n.id for n in names if isinstance(n.ctx, ast.Store)}
    return all(n.id in bound for n in names if isinstance(n.ctx, ast.Load))
