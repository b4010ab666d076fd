"""
heat: distributed tensor computing and data-parallel deep learning on MPI and PyTorch.

>>> import heat as ht
>>> x = ht.arange(10, split=0)
>>> x.sum().item()
45
"""

from ._version import __version__  # noqa: F401
from .core import *  # noqa: F401,F403
from .core import linalg, random  # noqa: F401
from . import utils  # noqa: F401,E402
from . import nn, optim  # noqa: F401,E402
from . import preprocessing  # noqa: F401,E402
from . import spatial  # noqa: F401,E402
from . import cluster  # noqa: F401,E402
from . import regression, decomposition, naive_bayes, classification  # noqa: F401,E402
from . import fft  # noqa: F401,E402
from . import signal  # noqa: F401,E402
from . import sparse  # noqa: F401,E402
from . import graph  # noqa: F401,E402
from . import datasets  # noqa: F401,E402
from .signal import convolve, convolve2d  # noqa: F401,E402  (HeAT and NumPy have them in the main namespace)


def _register_public_modules() -> None:
    """
    Make the namespaces that live in heat/core but are public as ``ht.<name>`` (``ht.linalg``,
    ``ht.random``, ``ht.types``, ...) importable by their public dotted name, as NumPy's
    (``import heat.linalg``, ``from heat.linalg import qr``): ``heat.<name>`` and every loaded
    submodule below it are the same module objects in ``sys.modules``. A finder answers for
    submodules below them that are not loaded yet with the ``heat.core`` module itself, so no
    module is ever loaded twice under two names.
    """
    import importlib.abc
    import importlib.util
    import sys
    import types as _module_types

    aliases = {}
    for name, value in list(globals().items()):
        if (
            not name.startswith("_")
            and isinstance(value, _module_types.ModuleType)
            and value.__name__ == f"{__name__}.core.{name}"
            and f"{__name__}.{name}" not in sys.modules
        ):
            aliases[f"{__name__}.{name}"] = value.__name__
    for alias, real in aliases.items():
        for loaded, module in list(sys.modules.items()):
            if loaded == real or loaded.startswith(real + "."):
                sys.modules.setdefault(alias + loaded[len(real) :], module)

    class _AliasLoader(importlib.abc.Loader):
        def __init__(self, module):
            self.module, self.spec = module, module.__spec__

        def create_module(self, spec):
            return self.module

        def exec_module(self, module):
            module.__spec__ = self.spec  # the import machinery set the alias's spec

    class _AliasFinder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            for alias, real in aliases.items():
                if fullname.startswith(alias + "."):
                    target_name = real + fullname[len(alias) :]
                    try:
                        module = importlib.import_module(target_name)
                    except ModuleNotFoundError as error:
                        if error.name != target_name:
                            raise
                        return None  # the error then names the module asked for
                    return importlib.util.spec_from_loader(fullname, _AliasLoader(module))
            return None

    sys.meta_path.insert(0, _AliasFinder())


_register_public_modules()
