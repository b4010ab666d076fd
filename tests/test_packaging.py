"""
The distribution's name (issue 18, item 25): ``heat`` on PyPI is HeAT, so ``pip install -U heat``
would replace this install with HeAT 1.8 and a CUDA torch. The distribution is ``heat-mpi`` (the
import name stays ``heat``), and every install hint heat prints names it.
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setup_keywords():
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setup":
            return {k.arg: k.value for k in node.keywords}
    raise AssertionError("no setup(...) call in setup.py")


def test_distribution_name_is_not_heats():
    name = _setup_keywords()["name"]
    assert isinstance(name, ast.Constant) and name.value == "heat-mpi"
    packages = (ROOT / "setup.py").read_text()
    assert 'include=["heat", "heat.*"]' in packages  # the import name stays heat


def test_install_hints_name_this_distribution():
    # "pip install heat[...]" would install HeAT; hints must say heat-mpi[...]
    wrong = []
    for path in (ROOT / "heat").rglob("*.py"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"pip install '?heat\[", line):
                wrong.append(f"{path.relative_to(ROOT)}:{number}")
    assert not wrong, f"install hints naming HeAT's distribution: {wrong}"
