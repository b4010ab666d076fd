"""Sparse @ dense matrix products: :func:`sparse_matmul`."""

from __future__ import annotations

from typing import Sequence

import torch

from ..core import types
from ..core.dndarray import DNDarray
from . import _operations
from .dcsx_matrix import DCSC_matrix, _DCSXMatrix
from .manipulations import _csc_to_row_split_csr, _share

__all__ = ["sparse_matmul"]

_RING_TAG = 7311


def sparse_matmul(a: _DCSXMatrix, b: DNDarray) -> DNDarray:
    """
    The matrix product of a sparse matrix and a dense DNDarray, ``a @ b``.

    For a row-split ``a`` (``DCSR_matrix``, split 0) the result is split along rows like ``a``.
    The dense operand is never gathered whole: a non-split ``b`` is used in place; a row-split
    ``b`` travels around a ring of the processes one block at a time, each process multiplying
    the columns of its rows that the block covers; a column-split ``b`` travels as column
    blocks, each filling its columns of the local result rows. A process therefore holds at
    most two blocks of ``b`` besides its rows of ``a`` and of the result.

    A non-split ``a`` with a row-split ``b`` gives a row-split result (each process takes its
    share of ``a``'s rows); with a column-split ``b`` a column-split one (no communication);
    with a non-split ``b`` a non-split one. A ``DCSC_matrix`` is first converted to a row-split
    ``DCSR_matrix`` (its stored entries travel once, three all-to-alls).

    Parameters
    ----------
    a : DCSR_matrix or DCSC_matrix
        Shape ``(m, n)``.
    b : DNDarray
        Shape ``(n, k)`` or ``(n,)`` (then the result has shape ``(m,)``).

    Returns
    -------
    DNDarray
        Of the promoted type of ``a`` and ``b``.

    Raises
    ------
    TypeError
        If ``a`` is not a sparse matrix or ``b`` not a DNDarray.
    ValueError
        If ``b`` is not 1- or 2-D or its length along axis 0 is not ``a.shape[1]``.

    Examples
    --------
    >>> a = ht.sparse.sparse_csr_matrix([[1.0, 0, 2], [0, 0, 3]], split=0)
    >>> b = ht.ones((3, 2), split=0)
    >>> a @ b
    DNDarray([[3., 3.],
              [3., 3.]], dtype=ht.float32, device=cpu:0, split=0)
    >>> ht.sparse.sparse_matmul(a, ht.arange(3.0))
    DNDarray([4., 6.], dtype=ht.float32, device=cpu:0, split=0)
    """
    if not isinstance(a, _DCSXMatrix):
        raise TypeError(f"a must be a DCSR_matrix or DCSC_matrix, got {type(a).__name__}")
    if not isinstance(b, DNDarray):
        raise TypeError(f"b must be a DNDarray, got {type(b).__name__}")
    if b.ndim not in (1, 2):
        raise ValueError(f"b must be 1- or 2-dimensional, but has {b.ndim} dimensions")
    if b.shape[0] != a.shape[1]:
        raise ValueError(
            f"shapes {a.shape} and {b.shape} are not aligned: {a.shape[1]} (dim 1 of a) != "
            f"{b.shape[0]} (dim 0 of b)"
        )
    vector = b.ndim == 1
    dtype = types.promote_types(a.dtype, b.dtype)
    # bool products are computed as integers and compared with 0 (logical or of ands)
    work_type = torch.int64 if dtype is types.bool else dtype.torch_type()
    if isinstance(a, DCSC_matrix):
        a = _csc_to_row_split_csr(a)
    comm = a.comm
    m, k = a.shape[0], (1 if vector else b.shape[1])
    b_local = b.larray.reshape(-1, 1) if vector else b.larray
    b_split = b.split

    if a.split is None and b_split == 0:
        a = _share(a, comm.counts_displs_shape(a.shape, 0)[0])
    indptr, indices, values = _operations.compressed_parts(a.larray, 0)

    if a.split is None and b_split == 1:
        # every process holds a: its columns of the result need no communication
        out = torch.empty((m, b_local.shape[1]), dtype=work_type, device=b_local.device)
        _operations.spmm(indptr, indices, values, b_local, out, False)
        return _result(out, dtype, (m, k), 1, b, vector, b.balanced)

    out = torch.empty((a.lshape[0], k), dtype=work_type, device=b_local.device)
    if b_split is None or comm.size == 1:
        _operations.spmm(indptr, indices, values, b_local, out, False)
    elif b_split == 0:
        counts, displs = b.counts_displs()
        _ring_rows(indptr, indices, values, b_local, out, counts, displs, comm)
    else:
        counts, displs = b.counts_displs()
        _ring_columns(indptr, indices, values, b_local, out, counts, displs, comm)
    return _result(out, dtype, (m, k), a.split, b, vector, a.balanced)


def _result(out, dtype, shape, split, b, vector, balanced) -> DNDarray:
    if dtype is types.bool:
        out = out != 0
    elif out.dtype != dtype.torch_type():
        out = out.to(dtype.torch_type())
    if vector:
        out = out.reshape(-1)
        shape = shape[:1]
        split = 0 if split is not None else None
    return DNDarray(out, tuple(shape), dtype, split, b.device, b.comm, balanced)


def _ring_rows(indptr, indices, values, b_local, out, counts, displs, comm) -> None:
    """
    ``out = A_local @ B`` with B split along rows: B's blocks pass around the ring; the local
    entries of A are sorted once into one CSR piece per block (columns shifted to the block).
    """
    size = comm.size
    rows = out.shape[0]
    k = b_local.shape[1]
    local_rows = _operations.major_ids(indptr)
    ends = torch.tensor(
        [d + c for d, c in zip(displs, counts)], dtype=torch.int64, device=indices.device
    )
    owners = torch.searchsorted(ends, indices.to(torch.int64), right=True)
    # the stored entries grouped by the owner of their column's block of B, row order kept
    # within each group (a stable sort of CSR order): no more memory than the entries themselves
    order = torch.argsort(owners, stable=True)
    sizes = torch.bincount(owners, minlength=size).tolist()
    groups = list(
        zip(
            torch.split(local_rows[order], sizes),
            torch.split(indices[order], sizes),
            torch.split(values[order], sizes),
        )
    )

    def accumulate(owner, block):
        group_rows, group_columns, group_values = groups[owner]
        if group_values.numel() == 0:
            return
        group_indptr = torch.zeros(rows + 1, dtype=torch.int64, device=indices.device)
        torch.cumsum(torch.bincount(group_rows, minlength=rows)[:rows], 0, out=group_indptr[1:])
        columns = group_columns - displs[owner]
        _operations.spmm(group_indptr, columns, group_values, block, out, True)

    out.zero_()
    _circulate(b_local.contiguous(), [(c, k) for c in counts], comm, accumulate)


def _ring_columns(indptr, indices, values, b_local, out, counts, displs, comm) -> None:
    """``out = A_local @ B`` with B split along columns: B's column blocks pass around the ring."""
    n = b_local.shape[0]

    def fill(owner, block):
        piece = out[:, displs[owner] : displs[owner] + counts[owner]]
        result = torch.empty(piece.shape, dtype=out.dtype, device=out.device)
        _operations.spmm(indptr, indices, values, block, result, False)
        piece.copy_(result)

    _circulate(b_local.contiguous(), [(n, c) for c in counts], comm, fill)


def _circulate(block: torch.Tensor, shapes: Sequence, comm, work) -> None:
    """
    Pass every process's ``block`` around the ring (to rank - 1), calling ``work(owner, block)``
    for each; the next block is received while the current one is used.
    """
    size, rank = comm.size, comm.rank
    owner = rank
    left, right = (rank - 1) % size, (rank + 1) % size
    for step in range(size):
        requests = []
        incoming = None
        if step < size - 1:
            following = (owner + 1) % size
            incoming = torch.empty(shapes[following], dtype=block.dtype, device=block.device)
            if incoming.numel():
                requests.append(comm.Irecv(incoming, source=right, tag=_RING_TAG))
            if block.numel():
                requests.append(comm.Isend(block, dest=left, tag=_RING_TAG))
        work(owner, block)
        for request in requests:
            request.Wait()
        if incoming is not None:
            block, owner = incoming, following
