"""
Randomized low-rank decompositions: ``rsvd`` and ``reigh`` (Halko, Martinsson and Tropp, 2011:
the randomized range finder, Algorithm 4.4, and the direct SVD / eigendecomposition of the
projection, Algorithms 5.1 and 5.3).

The range finder multiplies ``A`` by a random ``n x l`` matrix (``l`` = rank + oversamples) with
the distributed :func:`matmul` and orthonormalizes the tall-skinny result with TSQR; power
iterations alternate products with ``A^H`` and ``A``, each orthonormalized again. Only the small
``l x n`` (or ``l x l``) projection is gathered on every process and decomposed there.
"""

from __future__ import annotations

from typing import Tuple

import torch

from .. import random as _random
from .. import types
from ..complex_math import conj
from ..dndarray import DNDarray
from ..layout import resplit
from ..sanitation import check_int, sanitize_in
from .basics import matrix_transpose
from .decompositions import qr
from .products import matmul

__all__ = ["reigh", "rsvd"]


def _adjoint(A: DNDarray) -> DNDarray:
    T = matrix_transpose(A)
    return conj(T) if types.heat_type_is_complexfloating(A.dtype) else T


def _range_finder(A: DNDarray, width: int, power_iter: int) -> DNDarray:
    """An ``m x width`` matrix with orthonormal columns approximating the range of ``A``."""
    n = A.gshape[1]
    real = types.real_type_of(A.dtype)
    # the random factor follows A's columns: split along its rows when A is split along columns
    omega = _random.randn(
        n, width, dtype=real, split=0 if A.split == 1 else None, device=A.device, comm=A.comm
    )
    if omega.dtype is not A.dtype:
        omega = omega.astype(A.dtype)
    Q = qr(matmul(A, omega)).Q
    adjoint = _adjoint(A) if power_iter else None
    for _ in range(power_iter):
        Q = qr(matmul(adjoint, Q)).Q
        Q = qr(matmul(A, Q)).Q
    return Q


def _prepare(A: DNDarray, rank: int, n_oversamples: int, power_iter: int, name: str):
    """Checks; (A in an inexact type, sample width, rank and power iterations as Python ints)."""
    sanitize_in(A, "A")
    if A.ndim != 2:
        raise ValueError(f"{name} needs a 2-D matrix, but A is {A.ndim}-D")
    rank = check_int(rank, "rank" if name == "rsvd" else "n_eigenvalues", 1)
    n_oversamples = check_int(n_oversamples, "n_oversamples", 0)
    power_iter = check_int(power_iter, "power_iter", 0)
    if A.dtype in (types.float16, types.bfloat16):
        raise TypeError(f"array type {A.dtype.__name__} of A is unsupported in linalg")
    if not types.heat_type_is_inexact(A.dtype):
        A = A.astype(types.float64)
    width = min(rank + n_oversamples, min(A.gshape))
    return A, width, rank, power_iter


def rsvd(
    A: DNDarray,
    svd_rank: int,
    n_oversamples: int = 10,
    power_iter: int = 0,
    qr_procs_to_merge: int = 2,
) -> Tuple[DNDarray, DNDarray, DNDarray]:
    """
    A randomized truncated SVD ``A ~ U diag(S) Vt`` of rank ``svd_rank`` (HeAT's interface).

    ``U`` (``m x r``) follows the layout of ``A @ Omega`` (split along its rows when ``A`` is
    distributed); ``S`` and ``Vt`` (``r x n``) are replicated. Memory beyond ``A``: the
    ``m x l`` sample and the replicated ``l x n`` projection, ``l = svd_rank + n_oversamples``.

    Parameters
    ----------
    A : DNDarray
        A 2-D matrix.
    svd_rank : int
        The rank ``r`` of the approximation (at least 1; at most ``min(m, n)`` are returned).
    n_oversamples : int
        Extra random samples (better accuracy for a little more work).
    power_iter : int
        Power iterations (better accuracy for slowly decaying singular values).
    qr_procs_to_merge : int
        Accepted for HeAT compatibility.

    Returns
    -------
    (DNDarray, DNDarray, DNDarray)
        ``U``, ``S`` (descending), ``Vt``.

    Raises
    ------
    TypeError
        If ``A`` is not a DNDarray or an integer parameter is not an integer.
    ValueError
        If ``A`` is not 2-D or a parameter is out of range.

    Examples
    --------
    >>> A = ht.random.randn(100, 20, split=0)
    >>> U, S, Vt = ht.linalg.rsvd(A, 5)
    >>> U.shape, S.shape, Vt.shape
    ((100, 5), (5,), (5, 20))
    """
    A, width, svd_rank, power_iter = _prepare(A, svd_rank, n_oversamples, power_iter, "rsvd")
    rank = min(svd_rank, width)
    Q = _range_finder(A, width, power_iter)
    # the l x n projection Q^H A is small: every process decomposes it
    B = matmul(_adjoint(Q), A)
    B = B if B.split is None else resplit(B, None)
    u_b, s, vt = torch.linalg.svd(B.larray, full_matrices=False)
    u_b, s, vt = u_b[:, :rank], s[:rank], vt[:rank].contiguous()
    comm = A.comm
    factor = DNDarray(u_b.contiguous(), (width, rank), A.dtype, None, A.device, comm, True)
    U = matmul(Q, factor)
    S = DNDarray(s.contiguous(), (rank,), types.real_type_of(A.dtype), None, A.device, comm, True)
    Vt = DNDarray(vt, (rank, A.gshape[1]), A.dtype, None, A.device, comm, True)
    return U, S, Vt


def reigh(
    A: DNDarray,
    n_eigenvalues: int,
    n_oversamples: int = 10,
    power_iter: int = 0,
    qr_procs_to_merge: int = 2,
) -> Tuple[DNDarray, DNDarray]:
    """
    A randomized partial eigendecomposition of a symmetric (Hermitian) matrix: the
    ``n_eigenvalues`` eigenvalues of largest magnitude (in descending order of magnitude, as
    HeAT) and their eigenvectors, from the eigendecomposition of ``Q^H A Q`` for an orthonormal
    ``Q`` approximating ``A``'s range.

    Parameters
    ----------
    A : DNDarray
        A symmetric ``n x n`` matrix (not checked).
    n_eigenvalues : int
        How many eigenpairs.
    n_oversamples, power_iter, qr_procs_to_merge
        As in :func:`rsvd`.

    Returns
    -------
    (DNDarray, DNDarray)
        The eigenvalues (replicated) and the ``n x k`` eigenvectors (split along their rows when
        ``A`` is distributed).

    Raises
    ------
    TypeError, ValueError
        As :func:`rsvd`; ValueError also if ``A`` is not square.

    Examples
    --------
    >>> A = ht.array([[3.0, 0.0], [0.0, -5.0]], split=0)
    >>> ht.linalg.reigh(A, 1)[0]
    DNDarray([-5.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(A, "A")
    if A.ndim == 2 and A.gshape[0] != A.gshape[1]:
        raise ValueError(f"reigh needs a square matrix, but A has shape {A.gshape}")
    A, width, n_eigenvalues, power_iter = _prepare(
        A, n_eigenvalues, n_oversamples, power_iter, "reigh"
    )
    count = min(n_eigenvalues, width)
    Q = _range_finder(A, width, power_iter)
    B = matmul(_adjoint(Q), matmul(A, Q))
    B = B if B.split is None else resplit(B, None)
    small = B.larray
    w, v = torch.linalg.eigh((small + small.mH) / 2)  # symmetric to rounding
    order = torch.argsort(w.abs(), descending=True)[:count]
    w, v = w[order], v[:, order]
    comm = A.comm
    factor = DNDarray(v.contiguous(), (width, count), A.dtype, None, A.device, comm, True)
    values = DNDarray(
        w.contiguous(), (count,), types.real_type_of(A.dtype), None, A.device, comm, True
    )
    return values, matmul(Q, factor)
