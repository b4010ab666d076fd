"""Conversions between dense DNDarrays and the distributed sparse matrices, and their layouts."""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from ..core.dndarray import DNDarray
from ..core.sanitation import check_choice, check_type
from . import _operations
from .dcsx_matrix import DCSC_matrix, DCSR_matrix, _DCSXMatrix
from .factories import sparse_csc_matrix, sparse_csr_matrix

__all__ = ["to_dense", "todense", "to_sparse_csr", "to_sparse_csc"]


def to_dense(
    sparse_matrix: _DCSXMatrix, order: str = "C", out: Optional[DNDarray] = None
) -> DNDarray:
    """
    The dense :class:`~heat.core.dndarray.DNDarray` of a sparse matrix, with the same split
    (0 for a distributed ``DCSR_matrix``, 1 for a ``DCSC_matrix``); each process converts its
    own block, no communication (unless ``out`` has another distribution of the same split).

    Parameters
    ----------
    sparse_matrix : DCSR_matrix or DCSC_matrix
    order : str
        ``"C"`` (row-major, the default and the only layout of torch blocks); ``"F"`` raises
        NotImplementedError, as in :func:`heat.zeros`.
    out : DNDarray, optional
        Where to write the result (HeAT's ``todense(order, out)``): of the matrix's shape, dtype
        and split. Its values are overwritten and it is returned; its distribution along the
        split axis is kept.

    Returns
    -------
    DNDarray
        ``out`` if given, else a new array.

    Raises
    ------
    TypeError
        If ``sparse_matrix`` is not a ``DCSR_matrix`` or ``DCSC_matrix``, or ``out`` is not a
        DNDarray.
    ValueError
        If ``order`` is not ``"C"`` or ``"F"``, or ``out`` does not have the matrix's shape,
        dtype or split.
    NotImplementedError
        If ``order`` is ``"F"``.

    Examples
    --------
    >>> a = ht.sparse.sparse_csr_matrix([[1.0, 0, 2], [0, 0, 3], [4, 5, 6]], split=0)
    >>> ht.sparse.to_dense(a)
    DNDarray([[1., 0., 2.],
              [0., 0., 3.],
              [4., 5., 6.]], dtype=ht.float32, device=cpu:0, split=0)
    >>> buffer = ht.empty((3, 3), split=0)
    >>> a.todense(out=buffer) is buffer
    True
    """
    if not isinstance(sparse_matrix, _DCSXMatrix):
        raise TypeError(
            f"sparse_matrix must be a DCSR_matrix or DCSC_matrix, got {type(sparse_matrix).__name__}"
        )
    check_choice(order, "order", ("C", "F"))
    if order != "C":
        raise NotImplementedError("only order='C' is supported (torch tensors are row-major)")
    if out is not None:
        check_type(out, "out", DNDarray, "a DNDarray")
        expected = (sparse_matrix.gshape, sparse_matrix.dtype, sparse_matrix.split)
        if (out.gshape, out.dtype, out.split) != expected:
            raise ValueError(
                f"out must have shape {sparse_matrix.gshape}, dtype {sparse_matrix.dtype.__name__} "
                f"and split {sparse_matrix.split} (those of the matrix), got shape {out.gshape}, "
                f"dtype {out.dtype.__name__} and split {out.split}"
            )
    dense = DNDarray(
        sparse_matrix.larray.to_dense(),
        sparse_matrix.gshape,
        sparse_matrix.dtype,
        sparse_matrix.split,
        sparse_matrix.device,
        sparse_matrix.comm,
        sparse_matrix._balanced,
    )
    if out is None:
        return dense
    if out.split is not None and out.comm.size > 1:
        target_map = out.lshape_map
        if not torch.equal(target_map, dense.lshape_map):  # the same verdict on every process
            dense.redistribute_(lshape_map=dense.lshape_map, target_map=target_map)
    out.larray.copy_(dense.larray)
    return out


todense = to_dense


def to_sparse_csr(array: DNDarray) -> DCSR_matrix:
    """
    A dense 2-D DNDarray as a :class:`~heat.sparse.DCSR_matrix`; zeros are not stored.

    A row-split array is converted block by block; a column-split one is first resplit to rows
    (one all-to-all). A non-split array gives a non-split matrix.

    Parameters
    ----------
    array : DNDarray
        2-D.

    Raises
    ------
    TypeError
        If ``array`` is not a DNDarray.
    ValueError
        If ``array`` is not 2-D.

    Examples
    --------
    >>> a = ht.sparse.to_sparse_csr(ht.array([[1, 0], [0, 0], [3, 4]], split=0))
    >>> a.gnnz, a.split
    (3, 0)
    """
    if not isinstance(array, DNDarray):
        raise TypeError(f"array must be a DNDarray, got {type(array).__name__}")
    return sparse_csr_matrix(array)


def to_sparse_csc(array: DNDarray) -> DCSC_matrix:
    """
    A dense 2-D DNDarray as a :class:`~heat.sparse.DCSC_matrix`; zeros are not stored.

    A column-split array is converted block by block; a row-split one is first resplit to
    columns (one all-to-all). A non-split array gives a non-split matrix.

    Parameters
    ----------
    array : DNDarray
        2-D.

    Raises
    ------
    TypeError
        If ``array`` is not a DNDarray.
    ValueError
        If ``array`` is not 2-D.

    Examples
    --------
    >>> a = ht.sparse.to_sparse_csc(ht.array([[1, 0], [0, 0], [3, 4]], split=1))
    >>> a.gnnz, a.split
    (3, 1)
    """
    if not isinstance(array, DNDarray):
        raise TypeError(f"array must be a DNDarray, got {type(array).__name__}")
    return sparse_csc_matrix(array)


# ---------------------------------------------------------------------------------------------
# layout changes used by the arithmetic and the products
# ---------------------------------------------------------------------------------------------
def _share(matrix: _DCSXMatrix, counts: Sequence[int]) -> _DCSXMatrix:
    """
    ``matrix`` distributed with ``counts`` rows (CSR) / columns (CSC) per process: a non-split
    matrix keeps its share without communication; a split one exchanges the stored entries
    (three all-to-alls) unless it already has that layout. Collective.
    """
    axis, comm = matrix._axis, matrix.comm
    counts = tuple(int(c) for c in counts)
    displs = [0]
    for c in counts[:-1]:
        displs.append(displs[-1] + c)
    indptr, indices, values = _operations.compressed_parts(matrix.larray, axis)
    lshape = list(matrix.gshape)
    lshape[axis] = counts[comm.rank]
    if matrix.split is None:
        start = displs[comm.rank]
        part = _operations.slice_major(indptr, indices, values, start, start + counts[comm.rank])
        local = _operations.build(*part, lshape, axis)
        return type(matrix)._from_local(
            local, matrix.gshape, matrix.dtype, axis, matrix.device, comm, counts
        )
    matrix._gather_counts()
    if matrix._counts == counts:
        return matrix
    own_start = sum(matrix._counts[: comm.rank])
    own_stop = own_start + matrix._counts[comm.rank]
    lengths, index_blocks, value_blocks = [], [], []
    for rank in range(comm.size):
        first = min(max(displs[rank], own_start), own_stop) - own_start
        last = min(max(displs[rank] + counts[rank], own_start), own_stop) - own_start
        lo, hi = indptr[first], indptr[last]
        lengths.append(indptr[first + 1 : last + 1] - indptr[first:last])
        index_blocks.append(indices[lo:hi])
        value_blocks.append(values[lo:hi])
    received_lengths = comm.alltoallv_tensors(lengths)
    received_indices = comm.alltoallv_tensors(index_blocks)
    received_values = comm.alltoallv_tensors(value_blocks)
    new_indptr = torch.zeros(counts[comm.rank] + 1, dtype=torch.int64, device=indptr.device)
    torch.cumsum(torch.cat(received_lengths), 0, out=new_indptr[1:])
    local = _operations.build(
        new_indptr, torch.cat(received_indices), torch.cat(received_values), lshape, axis
    )
    return type(matrix)._from_local(
        local, matrix.gshape, matrix.dtype, axis, matrix.device, comm, counts
    )


def _csc_to_row_split_csr(matrix: DCSC_matrix) -> DCSR_matrix:
    """
    A ``DCSC_matrix`` as a ``DCSR_matrix`` with balanced rows: every stored entry travels once
    to the owner of its row (three all-to-alls). Collective.
    """
    comm = matrix.comm
    m, n = matrix.gshape
    indptr, rows, values = _operations.compressed_parts(matrix.larray, 1)
    if not matrix.is_distributed():
        local = _operations.to_layout(matrix.larray, 0)
        result = DCSR_matrix._from_local(
            local, matrix.gshape, matrix.dtype, None, matrix.device, comm
        )
        return (
            _share(result, comm.counts_displs_shape((m, n), 0)[0])
            if matrix.split is not None
            else result
        )
    matrix._gather_counts()
    column_offset = sum(matrix._counts[: comm.rank])
    columns = _operations.major_ids(indptr) + column_offset
    counts, displs, lshape = comm.counts_displs_shape((m, n), 0)
    ends = torch.tensor(
        [d + c for d, c in zip(displs, counts)], dtype=torch.int64, device=rows.device
    )
    owners = torch.searchsorted(ends, rows.to(torch.int64), right=True)
    order = torch.argsort(owners, stable=True)
    sent = torch.bincount(owners, minlength=comm.size).tolist()
    row_blocks = list(torch.split(rows[order], sent))
    column_blocks = list(torch.split(columns[order], sent))
    value_blocks = list(torch.split(values[order], sent))
    got_rows = torch.cat(comm.alltoallv_tensors(row_blocks)) - displs[comm.rank]
    got_columns = torch.cat(comm.alltoallv_tensors(column_blocks))
    got_values = torch.cat(comm.alltoallv_tensors(value_blocks))
    keys = got_rows * max(n, 1) + got_columns
    keys, order = torch.sort(keys)
    local = _operations.build(
        *_operations.from_keys(keys, got_values[order], lshape[0], n), lshape, 0
    )
    return DCSR_matrix._from_local(local, (m, n), matrix.dtype, 0, matrix.device, comm, counts)
