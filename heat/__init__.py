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
from .signal import convolve, convolve2d  # noqa: F401,E402  (HeAT and NumPy have them in the main namespace)
