"""
Matrix decompositions: ``qr``, ``svd``, ``eigh``, ``eig`` and ``polar``.

* **Tall-skinny QR (TSQR)** of a matrix split along its rows: every process factors its block,
  ``A_r = Q_r R_r``; the small triangular factors (at most ``n x n`` each) are gathered on every
  process (one Allgatherv) and factored once more, ``[R_0; ...; R_{p-1}] = Q' R``; each process's
  block of ``Q`` is ``Q_r Q'_r``, a local product. ``R`` is replicated. This is the
  communication-optimal QR of Demmel et al. (2012) with all factors merged at once, which for
  ``p n x n`` stacks of the sizes this is meant for costs less than a merge tree's extra messages.
  Inside a process the same is done over cache-sized row blocks, each factored single-threaded
  by one of torch's threads (see ``_blocked_qr``). A tall-skinny matrix split along its columns
  is resplit along its rows for it (one all-to-all each way).
* **Block Gram-Schmidt** of a matrix split along its columns (``p n > m >= n``): the column
  blocks are orthogonalized in process order; the owner factors its block and broadcasts its
  ``Q`` block, the later processes project it out of theirs, twice (BCGS2, re-orthogonalization
  keeps ``Q`` orthonormal to working precision). ``Q`` and ``R`` are split along their columns.
* **SVD** of a tall-skinny matrix (or, transposed, of a short-fat one): TSQR, then the SVD of the
  small ``R`` on every process, ``U = Q U_R`` locally. The complete factors
  (``full_matrices=True``) come from a TSQR that keeps every process's complete ``Q_r`` and the
  complete ``Q'``: the orthogonal complement of ``A``'s columns is made of local pieces.

* **Polar decomposition** ``A = U H`` from the SVD: ``U = W Vh``, ``H = Vh^H diag(S) Vh``
  (distributed as the SVD).

Matrices that are neither (a distributed matrix with ``m < p n`` rows split along its rows, or
``m < n`` split along its columns) are gathered on every process and factored there (memory: the
whole matrix per process); so is every distributed matrix given to ``eigh`` or ``eig`` (the
eigenproblem of a dense matrix of these sizes is faster replicated than distributed over a few
processes; each process then keeps its rows or columns of the eigenvectors). Stacks of matrices split along a batch axis are factored locally.
"""

from __future__ import annotations

import collections
from typing import Callable, Optional, Tuple, Union

import numpy as np
import torch

from .. import types
from .._redistribution import balanced_counts, displacements, resplit_tensor
from ..dndarray import DNDarray
from ..layout import resplit
from ..parallel import piece_bounds, run_pieces, single_threaded_torch, worker_count
from ..sanitation import check_choice, check_int, check_type, sanitize_in, warn_ignored
from .products import matmul

__all__ = [
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "matrix_rank",
    "pinv",
    "polar",
    "qr",
    "svd",
    "svdvals",
]

QR = collections.namedtuple("QR", "Q, R")
SVD = collections.namedtuple("SVD", "U, S, Vh")
Eigh = collections.namedtuple("Eigh", "eigenvalues, eigenvectors")
Eig = collections.namedtuple("Eig", "eigenvalues, eigenvectors")


def _float_type(dtype, name: str):
    if dtype in (types.float16, types.bfloat16):
        raise TypeError(f"array type {dtype.__name__} of {name} is unsupported in linalg")
    return dtype if types.heat_type_is_inexact(dtype) else types.float64


def _check_matrix(A: DNDarray, name: str = "A") -> None:
    sanitize_in(A, name)
    if A.ndim < 2:
        raise ValueError(f"{name} must be at least 2-D (a matrix or a stack), but is {A.ndim}-D")


# ---------------------------------------------------------------------------------------------
# the kernels (on local tensors)
# ---------------------------------------------------------------------------------------------
_QR_BLOCK_BYTES = 2**20  # a row block of about the L2 cache: its Householder sweeps stay in cache


def _blocked_qr(a: torch.Tensor, want_q: bool) -> Tuple[torch.Tensor, Callable]:
    """
    QR of one tall 2-D tensor, cache-blocked: LAPACK's Householder QR of a tall-skinny matrix
    sweeps the whole column panel once per column, so it runs at memory speed; factoring row
    blocks that fit in the cache and then their stacked R factors (TSQR inside the process) is
    faster. The blocks are shared among torch's threads, each factoring whole blocks
    single-threaded: a Householder QR of a narrow block is a few hundred small BLAS-2 calls,
    each a parallel region whose threads meet at a barrier, which on shared cores made the QR of
    a 200000 x 50 matrix 20-80x slower (see :func:`heat.core.parallel.single_threaded_torch`).

    Returns ``R`` and ``expand``: ``expand(right)`` is ``Q @ right`` (``Q`` for None), formed
    block by block in one pass, so a TSQR or an SVD applies its small factor to ``Q`` without
    another pass over the tall matrix. ``want_q=False`` computes no Householder vectors to keep.
    """
    m, n = a.shape
    rows = max(4 * n, _QR_BLOCK_BYTES // max(1, n * a.element_size()))
    mode = "reduced" if want_q else "r"
    if n == 0 or m < 2 * rows or a.device.type != "cpu":
        q, r = torch.linalg.qr(a, mode=mode)
        return r, (lambda right=None: q if right is None else q @ right)
    # the last block takes the remainder, so every block has at least n rows and an n x n R
    count = m // rows
    blocks = a.split([rows] * (count - 1) + [m - rows * (count - 1)])
    workers = worker_count(len(blocks), m * n)
    bounds = piece_bounds(len(blocks), workers)
    factors = [None] * len(blocks)

    def factor(piece: int) -> None:
        for index in range(*bounds[piece]):
            factors[index] = torch.linalg.qr(blocks[index], mode=mode)

    with single_threaded_torch():
        run_pieces(factor, workers)
        q2, r = torch.linalg.qr(torch.cat([f[1] for f in factors]), mode=mode)

    def expand(right: Optional[torch.Tensor] = None) -> torch.Tensor:
        small = q2 if right is None else q2 @ right
        q = torch.empty((m, small.shape[1]), dtype=a.dtype, device=a.device)

        def multiply(piece: int) -> None:
            for index in range(*bounds[piece]):
                start = index * rows
                torch.mm(
                    factors[index][0],
                    small[index * n : (index + 1) * n],
                    out=q[start : start + blocks[index].shape[0]],
                )

        with single_threaded_torch():
            run_pieces(multiply, workers)
        return q

    return r, expand


def _local_qr(a: torch.Tensor, want_q: bool):
    """``(Q or None, R)`` of one tall 2-D tensor, as ``torch.linalg.qr`` (see ``_blocked_qr``)."""
    r, expand = _blocked_qr(a, want_q)
    return (expand() if want_q else None), r


def _tsqr(local: torch.Tensor, n: int, comm, want_q: bool) -> Tuple[torch.Tensor, Callable]:
    """
    TSQR of a matrix split along its rows: ``R`` (replicated) and ``expand``, where
    ``expand(right)`` is this process's rows of ``Q @ right`` (of ``Q`` for None).
    ``local`` is the process's ``m_r x n`` block.
    """
    r1, expand_local = _blocked_qr(local, want_q)
    # every process's R factor (min(m_r, n) rows each) on every process
    stacked = comm.allgather_tensors(r1, axis=0)
    q2, r = torch.linalg.qr(stacked, mode="reduced" if want_q else "r")
    if not want_q:
        return r, None
    sizes = comm.allgather(r1.shape[0])
    start = sum(sizes[: comm.rank])
    mine = q2[start : start + r1.shape[0]]
    return r, (lambda right=None: expand_local(mine if right is None else mine @ right))


def _complete_tsqr(local: torch.Tensor, n: int, comm) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    The complete QR of an ``m x n`` matrix split along its rows, from a TSQR whose orthogonal
    factors are kept complete: ``A_r = Q_r [R_r; 0]`` on every process (``Q_r`` is
    ``m_r x m_r``), ``[R_0; ...; R_{p-1}] = Q' [R; 0]`` replicated (``K x K``, ``K`` the rows of
    the stack). Then ``A = Q_full [R; 0]`` with the ``m x m`` orthogonal
    ``Q_full = blockdiag(Q_r) P (Q' + I)``: its first ``K`` columns are ``Q_r[:, :k_r] Q'`` on
    process ``r``'s rows, the others the trailing columns of every ``Q_r`` (zero on the other
    processes' rows). Only local products: returns this process's ``m_r x m`` rows of
    ``Q_full`` and the replicated ``min(K, n) x n`` nonzero rows of ``R``.
    """
    m_r = local.shape[0]
    q_local, r_local = torch.linalg.qr(local, mode="complete")
    k_r = min(m_r, n)
    r_local = r_local[:k_r]
    stacked = comm.allgather_tensors(r_local.contiguous(), axis=0)
    q_stack, r_stack = torch.linalg.qr(stacked, mode="complete")
    sizes = comm.allgather((m_r, k_r))
    stack_rows = sum(k for _, k in sizes)
    m = sum(rows for rows, _ in sizes)
    start = sum(k for _, k in sizes[: comm.rank])
    complement_start = stack_rows + sum(rows - k for rows, k in sizes[: comm.rank])
    q = local.new_zeros((m_r, m))
    q[:, :stack_rows] = q_local[:, :k_r] @ q_stack[start : start + k_r]
    q[:, complement_start : complement_start + m_r - k_r] = q_local[:, k_r:]
    return q, r_stack[:n]


def _complete_tsqr_svd(local: torch.Tensor, n: int, comm):
    """
    The full SVD of an ``m x n`` matrix (``m >= n``) split along its rows: the complete TSQR
    ``A = Q_full [R; 0]`` (see :func:`_complete_tsqr`) and ``R = U_R diag(S) Vh`` give
    ``A = Q_full (U_R + I) [diag(S); 0] Vh``. Returns this process's ``m_r x m`` rows of ``U``,
    and ``S``, ``Vh`` replicated.
    """
    u, r = _complete_tsqr(local, n, comm)
    u_r, s, vh = torch.linalg.svd(r, full_matrices=True)
    u[:, :n] = u[:, :n] @ u_r
    return u, s, vh


def _block_gram_schmidt(local: torch.Tensor, counts, comm):
    """
    BCGS2 of an ``m x n`` matrix (``m >= n``) split along its columns: this process's columns of
    Q (``m x n_r``) and of R (``n x n_r``).
    """
    me = comm.rank
    displs = displacements(counts)
    n = sum(counts)
    work = local.clone()
    r_local = local.new_zeros((n, local.shape[1]))
    for owner in range(comm.size):
        width = counts[owner]
        if width == 0:
            continue
        if me == owner:
            q_block, r_block = _local_qr(work, True)
            # one re-orthogonalization pass of the diagonal block keeps Q orthonormal
            q_block, r_again = _local_qr(q_block, True)
            r_block = r_again @ r_block
            work = q_block
            r_local[displs[owner] : displs[owner] + width] = r_block
            shared = q_block.contiguous()
        else:
            shared = local.new_empty((local.shape[0], width))
        shared = comm.Bcast(shared, root=owner)
        if me > owner:
            for _ in range(2):  # BCGS2: project twice
                coefficients = shared.mH @ work
                work = work - shared @ coefficients
                r_local[displs[owner] : displs[owner] + width] += coefficients
    return work, r_local


def _gathered_matrices(A: DNDarray, torch_type) -> Tuple[torch.Tensor, Optional[int]]:
    """Whole matrices of A on this process (see the module docstring) and the stack's split."""
    split = A.split
    if split is not None and split >= A.ndim - 2 and A.comm.size > 1:
        if A.ndim > 2:
            local, _ = resplit_tensor(A, 0)
            return local.to(torch_type), 0
        return resplit_tensor(A, None)[0].to(torch_type), None
    return A.larray.to(torch_type), split


def _wrap(local: torch.Tensor, gshape, dtype, split, A: DNDarray) -> DNDarray:
    balanced = True
    if split is not None:
        counts = A.comm.allgather(local.shape[split]) if A.comm.size > 1 else [local.shape[split]]
        balanced = tuple(counts) == balanced_counts(A.comm, gshape[split])
    return DNDarray(local, tuple(gshape), dtype, split, A.device, A.comm, balanced)


def _rows_of(full: torch.Tensor, axis: int, A: DNDarray, counts) -> torch.Tensor:
    start = displacements(counts)[A.comm.rank]
    return full.narrow(axis, start, counts[A.comm.rank]).contiguous()


# ---------------------------------------------------------------------------------------------
# qr
# ---------------------------------------------------------------------------------------------
def qr(A: DNDarray, mode: str = "reduced", procs_to_merge: int = 2) -> QR:
    """
    The QR decomposition ``A = Q R`` of a matrix or of each matrix of a stack: ``Q`` with
    orthonormal columns, ``R`` upper triangular (HeAT's interface; NumPy's ``"reduced"`` shapes).

    Layouts:

    * ``A`` split along its rows and tall-skinny (``m >= p n``): TSQR (see the module docstring);
      ``Q`` has ``A``'s layout, ``R`` is replicated.
    * ``A`` split along its columns and tall-skinny: resplit along its rows (one all-to-all),
      TSQR, and ``Q`` resplit back; ``Q`` and ``R`` split along their columns.
    * ``A`` split along its columns with ``p n > m >= n``: block Gram-Schmidt; ``Q`` and ``R``
      split along their columns.
    * otherwise a single distributed matrix is gathered on every process (memory: the whole
      matrix per process) and ``Q`` and ``R`` are returned in ``A``'s split; stacks split along a
      matrix axis are resplit along their first batch axis, factored locally, and the factors
      resplit back to ``A``'s split axis.

    The signs of ``R``'s rows (and of ``Q``'s columns) may differ from NumPy's; ``Q R`` is the
    same.

    Parameters
    ----------
    A : DNDarray
        Shape ``(..., m, n)``.
    mode : {"reduced", "complete", "r"}
        ``"reduced"``: ``Q`` of shape ``(..., m, k)`` and ``R`` of shape ``(..., k, n)``,
        ``k = min(m, n)``; ``"complete"``: as NumPy's, the square ``Q`` of shape
        ``(..., m, m)`` and ``R`` of shape ``(..., m, n)`` (the same as ``"reduced"`` when
        ``m <= n``); ``"r"``: ``R`` only (``Q`` is None), as HeAT.
    procs_to_merge : int
        Accepted for HeAT compatibility; TSQR merges all factors at once (another value than 2
        warns that it has no effect).

    Returns
    -------
    QR
        The named tuple ``(Q, R)``.

    Raises
    ------
    TypeError
        If ``A`` is not a DNDarray, is half precision, or ``mode`` is not a string.
    ValueError
        If ``A`` has fewer than two dimensions or ``mode`` is unknown.

    Examples
    --------
    >>> A = ht.random.randn(100, 4, split=0)
    >>> Q, R = ht.linalg.qr(A)
    >>> ht.allclose(Q @ R, A, atol=1e-5)
    True
    >>> Q, R = ht.linalg.qr(A, mode="complete")
    >>> Q.shape, R.shape
    ((100, 100), (100, 4))
    """
    _check_matrix(A)
    check_type(mode, "mode", str, "a string")
    check_choice(mode, "mode", ("reduced", "complete", "r"))
    check_int(procs_to_merge, "procs_to_merge", 0)
    warn_ignored(procs_to_merge, "procs_to_merge", 2, "heat's TSQR merges all factors at once")
    if mode == "complete":
        if A.gshape[-2] > A.gshape[-1]:
            return _complete_qr(A)
        mode = "reduced"  # with m <= n the reduced factors are the complete ones
    dtype = _float_type(A.dtype, "A")
    torch_type = dtype.torch_type()
    want_q = mode == "reduced"
    comm = A.comm
    p = comm.size
    m, n = A.gshape[-2], A.gshape[-1]
    k = min(m, n)
    batch = A.gshape[:-2]
    q_shape, r_shape = batch + (m, k), batch + (k, n)
    if A.ndim == 2 and p > 1 and A.split == 0 and m >= p * n and n > 0:
        local = A.larray.to(torch_type)
        r, expand = _tsqr(local, n, comm, want_q)
        Q = DNDarray(expand(), q_shape, dtype, 0, A.device, comm, A._balanced) if want_q else None
        return QR(Q, DNDarray(r, r_shape, dtype, None, A.device, comm, True))
    if A.ndim == 2 and p > 1 and A.split == 1 and m >= p * n and n > 0:
        # tall-skinny but split along its columns: TSQR of a row-split copy (an all-to-all each
        # way) is ~3x faster than block Gram-Schmidt, which broadcasts every m-row column block
        rows = resplit(A, 0)
        r, expand = _tsqr(rows.larray.to(torch_type), n, comm, want_q)
        counts, displs = A.counts_displs()
        mine = r[:, displs[comm.rank] : displs[comm.rank] + counts[comm.rank]].contiguous()
        R = DNDarray(mine, r_shape, dtype, 1, A.device, comm, A._balanced)
        Q = None
        if want_q:
            Q = resplit(DNDarray(expand(), q_shape, dtype, 0, A.device, comm, rows._balanced), 1)
        return QR(Q, R)
    if A.ndim == 2 and p > 1 and A.split == 1 and m >= n:
        counts = A.counts_displs()[0]
        q, r = _block_gram_schmidt(A.larray.to(torch_type), counts, comm)
        balanced = A._balanced
        R = DNDarray(r, r_shape, dtype, 1, A.device, comm, balanced)
        Q = DNDarray(q, q_shape, dtype, 1, A.device, comm, balanced) if want_q else None
        return QR(Q, R)
    local, split = _gathered_matrices(A, torch_type)
    if local.dim() == 2:
        q, r = _local_qr(local, want_q)
    else:
        q, r = torch.linalg.qr(local, mode="reduced" if want_q else "r")
    if split is None and A.split is not None and A.ndim == 2 and p > 1:
        # a gathered matrix: back to A's split axis (balanced rows or columns)
        axis = A.split
        r_local = _rows_of(r, axis, A, balanced_counts(comm, r_shape[axis]))
        R = DNDarray(r_local, r_shape, dtype, axis, A.device, comm, True)
        Q = None
        if want_q:
            Q = DNDarray(
                _rows_of(q, axis, A, balanced_counts(comm, q_shape[axis])),
                q_shape,
                dtype,
                axis,
                A.device,
                comm,
                True,
            )
        return QR(Q, R)
    R = _back_to_split(_wrap(r, r_shape, dtype, split, A), A.split)
    Q = _back_to_split(_wrap(q, q_shape, dtype, split, A), A.split) if want_q else None
    return QR(Q, R)


def _complete_qr(A: DNDarray) -> QR:
    """
    ``qr(A, mode="complete")`` of matrices with ``m > n``: a matrix split along its rows by a
    complete TSQR (``Q`` and ``R`` in ``A``'s row layout, no gathering); other layouts factored
    in whole matrices, as the reduced mode's fallback, and returned in ``A``'s split.
    """
    dtype = _float_type(A.dtype, "A")
    torch_type = dtype.torch_type()
    comm = A.comm
    m, n = A.gshape[-2], A.gshape[-1]
    batch = A.gshape[:-2]
    q_shape, r_shape = batch + (m, m), batch + (m, n)
    if A.ndim == 2 and comm.size > 1 and A.split == 0:
        q, r_top = _complete_tsqr(A.larray.to(torch_type), n, comm)
        # this process's rows of [R; 0]: the nonzero rows are the first n of the matrix
        counts, displs = A.counts_displs()
        start, count = displs[comm.rank], counts[comm.rank]
        r = q.new_zeros((count, n))
        stop = min(start + count, r_top.shape[0])
        if stop > start:
            r[: stop - start] = r_top[start:stop]
        Q = DNDarray(q, q_shape, dtype, 0, A.device, comm, A._balanced)
        return QR(Q, DNDarray(r, r_shape, dtype, 0, A.device, comm, A._balanced))
    local, split = _gathered_matrices(A, torch_type)
    q, r = torch.linalg.qr(local, mode="complete")
    if split is None and A.split is not None and comm.size > 1:
        axis = A.split
        Q = DNDarray(
            _rows_of(q, axis, A, balanced_counts(comm, q_shape[axis])),
            q_shape,
            dtype,
            axis,
            A.device,
            comm,
            True,
        )
        R = DNDarray(
            _rows_of(r, axis, A, balanced_counts(comm, r_shape[axis])),
            r_shape,
            dtype,
            axis,
            A.device,
            comm,
            True,
        )
        return QR(Q, R)
    return QR(
        _back_to_split(_wrap(q, q_shape, dtype, split, A), A.split),
        _back_to_split(_wrap(r, r_shape, dtype, split, A), A.split),
    )


def _back_to_split(x: DNDarray, split: Optional[int]) -> DNDarray:
    """A stack factored along its first batch axis, back to the input's split (one all-to-all)."""
    return x if x.split == split else resplit(x, split)


# ---------------------------------------------------------------------------------------------
# svd
# ---------------------------------------------------------------------------------------------
#: Why HeAT's Zolotarev parameters do nothing here (they warn when set, see ``warn_ignored``).
_NO_ZOLOTAREV = (
    "heat's {function} computes no Zolotarev polar decomposition (it uses TSQR, or LAPACK on "
    "whole matrices)"
)


def svd(
    A: DNDarray,
    full_matrices: bool = True,
    compute_uv: bool = True,
    qr_procs_to_merge: int = 2,
    r_max_zolopd: int = 8,
) -> Union[SVD, DNDarray]:
    """
    The singular value decomposition ``A = U diag(S) Vh``, as :func:`numpy.linalg.svd`: the
    complete factors by default, as NumPy and the array API standard (HeAT 1.8 defaulted to the
    reduced ones; pass ``full_matrices=False`` for those, as with NumPy).

    Reduced factors: a tall-skinny matrix (``m >= p n``) goes through TSQR and the SVD of the
    small ``R`` (replicated); ``U`` is split along its rows, ``S`` and ``Vh`` are replicated. A
    short-fat matrix (``n >= p m``) is the same transposed (``Vh`` split along its columns). A
    tall-skinny matrix split along its columns (a short-fat one along its rows) is first
    resplit (one all-to-all). Other distributed matrices are gathered on every process (memory:
    the whole matrix per process); stacks are worked on in whole matrices.

    Complete factors (``full_matrices=True``): of a distributed matrix with ``m >= n``, ``U``
    (``m x m``) is split along its rows and ``Vh`` (``n x n``) replicated; with ``m < n``, ``U``
    (``m x m``) is replicated and ``Vh`` (``n x n``) split along its columns. They come from a
    TSQR that keeps every process's complete orthogonal factor (no gathering; a matrix split
    the other way is first resplit, one all-to-all). ``A`` of another layout, or a stack, is
    factored in whole matrices.

    .. warning::
        The complete ``U`` of a tall matrix (the default) is ``m x m``: ``m / n`` times the
        size of ``A`` (each process holds ``m_r x m`` of it; for ``m = 200000`` rows that is
        160 GB in float32 in all). Pass ``full_matrices=False`` unless you need the orthogonal
        complement of ``A``'s columns.

    Parameters
    ----------
    A : DNDarray
        Shape ``(..., m, n)``.
    full_matrices : bool
        False: ``U`` of shape ``(..., m, k)`` and ``Vh`` of shape ``(..., k, n)``,
        ``k = min(m, n)``; True: ``(..., m, m)`` and ``(..., n, n)``.
    compute_uv : bool
        False: return ``S`` only.
    qr_procs_to_merge : int
        Accepted for HeAT compatibility.
    r_max_zolopd : int
        Accepted for HeAT compatibility: an integer from 1 to 8 (HeAT's largest order of the
        Zolotarev rational function in the polar decomposition it used for matrices neither
        tall-skinny nor short-fat). heat computes no Zolotarev polar decomposition (TSQR, or
        LAPACK on whole matrices), so another value than 8 warns that it has no effect.

    Returns
    -------
    SVD or DNDarray
        The named tuple ``(U, S, Vh)``, ``S`` of shape ``(..., k)`` with the singular values in
        descending order; or ``S``.

    Raises
    ------
    TypeError
        If ``A`` is not a DNDarray or is half precision, or ``full_matrices`` or ``compute_uv``
        is not a bool, or ``r_max_zolopd`` not an int.
    ValueError
        If ``A`` has fewer than two dimensions or ``r_max_zolopd`` is not in 1..8.

    Examples
    --------
    >>> A = ht.random.randn(200, 3, split=0)
    >>> U, S, Vh = ht.linalg.svd(A, full_matrices=False)
    >>> ht.allclose(U @ ht.diag(S) @ Vh, A, atol=1e-4)
    True
    >>> U, S, Vh = ht.linalg.svd(A)
    >>> U.shape, Vh.shape
    ((200, 200), (3, 3))
    """
    _check_matrix(A)
    for name, flag in (("full_matrices", full_matrices), ("compute_uv", compute_uv)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be a bool, but was {type(flag).__name__}")
    check_int(r_max_zolopd, "r_max_zolopd", 1, maximum=8)
    warn_ignored(r_max_zolopd, "r_max_zolopd", 8, _NO_ZOLOTAREV.format(function="svd"))
    if full_matrices and compute_uv:
        return _full_svd(A)
    dtype = _float_type(A.dtype, "A")
    real = types.real_type_of(dtype)
    torch_type = dtype.torch_type()
    comm = A.comm
    p = comm.size
    m, n = A.gshape[-2], A.gshape[-1]
    k = min(m, n)
    batch = A.gshape[:-2]
    u_shape, s_shape, vh_shape = batch + (m, k), batch + (k,), batch + (k, n)
    distributed = p > 1 and A.split is not None
    if A.ndim == 2 and n > 0 and m > 0 and A.split in (None, 0, 1):
        # tall-skinny (short-fat) matrices: a QR first, then the SVD of the small R; also on one
        # process, where the cache-blocked QR beats LAPACK's own reduction of a tall matrix
        if distributed:
            # a tall-skinny matrix split along its columns (or a short-fat one along its rows)
            # is resplit (one all-to-all) rather than gathered: U (Vh) then is split along rows
            # (columns) instead of being replicated
            if A.split == 1 and m >= p * n:
                A = resplit(A, 0)
            elif A.split == 0 and n >= p * m:
                A = resplit(A, 1)
            tall = A.split == 0 and m >= p * n
            wide = A.split == 1 and n >= p * m
        else:
            tall, wide = m >= 4 * n, n >= 4 * m
        if tall or wide:
            local = A.larray.to(torch_type)
            if wide:
                local = local.mH  # A^H is tall-skinny and split along its rows
            if distributed:
                r, expand = _tsqr(local, local.shape[1], comm, compute_uv)
            else:
                r, expand = _blocked_qr(local, compute_uv)
            if not compute_uv:
                s = torch.linalg.svdvals(r)
                return DNDarray(s, s_shape, real, None, A.device, comm, True)
            u_r, s, vh_r = torch.linalg.svd(r, full_matrices=False)
            big = expand(u_r)  # this process's rows of the tall factor, Q U_R
            S = DNDarray(s, s_shape, real, None, A.device, comm, True)
            # the tall factor keeps A's split (row split of U, or column split of Vh)
            if tall:
                U = DNDarray(big, u_shape, dtype, A.split, A.device, comm, A._balanced)
                Vh = DNDarray(vh_r, vh_shape, dtype, None, A.device, comm, True)
            else:
                # A^H = (Q U_R) S Vh_R, so A = Vh_R^H S (Q U_R)^H
                U = DNDarray(vh_r.mH.contiguous(), u_shape, dtype, None, A.device, comm, True)
                Vh = DNDarray(
                    big.mH.contiguous(), vh_shape, dtype, A.split, A.device, comm, A._balanced
                )
            return SVD(U, S, Vh)
    local, split = _gathered_matrices(A, torch_type)
    # the singular values have no matrix axes: split only along a batch axis
    s_split = split if split is not None and split < A.ndim - 2 else None
    if not compute_uv:
        s = torch.linalg.svdvals(local)
        return _wrap(s, s_shape, real, s_split, A)
    u, s, vh = torch.linalg.svd(local, full_matrices=False)
    return _wrap_svd(u, s, vh, split, A, dtype)


def _wrap_svd(u, s, vh, split: Optional[int], A: DNDarray, dtype) -> SVD:
    """The factors of whole matrices (``split``: the stack's, see ``_gathered_matrices``)."""
    comm = A.comm
    real = types.real_type_of(dtype)
    batch = A.gshape[:-2]
    u_shape = batch + tuple(u.shape[-2:])
    s_shape = batch + tuple(s.shape[-1:])
    vh_shape = batch + tuple(vh.shape[-2:])
    if split is None and A.split is not None and A.ndim == 2 and comm.size > 1:
        # gathered: U keeps A's row split, Vh A's column split, S replicated
        S = DNDarray(s, s_shape, real, None, A.device, comm, True)
        if A.split == 0:
            U = DNDarray(
                _rows_of(u, 0, A, balanced_counts(comm, u_shape[0])),
                u_shape,
                dtype,
                0,
                A.device,
                comm,
                True,
            )
            Vh = DNDarray(vh, vh_shape, dtype, None, A.device, comm, True)
        else:
            U = DNDarray(u, u_shape, dtype, None, A.device, comm, True)
            Vh = DNDarray(
                _rows_of(vh, 1, A, balanced_counts(comm, vh_shape[1])),
                vh_shape,
                dtype,
                1,
                A.device,
                comm,
                True,
            )
        return SVD(U, S, Vh)
    s_split = split if split is not None and split < A.ndim - 2 else None
    return SVD(
        _wrap(u, u_shape, dtype, split, A),
        _wrap(s, s_shape, real, s_split, A),
        _wrap(vh, vh_shape, dtype, split, A),
    )


def _full_svd(A: DNDarray) -> SVD:
    """``svd(A, full_matrices=True)``: see :func:`svd` for the layouts."""
    dtype = _float_type(A.dtype, "A")
    real = types.real_type_of(dtype)
    torch_type = dtype.torch_type()
    comm = A.comm
    m, n = A.gshape[-2], A.gshape[-1]
    k = min(m, n)
    if A.ndim == 2 and comm.size > 1 and A.split is not None and k > 0:
        S_shape = (k,)
        if m >= n:
            B = A if A.split == 0 else resplit(A, 0)
            u, s, vh = _complete_tsqr_svd(B.larray.to(torch_type), n, comm)
            U = DNDarray(u, (m, m), dtype, 0, A.device, comm, B._balanced)
            Vh = DNDarray(vh, (n, n), dtype, None, A.device, comm, True)
        else:
            # A^H = W diag(S) Zh is tall and split along its rows, so A = Zh^H diag(S) W^H
            B = A if A.split == 1 else resplit(A, 1)
            w, s, zh = _complete_tsqr_svd(B.larray.to(torch_type).mH, m, comm)
            U = DNDarray(zh.mH.contiguous(), (m, m), dtype, None, A.device, comm, True)
            Vh = DNDarray(w.mH.contiguous(), (n, n), dtype, 1, A.device, comm, B._balanced)
        return SVD(U, DNDarray(s, S_shape, real, None, A.device, comm, True), Vh)
    local, split = _gathered_matrices(A, torch_type)
    u, s, vh = torch.linalg.svd(local, full_matrices=True)
    return _wrap_svd(u, s, vh, split, A, dtype)


# ---------------------------------------------------------------------------------------------
# eigh, polar
# ---------------------------------------------------------------------------------------------
def eigh(A: DNDarray, UPLO: str = "L", r_max_zolopd: int = 8, silent: bool = True) -> Eigh:
    """
    The eigenvalues and eigenvectors of a symmetric (Hermitian) matrix or stack, as
    :func:`numpy.linalg.eigh`: ``A = V diag(w) V^H`` with ``w`` in ascending order (NumPy's
    order; HeAT 1.8 returns them descending).

    A single distributed matrix is gathered on every process (memory: the whole matrix per
    process); the eigenvalues are replicated and the eigenvectors returned in ``A``'s split
    (rows or columns of ``V``). Stacks are worked on in whole matrices.

    Parameters
    ----------
    A : DNDarray
        Shape ``(..., n, n)``; only the triangle ``UPLO`` is read.
    UPLO : {"L", "U"}
        Which triangle to read.
    r_max_zolopd, silent
        Accepted for HeAT compatibility (its algorithm's parameters).

    Returns
    -------
    Eigh
        The named tuple ``(eigenvalues, eigenvectors)``.

    Raises
    ------
    TypeError
        If ``A`` is not a DNDarray or is half precision.
    ValueError
        If the matrices are not square or ``UPLO`` is neither "L" nor "U".

    Examples
    --------
    >>> w, V = ht.linalg.eigh(ht.array([[2.0, 1.0], [1.0, 2.0]], split=0))
    >>> w
    DNDarray([1., 3.], dtype=ht.float32, device=cpu:0, split=None)
    """
    if UPLO not in ("L", "U"):
        sanitize_in(A, "A")
        raise ValueError(f"UPLO must be 'L' or 'U', but was {UPLO!r}")
    check_int(r_max_zolopd, "r_max_zolopd", 1, maximum=8)
    warn_ignored(r_max_zolopd, "r_max_zolopd", 8, _NO_ZOLOTAREV.format(function="eigh"))
    dtype, local, split = _square_matrices(A, "A", "eigh")
    w, v = torch.linalg.eigh(local, UPLO=UPLO)
    return Eigh(*_eigen_result(A, split, w, types.real_type_of(dtype), v, dtype))


def _square_matrices(x: DNDarray, name: str, function: str):
    """
    Check that ``x`` is a square matrix or a stack of them, before any communication; then its
    floating type and its whole matrices on this process (see :func:`_gathered_matrices`).
    """
    _check_matrix(x, name)
    if x.gshape[-1] != x.gshape[-2]:
        raise ValueError(f"{function} needs square matrices, but {name} has shape {x.gshape}")
    dtype = _float_type(x.dtype, name)
    return (dtype,) + _gathered_matrices(x, dtype.torch_type())


def _eigen_result(A: DNDarray, split: Optional[int], w: torch.Tensor, w_type, v=None, v_type=None):
    """
    The eigenvalues ``w`` (and eigenvectors ``v``) computed from :func:`_gathered_matrices` of
    ``A`` (split along ``split`` after the gathering) as DNDarrays: for a single distributed
    matrix the eigenvalues replicated and the eigenvectors back in ``A``'s split (every
    process keeps its rows or columns of them); for a stack in the stack's split.
    """
    comm = A.comm
    n = A.gshape[-1]
    if split is None and A.split is not None and A.ndim == 2 and comm.size > 1:
        W = DNDarray(w, (n,), w_type, None, A.device, comm, True)
        if v is None:
            return W
        V = DNDarray(
            _rows_of(v, A.split, A, balanced_counts(comm, n)),
            A.gshape,
            v_type,
            A.split,
            A.device,
            comm,
            True,
        )
        return W, V
    w_split = split if split is not None and split < A.ndim - 2 else None
    W = _wrap(w, A.gshape[:-1], w_type, w_split, A)
    if v is None:
        return W
    return W, _back_to_split(_wrap(v, A.gshape, v_type, split, A), A.split)


def _complex_type(dtype):
    """The complex type of a floating type's precision (float32 -> complex64, ...)."""
    if types.heat_type_is_complexfloating(dtype):
        return dtype
    return types.complex64 if dtype is types.float32 else types.complex128


def eig(x: DNDarray, /) -> Eig:
    """
    The eigenvalues and (right) eigenvectors of a general square matrix or stack, as
    :func:`numpy.linalg.eig` and the array API standard's ``linalg.eig`` (2025.12):
    ``x @ V = V * w``, every column of ``V`` of unit norm.

    Distributed as :func:`eigh`: a single distributed matrix is gathered on every process
    (memory: the whole matrix per process) and decomposed there; the eigenvalues are
    replicated and the eigenvectors returned in ``x``'s split (rows or columns of ``V``).
    Stacks are worked on in whole matrices.

    Parameters
    ----------
    x : DNDarray
        Shape ``(..., n, n)``.

    Returns
    -------
    Eig
        The named tuple ``(eigenvalues, eigenvectors)``, shapes ``(..., n)`` and
        ``(..., n, n)``, always complex of ``x``'s precision (float32 -> complex64; integers
        as float64 -> complex128), as the standard requires: NumPy's result is real where all
        eigenvalues happen to be real, a type that depends on the values. The eigenvalues are
        in LAPACK's order (unsorted, as NumPy's).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is half precision.
    ValueError
        If ``x`` has fewer than two dimensions or its matrices are not square.

    Examples
    --------
    >>> w, V = ht.linalg.eig(ht.array([[0.0, -1.0], [1.0, 0.0]], split=0))
    >>> w
    DNDarray([0.+1.j, 0.-1.j], dtype=ht.complex64, device=cpu:0, split=None)
    """
    dtype, local, split = _square_matrices(x, "x", "eig")
    w, v = torch.linalg.eig(local)
    complex_type = _complex_type(dtype)
    return Eig(*_eigen_result(x, split, w, complex_type, v, complex_type))


def eigvals(x: DNDarray, /) -> DNDarray:
    """
    The eigenvalues of a general square matrix or of each matrix of a stack, as
    :func:`numpy.linalg.eigvals` and the array API standard's ``linalg.eigvals`` (2025.12);
    distributed as :func:`eig`, without computing the eigenvectors.

    Parameters
    ----------
    x : DNDarray
        Shape ``(..., n, n)``.

    Returns
    -------
    DNDarray
        Shape ``(..., n)``, complex of ``x``'s precision (see :func:`eig`), in LAPACK's order.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is half precision.
    ValueError
        If ``x`` has fewer than two dimensions or its matrices are not square.

    Examples
    --------
    >>> ht.linalg.eigvals(ht.array([[2.0, 1.0], [0.0, 3.0]], split=1))
    DNDarray([2.+0.j, 3.+0.j], dtype=ht.complex64, device=cpu:0, split=None)
    """
    dtype, local, split = _square_matrices(x, "x", "eigvals")
    return _eigen_result(x, split, torch.linalg.eigvals(local), _complex_type(dtype))


def polar(
    A: DNDarray,
    r: Optional[int] = None,
    calcH: bool = True,
    condition_estimate: float = 1.0e16,
    silent: bool = True,
    r_max: int = 8,
) -> Union[Tuple[DNDarray, DNDarray], DNDarray]:
    """
    The polar decomposition ``A = U H`` of an ``m x n`` matrix with ``m >= n``: ``U`` with
    orthonormal columns, ``H`` symmetric (Hermitian) positive semi-definite (HeAT's interface).

    Computed from the SVD ``A = W diag(S) Vh`` as ``U = W Vh``, ``H = Vh^H diag(S) Vh``: a
    tall-skinny matrix split along its rows stays distributed (TSQR-based SVD, ``U`` in ``A``'s
    layout, the small ``H`` replicated); see :func:`svd` for the other layouts.

    Parameters
    ----------
    A : DNDarray
        A 2-D matrix with at least as many rows as columns.
    r, condition_estimate, silent, r_max
        Accepted for HeAT compatibility (parameters of its Zolotarev iteration).
    calcH : bool
        Also return ``H``.

    Returns
    -------
    (DNDarray, DNDarray) or DNDarray
        ``(U, H)``, or ``U`` alone if ``calcH`` is False.

    Raises
    ------
    TypeError
        If ``A`` is not a DNDarray or is half precision.
    ValueError
        If ``A`` is not 2-D or has fewer rows than columns.

    Examples
    --------
    >>> U, H = ht.linalg.polar(ht.array([[2.0, 0.0], [0.0, -3.0]], split=0))
    >>> H
    DNDarray([[2., 0.],
              [0., 3.]], dtype=ht.float32, device=cpu:0, split=None)
    """
    _check_matrix(A)
    reason = _NO_ZOLOTAREV.format(function="polar")
    for name, value, default in (
        ("r", r, None),
        ("condition_estimate", condition_estimate, 1.0e16),
        ("r_max", r_max, 8),
    ):
        warn_ignored(value, name, default, reason)
    if A.ndim != 2 or A.gshape[0] < A.gshape[1]:
        raise ValueError(
            f"polar needs a 2-D matrix with at least as many rows as columns, but A has shape {A.gshape}"
        )
    W, S, Vh = svd(A, full_matrices=False)
    U = matmul(W, Vh)
    if not calcH:
        return U
    right = Vh if Vh.split is None else resplit(Vh, None)  # n x n: small next to A
    v = right.larray
    h = (v.mH * S.larray.to(v.dtype)) @ v  # S of a single matrix is replicated
    H = DNDarray(h, (A.gshape[1], A.gshape[1]), Vh.dtype, None, A.device, A.comm, True)
    return U, H


# ---------------------------------------------------------------------------------------------
# the array API standard's svdvals, matrix_rank, pinv, eigvalsh
# ---------------------------------------------------------------------------------------------
def svdvals(x: DNDarray, /) -> DNDarray:
    """
    The singular values of a matrix or of each matrix of a stack, in descending order, as
    :func:`numpy.linalg.svd` with ``compute_uv=False``; computed as :func:`svd` does
    (TSQR for tall-skinny distributed matrices).

    Parameters
    ----------
    x : DNDarray
        Shape ``(..., m, n)``.

    Returns
    -------
    DNDarray
        Shape ``(..., min(m, n))``, real floating point.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is half precision.
    ValueError
        If ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> ht.linalg.svdvals(ht.array([[3.0, 0.0], [0.0, -4.0]], split=0))
    DNDarray([4., 3.], dtype=ht.float32, device=cpu:0, split=None)
    """
    _check_matrix(x, "x")
    return svd(x, compute_uv=False)


def _cutoff(S: DNDarray, rtol, shape) -> DNDarray:
    """``rtol`` times the largest singular value of each matrix, shaped ``(..., 1)``."""
    from ..statistics import max as _max

    if rtol is None:
        rtol = max(shape[-2], shape[-1]) * torch.finfo(S.larray.dtype).eps
    elif isinstance(rtol, DNDarray):
        from ..manipulations import expand_dims

        rtol = expand_dims(rtol, -1)
    elif isinstance(rtol, bool) or not isinstance(rtol, (int, float)):
        raise TypeError(f"rtol must be a float, a DNDarray or None, not {type(rtol).__name__}")
    return _max(S, axis=-1, keepdims=True) * rtol


def matrix_rank(x: DNDarray, /, *, rtol=None) -> DNDarray:
    """
    The rank of a matrix or of each matrix of a stack, as :func:`numpy.linalg.matrix_rank`
    with ``rtol``: the number of singular values above ``rtol`` times the largest one.

    Parameters
    ----------
    x : DNDarray
        Shape ``(..., m, n)``.
    rtol : float or DNDarray, optional
        The relative tolerance (a DNDarray broadcasts against the stack's shape ``(...)``);
        default ``max(m, n)`` times the machine epsilon of ``x``'s floating-point type.

    Returns
    -------
    DNDarray
        Shape ``(...)``, int64.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is half precision, or ``rtol`` is of a wrong type.
    ValueError
        If ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> ht.linalg.matrix_rank(ht.array([[1.0, 2.0], [2.0, 4.0]], split=1))
    DNDarray(1, dtype=ht.int64, device=cpu:0, split=None)
    """
    from ..arithmetics import sum as _sum

    _check_matrix(x, "x")
    if isinstance(rtol, bool) or not (rtol is None or isinstance(rtol, (int, float, DNDarray))):
        raise TypeError(f"rtol must be a float, a DNDarray or None, not {type(rtol).__name__}")
    if min(x.gshape[-2:]) == 0:
        raise ValueError(f"matrix_rank needs non-empty matrices, but x has shape {x.gshape}")
    S = svdvals(x)
    return _sum(S > _cutoff(S, rtol, x.gshape), axis=-1).astype(types.int64)


def pinv(x: DNDarray, /, *, rtol=None) -> DNDarray:
    """
    The Moore-Penrose pseudo-inverse of a matrix or of each matrix of a stack, as
    :func:`numpy.linalg.pinv` with ``rtol``: from the reduced SVD ``x = U S Vh`` as
    ``Vh^H S^+ U^H``, singular values at or below ``rtol`` times the largest one treated as 0.
    The SVD is computed as :func:`svd` does and the product with the distributed
    :func:`matmul`.

    Parameters
    ----------
    x : DNDarray
        Shape ``(..., m, n)``.
    rtol : float or DNDarray, optional
        The relative cut-off (as in :func:`matrix_rank`); default ``max(m, n)`` times the
        machine epsilon.

    Returns
    -------
    DNDarray
        Shape ``(..., n, m)``, floating point (float64 for integers).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is half precision, or ``rtol`` is of a wrong type.
    ValueError
        If ``x`` has fewer than two dimensions or its matrices are empty.

    Examples
    --------
    >>> ht.linalg.pinv(ht.array([[2.0, 0.0], [0.0, 0.0]], split=0))
    DNDarray([[0.5, 0. ],
              [0. , 0. ]], dtype=ht.float32, device=cpu:0, split=1)
    """
    from ..complex_math import conj
    from ..indexing import where
    from ..manipulations import expand_dims
    from .basics import matrix_transpose

    _check_matrix(x, "x")
    if isinstance(rtol, bool) or not (rtol is None or isinstance(rtol, (int, float, DNDarray))):
        raise TypeError(f"rtol must be a float, a DNDarray or None, not {type(rtol).__name__}")
    if min(x.gshape[-2:]) == 0:
        raise ValueError(f"pinv needs non-empty matrices, but x has shape {x.gshape}")
    U, S, Vh = svd(x, full_matrices=False)
    keep = S > _cutoff(S, rtol, x.gshape)
    inverse = where(keep, 1.0 / where(keep, S, 1.0), 0.0).astype(S.dtype)
    right = matrix_transpose(Vh)
    left = matrix_transpose(U)
    if types.heat_type_is_complexfloating(Vh.dtype):
        right, left = conj(right), conj(left)
    return matmul(right * expand_dims(inverse, -2), left)


def eigvalsh(x: DNDarray, /) -> DNDarray:
    """
    The eigenvalues of a symmetric (Hermitian) matrix or of each matrix of a stack, in
    ascending order, as :func:`numpy.linalg.eigvalsh` (the lower triangle is read). A single
    distributed matrix is gathered on every process (as in :func:`eigh`, without computing the
    eigenvectors); stacks are worked on in whole matrices.

    Parameters
    ----------
    x : DNDarray
        Shape ``(..., n, n)``.

    Returns
    -------
    DNDarray
        Shape ``(..., n)``, real floating point.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is half precision.
    ValueError
        If ``x`` has fewer than two dimensions or its matrices are not square.

    Examples
    --------
    >>> ht.linalg.eigvalsh(ht.array([[2.0, 1.0], [1.0, 2.0]], split=1))
    DNDarray([1., 3.], dtype=ht.float32, device=cpu:0, split=None)
    """
    dtype, local, split = _square_matrices(x, "x", "eigvalsh")
    return _eigen_result(x, split, torch.linalg.eigvalsh(local), types.real_type_of(dtype))
