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
from .manipulations import to_dense, to_sparse_csc, to_sparse_csr
from ..core.dndarray import DNDarray as _DNDarray
from .products import sparse_matmul


def _install_methods() -> None:
    """
    The matrices' conversion methods and operators, delegating to the families above, and
    DNDarray's ``to_sparse_csr`` / ``to_sparse_csc`` (installed from here, above heat.core, so
    heat.core never imports heat.sparse).
    """
    base = _dcsx_matrix._DCSXMatrix

    def todense(self, order="C", out=None):
        """
        The dense DNDarray of this matrix, same split; ``out``: a DNDarray of the matrix's shape,
        dtype and split to write into and return (see :func:`heat.sparse.to_dense`).

        Examples
        --------
        >>> a = ht.sparse.sparse_csr_matrix([[1.0, 0], [0, 2.0]], split=0)
        >>> a.todense(out=ht.zeros((2, 2), split=0)).sum().item()
        3.0
        """
        return to_dense(self, order=order, out=out)

    def dndarray_to_sparse_csr(self):
        """
        This 2-D array as a :class:`~heat.sparse.DCSR_matrix` (see :func:`heat.sparse.to_sparse_csr`).

        Examples
        --------
        >>> ht.array([[1.0, 0], [0, 2.0]], split=0).to_sparse_csr().gnnz
        2
        """
        return to_sparse_csr(self)

    def dndarray_to_sparse_csc(self):
        """
        This 2-D array as a :class:`~heat.sparse.DCSC_matrix` (see :func:`heat.sparse.to_sparse_csc`).

        Examples
        --------
        >>> ht.array([[1.0, 0], [0, 2.0]], split=1).to_sparse_csc().split
        1
        """
        return to_sparse_csc(self)

    dndarray_to_sparse_csr.__name__ = "to_sparse_csr"
    dndarray_to_sparse_csc.__name__ = "to_sparse_csc"
    _DNDarray.to_sparse_csr = dndarray_to_sparse_csr
    _DNDarray.to_sparse_csc = dndarray_to_sparse_csc

    base.todense = todense
    base.to_dense = todense
    base.__add__ = lambda self, other: add(self, other)
    base.__radd__ = lambda self, other: add(other, self)
    base.__mul__ = lambda self, other: mul(self, other)
    base.__rmul__ = lambda self, other: mul(other, self)
    base.__matmul__ = lambda self, other: sparse_matmul(self, other)
    for name, function in (
        ("__add__", add),
        ("__radd__", add),
        ("__mul__", mul),
        ("__rmul__", mul),
        ("__matmul__", sparse_matmul),
    ):
        getattr(base, name).__doc__ = function.__doc__


_install_methods()
del _install_methods
