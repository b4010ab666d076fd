"""
Basic linear algebra on DNDarrays: diagonals (``diag``, ``diagonal``, ``trace``), triangles
(``tril``, ``triu``) and ``matrix_transpose``.

The triangles need no communication: each process masks its block with the global offset of the
block. A diagonal of an array split along one of its two axes is taken locally too (each block
holds a contiguous piece of the diagonal); only ``diag`` of a distributed vector moves data, once,
to the rows that hold its elements.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from .. import types
from .._operations import _UNSIGNED_TYPES, reduce_op, signed_bits, unsigned_from_bits
from ..communication import MPI
from ..dndarray import DNDarray
from ..manipulations import swapaxes
from ..sanitation import sanitize_axis, sanitize_in

__all__ = ["diag", "diagonal", "matrix_transpose", "trace", "tril", "triu"]


def _check_offset(offset, name: str = "offset") -> int:
    if isinstance(offset, bool) or not hasattr(offset, "__index__"):
        raise TypeError(f"{name} must be an integer, but was {type(offset).__name__}")
    return offset.__index__()


def _displs(counts) -> Tuple[int, ...]:
    displs, total = [], 0
    for c in counts:
        displs.append(total)
        total += c
    return tuple(displs)


def _diagonal_range(n1: int, n2: int, offset: int) -> Tuple[int, int]:
    """Rows ``[lo, hi)`` of an ``n1 x n2`` matrix that hold an element of diagonal ``offset``."""
    lo = max(0, -offset)
    hi = min(n1, n2 - offset)
    return lo, max(lo, hi)


def diagonal(a: DNDarray, offset: int = 0, axis1: int = 0, axis2: int = 1) -> DNDarray:
    """
    The diagonal of the 2-D sub-arrays spanned by ``axis1`` and ``axis2`` (as
    :func:`numpy.diagonal`): those two axes are removed and the diagonal becomes the last axis.

    When ``a`` is split along ``axis1`` or ``axis2`` the result is split along its last axis;
    every process takes the piece of the diagonal that runs through its block (no communication;
    the layout may be unbalanced). Otherwise the split axis keeps its place among the others.

    Parameters
    ----------
    a : DNDarray
        Input array, at least 2-D.
    offset : int
        Offset from the main diagonal (positive: above it).
    axis1, axis2 : int
        The axes of the 2-D sub-arrays.

    Returns
    -------
    DNDarray
        A new array (not a view).

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``offset`` is not an integer.
    ValueError
        If ``a`` has fewer than two dimensions or the axes are out of range or equal.

    Examples
    --------
    >>> a = ht.arange(12, split=0).reshape((3, 4))
    >>> ht.diagonal(a, 1)
    DNDarray([ 1,  6, 11], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(a, "a")
    if a._dtype in _UNSIGNED_TYPES:  # torch has no uint16/32/64 kernels: move the bits
        return unsigned_from_bits(diagonal(signed_bits(a), offset, axis1, axis2), a._dtype)
    offset = _check_offset(offset)
    if a.ndim < 2:
        raise ValueError(
            f"diagonal requires an array of at least two dimensions, but a is {a.ndim}-D"
        )
    axis1 = sanitize_axis(a.gshape, axis1, name="axis1")
    axis2 = sanitize_axis(a.gshape, axis2, name="axis2")
    if axis1 == axis2:
        raise ValueError(f"axis1 and axis2 cannot be the same, but both are {axis1}")
    n1, n2 = a.gshape[axis1], a.gshape[axis2]
    lo, hi = _diagonal_range(n1, n2, offset)
    gshape = tuple(d for i, d in enumerate(a.gshape) if i not in (axis1, axis2)) + (hi - lo,)
    split = a.split
    comm = a.comm
    if split is None or split not in (axis1, axis2):
        local = torch.diagonal(a.larray, offset, axis1, axis2).clone()
        new_split = None if split is None else split - sum(1 for ax in (axis1, axis2) if ax < split)
        return DNDarray(local, gshape, a.dtype, new_split, a.device, comm, a._balanced)
    counts = a.counts_displs()[0]
    displs = _displs(counts)
    me = comm.rank
    # rows i of the diagonal are the elements (i, i + offset) of the (axis1, axis2) planes
    lengths = []
    for o, c in zip(displs, counts):
        if split == axis1:
            first, last = max(lo, o), min(hi, o + c)
        else:
            first, last = max(lo, o - offset), min(hi, o + c - offset)
        lengths.append(max(0, last - first))
    local_offset = offset + displs[me] if split == axis1 else offset - displs[me]
    local = torch.diagonal(a.larray, local_offset, axis1, axis2)
    balanced = tuple(lengths) == comm.counts_displs_shape(gshape, len(gshape) - 1)[0]
    return DNDarray(local.clone(), gshape, a.dtype, len(gshape) - 1, a.device, comm, balanced)


def diag(a: DNDarray, offset: int = 0) -> DNDarray:
    """
    Extract a diagonal of a 2-D array, or build a 2-D array with a 1-D array on a diagonal (as
    :func:`numpy.diag`).

    For a distributed vector the result is split along its rows (balanced); the vector's elements
    move once (one all-to-all) to the processes whose rows hold them.

    Parameters
    ----------
    a : DNDarray
        1-D (build) or 2-D (extract) array.
    offset : int
        The diagonal (positive: above the main diagonal).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``offset`` is not an integer.
    ValueError
        If ``a`` is not 1-D or 2-D.

    Examples
    --------
    >>> ht.diag(ht.array([1, 2]), 1)
    DNDarray([[0, 1, 0],
              [0, 0, 2],
              [0, 0, 0]], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(a, "a")
    if a._dtype in _UNSIGNED_TYPES:  # torch has no uint16/32/64 kernels: move the bits
        return unsigned_from_bits(diag(signed_bits(a), offset), a._dtype)
    offset = _check_offset(offset)
    if a.ndim == 2:
        return diagonal(a, offset)
    if a.ndim != 1:
        raise ValueError(f"Input must be 1- or 2-d, but a is {a.ndim}-D")
    n = a.gshape[0]
    size = n + abs(offset)
    gshape = (size, size)
    comm = a.comm
    if a.split is None or comm.size == 1:
        local = torch.diag(a.larray, offset)
        return DNDarray(local, gshape, a.dtype, a.split, a.device, comm, True)
    from ..layout import redistribute

    row_counts = comm.counts_displs_shape(gshape, 0)[0]
    row_displs = _displs(row_counts)
    shift = min(offset, 0)  # element j of a sits in row j - shift, column j + max(offset, 0)
    needed = []
    for o, c in zip(row_displs, row_counts):
        first, last = max(0, o + shift), min(n, o + c + shift)
        needed.append(max(0, last - first))
    if a.counts_displs()[0] != tuple(needed):
        a = redistribute(a, needed)
    me = comm.rank
    local = torch.zeros((row_counts[me], size), dtype=a.larray.dtype, device=a.larray.device)
    first = max(0, row_displs[me] + shift)
    j = torch.arange(first, first + needed[me], device=local.device)
    local[j - shift - row_displs[me], j + max(offset, 0)] = a.larray
    return DNDarray(local, gshape, a.dtype, 0, a.device, comm, True)


def _triangle(m: DNDarray, k, lower: bool, name: str) -> DNDarray:
    sanitize_in(m, "m")
    k = _check_offset(k, "k")
    function = torch.tril if lower else torch.triu
    if m.ndim == 0:
        raise ValueError(f"{name} needs an array of at least one dimension, but m is 0-D")
    comm = m.comm
    local = m.larray
    if m.ndim == 1:
        # as NumPy: the vector is broadcast to the rows of a square matrix
        n = m.gshape[0]
        offset = m.global_offset() if m.split is not None else 0
        square = local.unsqueeze(0).expand(n, local.shape[0])
        result = function(square, k - offset)
        split = None if m.split is None else 1
        return DNDarray(result.contiguous(), (n, n), m.dtype, split, m.device, comm, m._balanced)
    shift = 0
    if m.split == m.ndim - 2:
        shift = m.global_offset()  # global row = local row + offset
    elif m.split == m.ndim - 1:
        shift = -m.global_offset()  # global column = local column + offset
    result = function(local, k + shift)
    return DNDarray(result, m.gshape, m.dtype, m.split, m.device, comm, m._balanced)


def tril(m: DNDarray, k: int = 0) -> DNDarray:
    """
    The lower triangle of the last two axes of ``m``: elements above the ``k``-th diagonal are
    zero (as :func:`numpy.tril`). No communication: every block is masked with its global offset.

    Parameters
    ----------
    m : DNDarray
        Input; a 1-D array is taken as the rows of a square matrix, as NumPy does.
    k : int
        The diagonal above which to zero elements (positive: above the main diagonal).

    Returns
    -------
    DNDarray
        Same dtype and layout as ``m``.

    Raises
    ------
    TypeError
        If ``m`` is not a DNDarray or ``k`` is not an integer.
    ValueError
        If ``m`` is 0-dimensional.

    Examples
    --------
    >>> ht.tril(ht.ones((3, 3), split=0), -1)
    DNDarray([[0., 0., 0.],
              [1., 0., 0.],
              [1., 1., 0.]], dtype=ht.float32, device=cpu:0, split=0)
    """
    if isinstance(m, DNDarray) and m._dtype in _UNSIGNED_TYPES:  # no uint16/32/64 kernels
        return unsigned_from_bits(_triangle(signed_bits(m), k, True, "tril"), m._dtype)
    return _triangle(m, k, True, "tril")


def triu(m: DNDarray, k: int = 0) -> DNDarray:
    """
    The upper triangle of the last two axes of ``m``: elements below the ``k``-th diagonal are
    zero (as :func:`numpy.triu`). No communication: every block is masked with its global offset.

    Parameters
    ----------
    m : DNDarray
        Input; a 1-D array is taken as the rows of a square matrix, as NumPy does.
    k : int
        The diagonal below which to zero elements (positive: above the main diagonal).

    Returns
    -------
    DNDarray
        Same dtype and layout as ``m``.

    Raises
    ------
    TypeError
        If ``m`` is not a DNDarray or ``k`` is not an integer.
    ValueError
        If ``m`` is 0-dimensional.

    Examples
    --------
    >>> ht.triu(ht.ones((3, 3), split=1), 1)
    DNDarray([[0., 1., 1.],
              [0., 0., 1.],
              [0., 0., 0.]], dtype=ht.float32, device=cpu:0, split=1)
    """
    if isinstance(m, DNDarray) and m._dtype in _UNSIGNED_TYPES:  # no uint16/32/64 kernels
        return unsigned_from_bits(_triangle(signed_bits(m), k, False, "triu"), m._dtype)
    return _triangle(m, k, False, "triu")


def _sum_partial(t: torch.Tensor, dims, keepdim: bool = True) -> torch.Tensor:
    return t.sum(dim=dims, keepdim=keepdim) if dims else t


def trace(
    a: DNDarray,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype=None,
    out: Optional[DNDarray] = None,
) -> DNDarray:
    """
    The sum along a diagonal (as :func:`numpy.trace`): :func:`diagonal`, then a sum over its last
    axis (one Allreduce when the diagonal is distributed).

    Parameters
    ----------
    a : DNDarray
        Input array, at least 2-D.
    offset, axis1, axis2 : int
        As in :func:`diagonal`.
    dtype : heat type, optional
        The accumulator and result type; by default that of ``a``, except that booleans and
        signed integers narrower than int64 are summed as int64 and unsigned integers as
        uint64 (as NumPy and the array API standard).
    out : DNDarray, optional
        Where to store the result.

    Returns
    -------
    DNDarray
        0-D for 2-D input, else the shape of ``a`` without ``axis1`` and ``axis2``.

    Raises
    ------
    TypeError, ValueError
        As :func:`diagonal`; TypeError if ``dtype`` is not understood.

    Examples
    --------
    >>> ht.trace(ht.eye(3, split=0))
    DNDarray(3., dtype=ht.float32, device=cpu:0, split=None)
    """
    if dtype is None:
        sanitize_in(a, "a")
        if a.dtype in (types.bool, types.int8, types.int16, types.int32):
            dtype = types.int64
        elif a.dtype in (types.uint8, types.uint16, types.uint32):
            dtype = types.uint64  # NumPy accumulates unsigned integers in uint64
    else:
        dtype = types.canonical_heat_type(dtype)
    diagonals = diagonal(a, offset, axis1, axis2)
    return reduce_op(diagonals, _sum_partial, MPI.SUM, axis=-1, out=out, neutral=0, dtype=dtype)


def matrix_transpose(x: DNDarray) -> DNDarray:
    """
    The matrices of ``x`` transposed: its last two axes swapped, as
    :func:`numpy.linalg.matrix_transpose` (a view; the split axis moves with its dimension).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray.
    ValueError
        If ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> ht.linalg.matrix_transpose(ht.zeros((2, 3, 4), split=2)).shape
    (2, 4, 3)
    """
    sanitize_in(x, "x")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least two dimensions, but x is {x.ndim}-D")
    return swapaxes(x, -2, -1)
