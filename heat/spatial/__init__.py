"""
Distances between distributed samples (``ht.spatial``): :func:`cdist`, :func:`rbf` and
:func:`manhattan`, computed with a ring exchange when both operands are split along the rows.
"""

from .distance import *  # noqa: F401,F403
from .distance import __all__  # noqa: F401
from . import distance  # noqa: F401
