"""The call graph of a small package with names defined twice: each edge says how sure
it is (exact, by import, by name only, ambiguous)."""

from __future__ import annotations

from pathlib import Path

from research_support import make_package

from localagent.research.callgraph import CallGraph, Def, describe, graph_for
from localagent.research.search import index_folder, open_index


def graph(root: Path) -> CallGraph:
    return graph_for(open_index(root), index_folder(root))


def one(g: CallGraph, symbol: str) -> Def:
    [found] = g.find(symbol)
    return found


def edges(g: CallGraph, symbol: str, direction: str) -> set[tuple[str, int, str]]:
    target = one(g, symbol)
    found = g.callees(target) if direction == "callees" else g.callers(target)
    other = (lambda e: e.callee.id) if direction == "callees" else (lambda e: e.path)
    return {(other(e), e.line, e.confidence) for e in found}


def test_calls_resolve_with_their_confidence(tmp_path: Path) -> None:
    g = graph(make_package(tmp_path))
    assert edges(g, "Session.request", "callees") == {
        ("shop/auth.py::basic_auth_header", 15, "import"),
        ("shop/sessions.py::Session.send", 16, "exact"),
        ("shop/sessions.py::Session.resolve_redirects", 17, "exact"),
    }
    # `cart.check` goes through `from shop import cart`, not to auth.check.
    assert ("shop/cart.py::check", 28, "import") in edges(g, "Session.resolve_redirects", "callees")
    assert edges(g, "shop/auth.py::check", "callers") == {("shop/orders.py", 21, "ambiguous")}


def test_ambiguous_names_and_inherited_methods(tmp_path: Path) -> None:
    g = graph(make_package(tmp_path))
    assert len(g.find("validate")) == 2 and len(g.find("check")) == 2
    assert edges(g, "finish", "callees") == {
        ("shop/orders.py::Order.validate", 20, "ambiguous"),
        ("shop/orders.py::Payment.validate", 20, "ambiguous"),
        ("shop/auth.py::check", 21, "ambiguous"),
        ("shop/cart.py::check", 21, "ambiguous"),
    }
    assert edges(g, "Express.ship", "callees") == {("shop/orders.py::Order.validate", 16, "exact")}
    text = describe(g.callees(one(g, "finish")), one(g, "finish"), "callees")
    assert "[ambiguous: one of 2 definitions named so]" in text
    assert g.find("shop/orders.py::Order.validate") and not g.find("shop/nowhere.py::x")


def test_graph_facts_follow_edits(tmp_path: Path) -> None:
    root = make_package(tmp_path)
    graph(root)
    orders = root / "shop/orders.py"
    orders.write_text(orders.read_text() + "\n\ndef again(item):\n    return finish(item)\n")
    g = graph(root)
    assert edges(g, "finish", "callers") == {("shop/orders.py", 25, "exact")}
