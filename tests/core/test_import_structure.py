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
    "parallel",
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


def _annotation_only(tree: ast.AST, _cache: Dict[int, Set[int]] = {}) -> Set[int]:  # noqa: B006 (a cache)
    """The ids of the nodes inside ``if TYPE_CHECKING:`` blocks of ``tree``."""
    if id(tree) not in _cache:
        inside: Set[int] = set()
        for node in ast.walk(tree):
            test = getattr(node, "test", None)
            if isinstance(node, ast.If) and (
                (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
                or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
            ):
                inside.update(id(child) for part in node.body for child in ast.walk(part))
        _cache.clear()  # one tree at a time: ids of freed trees may be reused
        _cache[id(tree)] = inside
    return _cache[id(tree)]


def import_graph(root: Path = CORE) -> Dict[str, Dict[str, List[int]]]:
    """``{module: {imported module: [line numbers]}}`` over every module of the package ``root``."""
    modules = {_module_name(p, root): p for p in root.rglob("*.py") if _module_name(p, root)}
    names = set(modules)
    graph: Dict[str, Dict[str, List[int]]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        edges = graph.setdefault(_node(name, names), {})
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level == 0:
                continue
            if id(node) in _annotation_only(tree):
                continue  # ``if TYPE_CHECKING:`` imports run only under a type checker
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
                return path[path.index(target) :] + [target]
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


def test_no_import_cycle_inside_core_packages():
    # the foundation package (communication) is one node above; inside it, as inside every
    # other package of heat/core, the modules must not import each other in a circle either
    for init in sorted(CORE.rglob("__init__.py")):
        package = init.parent
        if package == CORE:
            continue
        graph = import_graph(package)
        cycle = find_cycle(graph)
        lines = [f"{a} imports {b} (line {graph[a][b][0]})" for a, b in zip(cycle, cycle[1:])]
        assert not cycle, f"import circle in {package.relative_to(CORE.parent)}:\n  " + "\n  ".join(
            lines
        )


HEAT_ROOT = CORE.parent
#: the one door (DESIGN.md): only these may talk to mpi4py and torch.distributed themselves
DOOR = (CORE / "communication", HEAT_ROOT / "cli.py")


def communication_outside_the_door(root: Path = HEAT_ROOT) -> List[str]:
    """Every import of mpi4py or torch.distributed, and every use of ``COMM_WORLD``, in the
    modules of ``root`` outside :data:`DOOR` (``path:line what``)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if any(path == door or door in path.parents for door in DOOR):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            bad = [
                n for n in names if n.split(".")[0] == "mpi4py" or n.startswith("torch.distributed")
            ]
            if bad:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno} imports {bad[0]}")
            if isinstance(node, ast.Attribute) and node.attr == "COMM_WORLD":
                found.append(f"{path.relative_to(root.parent)}:{node.lineno} uses COMM_WORLD")
    return found


def test_only_the_communication_package_talks_to_mpi_and_torch_distributed():
    found = communication_outside_the_door()
    assert not found, (
        "outside heat/core/communication (and cli.py), ask the communicator instead of mpi4py or "
        "torch.distributed (MPI constants: heat.core.communication.MPI):\n  " + "\n  ".join(found)
    )


def test_the_door_check_sees_every_form(tmp_path):
    (tmp_path / "core" / "communication").mkdir(parents=True)
    (tmp_path / "core" / "communication" / "ok.py").write_text("from mpi4py import MPI\n")
    (tmp_path / "a.py").write_text(
        "import torch.distributed as dist\nfrom mpi4py import MPI\nfrom torch import distributed\n"
        "def f(MPI):\n    return MPI.COMM_WORLD\n"
    )
    global DOOR
    saved, DOOR = DOOR, (tmp_path / "core" / "communication",)
    try:
        found = communication_outside_the_door(tmp_path)
    finally:
        DOOR = saved
    assert [f.split(" ", 1)[0].rsplit(":", 1)[1] for f in found] == ["1", "2", "3", "5"], found
