"""
Dense solvers and functions of square matrices: ``det``, ``inv``, ``solve``,
``solve_triangular``, ``matrix_exp`` (``expm``) and ``condest``; ``LinAlgError``.

How the work is distributed (and what that costs in memory):

* a stack of matrices split along a batch axis is already in whole matrices: every process
  works on its own, nothing moves (right-hand sides are aligned to the same batch rows);
* a stack split along a matrix axis is first resplit along its first batch axis (one
  all-to-all; each process then holds its share);
* a single matrix split along one of its axes is gathered on every process (one allgather:
  memory for the whole matrix on each process), because an LU factorization with partial
  pivoting of a dense matrix of the sizes these functions are meant for is faster replicated
  than distributed over a few processes. The factorization is then computed on every process,
  but the expensive part after it is shared: ``inv`` and the solvers compute only the rows or
  columns of the result that the process owns, so the result keeps the input's layout.
  ``cholesky`` is the exception: a single matrix is factored in its layout by a right-looking
  block algorithm (no process holds more than its block and one panel).

Singular matrices raise :class:`LinAlgError` on every process: the processes agree on the
outcome (one small Allreduce) before raising.
"""

from __future__ import annotations

import collections
import math
import operator
from typing import Optional, Tuple

import torch

from .. import types
from .._operations import align_local, write_out
from .._redistribution import balanced_counts, resplit_tensor
from ..communication import MPI, verdicts
from ..dndarray import DNDarray
from ..layout import resplit
from ..sanitation import broadcast_shapes, check_type, sanitize_in
from .norms import matrix_norm
from .products import matmul

__all__ = [
    "LinAlgError",
    "cholesky",
    "condest",
    "det",
    "expm",
    "inv",
    "matrix_exp",
    "matrix_power",
    "slogdet",
    "solve",
    "solve_triangular",
]

SlogdetResult = collections.namedtuple("SlogdetResult", "sign, logabsdet")


class LinAlgError(ValueError):
    """
    A linear algebra error (a singular or non-square matrix where an invertible one is needed),
    a ``ValueError`` as :class:`numpy.linalg.LinAlgError` is.

    Examples
    --------
    >>> try:
    ...     ht.linalg.inv(ht.zeros((2, 2)))
    ... except ht.linalg.LinAlgError as error:
    ...     print(error)
    Singular matrix
    """


# ---------------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------------
def _check_square(a: DNDarray, name: str = "a") -> None:
    sanitize_in(a, name)
    if a.ndim < 2:
        raise LinAlgError(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional"
        )
    if a.gshape[-1] != a.gshape[-2]:
        raise LinAlgError(
            f"Last 2 dimensions of the array must be square, but {name} has shape {a.gshape}"
        )


def _solver_type(dtype, name: str):
    """NumPy's computation type of the dense solvers: floats and complex keep theirs, integers
    and booleans use float64; half precision is unsupported (as in NumPy)."""
    if dtype in (types.float16, types.bfloat16):
        raise TypeError(f"array type {dtype.__name__} of {name} is unsupported in linalg")
    if types.heat_type_is_inexact(dtype):
        return dtype
    return types.float64


def _agree_singular(singular: bool, comm, distributed: bool) -> None:
    """Raise LinAlgError on every process if any process found a singular matrix."""
    if distributed:
        singular = verdicts.any_true(comm, singular)
    if singular:
        raise LinAlgError("Singular matrix")


class _Matrices:
    """
    Whole matrices of ``x`` on this process: ``local`` (cast to ``torch_type``), the split of
    the stack (a batch axis, or None when every process holds all matrices), and whether the
    stack was replicated from a single distributed matrix (``gathered``).
    """

    def __init__(self, x: DNDarray, torch_type: torch.dtype):
        self.source = x
        split = x.split
        local = x.larray
        self.gathered = False
        self.balanced = x._balanced
        if split is not None and x.comm.size == 1:
            self.balanced = True
        if split is not None and split >= x.ndim - 2:
            if x.ndim > 2:
                local, self.balanced = resplit_tensor(x, 0)
                split = 0
            else:
                local = resplit_tensor(x, None)[0]
                split, self.gathered = None, True
        self.split = split
        self.local = local.to(torch_type) if local.dtype != torch_type else local

    def wrap(self, local: torch.Tensor, gshape, dtype) -> DNDarray:
        """A result stacked like these matrices (``gshape``'s batch axes are the input's)."""
        x = self.source
        balanced = True if self.split is None else self.balanced
        return DNDarray(local, tuple(gshape), dtype, self.split, x.device, x.comm, balanced)


def _back_to_layout(result: DNDarray, x: DNDarray) -> DNDarray:
    """``result`` (of ``x``'s shape) moved to ``x``'s split axis if it moved away from it."""
    if result.split == x.split:
        return result
    return resplit(result, x.split)


def _own_block(full: torch.Tensor, x: DNDarray) -> torch.Tensor:
    """This process's block, in ``x``'s layout, of a matrix every process holds in full."""
    counts, displs = x.counts_displs()
    rank = x.comm.rank
    return full.narrow(x.split, displs[rank], counts[rank]).contiguous()


# ---------------------------------------------------------------------------------------------
# det, inv
# ---------------------------------------------------------------------------------------------
def det(a: DNDarray) -> DNDarray:
    """
    The determinant of a square matrix or of each matrix of a stack, as
    :func:`numpy.linalg.det` (LU factorization with partial pivoting).

    A single distributed matrix is gathered on every process (memory: the whole matrix per
    process); a stack is worked on in whole matrices, each process its own (see the module
    docstring).

    Parameters
    ----------
    a : DNDarray
        Shape ``(..., n, n)``.

    Returns
    -------
    DNDarray
        Shape ``(...)``: 0-d for a single matrix; floating point (float64 for integers). A
        singular matrix has determinant 0 (no error, as in NumPy).

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or is half precision.
    LinAlgError
        If ``a`` has fewer than two dimensions or its matrices are not square.

    Examples
    --------
    >>> ht.linalg.det(ht.array([[1.0, 2.0], [3.0, 4.0]], split=0))
    DNDarray(-2.0000, dtype=ht.float32, device=cpu:0, split=None)
    """
    _check_square(a)
    dtype = _solver_type(a.dtype, "a")
    matrices = _Matrices(a, dtype.torch_type())
    local = (
        torch.linalg.det(matrices.local)
        if matrices.local.numel() or a.gshape[-1] == 0
        else (matrices.local.new_ones(matrices.local.shape[:-2]))
    )
    return matrices.wrap(local, a.gshape[:-2], dtype)


def inv(a: DNDarray) -> DNDarray:
    """
    The inverse of a square matrix or of each matrix of a stack, as :func:`numpy.linalg.inv`.

    A single matrix split along an axis is gathered on every process and LU-factorized there
    (memory: the whole matrix per process); each process then solves only for its own rows or
    columns of the inverse, which keeps ``a``'s layout. A stack is worked on in whole matrices
    (see the module docstring) and returned in ``a``'s layout.

    Parameters
    ----------
    a : DNDarray
        Shape ``(..., n, n)``.

    Returns
    -------
    DNDarray
        Floating point (float64 for integers), ``a``'s shape and layout.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or is half precision.
    LinAlgError
        If the matrices are not square or a matrix is singular (on every process).

    Examples
    --------
    >>> ht.linalg.inv(ht.array([[2.0, 0.0], [0.0, 4.0]], split=1))
    DNDarray([[0.5000, 0.0000],
              [0.0000, 0.2500]], dtype=ht.float32, device=cpu:0, split=1)
    """
    _check_square(a)
    dtype = _solver_type(a.dtype, "a")
    torch_type = dtype.torch_type()
    comm = a.comm
    n = a.gshape[-1]
    distributed = a.split is not None
    if a.ndim == 2 and a.split is not None and comm.size > 1 and n > 0:
        counts, displs = a.counts_displs()  # collective when unbalanced: before the factorization
        full = resplit_tensor(a, None)[0].to(torch_type)
        lu, pivots, info = torch.linalg.lu_factor_ex(full)
        _agree_singular(bool(info.item() > 0), comm, True)
        start, length = displs[comm.rank], counts[comm.rank]
        identity = torch.zeros((n, length), dtype=torch_type, device=full.device)
        identity[start + torch.arange(length), torch.arange(length)] = 1
        if a.split == 1:
            # columns start..start+length of the inverse: solve A X = I[:, columns]
            local = torch.linalg.lu_solve(lu, pivots, identity)
        else:
            # rows of the inverse are columns of its adjoint: solve A^H Y = I[:, rows], X = Y^H
            local = torch.linalg.lu_solve(lu, pivots, identity, adjoint=True).mH.contiguous()
        return DNDarray(local, a.gshape, dtype, a.split, a.device, comm, a._balanced)
    matrices = _Matrices(a, torch_type)
    if matrices.local.numel():
        local, info = torch.linalg.inv_ex(matrices.local)
        singular = bool((info > 0).any().item())
    else:
        local, singular = matrices.local.clone(), False
    _agree_singular(singular, comm, distributed)
    return _back_to_layout(matrices.wrap(local, a.gshape, dtype), a)


# ---------------------------------------------------------------------------------------------
# solve, solve_triangular
# ---------------------------------------------------------------------------------------------
def _check_system(a: DNDarray, b: DNDarray, name: str):
    """Validate ``a x = b`` (NumPy 2's rule: b is a vector only when 1-D); the result shape."""
    _check_square(a, "a")
    sanitize_in(b, "b")
    n = a.gshape[-1]
    if b.ndim == 0:
        raise ValueError(f"{name}: b must be at least one-dimensional, but is 0-d")
    if b.ndim == 1:
        if b.gshape[0] != n:
            raise ValueError(
                f"{name}: b has {b.gshape[0]} rows, but a has {n} (a {a.gshape}, b {b.gshape})"
            )
        return tuple(a.gshape[:-1])
    if b.gshape[-2] != n:
        raise ValueError(
            f"{name}: b has {b.gshape[-2]} rows, but a has {n} (a {a.gshape}, b {b.gshape})"
        )
    try:
        batch = broadcast_shapes(a.gshape[:-2], b.gshape[:-2])
    except ValueError:
        raise ValueError(
            f"{name}: the batch dimensions of a {a.gshape} and b {b.gshape} do not broadcast"
        ) from None
    return tuple(batch) + (n, b.gshape[-1])


def _solve_system(a: DNDarray, b: DNDarray, name: str, local_solve) -> DNDarray:
    """
    Solve ``a x = b`` with ``local_solve(a_local, b_local) -> (x_local, singular)`` on whole
    matrices of ``a`` and this process's columns (or batch rows) of ``b``; the result takes
    ``b``'s layout.
    """
    shape = _check_system(a, b, name)
    dtype = _solver_type(types.promote_types(a.dtype, b.dtype), "a and b")
    torch_type = dtype.torch_type()
    comm = a.comm
    ndim = len(shape)
    vector = b.ndim == 1
    distributed = (a.split is not None or b.split is not None) and comm.size > 1
    matrices = _Matrices(a, torch_type)
    rhs_split = None if b.split is None else b.split + ndim - b.ndim
    if matrices.split is not None:
        # a's stack is split along a batch axis: b follows its rows (a vector b has no batch
        # axes, and the result's batch axes are a's)
        split = matrices.split + (0 if vector else ndim - a.ndim)
        counts = (
            matrices.source.counts_displs()[0]
            if matrices.split == a.split
            else balanced_counts(comm, a.gshape[matrices.split])
        )
        if (
            b.ndim - 2 >= 0
            and split - (ndim - b.ndim) >= 0
            and b.gshape[split - (ndim - b.ndim)] != 1
        ):
            b_local = align_local(b, shape, split, list(counts))
        else:
            b_local = resplit_tensor(b, None)[0]
        b_local = b_local.to(torch_type)
        x_local, singular = local_solve(
            matrices.local, b_local.unsqueeze(-1) if vector else b_local
        )
        x_local = x_local.squeeze(-1) if vector else x_local
        _agree_singular(singular, comm, distributed)
        result = DNDarray(
            x_local,
            shape,
            dtype,
            split,
            a.device,
            comm,
            tuple(counts) == balanced_counts(comm, shape[split]),
        )
        return result if b.split is None else _to_split(result, rhs_split)
    # every process holds all of a's matrices
    a_local = matrices.local
    if (
        rhs_split is not None
        and not vector
        and rhs_split < ndim - 2
        and b.gshape[b.split] == shape[rhs_split]
    ):
        # b split along a batch axis: a's matching batch rows (sliced, a is whole here)
        counts = b.counts_displs()[0]
        a_axis = rhs_split - (ndim - a.ndim)
        if a_axis >= 0 and a.gshape[a_axis] != 1:
            start = sum(counts[: comm.rank])
            a_local = a_local.narrow(a_axis, start, counts[comm.rank])
        b_local = b.larray.to(torch_type)
        split, balanced = rhs_split, b._balanced
    elif rhs_split == ndim - 1 and not vector:
        # b split along its columns: each process solves for its own
        b_local = b.larray.to(torch_type)
        split, balanced = rhs_split, b._balanced
    else:
        # b replicated, or split along its rows (gathered: its columns are what a solve splits)
        b_local = resplit_tensor(b, None)[0].to(torch_type)
        split, balanced = None, True
    x_local, singular = local_solve(a_local, b_local.unsqueeze(-1) if vector else b_local)
    x_local = x_local.squeeze(-1) if vector else x_local
    _agree_singular(singular, comm, distributed)
    result = DNDarray(x_local, shape, dtype, split, a.device, comm, balanced)
    return result if b.split is None else _to_split(result, rhs_split)


def _to_split(result: DNDarray, axis: int) -> DNDarray:
    """``result`` split along ``axis`` (from a replicated result: local slicing, no messages)."""
    return result if result.split == axis else resplit(result, axis)


def solve(a: DNDarray, b: DNDarray, out: Optional[DNDarray] = None) -> DNDarray:
    """
    The solution ``x`` of ``a @ x = b``, as :func:`numpy.linalg.solve` (NumPy 2: ``b`` is a
    vector only when 1-D, otherwise ``(..., n, k)``; batch axes broadcast).

    ``a``'s matrices are taken whole (see the module docstring: a single distributed matrix is
    gathered on every process, memory the whole matrix per process). The columns of ``b`` are
    shared out: ``b`` split along its columns is solved column block by column block without
    moving; ``b`` split along its rows is gathered. The result has ``b``'s layout.

    Parameters
    ----------
    a : DNDarray
        Shape ``(..., n, n)``.
    b : DNDarray
        Shape ``(n,)`` or ``(..., n, k)``.
    out : DNDarray, optional
        Where to store the solution (HeAT's parameter): of its shape, any split; the solution
        is cast to ``out``'s dtype and laid out in ``out``'s split.

    Returns
    -------
    DNDarray
        Floating point (float64 for integers); ``out`` if given.

    Raises
    ------
    TypeError
        If an operand or ``out`` is not a DNDarray, or an operand is half precision.
    ValueError
        If the shapes do not conform, or ``out`` has another shape than the solution.
    LinAlgError
        If ``a``'s matrices are not square or one is singular (on every process).

    Examples
    --------
    >>> a = ht.array([[3.0, 1.0], [1.0, 2.0]], split=0)
    >>> ht.linalg.solve(a, ht.array([9.0, 8.0]))
    DNDarray([2., 3.], dtype=ht.float32, device=cpu:0, split=None)
    >>> x = ht.empty(2, split=0)
    >>> ht.linalg.solve(a, ht.array([9.0, 8.0]), out=x) is x
    True
    """

    def local_solve(a_local, b_local):
        if a_local.numel() == 0 or b_local.numel() == 0:
            return torch.zeros(
                torch.broadcast_shapes(a_local.shape[:-2], b_local.shape[:-2]) + b_local.shape[-2:],
                dtype=b_local.dtype,
                device=b_local.device,
            ), False
        x, info = torch.linalg.solve_ex(a_local, b_local)
        return x, bool((info > 0).any().item())

    if out is not None:
        # its shape is checked by write_out from global shapes, identically on every process
        check_type(out, "out", DNDarray, "a DNDarray")
    x = _solve_system(a, b, "solve", local_solve)
    return x if out is None else write_out(x, out)


def solve_triangular(
    a: DNDarray, b: DNDarray, lower: bool = False, unit_diagonal: bool = False
) -> DNDarray:
    """
    The solution ``x`` of ``a @ x = b`` for triangular ``a`` (upper by default, as HeAT's; the
    other triangle is not read), by forward or back substitution.

    Distributed as :func:`solve`: whole matrices of ``a`` (a single distributed matrix is
    gathered on every process), the columns of ``b`` shared out, the result in ``b``'s layout.

    Parameters
    ----------
    a : DNDarray
        Shape ``(..., n, n)``.
    b : DNDarray
        Shape ``(n,)`` or ``(..., n, k)``.
    lower : bool, optional
        Use the lower triangle of ``a`` (as SciPy's ``lower``).
    unit_diagonal : bool, optional
        Take the diagonal of ``a`` as ones (not read).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`solve`.
    LinAlgError
        If a diagonal element is zero (and ``unit_diagonal`` is False), on every process.

    Examples
    --------
    >>> a = ht.array([[2.0, 1.0], [0.0, 4.0]], split=0)
    >>> ht.linalg.solve_triangular(a, ht.array([[4.0], [8.0]]))
    DNDarray([[1.],
              [2.]], dtype=ht.float32, device=cpu:0, split=None)
    """
    lower, unit_diagonal = bool(lower), bool(unit_diagonal)

    def local_solve(a_local, b_local):
        if a_local.numel() == 0 or b_local.numel() == 0:
            return torch.zeros(
                torch.broadcast_shapes(a_local.shape[:-2], b_local.shape[:-2]) + b_local.shape[-2:],
                dtype=b_local.dtype,
                device=b_local.device,
            ), False
        singular = False
        if not unit_diagonal:
            singular = bool((torch.diagonal(a_local, dim1=-2, dim2=-1) == 0).any().item())
        a_full, b_full = a_local, b_local
        batch = torch.broadcast_shapes(a_local.shape[:-2], b_local.shape[:-2])
        if a_local.shape[:-2] != batch:
            a_full = a_local.expand(batch + a_local.shape[-2:])
        if b_local.shape[:-2] != batch:
            b_full = b_local.expand(batch + b_local.shape[-2:])
        x = torch.linalg.solve_triangular(
            a_full, b_full, upper=not lower, unitriangular=unit_diagonal
        )
        return x, singular

    return _solve_system(a, b, "solve_triangular", local_solve)


# ---------------------------------------------------------------------------------------------
# matrix_exp
# ---------------------------------------------------------------------------------------------
def matrix_exp(a: DNDarray) -> DNDarray:
    """
    The matrix exponential of a square matrix or of each matrix of a stack (scaling and
    squaring with a Padé approximant, torch's ``linalg.matrix_exp``), as
    :func:`scipy.linalg.expm`.

    A single distributed matrix is gathered on every process (memory: the whole matrix per
    process), exponentiated there and returned in ``a``'s layout; stacks are worked on in whole
    matrices (see the module docstring).

    Parameters
    ----------
    a : DNDarray
        Shape ``(..., n, n)``.

    Returns
    -------
    DNDarray
        Floating point (float64 for integers; half precision computed in float32), ``a``'s
        shape and layout.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray.
    LinAlgError
        If the matrices are not square.

    Examples
    --------
    >>> ht.linalg.matrix_exp(ht.zeros((2, 2), split=0))
    DNDarray([[1., 0.],
              [0., 1.]], dtype=ht.float32, device=cpu:0, split=0)
    """
    _check_square(a)
    if a.dtype in (types.float16, types.bfloat16):
        dtype, compute = a.dtype, types.float32
    else:
        dtype = _solver_type(a.dtype, "a")
        compute = dtype
    matrices = _Matrices(a, compute.torch_type())
    local = (
        torch.linalg.matrix_exp(matrices.local)
        if matrices.local.numel()
        else matrices.local.clone()
    )
    local = local.to(dtype.torch_type())
    if matrices.gathered:
        return DNDarray(
            _own_block(local, a), a.gshape, dtype, a.split, a.device, a.comm, a._balanced
        )
    return _back_to_layout(matrices.wrap(local, a.gshape, dtype), a)


expm = matrix_exp


# ---------------------------------------------------------------------------------------------
# condest
# ---------------------------------------------------------------------------------------------
def condest(
    A: DNDarray,
    p: Optional[int] = None,
    algorithm: Optional[str] = None,
    params: Optional[dict] = None,
) -> DNDarray:
    """
    An estimate of the condition number ``||A|| ||A^-1||`` of a matrix, without forming the
    inverse (HeAT's signature).

    * ``p=2`` (default), ``algorithm="randomized"`` (default): HeAT's estimate, an upper bound
      of the 2-norm condition number in expectation: ``||A||_F`` times the small-sample
      estimate of ``||A^-1||_F`` of Gudmundsson, Kenney and Laub (1995),
      ``sqrt(n / s) ||A^-1 Z||_F`` for ``s`` random orthonormal columns ``Z`` (one solve with
      ``s`` right-hand sides).
    * ``p=1``, ``algorithm="hager"`` (the default for ``p=1``): ``||A||_1`` exactly times
      Hager's estimate of ``||A^-1||_1`` with Higham's safeguard (as LAPACK's ``xLACON``): a few
      solves with ``A`` and ``A^T`` on one LU factorization; a lower bound, usually exact.

    A non-square matrix (as HeAT allowed; 2-norm only) has the condition number
    ``sigma_max / sigma_min`` of its extreme singular values, that of the ``R`` factor of its QR
    decomposition (of its transpose's if it is wide): the estimate above is applied to the
    small square ``R`` (TSQR for a tall matrix split along its rows, no gathering).

    ``||A||`` is a distributed reduction; the solves gather a distributed ``A`` on every process
    (memory: the whole matrix per process), as :func:`solve`. The random columns come from a
    fixed seed (``params["seed"]``, default 0), so every process and every run draws the same.

    Parameters
    ----------
    A : DNDarray
        A 2-D matrix (square for ``p=1``).
    p : {None, 1, 2}, optional
        The norm (None: 2).
    algorithm : {None, "randomized", "hager"}, optional
        None picks the default of ``p``.
    params : dict, optional
        ``"nsamples"`` (randomized; default 10) and ``"seed"``.

    Returns
    -------
    DNDarray
        0-d, floating point; ``inf`` for a singular matrix.

    Raises
    ------
    TypeError
        If ``A`` is not a DNDarray, ``algorithm`` is not a string or ``params`` not a dict.
    ValueError
        For an unsupported ``p``/``algorithm``, a bad ``nsamples``, or ``p=1`` with a
        non-square ``A``.
    LinAlgError
        If ``A`` is not 2-D.

    Examples
    --------
    >>> A = ht.array([[1.0, 0.0], [0.0, 100.0]], split=0)
    >>> float(ht.linalg.condest(A, p=1))
    100.0
    >>> tall = ht.array([[1.0, 0.0], [0.0, 100.0], [0.0, 0.0]], split=0)
    >>> float(ht.linalg.condest(tall)) >= 50.0
    True
    """
    sanitize_in(A, "A")
    if A.ndim != 2:
        raise LinAlgError(f"condest needs a 2-D matrix, but A is {A.ndim}-D")
    p = 2 if p is None else p
    if p not in (1, 2) or isinstance(p, bool):
        raise ValueError(f"p must be 1 or 2, but was {p!r}")
    m, n = A.gshape
    if m != n and p != 2:
        raise ValueError(
            f"p=1 needs a square matrix (the 1-norm condition number needs an inverse), "
            f"but A has shape {A.gshape}; use p=2"
        )
    if algorithm is None:
        algorithm = "randomized" if p == 2 else "hager"
    if not isinstance(algorithm, str):
        raise TypeError(f"algorithm must be a string, but was {type(algorithm).__name__}")
    if (p, algorithm) not in ((2, "randomized"), (1, "hager")):
        raise ValueError(
            f"algorithm {algorithm!r} is not available for p={p} (p=2: 'randomized', p=1: 'hager')"
        )
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict, but was {type(params).__name__}")
    nsamples = params.get("nsamples", 10)
    if isinstance(nsamples, bool) or not isinstance(nsamples, int) or nsamples <= 0:
        raise ValueError(f"params['nsamples'] must be a positive integer, but was {nsamples!r}")
    seed = params.get("seed", 0)
    dtype = _solver_type(A.dtype, "A")
    if m != n:
        from .decompositions import qr

        # cond_2(A) = cond_2(R) for A = Q R with orthonormal Q (of A^T for a wide A)
        _, R = qr(A if m > n else A.T, mode="r")
        return condest(R, p=2, algorithm=algorithm, params=params)
    torch_type = dtype.torch_type()
    n = A.gshape[0]
    comm = A.comm
    norm_a = matrix_norm(A, ord="fro" if p == 2 else 1).item()
    full = resplit_tensor(A, None)[0].to(torch_type)
    if n == 0:
        estimate = 0.0
    else:
        lu, pivots, info = torch.linalg.lu_factor_ex(full)
        singular = bool(info.item() > 0)
        if A.split is not None and comm.size > 1:
            singular = comm.allreduce(singular, op=MPI.LOR)
        if singular:
            estimate = math.inf
        elif p == 2:
            generator = torch.Generator().manual_seed(int(seed))
            samples = min(nsamples, n)
            gaussian = torch.randn((n, samples), generator=generator, dtype=torch.float64)
            z = torch.linalg.qr(gaussian).Q.to(device=lu.device, dtype=torch_type)
            y = torch.linalg.lu_solve(lu, pivots, z)
            estimate = norm_a * math.sqrt(n / samples) * float(torch.linalg.norm(y))
        else:
            estimate = norm_a * _hager_inverse_norm1(lu, pivots, n)
    result_type = types.real_type_of(dtype)
    local = torch.tensor(estimate, dtype=result_type.torch_type(), device=A.larray.device)
    return DNDarray(local, (), result_type, None, A.device, comm, True)


def _hager_inverse_norm1(lu: torch.Tensor, pivots: torch.Tensor, n: int) -> float:
    """Hager's estimate of ``||A^-1||_1`` from A's LU factors, with Higham's safeguard."""
    dtype = lu.dtype

    def solve(v: torch.Tensor, adjoint: bool) -> torch.Tensor:
        return torch.linalg.lu_solve(lu, pivots, v.unsqueeze(-1), adjoint=adjoint).squeeze(-1)

    x = torch.full((n,), 1.0 / n, dtype=dtype, device=lu.device)
    estimate = 0.0
    previous = -1
    for _ in range(5):
        y = solve(x, False)
        estimate = float(y.abs().sum())
        signs = (
            torch.where(y.real >= 0, 1.0, -1.0).to(dtype)
            if not y.is_complex()
            else (torch.where(y.abs() > 0, y / y.abs(), torch.ones_like(y)))
        )
        z = solve(signs, True)
        j = int(z.abs().argmax())
        if float(z.abs()[j]) <= float((z.conj() * x).real.sum()) or j == previous:
            break
        x = torch.zeros(n, dtype=dtype, device=lu.device)
        x[j] = 1
        previous = j
    # Higham's safeguard: an alternating vector catches matrices the iteration underestimates
    alternating = torch.tensor(
        [(-1) ** i * (1 + i / max(n - 1, 1)) for i in range(n)], dtype=dtype, device=lu.device
    )
    safeguard = 2 * float(solve(alternating, False).abs().sum()) / (3 * n)
    return max(estimate, safeguard)


# ---------------------------------------------------------------------------------------------
# the array API standard's matrix_power, slogdet, cholesky
# ---------------------------------------------------------------------------------------------
def matrix_power(x: DNDarray, n: int, /) -> DNDarray:
    """
    The ``n``-th power of a square matrix or of each matrix of a stack, as
    :func:`numpy.linalg.matrix_power`: repeated squaring with the distributed :func:`matmul`
    (about ``2 log2 |n|`` products, no gathering), the inverse first for ``n < 0``, the identity
    (in ``x``'s dtype and layout) for ``n == 0``.

    Parameters
    ----------
    x : DNDarray
        Shape ``(..., m, m)``.
    n : int
        The exponent.

    Returns
    -------
    DNDarray
        ``x``'s shape; ``x``'s dtype for ``n >= 0`` (integers stay integers), the type of
        :func:`inv` for ``n < 0``.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``n`` is not an integer.
    LinAlgError
        If the matrices are not square, or ``n < 0`` and a matrix is singular.

    Examples
    --------
    >>> ht.linalg.matrix_power(ht.array([[1, 1], [0, 1]], split=0), 3)
    DNDarray([[1, 3],
              [0, 1]], dtype=ht.int64, device=cpu:0, split=0)
    """
    _check_square(x, "x")
    if isinstance(n, bool):
        raise TypeError("n must be an integer, not bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"n must be an integer, not {type(n).__name__}") from None
    if n == 0:
        m = x.gshape[-1]
        full = torch.eye(m, dtype=x.dtype.torch_type(), device=x.larray.device).expand(x.gshape)
        local = full.contiguous() if x.split is None else _own_block(full, x)
        return DNDarray(local, x.gshape, x.dtype, x.split, x.device, x.comm, x._balanced)
    base = inv(x) if n < 0 else x
    n = abs(n)
    result = None
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    return _back_to_layout(result, x)


def slogdet(x: DNDarray, /) -> SlogdetResult:
    """
    The sign and the natural logarithm of the absolute value of the determinant of a square
    matrix or of each matrix of a stack, as :func:`numpy.linalg.slogdet`; from the same LU
    factorization as :func:`det` (the logarithms of the pivots are summed, so determinants far
    beyond the floating-point range are fine). Layout and memory as :func:`det`.

    Parameters
    ----------
    x : DNDarray
        Shape ``(..., n, n)``.

    Returns
    -------
    SlogdetResult
        The named tuple ``(sign, logabsdet)``, each of shape ``(...)``; ``sign`` is -1, 0 or 1
        (a unit complex number for complex input), ``logabsdet`` real (``-inf`` for a singular
        matrix, with sign 0).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is half precision.
    LinAlgError
        If ``x`` has fewer than two dimensions or its matrices are not square.

    Examples
    --------
    >>> sign, logabsdet = ht.linalg.slogdet(ht.array([[1.0, 2.0], [3.0, 4.0]], split=0))
    >>> sign.item(), round(logabsdet.item(), 4)
    (-1.0, 0.6931)
    """
    _check_square(x, "x")
    dtype = _solver_type(x.dtype, "x")
    matrices = _Matrices(x, dtype.torch_type())
    local = matrices.local
    if local.numel() or x.gshape[-1] == 0:
        sign, logabsdet = torch.linalg.slogdet(local)
    else:  # an empty block of a stack
        sign = local.new_ones(local.shape[:-2])
        logabsdet = torch.zeros(
            local.shape[:-2], dtype=types.real_type_of(dtype).torch_type(), device=local.device
        )
    return SlogdetResult(
        matrices.wrap(sign, x.gshape[:-2], dtype),
        matrices.wrap(logabsdet, x.gshape[:-2], types.real_type_of(dtype)),
    )


def _cholesky_row_panels(rows: torch.Tensor, counts, comm) -> Tuple[torch.Tensor, bool]:
    """
    The upper Cholesky factor ``U`` (``A = U^H U``, the upper triangle of ``A`` read) of an
    ``n x n`` matrix split along its rows: this process's rows of ``U`` and whether its diagonal
    block was not positive definite. Right-looking by row blocks: the owner of block ``k``
    factors its diagonal block, ``U_kk``, and solves for the rest of its row panel,
    ``U_k* = U_kk^-H A_k*``; the panel is broadcast and every later process updates its rows,
    ``A_j* -= U_kj^H U_k*`` (columns from its own diagonal block on). Memory: the process's rows
    plus one row panel.
    """
    rank = comm.rank
    displs = [sum(counts[:i]) for i in range(len(counts))]
    work = rows.clone()
    failed = False
    for owner, width in enumerate(counts):
        if width == 0:
            continue
        start = displs[owner]
        if rank == owner:
            diagonal, info = torch.linalg.cholesky_ex(work[:, start : start + width], upper=True)
            failed = failed or bool(info.item() > 0)
            work[:, start : start + width] = diagonal
            work[:, start + width :] = torch.linalg.solve_triangular(
                diagonal.mH, work[:, start + width :], upper=False
            )
            work[:, :start] = 0
            panel = work[:, start:].contiguous()
        else:
            panel = rows.new_empty((width, rows.shape[1] - start))
        if comm.size > 1:
            panel = comm.Bcast(panel, root=owner)
        if rank > owner:
            mine = displs[rank] - start  # this process's columns within the panel
            work[:, displs[rank] :] -= panel[:, mine : mine + counts[rank]].mH @ panel[:, mine:]
    return work, failed


def _cholesky_column_panels(rows: torch.Tensor, counts, comm) -> Tuple[torch.Tensor, bool]:
    """
    The lower Cholesky factor ``L`` (``A = L L^H``, the lower triangle of ``A`` read) of an
    ``n x n`` matrix split along its rows: this process's rows of ``L`` and whether its diagonal
    block was not positive definite. Right-looking by block columns: the owner of block ``k``
    factors its diagonal block and broadcasts ``L_kk``; every later process solves for its
    block of the panel, ``L_jk = A_jk L_kk^-H``; the panel is gathered on all processes and
    every later process updates its rows, ``A_j* -= L_jk L_*k^H`` (up to its diagonal block).
    Memory: the process's rows plus one block column.
    """
    rank = comm.rank
    displs = [sum(counts[:i]) for i in range(len(counts))]
    work = rows.clone()
    failed = False
    my_start, my_count = displs[rank], counts[rank]
    for owner, width in enumerate(counts):
        if width == 0:
            continue
        start = displs[owner]
        columns = slice(start, start + width)
        if rank == owner:
            diagonal, info = torch.linalg.cholesky_ex(work[:, columns], upper=False)
            failed = failed or bool(info.item() > 0)
            work[:, columns] = diagonal
            work[:, start + width :] = 0
        else:
            diagonal = rows.new_empty((width, width))
        if comm.size > 1:
            diagonal = comm.Bcast(diagonal.contiguous(), root=owner)
        if rank > owner:
            work[:, columns] = torch.linalg.solve_triangular(
                diagonal.mH, work[:, columns], upper=True, left=False
            )
        below = start + width  # the panel's rows: every later process's block of column k
        if below == rows.shape[1]:
            break
        block = work[:, columns] if rank > owner else rows.new_empty((0, width))
        panel = comm.allgather_tensors(block.contiguous(), axis=0) if comm.size > 1 else block
        if rank > owner:
            stop = my_start + my_count
            work[:, below:stop] -= work[:, columns] @ panel[: stop - below].mH
    return work, failed


def cholesky(x: DNDarray, /, *, upper: bool = False) -> DNDarray:
    """
    The Cholesky factor of a symmetric (Hermitian) positive-definite matrix or of each matrix
    of a stack, as :func:`numpy.linalg.cholesky`: ``x = L L^H`` (``upper=False``) or
    ``x = U^H U``. Only the lower (upper) triangle of ``x`` is read.

    A single matrix split along its rows or columns is factored where it lies, by a
    right-looking block algorithm (each process owns a block of rows, or of columns: the owner
    of a diagonal block factors it, its panel is broadcast, every later process updates its own
    block; memory: the process's block plus one panel); the factor has ``x``'s layout. Stacks
    are factored in whole matrices (see the module docstring).

    Parameters
    ----------
    x : DNDarray
        Shape ``(..., n, n)``.
    upper : bool
        Return the upper factor ``U`` instead of the lower ``L``.

    Returns
    -------
    DNDarray
        ``x``'s shape and layout; floating point (float64 for integers).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is half precision.
    LinAlgError
        If the matrices are not square or a matrix is not positive definite (on every process).

    Examples
    --------
    >>> ht.linalg.cholesky(ht.array([[4.0, 2.0], [2.0, 5.0]], split=0))
    DNDarray([[2., 0.],
              [1., 2.]], dtype=ht.float32, device=cpu:0, split=0)
    """
    _check_square(x, "x")
    dtype = _solver_type(x.dtype, "x")
    if x.ndim == 2 and x.split is not None and x.comm.size > 1:
        return _distributed_cholesky(x, dtype, bool(upper))
    matrices = _Matrices(x, dtype.torch_type())
    if matrices.local.numel():
        local, info = torch.linalg.cholesky_ex(matrices.local, upper=bool(upper))
        failed = bool((info > 0).any().item())
    else:
        local, failed = matrices.local.clone(), False
    if x.split is not None and x.comm.size > 1:
        failed = x.comm.allreduce(failed, op=MPI.LOR)
    if failed:
        raise LinAlgError("Matrix is not positive definite")
    if matrices.gathered:
        return DNDarray(
            _own_block(local, x), x.gshape, dtype, x.split, x.device, x.comm, x._balanced
        )
    return _back_to_layout(matrices.wrap(local, x.gshape, dtype), x)


def _distributed_cholesky(x: DNDarray, dtype, upper: bool) -> DNDarray:
    """
    The Cholesky factor of a single matrix split along its rows or columns, in its layout,
    without gathering it. Rows: the upper factor by row panels, the lower by block columns.
    Columns: the same on the conjugate transpose, whose rows are this process's columns (the
    lower triangle of ``x`` is the conjugated upper triangle of ``x^H``).
    """
    counts = x.counts_displs()[0]
    local = x.larray.to(dtype.torch_type())
    if x.split == 1:
        local = local.mH
        upper_of_rows = not upper
    else:
        upper_of_rows = upper
    factor = _cholesky_row_panels if upper_of_rows else _cholesky_column_panels
    result, failed = factor(local, counts, x.comm)
    if x.comm.allreduce(failed, op=MPI.LOR):
        raise LinAlgError("Matrix is not positive definite")
    if x.split == 1:
        result = result.mH.contiguous()
    return DNDarray(result, x.gshape, dtype, x.split, x.device, x.comm, x._balanced)
