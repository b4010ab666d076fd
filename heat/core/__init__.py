"""The core of heat: the distributed array, its engines and the function families."""

from .communication import MPI  # noqa: F401

from .communication import *  # noqa: F401,F403
from .devices import *  # noqa: F401,F403
from .types import *  # noqa: F401,F403
from .types import finfo, iinfo  # noqa: F401
from .constants import *  # noqa: F401,F403
from .dndarray import DNDarray  # noqa: F401
from .base import *  # noqa: F401,F403
from .sanitation import broadcast_shapes  # noqa: F401
from .factories import *  # noqa: F401,F403
from .layout import *  # noqa: F401,F403
from .arithmetics import *  # noqa: F401,F403
from .complex_math import *  # noqa: F401,F403
from .exponential import *  # noqa: F401,F403
from .trigonometrics import *  # noqa: F401,F403
from .rounding import *  # noqa: F401,F403
from .relational import *  # noqa: F401,F403
from .logical import *  # noqa: F401,F403
from .printing import *  # noqa: F401,F403
from .manipulations import *  # noqa: F401,F403
from .joining import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .quantiles import *  # noqa: F401,F403
from .histograms import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .sets import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403
from .partition import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .vmap import *  # noqa: F401,F403
from . import linalg  # noqa: F401
from . import random  # noqa: F401
from . import random_generator as _random_generator

# NumPy's Generator interface draws with random's functions, so it sits above that module;
# ht.random shows it beside them
random.Generator = _random_generator.Generator
random.default_rng = _random_generator.default_rng
random.__all__ = sorted(random.__all__ + ["Generator", "default_rng"])

from . import _methods  # noqa: E402

# DNDarray's operators and family-backed methods, now that every family is imported
_methods.install(globals())

# the newest version of the array API standard heat implements (x.__array_namespace__() is heat)
__array_api_version__ = _methods.API_VERSIONS[-1]

# what ``from heat.core import *`` gives heat: every public name, and the standard's two dunders
__all__ = [name for name in globals() if not name.startswith("_")] + [
    "__array_api_version__",
    "__array_namespace_info__",  # noqa: F405 (defined by the star import of _methods)
]
