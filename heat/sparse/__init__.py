"""
Distributed sparse matrices: ``ht.sparse``.

:class:`DCSR_matrix` holds a ``torch`` sparse CSR tensor of its rows on each process (split 0),
:class:`DCSC_matrix` a CSC tensor of its columns (split 1). Create them with
:func:`sparse_csr_matrix` / :func:`sparse_csc_matrix` (from torch tensors, ``scipy.sparse``
matrices, dense DNDarrays or array-likes) or :func:`to_sparse_csr` / :func:`to_sparse_csc`;
go back with :func:`to_dense`. Element-wise :func:`add` and :func:`mul` (``+``, ``*``) combine
matrices of one format; :func:`sparse_matmul` (``@``) multiplies by a dense DNDarray.

Examples
--------
>>> import scipy.sparse
>>> a = ht.sparse.sparse_csr_matrix(scipy.sparse.random(6, 4, density=0.5), split=0)
>>> (a @ ht.ones((4, 2), split=0)).shape
(6, 2)
"""

from .dcsx_matrix import *  # noqa: F401,F403
from .factories import *  # noqa: F401,F403
from .manipulations import *  # noqa: F401,F403
from .arithmetics import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from . import dcsx_matrix as _dcsx_matrix
from .arithmetics import add, mul
from .manipulations import to_dense
from .products import sparse_matmul


def _install_methods() -> None:
    """The matrices' conversion methods and operators, delegating to the families above."""
    base = _dcsx_matrix._DCSXMatrix

    def todense(self):
        """The dense DNDarray of this matrix, same split (see :func:`heat.sparse.to_dense`)."""
        return to_dense(self)

    base.todense = todense
    base.to_dense = todense
    base.__add__ = lambda self, other: add(self, other)
    base.__radd__ = lambda self, other: add(other, self)
    base.__mul__ = lambda self, other: mul(self, other)
    base.__rmul__ = lambda self, other: mul(other, self)
    base.__matmul__ = lambda self, other: sparse_matmul(self, other)
    for name, function in (("__add__", add), ("__radd__", add), ("__mul__", mul),
                           ("__rmul__", mul), ("__matmul__", sparse_matmul)):
        getattr(base, name).__doc__ = function.__doc__


_install_methods()
del _install_methods
