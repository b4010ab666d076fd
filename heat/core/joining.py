"""
Joining and splitting arrays: NumPy's "Joining arrays" and "Splitting arrays" routines on
distributed arrays.

- joining along an existing axis: :func:`concatenate`
- joining along a new or a fixed axis: :func:`stack`, :func:`vstack`, :func:`row_stack`,
  :func:`hstack`, :func:`dstack`, :func:`column_stack`
- splitting: :func:`split`, :func:`array_split`, :func:`hsplit`, :func:`vsplit`, :func:`dsplit`

Joining along the split axis moves every row to its process in the balanced result in one
all-to-all, described by the row segments of :mod:`heat.core.manipulations` (its module docstring
explains them); joining along another axis is local once the inputs are aligned. Splitting never
communicates: every piece is a view of the rows each process already holds.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

from . import layout, types
from .dndarray import DNDarray
from .manipulations import (
    _balanced_counts,
    _counts_of,
    _displs,
    _exchange_segments,
    _is_int,
    _ranges,
    _wrap,
    expand_dims,
    flatten,
    reshape,
    squeeze,
)
from .sanitation import sanitize_axis, sanitize_in

__all__ = [
    "array_split",
    "column_stack",
    "concat",
    "concatenate",
    "dsplit",
    "dstack",
    "hsplit",
    "hstack",
    "row_stack",
    "split",
    "stack",
    "unstack",
    "vsplit",
    "vstack",
]


# ---------------------------------------------------------------------------------------------
# joining
# ---------------------------------------------------------------------------------------------
def _as_dndarrays(arrays, name: str) -> List[DNDarray]:
    """Turn a sequence of arrays into DNDarrays (non-DNDarrays become non-split arrays)."""
    if isinstance(arrays, DNDarray) or not isinstance(arrays, (list, tuple)):
        raise TypeError(f"{name} must be a sequence of arrays, but was {type(arrays).__name__}")
    if len(arrays) == 0:
        raise ValueError(f"need at least one array in {name}")
    reference = next((x for x in arrays if isinstance(x, DNDarray)), None)
    result = []
    for x in arrays:
        if not isinstance(x, DNDarray):
            from .factories import array

            x = array(
                x,
                device=None if reference is None else reference.device,
                comm=None if reference is None else reference.comm,
            )
        result.append(x)
    for x in result[1:]:
        if x.comm.size != result[0].comm.size:
            raise ValueError(f"the arrays in {name} live on communicators of different sizes")
    return result


def _choose_split(arrays: Sequence[DNDarray]) -> Optional[int]:
    """The split axis held by the most elements among the arrays (earliest on a tie)."""
    weights = {}
    for x in arrays:
        if x.split is not None:
            weights[x.split] = weights.get(x.split, 0) + x.size
    if not weights:
        return None
    best = max(weights.values())
    return next(x.split for x in arrays if x.split is not None and weights[x.split] == best)


def _balanced_block(x: DNDarray, axis: int) -> torch.Tensor:
    """``x``'s local block in the balanced layout along ``axis`` (moving data only if needed)."""
    if x.split is None:
        offset, lshape, _ = x.comm.chunk(x.gshape, axis)
        return x.larray.narrow(axis, offset, lshape[axis])
    if x.split != axis:
        return layout.resplit(x, axis).larray
    if not x.is_balanced():
        return layout.balance(x).larray
    return x.larray


def concatenate(
    arrays: Sequence[DNDarray], axis: Optional[int] = 0, out: Optional[DNDarray] = None, dtype=None
) -> DNDarray:
    """
    Join arrays along an existing axis, as :func:`numpy.concatenate`.

    The result is split along the split axis of the inputs; if they are split along different
    axes, along the axis that holds the most elements (the others are resplit to it, non-split
    inputs are sliced locally). Joining along another axis than the split axis is local once the
    inputs are aligned; joining along the split axis moves every row to its process in the
    balanced result in one all-to-all.

    Parameters
    ----------
    arrays : sequence of DNDarray
        Arrays of the same shape except along ``axis``; non-DNDarrays are converted.
    axis : int or None
        The axis to join along; None flattens the arrays first.
    out : DNDarray, optional
        Where to store the result.
    dtype : heat type, optional
        The result type; default: :func:`heat.result_type` of the inputs.

    Returns
    -------
    DNDarray
        Balanced.

    Raises
    ------
    TypeError
        If ``arrays`` is not a sequence of arrays.
    ValueError
        If ``arrays`` is empty, the arrays differ in dimension or shape (except along ``axis``),
        are 0-d, or ``axis`` is out of range.

    Examples
    --------
    >>> ht.concatenate([ht.zeros((2, 3), split=0), ht.ones((4, 3), split=0)]).shape
    (6, 3)
    """
    arrays = _as_dndarrays(arrays, "arrays")
    if axis is None:
        arrays = [flatten(x) for x in arrays]
        axis = 0
    first = arrays[0]
    for i, x in enumerate(arrays):
        if x.ndim == 0:
            raise ValueError(f"zero-dimensional arrays cannot be concatenated (array {i})")
        if x.ndim != first.ndim:
            raise ValueError(
                "all the input arrays must have the same number of dimensions, but array 0 has "
                f"{first.ndim} and array {i} has {x.ndim}"
            )
        if x.device != first.device:
            raise ValueError(
                f"all the input arrays must be on one device, but array 0 is on {first.device} "
                f"and array {i} on {x.device}"
            )
    axis = sanitize_axis(first.gshape, axis)
    if not isinstance(axis, int):
        raise TypeError(f"axis must be an integer or None, but was {axis!r}")
    for i, x in enumerate(arrays):
        for d in range(first.ndim):
            if d != axis and x.gshape[d] != first.gshape[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must match "
                    f"exactly, but along dimension {d}, array 0 has size {first.gshape[d]} and "
                    f"array {i} has size {x.gshape[d]}"
                )
    result_type = types.result_type(*arrays) if dtype is None else types.canonical_heat_type(dtype)
    torch_type = result_type.torch_type()
    gshape = list(first.gshape)
    gshape[axis] = sum(x.gshape[axis] for x in arrays)
    gshape = tuple(gshape)
    if out is not None:
        if not isinstance(out, DNDarray):
            raise TypeError(f"out must be a DNDarray, but was {type(out).__name__}")
        if out.gshape != gshape:
            raise ValueError(f"out has shape {out.gshape}, but the result has shape {gshape}")
    split = _choose_split(arrays)
    comm = first.comm
    if split is None or comm.size == 1 or split != axis:
        if split is None or comm.size == 1:
            blocks = [x.larray for x in arrays]
        else:
            blocks = [_balanced_block(x, split) for x in arrays]
        local = torch.cat([b.to(torch_type) for b in blocks], dim=axis)
        result = DNDarray(local, gshape, result_type, split, first.device, comm, True)
    else:
        blocks, counts = [], []
        for x in arrays:
            if x.split is None:
                block = _balanced_block(x, axis)
                x_counts = _balanced_counts(comm, x.gshape[axis])
            else:
                if x.split != axis:
                    x = layout.resplit(x, axis)
                block, x_counts = x.larray, _counts_of(x)
            blocks.append(block.to(torch_type))
            counts.append(x_counts)
        # segments: the block of array k on process r follows the blocks of arrays 0..k-1 there
        # (positions in the concatenation of the blocks, which _exchange_segments reads in place)
        segments = [[] for _ in range(comm.size)]
        positions = [0] * comm.size
        start = 0
        for x, x_counts in zip(arrays, counts):
            for r, (d, c) in enumerate(zip(_displs(x_counts), x_counts)):
                if c:
                    segments[r].append((start + d, c, positions[r], 1))
                positions[r] += c
            start += x.gshape[axis]
        out_counts = _balanced_counts(comm, gshape[axis])
        local = _exchange_segments(blocks, axis, comm, segments, _ranges(out_counts))
        result = DNDarray(local, gshape, result_type, split, first.device, comm, True)
    if out is None:
        return result
    from ._operations import write_out

    return write_out(result, out)


def concat(arrays: Sequence[DNDarray], /, *, axis: Optional[int] = 0) -> DNDarray:
    """
    Join arrays along an existing axis, the array API standard's name of :func:`concatenate`
    (whose layout rules apply).

    Parameters
    ----------
    arrays : sequence of DNDarray
        Arrays of the same shape except along ``axis``.
    axis : int or None
        The axis to join along; None flattens the arrays first.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`concatenate`.

    Examples
    --------
    >>> ht.concat([ht.zeros((1, 2)), ht.ones((2, 2), split=0)]).shape
    (3, 2)
    """
    return concatenate(arrays, axis=axis)


def stack(arrays: Sequence[DNDarray], axis: int = 0, out: Optional[DNDarray] = None) -> DNDarray:
    """
    Join arrays of the same shape along a new axis, as :func:`numpy.stack`.

    The new axis is never the split axis, so once the inputs are aligned (see
    :func:`concatenate`) no data moves.

    Parameters
    ----------
    arrays : sequence of DNDarray
    axis : int
        Position of the new axis in the result.
    out : DNDarray, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``arrays`` is not a sequence of arrays.
    ValueError
        If ``arrays`` is empty, the shapes differ or ``axis`` is out of range.

    Examples
    --------
    >>> ht.stack([ht.zeros(3, split=0), ht.ones(3, split=0)], axis=1).shape
    (3, 2)
    """
    arrays = _as_dndarrays(arrays, "arrays")
    for i, x in enumerate(arrays):
        if x.gshape != arrays[0].gshape:
            raise ValueError(
                f"all input arrays must have the same shape, but array 0 has shape "
                f"{arrays[0].gshape} and array {i} has shape {x.gshape}"
            )
    axis = sanitize_axis((1,) * (arrays[0].ndim + 1), axis)
    return concatenate([expand_dims(x, axis) for x in arrays], axis=axis, out=out)


def unstack(x: DNDarray, /, *, axis: int = 0) -> Tuple[DNDarray, ...]:
    """
    The arrays along ``axis`` as a tuple, the inverse of :func:`stack` (the array API
    standard's ``unstack``): ``tuple(x[..., i, ...] for i along axis)``.

    Along another axis than the split axis no data moves and every piece keeps the layout of
    ``x``. Unstacking along the split axis first moves the split to the next axis (the previous
    one if ``axis`` is the last; an all-to-all), or makes a 1-D ``x`` non-split (one all-gather),
    so that every piece is distributed rather than held by one process.

    Parameters
    ----------
    x : DNDarray
        An array of at least one dimension.
    axis : int
        The axis to unstack along (negative counts from the end).

    Returns
    -------
    tuple of DNDarray
        ``x.shape[axis]`` arrays of ``x.ndim - 1`` dimensions.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``axis`` is not an integer.
    ValueError
        If ``x`` is 0-d or ``axis`` is out of range.

    Examples
    --------
    >>> a, b = ht.unstack(ht.array([[1, 2], [3, 4]], split=0), axis=1)
    >>> a
    DNDarray([1, 3], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(x, "x")
    if x.ndim == 0:
        raise ValueError("cannot unstack a 0-d array")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer, but was {axis!r}")
    axis = sanitize_axis(x.gshape, int(axis))
    if x.split == axis and x.comm.size > 1:
        target = None if x.ndim == 1 else (axis + 1 if axis + 1 < x.ndim else axis - 1)
        x = layout.resplit(x, target)
    if x.gshape[axis] == 0:
        return ()
    return tuple(squeeze(piece, axis) for piece in _split_pieces(x, x.gshape[axis], axis, True))


def _atleast(x: DNDarray, ndim: int) -> DNDarray:
    """``x`` with at least ``ndim`` axes, added as NumPy's ``atleast_1d/2d/3d`` add them."""
    if x.ndim >= ndim:
        return x
    if x.ndim == 0:
        return reshape(x, (1,) * ndim)
    if ndim == 2:
        return expand_dims(x, 0)
    if x.ndim == 1:
        return expand_dims(x, (0, 2))
    return expand_dims(x, 2)


def vstack(tup: Sequence[DNDarray]) -> DNDarray:
    """
    Stack arrays vertically (along axis 0 after making them at least 2-D), as
    :func:`numpy.vstack`.

    Parameters
    ----------
    tup : sequence of DNDarray

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`concatenate`.

    Examples
    --------
    >>> ht.vstack([ht.zeros(3), ht.ones(3)]).shape
    (2, 3)
    """
    arrays = _as_dndarrays(tup, "tup")
    return concatenate([_atleast(x, 2) for x in arrays], axis=0)


def row_stack(tup: Sequence[DNDarray]) -> DNDarray:
    """
    Alias of :func:`vstack` (NumPy's older name).

    Examples
    --------
    >>> ht.row_stack([ht.zeros(2), ht.zeros(2)]).shape
    (2, 2)
    """
    return vstack(tup)


def hstack(tup: Sequence[DNDarray]) -> DNDarray:
    """
    Stack arrays horizontally (along axis 1, or axis 0 for 1-D arrays), as :func:`numpy.hstack`.

    Parameters
    ----------
    tup : sequence of DNDarray

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`concatenate`.

    Examples
    --------
    >>> ht.hstack([ht.zeros((2, 1)), ht.ones((2, 3))]).shape
    (2, 4)
    """
    arrays = [_atleast(x, 1) for x in _as_dndarrays(tup, "tup")]
    return concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1)


def dstack(tup: Sequence[DNDarray]) -> DNDarray:
    """
    Stack arrays along the third axis (after making them at least 3-D), as :func:`numpy.dstack`.

    Parameters
    ----------
    tup : sequence of DNDarray

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`concatenate`.

    Examples
    --------
    >>> ht.dstack([ht.zeros((2, 3)), ht.ones((2, 3))]).shape
    (2, 3, 2)
    """
    arrays = _as_dndarrays(tup, "tup")
    return concatenate([_atleast(x, 3) for x in arrays], axis=2)


def column_stack(tup: Sequence[DNDarray]) -> DNDarray:
    """
    Stack 1-D arrays as columns of a 2-D array (2-D arrays as they are), as
    :func:`numpy.column_stack`.

    Parameters
    ----------
    tup : sequence of DNDarray

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`concatenate`.

    Examples
    --------
    >>> ht.column_stack([ht.zeros(3, split=0), ht.ones(3, split=0)]).shape
    (3, 2)
    """
    arrays = []
    for x in _as_dndarrays(tup, "tup"):
        if x.ndim == 0:
            x = reshape(x, (1, 1))
        elif x.ndim == 1:
            x = expand_dims(x, 1)
        arrays.append(x)
    return concatenate(arrays, axis=1)


# ---------------------------------------------------------------------------------------------
# splitting
# ---------------------------------------------------------------------------------------------
def _split_bounds(indices_or_sections, n: int, equal: bool) -> List[Tuple[int, int]]:
    """``[(start, stop)]`` of every piece along an axis of length ``n``."""
    if _is_int(indices_or_sections):
        sections = int(indices_or_sections.__index__())
        if sections <= 0:
            raise ValueError(f"number of sections must be larger than 0, but was {sections}")
        if equal and n % sections:
            raise ValueError(
                f"array split does not result in an equal division: {n} into {sections} sections"
            )
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds, start = [], 0
        for size in sizes:
            bounds.append((start, start + size))
            start += size
        return bounds
    if isinstance(indices_or_sections, DNDarray):
        indices_or_sections = indices_or_sections.tolist()
    elif isinstance(indices_or_sections, (np.ndarray, torch.Tensor)):
        indices_or_sections = indices_or_sections.tolist()
    if not isinstance(indices_or_sections, (list, tuple)):
        raise TypeError(
            "indices_or_sections must be an integer or a sequence of integers, but was "
            f"{type(indices_or_sections).__name__}"
        )
    for index in indices_or_sections:
        if not _is_int(index):
            raise TypeError(f"indices_or_sections must contain integers, but contained {index!r}")
    points = [0] + [int(i) for i in indices_or_sections] + [n]
    bounds = []
    for lo, hi in zip(points[:-1], points[1:]):
        start, stop, _ = slice(lo, hi).indices(n)
        bounds.append((start, max(start, stop)))
    return bounds


def _split_pieces(x: DNDarray, indices_or_sections, axis, equal: bool) -> List[DNDarray]:
    sanitize_in(x, "x")
    if x.ndim == 0:
        raise ValueError("cannot split a 0-d array")
    axis = sanitize_axis(x.gshape, axis)
    if not isinstance(axis, int):
        raise TypeError(f"axis must be an integer, but was {axis!r}")
    bounds = _split_bounds(indices_or_sections, x.gshape[axis], equal)
    pieces = []
    if axis != x.split or x.comm.size == 1:
        for start, stop in bounds:
            gshape = list(x.gshape)
            gshape[axis] = stop - start
            local = x.larray.narrow(axis, start, stop - start)
            pieces.append(_wrap(local, x, gshape, x.split, x._balanced))
        return pieces
    counts = _counts_of(x)
    ranges = _ranges(counts)
    lo, hi = ranges[x.comm.rank]
    for start, stop in bounds:
        piece_counts = tuple(max(0, min(stop, b) - max(start, a)) for a, b in ranges)
        first = max(start, lo)
        local = x.larray.narrow(
            axis, first - lo if piece_counts[x.comm.rank] else 0, piece_counts[x.comm.rank]
        )
        gshape = list(x.gshape)
        gshape[axis] = stop - start
        balanced = piece_counts == _balanced_counts(x.comm, stop - start)
        pieces.append(_wrap(local, x, gshape, x.split, balanced))
    return pieces


def split(x: DNDarray, indices_or_sections, axis: int = 0) -> List[DNDarray]:
    """
    Split an array into sub-arrays, as :func:`numpy.split`; no communication.

    Pieces along another axis than the split axis keep the layout of ``x``. Pieces along the
    split axis consist of the rows each process already holds, so they are generally not
    balanced (their ``balanced`` flag says so; ``balance_()`` fixes it in one collective).

    Parameters
    ----------
    x : DNDarray
    indices_or_sections : int or sequence of int
        An integer N: N equal pieces (the axis length must be divisible by N). A sorted
        sequence: the indices where the array is cut (as slice bounds: negative values count
        from the end, out-of-range values give empty pieces).
    axis : int

    Returns
    -------
    list of DNDarray
        Views of ``x``'s data.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``indices_or_sections`` is neither an integer nor a
        sequence of integers.
    ValueError
        If the array cannot be divided equally, the number of sections is not positive, ``x`` is
        0-d or ``axis`` is out of range.

    Examples
    --------
    >>> [p.shape for p in ht.split(ht.arange(6, split=0), [2, 3])]
    [(2,), (1,), (3,)]
    """
    return _split_pieces(x, indices_or_sections, axis, equal=True)


def array_split(x: DNDarray, indices_or_sections, axis: int = 0) -> List[DNDarray]:
    """
    Split an array into sub-arrays that need not be equal, as :func:`numpy.array_split`.

    Like :func:`split`, except that an integer N gives N pieces even when the axis length is not
    divisible by N (the first ``length % N`` pieces are one longer).

    Parameters
    ----------
    x : DNDarray
    indices_or_sections : int or sequence of int
    axis : int

    Returns
    -------
    list of DNDarray

    Raises
    ------
    TypeError, ValueError
        As :func:`split` (except for unequal division).

    Examples
    --------
    >>> [p.shape for p in ht.array_split(ht.arange(5), 2)]
    [(3,), (2,)]
    """
    return _split_pieces(x, indices_or_sections, axis, equal=False)


def hsplit(x: DNDarray, indices_or_sections) -> List[DNDarray]:
    """
    Split horizontally (along axis 1, or axis 0 of a 1-D array), as :func:`numpy.hsplit`.

    Parameters
    ----------
    x : DNDarray
    indices_or_sections : int or sequence of int

    Returns
    -------
    list of DNDarray

    Raises
    ------
    ValueError
        If ``x`` is 0-d, or as :func:`split`.

    Examples
    --------
    >>> [p.shape for p in ht.hsplit(ht.zeros((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    sanitize_in(x, "x")
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, axis=1 if x.ndim > 1 else 0)


def vsplit(x: DNDarray, indices_or_sections) -> List[DNDarray]:
    """
    Split vertically (along axis 0), as :func:`numpy.vsplit`.

    Parameters
    ----------
    x : DNDarray
        At least 2-D.
    indices_or_sections : int or sequence of int

    Returns
    -------
    list of DNDarray

    Raises
    ------
    ValueError
        If ``x`` has fewer than 2 dimensions, or as :func:`split`.

    Examples
    --------
    >>> [p.shape for p in ht.vsplit(ht.zeros((4, 2), split=0), 2)]
    [(2, 2), (2, 2)]
    """
    sanitize_in(x, "x")
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, axis=0)


def dsplit(x: DNDarray, indices_or_sections) -> List[DNDarray]:
    """
    Split along the third axis, as :func:`numpy.dsplit`.

    Parameters
    ----------
    x : DNDarray
        At least 3-D.
    indices_or_sections : int or sequence of int

    Returns
    -------
    list of DNDarray

    Raises
    ------
    ValueError
        If ``x`` has fewer than 3 dimensions, or as :func:`split`.

    Examples
    --------
    >>> [p.shape for p in ht.dsplit(ht.zeros((1, 2, 4)), 2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    sanitize_in(x, "x")
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, axis=2)
