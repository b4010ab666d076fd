"""
Linear algebra on DNDarrays (``ht.linalg.*``; the functions are also ``ht.*``, as in HeAT).

==============  ==================================================================================
basics          diagonals, triangles, transposes: ``diag``, ``diagonal``, ``trace``, ``tril``,
                ``triu``, ``matrix_transpose``
products        ``matmul`` (the ``@`` operator), ``dot``, ``vdot``, ``vecdot``, ``outer``,
                ``cross``, ``projection``, ``tensordot``; the distributed matrix product
                itself is ``_matmul``
norms           ``vector_norm``, ``matrix_norm``, ``norm``
solvers         ``det``, ``slogdet``, ``inv``, ``matrix_power``, ``cholesky``, ``solve``,
                ``solve_triangular``, ``matrix_exp`` (``expm``), ``condest``; ``LinAlgError``
                (a ValueError, as NumPy's)
decompositions  ``qr`` (TSQR, block Gram-Schmidt), ``svd`` (tall-skinny via TSQR), ``svdvals``,
                ``matrix_rank``, ``pinv``, ``eigh``, ``eigvalsh``, ``eig``, ``eigvals``,
                ``polar``
iterative       ``cg``, ``lanczos``
randomized      ``rsvd``, ``reigh``
svdtools        ``hsvd``, ``hsvd_rank``, ``hsvd_rtol`` (hierarchical SVD), ``isvd`` (incremental SVD)
==============  ==================================================================================

``transpose`` (:func:`heat.transpose`) is here too, as in HeAT's ``linalg`` namespace.
"""

from .basics import *  # noqa: F401,F403
from .decompositions import *  # noqa: F401,F403
from .iterative import *  # noqa: F401,F403
from .norms import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from .randomized import *  # noqa: F401,F403
from .solvers import *  # noqa: F401,F403
from .solvers import LinAlgError  # noqa: F401
from .svdtools import *  # noqa: F401,F403
from ..manipulations import transpose  # noqa: F401

from . import basics as _basics
from . import decompositions as _decompositions
from . import iterative as _iterative
from . import norms as _norms
from . import products as _products
from . import randomized as _randomized
from . import solvers as _solvers
from . import svdtools as _svdtools


# everything but LinAlgError is also exported as ht.* (as HeAT does)
__all__ = (
    _basics.__all__
    + _decompositions.__all__
    + _iterative.__all__
    + _norms.__all__
    + _products.__all__
    + _randomized.__all__
    + [name for name in _solvers.__all__ if name != "LinAlgError"]
    + _svdtools.__all__
)
