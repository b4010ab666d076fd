"""
Truncated and updatable SVDs: the hierarchical SVD ``hsvd_rank`` / ``hsvd_rtol`` / ``hsvd`` (Iwen and Ong,
2016; Himpe, Leibner and Rave, 2018) and the incremental SVD ``isvd`` (Brand, 2006).

Hierarchical SVD of a matrix split along its columns: every process computes the truncated SVD
of its column block and keeps ``U_r diag(S_r)`` (rank + safety shift columns); these small
factors are merged (gathered on every process, one Allgatherv of ``m x p(r + s)`` values) and
truncated once more. A matrix split along its rows is treated as its transpose (the merged factor
is then ``V``, and ``U = A V diag(S)^-1`` a distributed product). The discarded singular values
of every truncation give the a-posteriori error estimate.
"""

from __future__ import annotations

import math
from typing import Optional, Tuple, Union

import torch

from .. import types
from ..communication import MPI
from ..dndarray import DNDarray
from ..layout import resplit
from ..sanitation import check_bool, check_int, sanitize_in, warn_ignored
from .basics import matrix_transpose
from .decompositions import qr
from .products import matmul

__all__ = ["hsvd", "hsvd_rank", "hsvd_rtol", "isvd"]


def _real_matrix(x: DNDarray, name: str, ndim: int = 2) -> DNDarray:
    sanitize_in(x, name)
    if x.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, but is {x.ndim}-D")
    if x.dtype not in (types.float32, types.float64):
        if types.heat_type_is_exact(x.dtype):
            return x.astype(types.float64)
        raise TypeError(
            f"{name} must be float32 or float64 (or integer), but is {x.dtype.__name__}"
        )
    return x


def _keep(s: torch.Tensor, maxrank: Optional[int], budget: Optional[float]) -> int:
    """How many singular values to keep: at most ``maxrank``, and (with an energy ``budget``)
    the fewest whose discarded tail has squared norm <= budget."""
    keep = s.numel() if maxrank is None else min(maxrank, s.numel())
    if budget is not None and s.numel():
        tails = torch.flip(
            torch.cumsum(torch.flip(s.double() ** 2, (0,)), 0), (0,)
        )  # tails[i] = sum s[i:]^2
        fits = (tails <= budget).nonzero()
        needed = int(fits[0]) if fits.numel() else s.numel()
        keep = min(keep, needed)
    return keep


def _hsvd(
    A: DNDarray, maxrank: Optional[int], rtol: Optional[float], safetyshift: int, compute_sv: bool
):
    A = _real_matrix(A, "A")
    comm = A.comm
    transposed = A.split == 0 and comm.size > 1
    local = A.larray.mT if transposed else A.larray  # columns of the (transposed) matrix
    total_energy = float((local.double() ** 2).sum())
    if A.split is not None and comm.size > 1:
        total_energy = comm.allreduce(total_energy, op=MPI.SUM)
    # local truncation: rank + shift columns, or half of the error budget
    u, s, _ = torch.linalg.svd(local, full_matrices=False)
    local_budget = None
    if rtol is not None:
        block_energy = float((s.double() ** 2).sum())
        local_budget = 0.5 * rtol**2 * block_energy
    local_rank = _keep(s, None if maxrank is None else maxrank + safetyshift, local_budget)
    discarded = float((s[local_rank:].double() ** 2).sum())
    factor = u[:, :local_rank] * s[:local_rank]
    if A.split is not None and comm.size > 1:
        merged = comm.allgather_tensors(factor.contiguous(), axis=1)
        discarded = comm.allreduce(discarded, op=MPI.SUM)
    else:
        merged = factor
    u, s, _ = torch.linalg.svd(merged, full_matrices=False)
    budget = None if rtol is None else max(0.0, rtol**2 * total_energy - discarded)
    rank = max(1, _keep(s, maxrank, budget)) if s.numel() else 0
    discarded += float((s[rank:].double() ** 2).sum())
    error = math.sqrt(discarded / total_energy) if total_energy > 0 else 0.0
    u, s = u[:, :rank].contiguous(), s[:rank].contiguous()
    # u: the left factor of the (transposed) matrix, replicated
    left = DNDarray(u, (u.shape[0], rank), A.dtype, None, A.device, comm, True)
    sigma = DNDarray(s, (rank,), A.dtype, None, A.device, comm, True)
    if not compute_sv and not transposed:
        return left, error
    # the other factor: A^T U diag(S)^-1 (or A V diag(S)^-1 for the transposed case), distributed
    inverse = torch.where(s > 0, 1 / s, torch.zeros_like(s))
    scaled = DNDarray(u * inverse, left.gshape, A.dtype, None, A.device, comm, True)
    other = matmul(A, scaled) if transposed else matmul(matrix_transpose(A), scaled)
    if transposed:
        U, Vt = other, matrix_transpose(left)
    else:
        U, Vt = left, matrix_transpose(other)
    if not compute_sv:
        return U, error
    return U, sigma, Vt, error


def hsvd(
    A: DNDarray,
    maxrank: Optional[int] = None,
    maxmergedim: Optional[int] = None,
    rtol: Optional[float] = None,
    safetyshift: int = 0,
    no_of_merges: Optional[int] = 2,
    compute_sv: bool = False,
    silent: bool = True,
    warnings_off: bool = False,
) -> Union[Tuple[DNDarray, DNDarray, DNDarray, float], Tuple[DNDarray, float]]:
    """
    Hierarchical truncated SVD with both truncation criteria (HeAT's low-level ``hsvd``): at most
    ``maxrank`` singular triplets, and (with ``rtol``) the fewest for which
    ``||A - U diag(S) Vt||_F <= rtol ||A||_F``. :func:`hsvd_rank` and :func:`hsvd_rtol` are the
    same with one criterion each; see the module docstring for the algorithm.

    Parameters
    ----------
    A : DNDarray
        A 2-D real matrix (integers are taken as float64).
    maxrank : int, optional
        The largest rank kept (at least 1).
    maxmergedim : int, optional
        HeAT's bound on the size of one merge; heat merges all local factors at once, so a value
        other than None warns that it has no effect.
    rtol : float, optional
        The relative error bound, ``0 <= rtol < 1``. At least one of ``maxrank`` and ``rtol``
        must be given.
    safetyshift : int
        Extra columns kept in the local truncations (HeAT's default here is 0; the high-level
        functions use 5).
    no_of_merges : int, optional
        HeAT's number of factors merged at one step; a value other than 2 or None warns that it
        has no effect, as for ``maxmergedim``.
    compute_sv : bool
        Also return the singular values and ``V^T``.
    silent : bool
        False: process 0 prints the rank found and the error estimate.
    warnings_off : bool
        True: no warning about ``maxmergedim`` and ``no_of_merges``.

    Returns
    -------
    tuple
        ``(U, S, Vt, error)`` with ``compute_sv``, else ``(U, error)``; ``error`` estimates
        ``||A - U diag(S) Vt||_F / ||A||_F`` from the discarded singular values (a float).

    Raises
    ------
    TypeError
        If ``A`` is not a real DNDarray or a parameter has the wrong type.
    ValueError
        If ``A`` is not 2-D, neither ``maxrank`` nor ``rtol`` is given, or a parameter is out
        of range.

    Examples
    --------
    >>> A = ht.random.randn(40, 120, split=1)
    >>> U, S, Vt, error = ht.linalg.hsvd(A, maxrank=4, compute_sv=True)
    >>> U.shape, S.shape, Vt.shape
    ((40, 4), (4,), (4, 120))
    >>> U, error = ht.hsvd(A, rtol=0.9)
    >>> error <= 0.9
    True
    """
    maxrank = check_int(maxrank, "maxrank", 1, allow_none=True)
    if rtol is not None:
        if isinstance(rtol, bool) or not isinstance(rtol, (int, float)):
            raise TypeError(f"rtol must be None or a float, got {type(rtol).__name__}")
        if not 0 <= rtol < 1:
            raise ValueError(f"rtol must be in [0, 1), got {rtol!r}")
    if maxrank is None and rtol is None:
        raise ValueError("hsvd needs maxrank or rtol (or both): the truncation criteria")
    safetyshift = check_int(safetyshift, "safetyshift", 0)
    check_int(maxmergedim, "maxmergedim", 1, allow_none=True)
    check_int(no_of_merges, "no_of_merges", 2, allow_none=True)
    compute_sv = check_bool(compute_sv, "compute_sv")
    silent = check_bool(silent, "silent")
    if not check_bool(warnings_off, "warnings_off"):
        reason = "heat merges the local factors of all processes at once"
        warn_ignored(maxmergedim, "maxmergedim", None, reason)
        if no_of_merges is not None:
            warn_ignored(no_of_merges, "no_of_merges", 2, reason)
    result = _hsvd(A, maxrank, None if rtol is None else float(rtol), safetyshift, compute_sv)
    if not silent and A.comm.rank == 0:
        rank = result[1].shape[0] if compute_sv else result[0].shape[1]
        print(f"hsvd: rank {rank}, relative error estimate {result[-1]:.3e}")
    return result


def hsvd_rank(
    A: DNDarray,
    maxrank: int,
    compute_sv: bool = False,
    maxmergedim: Optional[int] = None,
    safetyshift: int = 5,
    silent: bool = True,
) -> Union[Tuple[DNDarray, DNDarray, DNDarray, float], Tuple[DNDarray, float]]:
    """
    Hierarchical truncated SVD of rank ``maxrank`` (HeAT's interface): an approximation of the
    leading ``maxrank`` singular triplets, as scikit-learn's TruncatedSVD with a deterministic
    algorithm (see the module docstring).

    Parameters
    ----------
    A : DNDarray
        A 2-D real matrix (integers are taken as float64).
    maxrank : int
        The truncation rank.
    compute_sv : bool
        Also return the singular values and ``V^T``.
    maxmergedim : int, optional
        Accepted for HeAT compatibility: all local factors are merged at once.
    safetyshift : int
        Extra columns kept in the local truncations.
    silent : bool
        Accepted for HeAT compatibility.

    Returns
    -------
    tuple
        ``(U, S, Vt, error)`` with ``compute_sv``, else ``(U, error)``; ``error`` estimates
        ``||A - U diag(S) Vt||_F / ||A||_F`` from the discarded singular values (a float).

    Raises
    ------
    TypeError
        If ``A`` is not a real DNDarray or ``maxrank`` not an integer.
    ValueError
        If ``A`` is not 2-D or ``maxrank``/``safetyshift`` is out of range.

    Examples
    --------
    >>> A = ht.random.randn(50, 200, split=1)
    >>> U, S, Vt, error = ht.linalg.hsvd_rank(A, 5, compute_sv=True)
    >>> U.shape, S.shape, Vt.shape
    ((50, 5), (5,), (5, 200))
    """
    if isinstance(maxrank, bool) or not isinstance(maxrank, int):
        raise TypeError(f"maxrank must be an integer, but was {type(maxrank).__name__}")
    if maxrank < 1:
        raise ValueError(f"maxrank must be at least 1, but was {maxrank}")
    if isinstance(safetyshift, bool) or not isinstance(safetyshift, int) or safetyshift < 0:
        raise ValueError(f"safetyshift must be a non-negative integer, but was {safetyshift!r}")
    return _hsvd(A, maxrank, None, safetyshift, compute_sv)


def hsvd_rtol(
    A: DNDarray,
    rtol: float,
    compute_sv: bool = False,
    maxrank: Optional[int] = None,
    maxmergedim: Optional[int] = None,
    safetyshift: int = 5,
    no_of_merges: Optional[int] = None,
    silent: bool = True,
) -> Union[Tuple[DNDarray, DNDarray, DNDarray, float], Tuple[DNDarray, float]]:
    """
    Hierarchical truncated SVD with a bound on the relative error (HeAT's interface): the
    smallest rank (at most ``maxrank``) such that ``||A - U diag(S) Vt||_F <= rtol ||A||_F``, half
    of the error budget spent on the local truncations and the rest on the merged one.

    Parameters
    ----------
    A : DNDarray
        A 2-D real matrix.
    rtol : float
        The relative error bound, ``0 <= rtol < 1``.
    compute_sv : bool
        Also return the singular values and ``V^T``.
    maxrank : int, optional
        An upper bound on the rank (the error bound may then be missed; the estimate says so).
    maxmergedim, no_of_merges, silent
        Accepted for HeAT compatibility.
    safetyshift : int
        Extra columns kept in the local truncations when ``maxrank`` is given.

    Returns
    -------
    tuple
        As :func:`hsvd_rank`.

    Raises
    ------
    TypeError, ValueError
        For a non-real ``A``, a non-2-D one, or parameters out of range.

    Examples
    --------
    >>> A = ht.random.randn(40, 100, split=1)
    >>> U, error = ht.linalg.hsvd_rtol(A, 0.5)
    >>> error <= 0.5
    True
    """
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)) or not 0 <= rtol < 1:
        raise ValueError(f"rtol must be a number in [0, 1), but was {rtol!r}")
    if maxrank is not None and (
        isinstance(maxrank, bool) or not isinstance(maxrank, int) or maxrank < 1
    ):
        raise ValueError(f"maxrank must be None or a positive integer, but was {maxrank!r}")
    if isinstance(safetyshift, bool) or not isinstance(safetyshift, int) or safetyshift < 0:
        raise ValueError(f"safetyshift must be a non-negative integer, but was {safetyshift!r}")
    return _hsvd(A, maxrank, float(rtol), safetyshift, compute_sv)


def isvd(
    new_data: DNDarray,
    U_old: DNDarray,
    S_old: DNDarray,
    Vt_old: DNDarray,
    maxrank: Optional[int] = None,
) -> Tuple[DNDarray, DNDarray, DNDarray]:
    """
    Incremental SVD (Brand, 2006): from the SVD ``X = U diag(S) Vt`` and new columns ``N``, the
    SVD of ``[X | N]``, truncated to ``maxrank`` (HeAT's interface).

    ``P = U^H N`` and the component of ``N`` outside ``U``'s range, ``N - U P = Q_N R_N`` (TSQR),
    give the small core ``[[diag(S), P], [0, R_N]]`` whose SVD (on every process) rotates
    ``[U | Q_N]`` and ``blockdiag(Vt, I)`` into the new factors. ``U`` keeps the layout of the
    products (split along its rows when ``U_old``/``new_data`` are).

    Parameters
    ----------
    new_data : DNDarray
        ``m x c`` new columns.
    U_old, S_old, Vt_old : DNDarray
        The SVD of the old ``m x n`` matrix (``m x r``, ``r``, ``r x n``).
    maxrank : int, optional
        Truncate the result to this rank (default: no truncation).

    Returns
    -------
    (DNDarray, DNDarray, DNDarray)
        ``U``, ``S``, ``Vt`` of the extended matrix.

    Raises
    ------
    TypeError
        If an operand is not a real DNDarray.
    ValueError
        If the shapes do not fit together or ``maxrank`` is not positive.

    Examples
    --------
    >>> X = ht.random.randn(30, 10, split=0)
    >>> U, S, Vt = ht.linalg.svd(X, full_matrices=False)
    >>> U2, S2, Vt2 = ht.linalg.isvd(ht.random.randn(30, 4, split=0), U, S, Vt)
    >>> Vt2.shape
    (14, 14)
    """
    new_data = _real_matrix(new_data, "new_data")
    U_old = _real_matrix(U_old, "U_old")
    S_old = _real_matrix(S_old, "S_old", 1)
    Vt_old = _real_matrix(Vt_old, "Vt_old")
    m, r = U_old.gshape
    if S_old.gshape[0] != r or Vt_old.gshape[0] != r:
        raise ValueError(
            f"U_old {U_old.gshape}, S_old {S_old.gshape} and Vt_old {Vt_old.gshape} do not fit together"
        )
    if new_data.gshape[0] != m:
        raise ValueError(f"new_data has {new_data.gshape[0]} rows, but U_old has {m}")
    if maxrank is not None and (
        isinstance(maxrank, bool) or not isinstance(maxrank, int) or maxrank < 1
    ):
        raise ValueError(f"maxrank must be None or a positive integer, but was {maxrank!r}")
    comm = U_old.comm
    dtype = types.promote_types(types.promote_types(new_data.dtype, U_old.dtype), Vt_old.dtype)
    c = new_data.gshape[1]
    n = Vt_old.gshape[1]
    projection = matmul(matrix_transpose(U_old), new_data)  # r x c
    projection = projection if projection.split is None else resplit(projection, None)
    p_local = projection.larray.to(dtype.torch_type())
    remainder = new_data - matmul(U_old, projection)
    Q_new, R_new = qr(remainder)
    R_new = R_new if R_new.split is None else resplit(R_new, None)
    r_local = R_new.larray.to(dtype.torch_type())
    k = r_local.shape[0]
    s_local = (S_old if S_old.split is None else resplit(S_old, None)).larray.to(dtype.torch_type())
    core = torch.zeros((r + k, r + c), dtype=dtype.torch_type(), device=r_local.device)
    core[:r, :r] = torch.diag(s_local)
    core[:r, r:] = p_local
    core[r:, r:] = r_local
    u_c, s_c, vt_c = torch.linalg.svd(core, full_matrices=False)
    rank = s_c.numel() if maxrank is None else min(maxrank, s_c.numel())
    u_c, s_c, vt_c = u_c[:, :rank], s_c[:rank], vt_c[:rank]
    # U = [U_old | Q_new] u_c, without forming the concatenation
    top = DNDarray(u_c[:r].contiguous(), (r, rank), dtype, None, U_old.device, comm, True)
    bottom = DNDarray(u_c[r:].contiguous(), (k, rank), dtype, None, U_old.device, comm, True)
    U = matmul(U_old, top) + matmul(Q_new, bottom)
    # Vt = vt_c blockdiag(Vt_old, I): the old columns rotated, the new ones taken as they are
    old = Vt_old if Vt_old.split is None else resplit(Vt_old, None)
    vt_old_local = old.larray.to(dtype.torch_type())
    vt = torch.cat((vt_c[:, :r] @ vt_old_local, vt_c[:, r:]), dim=1)
    Vt = DNDarray(vt.contiguous(), (rank, n + c), dtype, None, U_old.device, comm, True)
    S = DNDarray(s_c.contiguous(), (rank,), dtype, None, U_old.device, comm, True)
    return U, S, Vt
