"""A program's entry function that takes its parsed command line (`def main(args):`,
its code reading `args.file` and `args.lines`) where nothing parses it or calls it.

Qwen2.5-Coder-1.5B's wordcount.py on the CPU, twice: `import argparse`, then `def
main(args):` reading `args.file` and testing `args.lines`, and no parser and no call. Told
that it printed nothing and to make it call its code, it wrote the same file again until
blocked. What it lacks can be read from the function: each attribute the code tests
alone (`if args.lines:`) is a flag, each other one an argument, in the order the code
first uses them.
"""

from __future__ import annotations

import ast

__all__ = ["Parsed", "block", "entry", "imports_argparse"]

# What a function that takes the parsed command line calls its parameter.
_PARAMETERS = ("args", "arguments", "opts", "options", "ns", "namespace", "parsed", "params")


Parsed = tuple[str, tuple[str, ...], tuple[str, ...]]  # the function, arguments, flags


def entry(tree: ast.Module, names: tuple[str, ...]) -> Parsed | None:
    """The one top-level function (of `names`, most likely first, else the only one)
    that takes a parsed command line as its one parameter and only reads attributes of
    it, with the arguments and flags it reads; None when there is none, or several."""
    found: dict[str, Parsed] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and (read := _reads(node)) is not None:
            found[node.name] = (node.name, *read)
    named = [found[name] for name in names if name in found]
    if named:
        return named[0]
    return next(iter(found.values())) if len(found) == 1 else None


def _reads(function: ast.FunctionDef) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    given = function.args
    if function.decorator_list or given.posonlyargs or given.kwonlyargs or given.vararg:
        return None
    if len(given.args) != 1 or given.defaults or given.args[0].arg not in _PARAMETERS:
        return None
    param = given.args[0].arg
    parents = {child: node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    order: list[str] = []
    tested: set[str] = set()
    for node in ast.walk(function):
        if not (isinstance(node, ast.Name) and node.id == param) or node is given.args[0]:
            continue
        attribute = parents.get(node)
        if not isinstance(attribute, ast.Attribute) or not isinstance(attribute.ctx, ast.Load):
            return None  # the namespace handed on or changed: not only read
        if attribute.attr not in order:
            order.append(attribute.attr)
        if _alone_tested(attribute, parents):
            tested.add(attribute.attr)
    if not order:
        return None
    lines = {a: min(_line(n, a, param) for n in ast.walk(function)) for a in order}
    order.sort(key=lambda a: lines[a])
    flags = tuple(a for a in order if a in tested)
    return tuple(a for a in order if a not in tested), flags


def _alone_tested(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """`if args.lines:`, `x if args.lines else y`, `not args.lines`, `args.a or args.b`."""
    parent = parents.get(node)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return True
    if isinstance(parent, ast.BoolOp):
        return True
    return isinstance(parent, ast.If | ast.IfExp | ast.While) and parent.test is node


def _line(node: ast.AST, attribute: str, param: str) -> tuple[int, int]:
    """Where `param.attribute` is, for `node` that is it (else past the end)."""
    if (
        isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.value, ast.Name)
        and node.value.id == param
    ):
        return node.lineno, node.col_offset
    return 1 << 30, 0


def block(found: Parsed, imported: bool) -> str:
    """The `__main__` block that parses the command line and calls the function."""
    name, arguments, flags = found
    lines = ['if __name__ == "__main__":']
    if not imported:
        lines.append("    import argparse")
    lines.append("    parser = argparse.ArgumentParser()")
    lines += [f'    parser.add_argument("{a}")' for a in arguments]
    lines += [f'    parser.add_argument("--{f}", action="store_true")' for f in flags]
    lines.append(f"    {name}(parser.parse_args())")
    return "\n".join(lines)


def imports_argparse(tree: ast.Module) -> bool:
    """`import argparse` at the module's top level."""
    return any(
        isinstance(node, ast.Import)
        and any(a.name == "argparse" and not a.asname for a in node.names)
        for node in tree.body
    )
