"""
Krylov methods: ``cg`` (conjugate gradients for symmetric positive definite systems) and
``lanczos`` (tridiagonalization of a symmetric or Hermitian matrix).

Both multiply by the distributed matrix with :func:`matmul` once per iteration and keep their
vectors in the layout of that product (split along the rows of ``A`` when ``A`` is distributed),
so the vector updates are local and each inner product is one small Allreduce.
"""

from __future__ import annotations

import math
from typing import Optional, Tuple

import torch

from .. import random as _random
from .. import types
from .._operations import align_local, write_out
from ..communication import MPI
from ..dndarray import DNDarray
from ..factories import zeros
from ..sanitation import sanitize_in
from .products import matmul

__all__ = ["cg", "lanczos"]


def _square(A: DNDarray, name: str = "A") -> int:
    sanitize_in(A, name)
    if A.ndim != 2 or A.gshape[0] != A.gshape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix, but has shape {A.gshape}")
    return A.gshape[0]


def _vector(v: DNDarray, n: int, name: str) -> None:
    sanitize_in(v, name)
    if v.ndim != 1 or v.gshape[0] != n:
        raise ValueError(f"{name} must be a vector of length {n}, but has shape {v.gshape}")


def _local_like(v: DNDarray, layout: DNDarray, torch_type) -> torch.Tensor:
    """``v``'s block in the (1-D) layout of ``layout`` (moved in one collective if needed)."""
    counts = layout.counts_displs()[0] if layout.split is not None else None
    local = align_local(v, layout.gshape, layout.split, counts)
    return local.to(torch_type).clone()


def _dot(a: torch.Tensor, b: torch.Tensor, comm, distributed: bool) -> torch.Tensor:
    """The inner product ``a^H b`` of two vectors in the same layout."""
    value = torch.vdot(a, b) if a.numel() else a.new_zeros(())
    if distributed:
        value = comm.allreduce_tensor(value.reshape(1), MPI.SUM).reshape(())
    return value


def cg(
    A: DNDarray,
    b: DNDarray,
    x0: Optional[DNDarray] = None,
    out: Optional[DNDarray] = None,
    rtol: Optional[float] = None,
    maxiter: Optional[int] = None,
) -> DNDarray:
    """
    Solve ``A x = b`` for a symmetric (Hermitian) positive definite ``A`` by conjugate gradients.

    Each iteration is one distributed matrix-vector product (:func:`matmul`) and two inner
    products (one small Allreduce each); the vectors live in the layout of ``A @ x`` (``A``'s
    rows), so everything else is local.

    Parameters
    ----------
    A : DNDarray
        A symmetric positive definite ``n x n`` matrix, any layout (not checked).
    b : DNDarray
        The right-hand side, a vector of length ``n``.
    x0 : DNDarray, optional
        The start (HeAT requires it; default zeros).
    out : DNDarray, optional
        Where to store the solution.
    rtol : float, optional
        Stop when ``||b - A x|| <= rtol ||b||``; default ``100 eps`` of the working precision.
    maxiter : int, optional
        At most this many iterations (default ``10 n``).

    Returns
    -------
    DNDarray
        The solution, in the layout of ``A @ x``; floating point.

    Raises
    ------
    TypeError
        If an operand is not a DNDarray.
    ValueError
        If ``A`` is not square, a vector has the wrong length, or ``rtol``/``maxiter`` is
        negative.

    Examples
    --------
    >>> A = ht.array([[4.0, 1.0], [1.0, 3.0]], split=0)
    >>> ht.linalg.cg(A, ht.array([1.0, 2.0]), ht.zeros(2))
    DNDarray([0.0909, 0.6364], dtype=ht.float32, device=cpu:0, split=0)
    """
    n = _square(A)
    _vector(b, n, "b")
    if x0 is not None:
        _vector(x0, n, "x0")
    if rtol is not None and (not isinstance(rtol, (int, float)) or rtol < 0):
        raise ValueError(f"rtol must be a non-negative number, but was {rtol!r}")
    if maxiter is not None and (
        isinstance(maxiter, bool) or not isinstance(maxiter, int) or maxiter < 0
    ):
        raise ValueError(f"maxiter must be a non-negative integer, but was {maxiter!r}")
    dtype = types.promote_types(A.dtype, b.dtype)
    if not types.heat_type_is_inexact(dtype):
        dtype = types.float64
    torch_type = dtype.torch_type()
    if rtol is None:
        rtol = 100 * torch.finfo(torch_type).eps
    maxiter = 10 * n if maxiter is None else maxiter
    comm = A.comm
    if x0 is None:
        x0 = zeros((n,), dtype=dtype, split=b.split, device=A.device, comm=comm)
    A = A if A.dtype is dtype else A.astype(dtype)
    product = matmul(A, x0)  # fixes the layout of every vector
    distributed = product.split is not None and comm.size > 1
    x = _local_like(x0, product, torch_type)
    b_local = _local_like(b, product, torch_type)
    r = b_local - product.larray.to(torch_type)
    b_norm = math.sqrt(_dot(b_local, b_local, comm, distributed).real)
    direction = r.clone()
    residual = _dot(r, r, comm, distributed).real
    threshold = (rtol * b_norm) ** 2
    vector = DNDarray(
        direction, product.gshape, dtype, product.split, A.device, comm, product._balanced
    )
    for _ in range(maxiter):
        if residual <= threshold:
            break
        vector.larray = direction
        step = matmul(A, vector).larray
        curvature = _dot(direction, step, comm, distributed).real
        if curvature == 0:
            break
        alpha = residual / curvature
        x += alpha * direction
        r -= alpha * step
        new_residual = _dot(r, r, comm, distributed).real
        direction = r + (new_residual / residual) * direction
        residual = new_residual
    result = DNDarray(x, product.gshape, dtype, product.split, A.device, comm, product._balanced)
    return result if out is None else write_out(result, out)


def _orthogonalized(w: torch.Tensor, basis: torch.Tensor, comm, distributed: bool) -> torch.Tensor:
    """``w`` with its components along the (row-distributed) orthonormal ``basis`` removed, twice
    (classical Gram-Schmidt applied twice is as accurate as modified Gram-Schmidt)."""
    for _ in range(2):
        coefficients = basis.mH @ w
        if distributed:
            coefficients = comm.allreduce_tensor(coefficients.contiguous(), MPI.SUM)
        w = w - basis @ coefficients
    return w


def lanczos(
    A: DNDarray,
    m: int,
    v0: Optional[DNDarray] = None,
    V_out: Optional[DNDarray] = None,
    T_out: Optional[DNDarray] = None,
) -> Tuple[DNDarray, DNDarray]:
    """
    The Lanczos tridiagonalization of a symmetric (Hermitian) ``n x n`` matrix: ``V`` with ``m``
    orthonormal columns spanning the Krylov space of ``v0`` and the tridiagonal ``T = V^H A V``
    whose eigenvalues approximate ``A``'s extreme ones (HeAT's interface).

    Every new vector is fully re-orthogonalized against the previous ones (a local product and
    one Allreduce of ``m`` values), which keeps ``V`` orthonormal in floating point. ``V`` is
    split along its rows like ``A @ v``; ``T`` is replicated.

    Parameters
    ----------
    A : DNDarray
        Symmetric or Hermitian, ``n x n``, any layout (not checked).
    m : int
        The number of Lanczos vectors, ``1 <= m <= n``.
    v0 : DNDarray, optional
        The start vector (normalized here); default a random normal vector from heat's
        counter-based generator (the same at every process count).
    V_out, T_out : DNDarray, optional
        Where to store ``V`` (``n x m``) and ``T`` (``m x m``).

    Returns
    -------
    (DNDarray, DNDarray)
        ``V`` and ``T``.

    Raises
    ------
    TypeError
        If ``A`` or ``v0`` is not a DNDarray, or ``m`` is not an integer.
    ValueError
        If ``A`` is not square, ``m`` out of range or ``v0`` of the wrong length.

    Examples
    --------
    >>> A = ht.array([[2.0, 1.0], [1.0, 2.0]], split=0)
    >>> V, T = ht.linalg.lanczos(A, 2)
    >>> sorted(ht.linalg.eigh(T)[0].tolist())  # doctest: +SKIP
    [1.0, 3.0]
    """
    n = _square(A)
    if isinstance(m, bool) or not isinstance(m, int):
        raise TypeError(f"m must be an integer, but was {type(m).__name__}")
    if not 1 <= m <= max(n, 1):
        raise ValueError(f"m must be between 1 and n = {n}, but was {m}")
    if v0 is not None:
        _vector(v0, n, "v0")
    dtype = A.dtype if types.heat_type_is_inexact(A.dtype) else types.float64
    torch_type = dtype.torch_type()
    comm = A.comm
    if v0 is None:
        v0 = _random.randn(
            n,
            dtype=types.real_type_of(dtype),
            split=A.split if A.split == 0 else None,
            device=A.device,
            comm=comm,
        )
    A = A if A.dtype is dtype else A.astype(dtype)
    probe = matmul(A, v0)
    distributed = probe.split is not None and comm.size > 1
    v = _local_like(v0, probe, torch_type)
    v = v / math.sqrt(_dot(v, v, comm, distributed).real)
    basis = torch.zeros((v.shape[0], m), dtype=torch_type, device=v.device)
    alphas = torch.zeros(m, dtype=torch_type)
    betas = torch.zeros(max(m - 1, 0), dtype=torch_type)
    vector = DNDarray(v, probe.gshape, dtype, probe.split, A.device, comm, probe._balanced)
    for j in range(m):
        basis[:, j] = v
        vector.larray = basis[:, j].contiguous()
        w = matmul(A, vector).larray.to(torch_type)
        alphas[j] = _dot(v, w, comm, distributed)
        # full re-orthogonalization against every vector so far
        w = _orthogonalized(w, basis[:, : j + 1], comm, distributed)
        if j == m - 1:
            break
        beta = math.sqrt(_dot(w, w, comm, distributed).real)
        betas[j] = beta
        if beta == 0:
            # an invariant subspace: continue with a vector orthogonal to it
            w = _local_like(
                _random.randn(
                    n,
                    dtype=types.real_type_of(dtype),
                    split=probe.split,
                    device=A.device,
                    comm=comm,
                ),
                probe,
                torch_type,
            )
            w = _orthogonalized(w, basis[:, : j + 1], comm, distributed)
            beta = math.sqrt(_dot(w, w, comm, distributed).real)
            w = w / beta
            betas[j] = 0
            v = w
            continue
        v = w / beta
    tridiagonal = torch.diag(alphas)
    if m > 1:
        tridiagonal += torch.diag(betas, 1) + torch.diag(betas, -1)
    split = probe.split
    V = DNDarray(basis, (n, m), dtype, split, A.device, comm, probe._balanced)
    T = DNDarray(tridiagonal.to(A.larray.device), (m, m), dtype, None, A.device, comm, True)
    if V_out is not None:
        write_out(V, V_out, "V_out")
        V = V_out
    if T_out is not None:
        write_out(T, T_out, "T_out")
        T = T_out
    return V, T
