"""
Matrix decompositions of distributed data (``ht.decomposition``), with scikit-learn's
estimators and attributes: :class:`PCA` (exact, hierarchical or randomized SVD) and
:class:`IncrementalPCA` (fitted batch by batch with ``partial_fit``).
"""

from .pca import *  # noqa: F401,F403
from .pca import __all__  # noqa: F401
from .dmd import DMD, DMDc  # noqa: F401

__all__ = __all__ + ["DMD", "DMDc"]
