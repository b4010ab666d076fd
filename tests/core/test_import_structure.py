"""
The import graph of heat/core points down (../shared/DESIGN.md, "Layers").

Every ``from . import x`` / ``from .x import y`` of heat/core and its subpackages counts, at module
level and inside functions alike: an import deferred into a function is still an arrow, and
deferring it only hides a circle. The test reads the source (no interpreter state involved), so it
gives the same answer on every rank and in every order of test execution.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

import heat

CORE = Path(heat.__file__).resolve().parent / "core"

# The foundation, lowest first: each may import only foundation modules listed before it. Above
# them sit the function families (any order, no circle), and above the families only _methods,
# which installs DNDarray's family-backed methods and is imported by heat/core/__init__.py alone.
FOUNDATION = (
    "constants",
    "_parallel",
    "communication",
    "devices",
    "types",
    "dndarray",
    "sanitation",
    "_conversion",
    "_redistribution",
    "_operations",
)
TOP = "_methods"


def _module_name(path: Path, root: Path) -> str:
    """``linalg.basics`` for heat/core/linalg/basics.py; a package is named by its folder."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _node(name: str, nodes: Set[str]) -> str:
    """The graph node of a module: a package of the foundation (communication) is one node."""
    for foundation in FOUNDATION:
        if name == foundation or name.startswith(foundation + "."):
            return foundation
    return name if name in nodes else name.rsplit(".", 1)[0]


def import_graph(root: Path = CORE) -> Dict[str, Dict[str, List[int]]]:
    """``{module: {imported module: [line numbers]}}`` over every module of the package ``root``."""
    modules = {_module_name(p, root): p for p in root.rglob("*.py") if _module_name(p, root)}
    names = set(modules)
    graph: Dict[str, Dict[str, List[int]]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        edges = graph.setdefault(_node(name, names), {})
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            if node.level - 1 > len(package):
                continue  # beyond heat.core (e.g. heat._version)
            base = package[: len(package) - (node.level - 1)]
            targets = []
            if node.module:
                targets.append(".".join(base + node.module.split(".")))
            else:
                targets.extend(".".join(base + [alias.name]) for alias in node.names)
            for target in targets:
                while target and target not in names:
                    target = target.rsplit(".", 1)[0] if "." in target else ""
                if not target:
                    continue
                target_node = _node(target, names)
                if target_node != _node(name, names):
                    edges.setdefault(target_node, []).append(node.lineno)
    return graph


def find_cycle(graph: Dict[str, Dict[str, List[int]]]) -> List[str]:
    """One import circle of ``graph`` as a list of modules (empty if there is none)."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []

    def visit(node: str) -> List[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, {})):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return []


def test_no_import_cycle_in_core():
    graph = import_graph()
    cycle = find_cycle(graph)
    lines = [f"{a} imports {b} (line {graph[a][b][0]})" for a, b in zip(cycle, cycle[1:])]
    assert not cycle, "import circle in heat/core:\n  " + "\n  ".join(lines)


def test_foundation_imports_only_below_itself():
    graph = import_graph()
    wrong = []
    for rank, module in enumerate(FOUNDATION):
        allowed = set(FOUNDATION[:rank])
        for target, lines in graph.get(module, {}).items():
            if target not in allowed:
                wrong.append(f"{module} imports {target} (line {lines[0]})")
    assert not wrong, "foundation modules import upward:\n  " + "\n  ".join(wrong)


def test_only_core_init_imports_the_method_installer():
    graph = import_graph()
    importers = sorted(m for m, edges in graph.items() if TOP in edges and m != "")
    assert importers == [], f"{importers} import {TOP}; only heat/core/__init__.py may"


def test_the_checks_see_deferred_imports_and_circles(tmp_path):
    # the graph builder itself, on a small package: an import inside a function counts, a
    # subpackage's relative imports resolve, and a circle through them is found
    (tmp_path / "sub").mkdir()
    (tmp_path / "__init__.py").write_text("from .a import f\n")
    (tmp_path / "a.py").write_text("from .sub.b import g\n")
    (tmp_path / "sub" / "__init__.py").write_text("")
    (tmp_path / "sub" / "b.py").write_text("def g():\n    from ..c import h\n")
    (tmp_path / "c.py").write_text("import os\n\ndef h():\n    from . import a\n")
    graph = import_graph(tmp_path)
    assert graph["a"] == {"sub.b": [1]}
    assert graph["sub.b"] == {"c": [2]}
    assert graph["c"] == {"a": [4]}
    assert find_cycle(graph) == ["a", "sub.b", "c", "a"]
    (tmp_path / "c.py").write_text("def h():\n    return 1\n")
    assert find_cycle(import_graph(tmp_path)) == []
