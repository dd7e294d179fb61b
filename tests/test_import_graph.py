"""Every import points down: no cycle among packages or modules, counting imports under
TYPE_CHECKING and inside functions (scripts/import_graph.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "import_graph.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_localagent_has_no_import_cycle() -> None:
    graph = _script()
    found = graph.imports(graph.ROOT)
    assert graph.problems(found) == []
    floors = graph.floors(graph.graph(found, by_package=True))
    assert floors["system"] < floors["journal"] < floors["loop"] < floors["cli"]


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_a_type_only_or_lazy_cycle_is_found(tmp_path: Path) -> None:
    graph = _script()
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": "",
            "low/a.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pkg.low.b import B\n",
            "low/b.py": "from pkg.low import a\n",
            "low/c.py": "def f():\n    from pkg.high.d import g\n",
            "high/__init__.py": "",
            "high/d.py": "from ..low import c\n\ndef g():\n    pass\n",
        },
    )
    said = "\n".join(graph.problems(graph.imports(root)))
    assert "cycle among packages: high <-> low" in said
    assert "pkg.low.c:2 -> pkg.high.d (lazy)" in said
    assert "cycle among modules: pkg.low.a <-> pkg.low.b" in said
    assert "pkg.low.a:3 -> pkg.low.b (type)" in said
