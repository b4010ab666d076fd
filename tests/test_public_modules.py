"""
The namespaces heat exposes as ``ht.<name>`` but keeps in heat/core (``ht.linalg``,
``ht.random``, ``ht.types``, ...) are importable by their public dotted name, as NumPy's
(``import numpy.linalg``, ``from numpy.linalg import norm``), and are the same module objects;
no module is ever loaded twice under two names.
"""

import importlib
import pickle
import subprocess
import sys
import types

import pytest

import heat as ht
from tests.helpers import collective_assert, fresh_job_environment

# every module attribute of heat that is a heat module
PUBLIC_MODULES = sorted(
    name
    for name, value in vars(ht).items()
    if not name.startswith("_")
    and isinstance(value, types.ModuleType)
    and value.__name__.startswith("heat.")
)


def test_the_numpy_namespaces_are_listed():
    for name in ("linalg", "random", "fft", "cluster", "spatial", "utils", "nn", "optim"):
        assert name in PUBLIC_MODULES


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_import_by_public_name(name):
    module = importlib.import_module(f"heat.{name}")
    assert module is getattr(ht, name)
    assert sys.modules[f"heat.{name}"] is module


def test_import_statements():
    import heat.linalg as la
    import heat.random
    from heat.linalg import norm, qr
    from heat.random import rand

    assert la is ht.linalg
    assert heat.random is ht.random
    assert qr is ht.linalg.qr and norm is ht.linalg.norm
    assert rand is ht.random.rand
    x = ht.random.rand(6, 3, split=0)
    q, r = qr(x)
    assert q.shape == (6, 3) and r.shape == (3, 3)


def test_the_modules_keep_their_own_names():
    # __name__ and __spec__ still say where the code lives: pickle, reload and tracebacks use them
    assert ht.linalg.__name__ == "heat.core.linalg"
    assert ht.linalg.__spec__.name == "heat.core.linalg"
    assert ht.random.__spec__.name == "heat.core.random"


def test_submodules_of_an_aliased_package():
    basics = importlib.import_module("heat.linalg.basics")
    assert basics is sys.modules["heat.core.linalg.basics"]
    from heat.linalg.basics import trace

    assert trace is ht.linalg.trace


def test_a_submodule_not_yet_registered_is_the_same_module(monkeypatch):
    # as for a submodule imported lazily after heat: the finder hands out the heat.core module
    real = sys.modules["heat.core.linalg.norms"]
    monkeypatch.delitem(sys.modules, "heat.linalg.norms")
    module = importlib.import_module("heat.linalg.norms")
    assert module is real
    assert module.__spec__.name == "heat.core.linalg.norms"
    assert sys.modules["heat.linalg.norms"] is real


def test_missing_submodule_names_the_requested_module():
    with pytest.raises(ModuleNotFoundError, match="heat.linalg.no_such_module"):
        importlib.import_module("heat.linalg.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("heat.no_such_module")


def test_real_packages_are_untouched():
    for name in ("cluster", "spatial", "utils", "nn", "optim", "fft", "preprocessing"):
        module = importlib.import_module(f"heat.{name}")
        assert module.__name__ == f"heat.{name}"
        assert module.__spec__.name == f"heat.{name}"


def test_pickle_functions_of_the_public_namespaces():
    for function in (ht.linalg.qr, ht.linalg.norm, ht.random.rand, ht.random.randn):
        assert pickle.loads(pickle.dumps(function)) is function
    x = ht.linalg.norm(ht.arange(4, dtype=ht.float32, split=0))
    y = pickle.loads(pickle.dumps(ht.linalg.norm))(ht.arange(4, dtype=ht.float32, split=0))
    assert x.item() == y.item()


@pytest.mark.slow
def test_fresh_interpreter_imports_the_submodule_first():
    """``import heat.linalg`` (and ``from heat.random import ...``) before anything else."""
    ok, message = True, ""
    if ht.MPI_WORLD.rank == 0:
        code = (
            "import heat.linalg as la, sys\n"
            "from heat.random import rand\n"
            "import heat\n"
            "assert la is heat.linalg and rand is heat.random.rand\n"
            "assert 'heat.linalg' in sys.modules\n"
            "print('ok')\n"
        )
        process = subprocess.run(
            [sys.executable, "-c", code],
            env=fresh_job_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=100,
            check=False,
        )
        ok = process.returncode == 0 and process.stdout.strip().endswith("ok")
        message = process.stderr[-2000:]
    collective_assert(ok, message)
