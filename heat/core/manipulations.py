"""
Array manipulations: NumPy's shape and order routines on distributed arrays.

- changing the shape: :func:`reshape`, :func:`flatten`, :func:`ravel`, :func:`squeeze`,
  :func:`expand_dims`, :func:`broadcast_to`, :func:`broadcast_arrays`
- reordering axes: :func:`transpose`, :func:`swapaxes`, :func:`moveaxis`
- reordering elements: :func:`flip`, :func:`fliplr`, :func:`flipud`, :func:`rot90`, :func:`roll`
- growing: :func:`pad`, :func:`repeat`, :func:`tile`
- sliding windows: :func:`unfold`

Joining and splitting (concatenate, stack, split and their relatives) live in
:mod:`heat.core.joining`, which builds on the helpers here.

Moving rows along the split axis
--------------------------------
Operations that reorder, duplicate or join rows along the split axis (flip, roll, pad, tile,
broadcast_to, unfold, and :func:`heat.core.joining.concatenate`) describe where rows go as a few *segments* per process, computed
identically on every process from global information (shapes and the counts of rows per
process): a segment ``(out_start, length, local_start, step)`` of process ``r`` says that output
row ``out_start + j`` is row ``local_start + step * j`` of ``r``'s local block (``step`` is 1, -1
or 0). Every process then sends each other process exactly the rows that land in that process's
output range, in one all-to-all (:func:`_exchange_segments`); nothing else moves and nothing is
gathered.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from . import layout, types
from ._operations import _UNSIGNED_TYPES, signed_bits, signed_view, unsigned_from_bits
from ._redistribution import balanced_counts as _balanced_counts
from ._redistribution import displacements as _displs
from ._redistribution import overlap
from ._redistribution import row_ranges as _ranges
from .communication import MPI
from .dndarray import DNDarray
from .sanitation import broadcast_shapes, sanitize_axis, sanitize_in, sanitize_shape, sanitize_split

__all__ = [
    "astype",
    "broadcast_arrays",
    "broadcast_shape",
    "broadcast_to",
    "expand_dims",
    "flatten",
    "flip",
    "fliplr",
    "flipud",
    "moveaxis",
    "pad",
    "permute_dims",
    "ravel",
    "repeat",
    "reshape",
    "roll",
    "rot90",
    "shape",
    "squeeze",
    "swapaxes",
    "tile",
    "transpose",
    "unfold",
]

# (out_start, length, local_start, step)
Segment = Tuple[int, int, int, int]


# ---------------------------------------------------------------------------------------------
# layout helpers (global information only, no communication unless a layout is unknown)
# ---------------------------------------------------------------------------------------------
def _counts_of(x: DNDarray) -> Tuple[int, ...]:
    """Rows per process along ``x.split`` (collective only if the layout is not known)."""
    return tuple(int(c) for c in x.counts_displs()[0])


def _is_distributed(x: DNDarray) -> bool:
    return x.split is not None and x.comm.size > 1


def _prod(values) -> int:
    result = 1
    for v in values:
        result *= int(v)
    return result


def _is_int(value) -> bool:
    """Whether ``value`` is an integer scalar (arrays count only when 0-d and integral)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, DNDarray):
        return value.ndim == 0 and types.issubdtype(value.dtype, types.integer)
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iu"
    if isinstance(value, torch.Tensor):
        return (
            value.ndim == 0
            and not value.dtype.is_floating_point
            and not value.dtype.is_complex
            and value.dtype is not torch.bool
        )
    return hasattr(value, "__index__")


def _wrap(local: torch.Tensor, like: DNDarray, gshape, split, balanced) -> DNDarray:
    return DNDarray(local, tuple(gshape), like.dtype, split, like.device, like.comm, balanced)


def _segment_rows(
    local: Union[torch.Tensor, Sequence[torch.Tensor]], axis: int, first: int, count: int, step: int
) -> List[torch.Tensor]:
    """
    Rows ``first + step * j`` (``j < count``) of ``local`` along ``axis`` as views, in order;
    ``local`` may be a list of tensors standing for their concatenation along ``axis`` (a run
    that crosses from one to the next gives one view of each). Only reversed runs are copies.
    """
    tensors = [local] if isinstance(local, torch.Tensor) else list(local)
    if step == 0:
        for t in tensors:
            if first < t.shape[axis]:
                shape = list(t.shape)
                shape[axis] = count
                return [t.narrow(axis, first, 1).expand(shape)]
            first -= t.shape[axis]
        raise IndexError("segment row out of range")  # pragma: no cover - segments are valid
    lo = first if step == 1 else first - count + 1
    hi = lo + count
    views, start = [], 0
    for t in tensors:
        stop = start + t.shape[axis]
        a, b = max(lo, start), min(hi, stop)
        if a < b:
            views.append(t.narrow(axis, a - start, b - a))
        start = stop
    if step == -1:
        views = [v.flip(axis) for v in reversed(views)]
    return views


def _exchange_segments(
    local: Union[torch.Tensor, Sequence[torch.Tensor]],
    axis: int,
    comm,
    segments: Sequence[Sequence[Segment]],
    target_ranges: Sequence[Tuple[int, int]],
) -> torch.Tensor:
    """
    Move rows along ``axis`` in one all-to-all.

    ``segments[r]`` lists the segments of process ``r`` (see the module docstring); ``local`` is
    this process's block, or a list of blocks standing for their concatenation along ``axis``
    (the rows a segment's ``local_start`` counts). Process ``q`` receives the output rows
    ``target_ranges[q] = (lo, hi)`` (ranges may overlap, e.g. for halos) and returns them as a
    tensor with ``hi - lo`` rows along ``axis``. Rows travel as views straight from the blocks
    into the result (one ``Alltoallw``; a process's own rows are a tensor copy), so the only new
    memory is the result. Output rows that no segment covers are left uninitialized for the
    caller to fill.
    """
    rank = comm.rank
    tensors = [local] if isinstance(local, torch.Tensor) else list(local)
    my_lo, my_hi = target_ranges[rank]
    shape = list(tensors[0].shape)
    shape[axis] = my_hi - my_lo
    result = torch.empty(shape, dtype=tensors[0].dtype, device=tensors[0].device)
    sends, recvs = [], []
    for q, (lo, hi) in enumerate(target_ranges):
        pieces, own = [], []
        for out_start, length, local_start, step in segments[rank]:
            a, b = max(out_start, lo), min(out_start + length, hi)
            if a < b:
                first = local_start + step * (a - out_start)
                views = _segment_rows(tensors, axis, first, b - a, step)
                pieces.extend(views)
                if q == rank:  # the matching rows of the result, view by view
                    cursor = a - my_lo
                    for view in views:
                        own.append(result.narrow(axis, cursor, view.shape[axis]))
                        cursor += view.shape[axis]
        sends.append(pieces)
        if q == rank:
            recvs.append(own)
            continue
        targets = []
        for out_start, length, _, _ in segments[q]:
            a, b = max(out_start, my_lo), min(out_start + length, my_hi)
            if a < b:
                targets.append(result.narrow(axis, a - my_lo, b - a))
        recvs.append(targets)
    comm.Alltoallw(sends, recvs)
    return result


def _segments_from_rows(
    out_start: int, rows: torch.Tensor, counts: Sequence[int], size: int
) -> List[List[Segment]]:
    """
    Segments per process for output rows ``out_start + j`` taken from global rows ``rows[j]``
    of an array with ``counts`` rows per process (runs of step -1, 0 or 1 become one segment).
    """
    segments: List[List[Segment]] = [[] for _ in range(size)]
    n = rows.numel()
    if n == 0:
        return segments
    ends = torch.tensor(_displs(counts), dtype=torch.int64) + torch.tensor(
        counts, dtype=torch.int64
    )
    owner = torch.searchsorted(ends, rows, right=True)
    local = rows - (ends - torch.tensor(counts, dtype=torch.int64))[owner]
    if n > 1:
        diff = rows[1:] - rows[:-1]
        breaks = (owner[1:] != owner[:-1]) | (diff.abs() > 1)
        breaks[1:] |= diff[1:] != diff[:-1]
        starts = [0] + (torch.nonzero(breaks).flatten() + 1).tolist()
    else:
        starts = [0]
    starts.append(n)
    owner_list, local_list, row_list = owner.tolist(), local.tolist(), rows.tolist()
    for s, e in zip(starts[:-1], starts[1:]):
        step = row_list[s + 1] - row_list[s] if e - s > 1 else 1
        segments[owner_list[s]].append((out_start + s, e - s, local_list[s], step))
    return segments


# ---------------------------------------------------------------------------------------------
# changing the shape
# ---------------------------------------------------------------------------------------------
def _resolve_shape(shape, size: int) -> Tuple[int, ...]:
    """The target shape of a reshape, with a ``-1`` entry resolved; validated against ``size``."""
    if len(shape) == 1 and not _is_int(shape[0]):
        shape = shape[0]
    if isinstance(shape, DNDarray):
        shape = shape.tolist()
    if _is_int(shape):
        shape = (shape,)
    try:
        dims = list(shape)
    except TypeError:
        raise TypeError(
            f"shape must be an integer or a sequence of integers, but was {type(shape).__name__}"
        ) from None
    for d in dims:
        if not _is_int(d):
            raise TypeError(f"shape must contain integers, but contained {d!r}")
    dims = [int(d.__index__()) for d in dims]
    unknown = [i for i, d in enumerate(dims) if d < 0]
    if any(d < -1 for d in dims):
        raise ValueError(f"negative dimensions are not allowed in shape {tuple(dims)}")
    if len(unknown) > 1:
        raise ValueError(f"can only specify one unknown dimension, but shape is {tuple(dims)}")
    known = _prod(d for d in dims if d >= 0)
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {tuple(dims)}")
        dims[unknown[0]] = size // known
    if _prod(dims) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {tuple(dims)}")
    return tuple(dims)


def _matching_axis(old_shape, split: int, new_shape) -> Optional[int]:
    """
    The axis of ``new_shape`` that is the old split axis "still there": same length and the same
    number of elements before it (then every process's block reshapes locally).
    """
    before = _prod(old_shape[:split])
    for t, d in enumerate(new_shape):
        if d == old_shape[split] and _prod(new_shape[:t]) == before:
            return t
    return None


def _global_flat_index(gshape, split: int, offset: int, lshape, device) -> torch.Tensor:
    """Row-major global flat indices of a block (rows ``offset...`` along ``split``), flattened."""
    ndim = len(gshape)
    index = torch.zeros(lshape, dtype=torch.int64, device=device)
    stride = 1
    for d in range(ndim - 1, -1, -1):
        coordinate = torch.arange(lshape[d], dtype=torch.int64, device=device)
        if d == split:
            coordinate += offset
        view = [1] * ndim
        view[d] = lshape[d]
        index += (coordinate * stride).reshape(view)
        stride *= gshape[d]
    return index.reshape(-1)


def _owner_along(flat: torch.Tensor, gshape, axis: int, counts: Sequence[int]) -> torch.Tensor:
    """The process that holds each global flat index in a layout split along ``axis``."""
    inner = _prod(gshape[axis + 1 :])
    coordinate = torch.div(flat, inner, rounding_mode="floor") % max(gshape[axis], 1)
    ends = torch.tensor(_displs(counts), dtype=torch.int64) + torch.tensor(
        counts, dtype=torch.int64
    )
    return torch.searchsorted(ends.to(flat.device), coordinate, right=True)


def _reshape_distributed(a: DNDarray, new_shape, new_split: int) -> torch.Tensor:
    """
    This process's block of ``a`` reshaped to ``new_shape``, balanced along ``new_split``: a
    view of ``a``'s block when no element changes process.
    """
    comm, split = a.comm, a.split
    counts = _counts_of(a)
    out_counts = _balanced_counts(comm, new_shape[new_split])
    out_lshape = list(new_shape)
    out_lshape[new_split] = out_counts[comm.rank]
    local = a.larray
    if a.size == 0:
        return local.new_empty(out_lshape)
    outer = _prod(a.gshape[:split])
    if outer == _prod(new_shape[:new_split]):
        # Both layouts cut every one of the ``outer`` leading slices into the same kind of
        # pieces: process r holds a contiguous flat range of each slice. Where the ranges of old
        # and new layout coincide on every process, nothing moves (a local reshape, a view like
        # NumPy's); otherwise the ranges are redistributed in one all-to-all of strided views.
        inner_in = _prod(a.gshape[split + 1 :])
        inner_out = _prod(new_shape[new_split + 1 :])
        in_ranges = [(lo * inner_in, hi * inner_in) for lo, hi in _ranges(counts)]
        out_ranges = [(lo * inner_out, hi * inner_out) for lo, hi in _ranges(out_counts)]
        if in_ranges == out_ranges:
            return local.reshape(out_lshape)
        source = local.reshape(outer, counts[comm.rank] * inner_in)
        result = torch.empty(out_lshape, dtype=local.dtype, device=local.device)
        target = result.view(outer, out_counts[comm.rank] * inner_out)
        mine_in, mine_out = in_ranges[comm.rank], out_ranges[comm.rank]
        comm.Alltoallw(
            [source.narrow(1, *overlap(mine_in, other)) for other in out_ranges],
            [target.narrow(1, *overlap(mine_out, other)) for other in in_ranges],
        )
        return result
    # general case: route every element by its global flat index (one all-to-all)
    device = local.device
    offset = _displs(counts)[comm.rank]
    sent_index = _global_flat_index(a.gshape, split, offset, tuple(local.shape), device)
    destination = _owner_along(sent_index, new_shape, new_split, out_counts)
    order = torch.argsort(destination, stable=True)
    send_counts = torch.bincount(destination, minlength=comm.size).tolist()
    blocks = list(torch.split(local.reshape(-1)[order], send_counts))
    received = torch.cat(comm.alltoallv_tensors(blocks, axis=0))
    out_offset = _displs(out_counts)[comm.rank]
    wanted = _global_flat_index(new_shape, new_split, out_offset, out_lshape, device)
    source = _owner_along(wanted, a.gshape, split, counts)
    placement = torch.argsort(source, stable=True)
    result = torch.empty(wanted.numel(), dtype=local.dtype, device=device)
    result[placement] = received
    return result.reshape(out_lshape)


def reshape(
    a: DNDarray,
    /,
    shape,
    *more_shape,
    copy: Optional[bool] = None,
    new_split: Optional[int] = None,
    order: str = "C",
) -> DNDarray:
    """
    The array with a new shape and the same data in row-major order, as :func:`numpy.reshape`.

    A split array is reshaped without gathering it: every process works out, from the global
    shape and the counts of rows per process, which global (flat) elements it holds and which it
    will hold, and the elements that change process move in one all-to-all. When the old split
    axis survives the reshape (an output axis of the same length with the same number of
    elements before it), every block reshapes locally without communication; so it does when
    every process holds the same flat elements in the old and the new layout (e.g. (2000, 2000)
    to (2500, 1600) at 2 processes), and the result is then a view of ``a``'s block, as NumPy
    returns a view when it can.

    Parameters
    ----------
    a : DNDarray
        The array.
    shape : int or sequence of int
        The new shape; one entry may be -1 (inferred). The integers of a shape may also be given
        one by one (``reshape(a, 2, 3)``, as HeAT and NumPy's method).
    copy : bool, optional
        The array API standard's: True always copies; False never copies (ValueError if data
        must move between processes or cannot be viewed); None (default) copies only if needed.
    new_split : int, optional
        The split axis of the result. Default: for a split ``a``, the output axis that the old
        split axis becomes if it survives the reshape (no communication), else axis 0; for a
        non-split ``a``, None. A 0-d result is never split. To get a non-split result from a
        split array, use :func:`heat.resplit` afterwards.
    order : str
        Only "C" (row-major).

    Returns
    -------
    DNDarray
        Balanced along its split axis (or with ``a``'s layout when no data moved).

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``shape`` does not consist of integers.
    ValueError
        If the new shape does not have ``a.size`` elements, has more than one -1 or negative
        entries, or ``new_split`` is out of range.
    NotImplementedError
        If ``order`` is not "C".

    Examples
    --------
    >>> x = ht.arange(12, split=0)
    >>> y = ht.reshape(x, (3, 4))
    >>> y.shape, y.split
    ((3, 4), 0)
    >>> x.reshape(2, -1, new_split=1).shape
    (2, 6)
    """
    sanitize_in(a, "a")
    if order != "C":
        raise NotImplementedError(f"only order='C' is supported, but order was {order!r}")
    if copy not in (None, True, False):
        raise TypeError(f"copy must be None, True or False, but was {copy!r}")
    result = _reshape(a, (shape,) + more_shape, new_split)
    if copy is None:
        return result
    shares = a.lnumel == 0 or result.larray.data_ptr() == a.larray.data_ptr()
    if copy:
        if shares:
            result.larray = result.larray.clone()
        return result
    if a.split is not None and a.comm.size > 1:
        shares = bool(a.comm.allreduce(shares, op=MPI.LAND))
    if not shares:
        raise ValueError("reshape with copy=False needs a copy (data moves or cannot be viewed)")
    return result


def _reshape(a: DNDarray, shape, new_split: Optional[int]) -> DNDarray:
    new_shape = _resolve_shape(shape, a.size)
    if len(new_shape) == 0:
        if new_split is not None:
            raise ValueError(f"new_split must be None for a 0-d result, but was {new_split}")
        target = None
    elif new_split is not None:
        target = sanitize_split(new_shape, new_split, name="new_split")
    elif a.split is None:
        target = None
    else:
        target = _matching_axis(a.gshape, a.split, new_shape)
        target = 0 if target is None else target
    comm = a.comm
    if a.split is None or comm.size == 1:
        local = a.larray.reshape(new_shape)
        if target is not None and comm.size > 1:
            offset, lshape, _ = comm.chunk(new_shape, target)
            local = local.narrow(target, offset, lshape[target]).clone()
        return _wrap(local, a, new_shape, target, True)
    if target is None:
        local = layout.resplit(a, None).larray.reshape(new_shape)
        return _wrap(local, a, new_shape, None, True)
    if _matching_axis(a.gshape, a.split, new_shape) == target and (
        a.gshape[a.split] == new_shape[target]
    ):
        lshape = list(new_shape)
        lshape[target] = a.lshape[a.split]
        return _wrap(a.larray.reshape(lshape), a, new_shape, target, a._balanced)
    if a.dtype in _UNSIGNED_TYPES:  # torch cannot scatter uint16/32/64: move the bits as signed
        local = _reshape_distributed(signed_bits(a), new_shape, target).view(a.larray.dtype)
        return _wrap(local, a, new_shape, target, True)
    return _wrap(_reshape_distributed(a, new_shape, target), a, new_shape, target, True)


def flatten(a: DNDarray) -> DNDarray:
    """
    A copy of the array collapsed into one dimension (row-major), as
    :meth:`numpy.ndarray.flatten`.

    A split array gives a balanced array split along axis 0 (one all-to-all at most).

    Parameters
    ----------
    a : DNDarray

    Returns
    -------
    DNDarray
        1-D, split along 0 if ``a`` is split.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray.

    Examples
    --------
    >>> ht.flatten(ht.ones((2, 3), split=1)).shape
    (6,)
    """
    sanitize_in(a, "a")
    result = reshape(a, (a.size,), new_split=None if a.split is None else 0)
    if (
        a.size
        and result.larray.untyped_storage().data_ptr() == a.larray.untyped_storage().data_ptr()
    ):
        # no data moved: the local block is a view of a's, and flatten always copies
        return _wrap(result.larray.clone(), a, result.gshape, result.split, result._balanced)
    return result


def ravel(a: DNDarray) -> DNDarray:
    """
    The array collapsed into one dimension (row-major), as :func:`numpy.ravel`.

    Like NumPy's, the result may share memory with ``a`` (when no data has to move); otherwise it
    is :func:`flatten`.

    Parameters
    ----------
    a : DNDarray

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray.

    Examples
    --------
    >>> ht.ravel(ht.zeros((2, 2), split=0)).shape
    (4,)
    """
    sanitize_in(a, "a")
    return reshape(a, (a.size,), new_split=None if a.split is None else 0)


def squeeze(a: DNDarray, axis: Union[None, int, Tuple[int, ...]] = None) -> DNDarray:
    """
    Remove axes of length one, as :func:`numpy.squeeze`.

    If the split axis is removed (it has length one, so one process holds all the data), the
    result is split along the nearest remaining axis (the next one, else the previous one),
    which costs one all-to-all; a 0-d result is not split.

    Parameters
    ----------
    a : DNDarray
    axis : int or tuple of int, optional
        The axes to remove; default: all axes of length one.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis`` is not an integer or tuple of integers.
    ValueError
        If an axis is out of range or does not have length one.

    Examples
    --------
    >>> ht.squeeze(ht.zeros((1, 3, 1), split=1)).shape
    (3,)
    """
    sanitize_in(a, "a")
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.gshape) if d == 1)
    else:
        axes = sanitize_axis(a.gshape, axis)
        axes = (axes,) if isinstance(axes, int) else axes
        if a.ndim == 0:
            axes = ()
        for ax in axes:
            if a.gshape[ax] != 1:
                raise ValueError(
                    f"cannot select an axis to squeeze out which has size not equal to one "
                    f"(axis {ax} has size {a.gshape[ax]})"
                )
    if not axes:
        return _wrap(a.larray, a, a.gshape, a.split, a._balanced)
    new_shape = tuple(d for i, d in enumerate(a.gshape) if i not in axes)
    x, split = a, a.split
    if split is not None and split in axes:
        remaining = [i for i in range(a.ndim) if i not in axes]
        if not remaining:
            x, split = layout.resplit(a, None), None
        else:
            after = [i for i in remaining if i > split]
            split = after[0] if after else remaining[-1]
            x = layout.resplit(a, split)
    local = x.larray.squeeze(axes)
    if split is not None:
        split -= sum(1 for ax in axes if ax < split)
    return _wrap(local, x, new_shape, split, x._balanced)


def expand_dims(a: DNDarray, axis: Union[int, Tuple[int, ...]]) -> DNDarray:
    """
    Insert axes of length one, as :func:`numpy.expand_dims`; no communication.

    Parameters
    ----------
    a : DNDarray
    axis : int or tuple of int
        Positions of the new axes in the result (negative values count from its end).

    Returns
    -------
    DNDarray
        A view of ``a``'s data; the split axis moves with its dimension.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis`` is not an integer or tuple of integers.
    ValueError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> ht.expand_dims(ht.zeros(3, split=0), 0).shape
    (1, 3)
    """
    sanitize_in(a, "a")
    if axis is None:
        raise TypeError("axis must be an integer or a tuple of integers, but was None")
    count = len(axis) if isinstance(axis, (tuple, list)) else 1
    out_ndim = a.ndim + count
    axes = sanitize_axis((1,) * out_ndim, axis)
    axes = (axes,) if isinstance(axes, int) else axes
    old_axes = iter(range(a.ndim))
    new_shape, new_lshape, split = [], [], None
    for i in range(out_ndim):
        if i in axes:
            new_shape.append(1)
            new_lshape.append(1)
        else:
            old = next(old_axes)
            if old == a.split:
                split = i
            new_shape.append(a.gshape[old])
            new_lshape.append(a.lshape[old])
    return _wrap(a.larray.reshape(new_lshape), a, new_shape, split, a._balanced)


def broadcast_to(x: DNDarray, shape) -> DNDarray:
    """
    The array broadcast to ``shape``, as :func:`numpy.broadcast_to`.

    New leading axes are added and axes of length one are expanded (as a read-only view, like
    NumPy's). If the split axis itself is expanded from length one, its single row is sent to
    the processes of the balanced result layout (one all-to-all).

    Parameters
    ----------
    x : DNDarray
    shape : int or sequence of int

    Returns
    -------
    DNDarray
        The split axis moves with its dimension.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``shape`` is not a shape.
    ValueError
        If ``x`` cannot be broadcast to ``shape``.

    Examples
    --------
    >>> ht.broadcast_to(ht.arange(3, split=0), (2, 3)).split
    1
    """
    sanitize_in(x, "x")
    shape = sanitize_shape(shape)
    lead = len(shape) - x.ndim
    if lead < 0 or any(d != shape[lead + i] and d != 1 for i, d in enumerate(x.gshape)):
        raise ValueError(f"cannot broadcast an array of shape {x.gshape} to shape {shape}")
    split = None if x.split is None else x.split + lead
    local, balanced = x.larray, x._balanced
    lshape = list(shape)
    if split is not None and x.comm.size > 1:
        lshape[split] = local.shape[x.split]
    if _is_distributed(x) and x.gshape[x.split] == 1 and shape[split] != 1:
        counts = _counts_of(x)
        owner = next(r for r, c in enumerate(counts) if c)
        segments = [[] for _ in counts]
        segments[owner] = [(0, shape[split], 0, 0)]
        out_counts = _balanced_counts(x.comm, shape[split])
        local = _exchange_segments(local, x.split, x.comm, segments, _ranges(out_counts))
        lshape[split] = out_counts[x.comm.rank]
        balanced = True
    return _wrap(local.expand(lshape), x, shape, split, balanced)


def broadcast_shape(shape_a: Sequence[int], shape_b: Sequence[int]) -> Tuple[int, ...]:
    """
    The shape two arrays of shapes ``shape_a`` and ``shape_b`` broadcast to (HeAT's name; see
    :func:`heat.broadcast_shapes` for any number of shapes). No communication.

    Parameters
    ----------
    shape_a, shape_b : sequence of int

    Returns
    -------
    tuple of int

    Raises
    ------
    TypeError
        If a shape is not a sequence of integers.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.broadcast_shape((5, 4), (4,))
    (5, 4)
    >>> ht.broadcast_shape((1, 100, 1), (10, 1, 5))
    (10, 100, 5)
    """
    return broadcast_shapes(sanitize_shape(shape_a, "shape_a"), sanitize_shape(shape_b, "shape_b"))


def shape(a) -> Tuple[int, ...]:
    """
    The global shape of ``a``, as :func:`numpy.shape` (``a.shape`` for a DNDarray; no
    communication).

    Parameters
    ----------
    a : DNDarray or array-like

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> ht.shape(ht.zeros((3, 4), split=0))
    (3, 4)
    >>> ht.shape([[1, 2, 3]])
    (1, 3)
    """
    if isinstance(a, DNDarray):
        return a.gshape
    return tuple(np.shape(a))


def broadcast_arrays(*args: DNDarray) -> Tuple[DNDarray, ...]:
    """
    The arrays broadcast against each other, as :func:`numpy.broadcast_arrays`.

    Parameters
    ----------
    *args : DNDarray

    Returns
    -------
    tuple of DNDarray
        Read-only views where possible (see :func:`broadcast_to`).

    Raises
    ------
    TypeError
        If an argument is not a DNDarray.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> a, b = ht.broadcast_arrays(ht.zeros((2, 1)), ht.zeros(3, split=0))
    >>> a.shape, b.shape
    ((2, 3), (2, 3))
    """
    for i, a in enumerate(args):
        sanitize_in(a, f"args[{i}]")
    shape = broadcast_shapes(*(a.gshape for a in args))
    return tuple(broadcast_to(a, shape) for a in args)


# ---------------------------------------------------------------------------------------------
# reordering axes
# ---------------------------------------------------------------------------------------------
def transpose(a: DNDarray, axes: Optional[Sequence[int]] = None) -> DNDarray:
    """
    Permute the axes, as :func:`numpy.transpose`; no communication.

    The split axis moves with its dimension. Like NumPy's, the result is a view of ``a``'s data
    (its local block is a permuted, generally non-contiguous, view).

    Parameters
    ----------
    a : DNDarray
    axes : sequence of int, optional
        A permutation of ``range(a.ndim)`` (negative values allowed); default: reversed order.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axes`` is not a sequence of integers.
    ValueError
        If ``axes`` is not a permutation of the axes.

    Examples
    --------
    >>> ht.transpose(ht.zeros((2, 3), split=0)).split
    1
    """
    sanitize_in(a, "a")
    if axes is None:
        axes = tuple(range(a.ndim - 1, -1, -1))
    else:
        if _is_int(axes):
            axes = (axes,)
        if not isinstance(axes, (tuple, list)):
            raise TypeError(f"axes must be a sequence of integers, but was {type(axes).__name__}")
        if len(axes) != a.ndim:
            raise ValueError(f"axes {tuple(axes)} don't match array of dimension {a.ndim}")
        axes = sanitize_axis(a.gshape, tuple(axes), name="axes") if a.ndim else ()
    gshape = tuple(a.gshape[i] for i in axes)
    split = None if a.split is None else axes.index(a.split)
    return _wrap(a.larray.permute(tuple(axes)), a, gshape, split, a._balanced)


def permute_dims(x: DNDarray, /, axes: Sequence[int]) -> DNDarray:
    """
    The array with its axes permuted, the array API standard's name of :func:`transpose` (whose
    layout rules apply: the split axis moves with its data, no communication).

    Parameters
    ----------
    x : DNDarray
    axes : sequence of int
        A permutation of ``range(x.ndim)`` (negative axes count from the end).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray.
    ValueError
        If ``axes`` is not a permutation of the axes of ``x``.

    Examples
    --------
    >>> ht.permute_dims(ht.zeros((2, 3, 4), split=0), (2, 0, 1)).shape
    (4, 2, 3)
    """
    if axes is None:
        raise TypeError("permute_dims needs axes, a permutation of range(x.ndim)")
    return transpose(x, axes)


def astype(x: DNDarray, dtype, /, *, copy: bool = True, device=None) -> DNDarray:
    """
    ``x`` cast to ``dtype``, the array API standard's ``astype`` (see :meth:`DNDarray.astype`);
    no communication.

    Parameters
    ----------
    x : DNDarray
    dtype : heat type
        Anything :func:`heat.core.types.canonical_heat_type` accepts.
    copy : bool
        True (default): always a new array. False: ``x`` itself if it already has ``dtype``
        (and lives on ``device``).
    device : str or Device, optional
        Where the result lives; default ``x.device``.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``dtype`` is not understood.

    Examples
    --------
    >>> ht.astype(ht.arange(3, split=0), ht.float64)
    DNDarray([0., 1., 2.], dtype=ht.float64, device=cpu:0, split=0)
    """
    sanitize_in(x, "x")
    if not isinstance(copy, (bool, np.bool_)):
        raise TypeError(f"copy must be a bool, but was {type(copy).__name__}")
    result = x.astype(dtype, copy=bool(copy))
    return result if device is None else result.to_device(device)


def swapaxes(a: DNDarray, axis1: int, axis2: int) -> DNDarray:
    """
    Interchange two axes, as :func:`numpy.swapaxes`; no communication (see :func:`transpose`).

    Parameters
    ----------
    a : DNDarray
    axis1, axis2 : int

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or an axis is not an integer.
    ValueError
        If an axis is out of range.

    Examples
    --------
    >>> ht.swapaxes(ht.zeros((2, 3, 4), split=2), 0, 2).split
    0
    """
    sanitize_in(a, "a")
    axis1 = sanitize_axis(a.gshape, axis1, name="axis1")
    axis2 = sanitize_axis(a.gshape, axis2, name="axis2")
    axes = list(range(a.ndim))
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return transpose(a, axes)


def moveaxis(
    a: DNDarray, source: Union[int, Sequence[int]], destination: Union[int, Sequence[int]]
) -> DNDarray:
    """
    Move axes to new positions, as :func:`numpy.moveaxis`; no communication.

    Parameters
    ----------
    a : DNDarray
    source : int or sequence of int
        Original positions of the axes to move.
    destination : int or sequence of int
        Their new positions.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or an axis is not an integer.
    ValueError
        If the axes are out of range or repeated, or ``source`` and ``destination`` differ in
        length.

    Examples
    --------
    >>> ht.moveaxis(ht.zeros((2, 3, 4), split=0), 0, -1).shape
    (3, 4, 2)
    """
    sanitize_in(a, "a")
    source = sanitize_axis(
        a.gshape, source if isinstance(source, (tuple, list)) else (source,), name="source"
    )
    destination = sanitize_axis(
        a.gshape,
        destination if isinstance(destination, (tuple, list)) else (destination,),
        name="destination",
    )
    if len(source) != len(destination):
        raise ValueError(
            "source and destination must have the same number of elements, but have "
            f"{len(source)} and {len(destination)}"
        )
    order = [i for i in range(a.ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(a, order)


# ---------------------------------------------------------------------------------------------
# reordering elements
# ---------------------------------------------------------------------------------------------
def flip(a: DNDarray, axis: Union[None, int, Tuple[int, ...]] = None) -> DNDarray:
    """
    Reverse the order of elements along the given axes, as :func:`numpy.flip`.

    Along the split axis every process reverses its block and the blocks' order is reversed:
    each reversed block goes to the processes of the balanced result layout in one all-to-all.

    Parameters
    ----------
    a : DNDarray
    axis : int or tuple of int, optional
        Default: all axes.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis`` is not an integer or tuple of integers.
    ValueError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> ht.flip(ht.arange(4, split=0)).tolist()
    [3, 2, 1, 0]
    """
    sanitize_in(a, "a")
    if a.dtype in _UNSIGNED_TYPES:  # torch cannot flip uint16/32/64: flip the bits as signed
        return unsigned_from_bits(flip(signed_bits(a), axis), a.dtype)
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = sanitize_axis(a.gshape, axis)
        axes = (axes,) if isinstance(axes, int) else axes
        if a.ndim == 0:
            axes = ()
    local = a.larray.flip(axes) if axes else a.larray.clone()
    if not _is_distributed(a) or a.split not in axes:
        return _wrap(local, a, a.gshape, a.split, a._balanced)
    n = a.gshape[a.split]
    counts = _counts_of(a)
    segments = [[(n - d - c, c, 0, 1)] if c else [] for d, c in zip(_displs(counts), counts)]
    out_counts = _balanced_counts(a.comm, n)
    local = _exchange_segments(local, a.split, a.comm, segments, _ranges(out_counts))
    return _wrap(local, a, a.gshape, a.split, True)


def fliplr(a: DNDarray) -> DNDarray:
    """
    Reverse the order of columns (axis 1), as :func:`numpy.fliplr`.

    Parameters
    ----------
    a : DNDarray
        At least 2-D.

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If ``a`` has fewer than 2 dimensions.

    Examples
    --------
    >>> ht.fliplr(ht.array([[1, 2], [3, 4]])).tolist()
    [[2, 1], [4, 3]]
    """
    sanitize_in(a, "a")
    if a.ndim < 2:
        raise ValueError(f"fliplr needs an array of at least 2 dimensions, but a has {a.ndim}")
    return flip(a, 1)


def flipud(a: DNDarray) -> DNDarray:
    """
    Reverse the order of rows (axis 0), as :func:`numpy.flipud`.

    Parameters
    ----------
    a : DNDarray
        At least 1-D.

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If ``a`` is 0-d.

    Examples
    --------
    >>> ht.flipud(ht.array([[1, 2], [3, 4]], split=0)).tolist()
    [[3, 4], [1, 2]]
    """
    sanitize_in(a, "a")
    if a.ndim < 1:
        raise ValueError("flipud needs an array of at least 1 dimension, but a is 0-d")
    return flip(a, 0)


def rot90(m: DNDarray, k: int = 1, axes: Sequence[int] = (0, 1)) -> DNDarray:
    """
    Rotate an array by 90 degrees ``k`` times in the plane of ``axes``, as :func:`numpy.rot90`
    (from the first axis towards the second).

    Built from :func:`flip` and :func:`transpose`: data moves only when the split axis is flipped.

    Parameters
    ----------
    m : DNDarray
        At least 2-D.
    k : int
        Number of rotations (negative: clockwise).
    axes : pair of int
        The plane of rotation; the two axes must differ.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``k`` is not an integer.
    ValueError
        If ``axes`` is not two different axes in range, or ``m`` has fewer than 2 dimensions.

    Examples
    --------
    >>> ht.rot90(ht.array([[1, 2], [3, 4]])).tolist()
    [[2, 4], [1, 3]]
    """
    sanitize_in(m, "m")
    if not _is_int(k):
        raise TypeError(f"k must be an integer, but was {type(k).__name__}")
    if not isinstance(axes, (tuple, list)) or len(axes) != 2:
        raise ValueError(f"axes must be a pair of axes, but was {axes!r}")
    if m.ndim < 2:
        raise ValueError(f"rot90 needs an array of at least 2 dimensions, but m has {m.ndim}")
    first = sanitize_axis(m.gshape, axes[0], name="axes")
    second = sanitize_axis(m.gshape, axes[1], name="axes")
    if first == second:
        raise ValueError(f"axes must be different, but were {tuple(axes)}")
    k = int(k) % 4
    if k == 0:
        return _wrap(m.larray.clone(), m, m.gshape, m.split, m._balanced)
    if k == 2:
        return flip(m, (first, second))
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return transpose(flip(m, second), order)
    return flip(transpose(m, order), second)


def _normalize_shifts(shift, axis, ndim: int, shape) -> dict:
    """``{axis: total shift}`` from NumPy's broadcastable ``shift`` and ``axis``."""
    shifts = list(shift) if isinstance(shift, (tuple, list)) else [shift]
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    for s in shifts:
        if not _is_int(s):
            raise TypeError(f"shift must be an integer or a sequence of integers, but was {s!r}")
    if len(shifts) != len(axes):
        if len(shifts) == 1:
            shifts = shifts * len(axes)
        elif len(axes) == 1:
            axes = axes * len(shifts)
        else:
            raise ValueError(
                f"shift and axis must have the same length or length 1, but have {len(shifts)} "
                f"and {len(axes)}"
            )
    total = {}
    for s, ax in zip(shifts, axes):
        ax = sanitize_axis(shape, ax)
        total[ax] = total.get(ax, 0) + int(s.__index__())
    return total


def roll(x: DNDarray, shift, axis: Union[None, int, Tuple[int, ...]] = None) -> DNDarray:
    """
    Roll elements along the given axes (elements that leave at one end come back at the other),
    as :func:`numpy.roll`.

    Along the split axis each process sends only the rows that land in another process's range
    (the layout is kept): at most one copy of the data moves, in one all-to-all, where resplitting
    to another axis and back would move it twice. ``axis=None`` rolls the flattened array.

    Parameters
    ----------
    x : DNDarray
    shift : int or sequence of int
        Number of places; with a sequence, one per entry of ``axis`` (shifts along the same axis
        add up).
    axis : int or sequence of int, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``shift``/``axis`` are not integers.
    ValueError
        If ``shift`` and ``axis`` differ in length (neither being of length 1) or an axis is out
        of range.

    Examples
    --------
    >>> ht.roll(ht.arange(5, split=0), 2).tolist()
    [3, 4, 0, 1, 2]
    """
    sanitize_in(x, "x")
    if axis is None:
        totals = _normalize_shifts(shift, 0, 1, (x.size,))
        flat = flatten(x)
        rolled = roll(flat, totals.get(0, 0), 0)
        return reshape(rolled, x.gshape, new_split=x.split if x.ndim else None)
    if x.ndim == 0:
        _normalize_shifts(shift, axis, 0, ())
        return _wrap(x.larray.clone(), x, x.gshape, x.split, x._balanced)
    totals = _normalize_shifts(shift, axis, x.ndim, x.gshape)
    distributed = _is_distributed(x)
    n = x.gshape[x.split] if x.split is not None else 0
    shift_rows = totals.get(x.split, 0) % n if distributed and n else 0
    local_axes = [ax for ax in totals if not (distributed and ax == x.split)]
    if local_axes:
        shifts = [totals[ax] for ax in local_axes]
        local = torch.roll(signed_view(x.larray), shifts, local_axes).view(x.larray.dtype)
    else:
        local = x.larray if shift_rows else x.larray.clone()
    if shift_rows == 0:
        return _wrap(local, x, x.gshape, x.split, x._balanced)
    counts = _counts_of(x)
    segments = []
    for d, c in zip(_displs(counts), counts):
        start = (d + shift_rows) % n
        head = min(c, n - start)
        rank_segments = [(start, head, 0, 1)] if head else []
        if c - head:
            rank_segments.append((0, c - head, head, 1))
        segments.append(rank_segments)
    local = _exchange_segments(local, x.split, x.comm, segments, _ranges(counts))
    return _wrap(local, x, x.gshape, x.split, x._balanced)


# ---------------------------------------------------------------------------------------------
# growing
# ---------------------------------------------------------------------------------------------
_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_source_rows(positions: torch.Tensor, n: int, mode: str) -> torch.Tensor:
    """The source row of every padded position (``positions`` relative to the original rows)."""
    if mode == "edge":
        return positions.clamp(0, n - 1)
    if mode == "wrap":
        return positions % n
    if mode == "symmetric":
        folded = positions % (2 * n)
        return torch.where(folded >= n, 2 * n - 1 - folded, folded)
    # reflect (the edge row is not repeated)
    if n == 1:
        return torch.zeros_like(positions)
    period = 2 * (n - 1)
    folded = positions % period
    return torch.where(folded >= n, period - folded, folded)


def _pad_axis_local(local: torch.Tensor, axis: int, before: int, after: int, mode: str, values):
    n = local.shape[axis]
    if mode == "constant":
        parts = []
        for width, value in ((before, values[0]), (after, values[1])):
            shape = list(local.shape)
            shape[axis] = width
            parts.append(
                torch.full(shape, value, dtype=local.dtype, device=local.device) if width else None
            )
        return torch.cat([p for p in (parts[0], local, parts[1]) if p is not None], dim=axis)
    positions = torch.arange(-before, n + after, dtype=torch.int64, device=local.device)
    return local.index_select(axis, _pad_source_rows(positions, n, mode))


def _pad_axis_split(x: DNDarray, local: torch.Tensor, before: int, after: int, mode: str, values):
    """Pad the split axis: the new layout is balanced, every needed row moves once."""
    comm, axis = x.comm, x.split
    n = x.gshape[axis]
    counts = _counts_of(x)
    segments = [[(before + d, c, 0, 1)] if c else [] for d, c in zip(_displs(counts), counts)]
    if mode != "constant":
        for out_start, positions in (
            (0, torch.arange(-before, 0, dtype=torch.int64)),
            (before + n, torch.arange(n, n + after, dtype=torch.int64)),
        ):
            extra = _segments_from_rows(
                out_start, _pad_source_rows(positions, n, mode), counts, comm.size
            )
            for r in range(comm.size):
                segments[r].extend(extra[r])
    total = before + n + after
    out_counts = _balanced_counts(comm, total)
    targets = _ranges(out_counts)
    result = _exchange_segments(local, axis, comm, segments, targets)
    if mode == "constant":
        lo, hi = targets[comm.rank]
        for start, stop, value in ((0, before, values[0]), (before + n, total, values[1])):
            a, b = max(start, lo), min(stop, hi)
            if a < b:
                result.narrow(axis, a - lo, b - a).fill_(value)
    return result


def pad(array: DNDarray, pad_width, mode: str = "constant", constant_values=0) -> DNDarray:
    """
    Pad an array, as :func:`numpy.pad`.

    Axes are padded one after another (so corners are filled as NumPy fills them). A non-split
    axis is padded locally; the split axis is padded by sending every needed row (the original
    rows and, for the reflecting modes, the copies near the edges) to the processes of the
    balanced result layout in one all-to-all.

    Parameters
    ----------
    array : DNDarray
    pad_width : int or sequence
        Numbers of values padded before and after each axis, as NumPy takes them:
        ``((before_1, after_1), ...)``, ``(before, after)`` for all axes, or one integer.
    mode : str
        ``"constant"`` (``constant_values``), ``"edge"`` (the edge values), ``"reflect"`` (mirrored
        without the edge value), ``"symmetric"`` (mirrored with the edge value) or ``"wrap"``
        (periodic).
    constant_values : scalar or sequence
        The values for ``mode="constant"``, broadcast like ``pad_width``; cast to the array's dtype.

    Returns
    -------
    DNDarray
        Same dtype; balanced if the split axis is padded, else ``array``'s layout.

    Raises
    ------
    TypeError
        If ``array`` is not a DNDarray or ``pad_width`` is not integral.
    ValueError
        If ``mode`` is not supported, ``pad_width`` is negative or does not broadcast to
        ``(ndim, 2)``, or a non-constant mode pads an empty axis.

    Examples
    --------
    >>> ht.pad(ht.arange(3, split=0), (1, 2), mode="edge").tolist()
    [0, 0, 1, 2, 2, 2]
    """
    sanitize_in(array, "array")
    if not isinstance(mode, str) or mode not in _PAD_MODES:
        raise ValueError(f"mode {mode!r} is not supported; choose one of {_PAD_MODES}")
    widths = np.asarray(pad_width.tolist() if isinstance(pad_width, DNDarray) else pad_width)
    if widths.dtype.kind not in "iu" and not (widths.size == 0 and widths.dtype.kind == "f"):
        raise TypeError("pad_width must be of integral type")
    ndim = array.ndim
    try:
        widths = np.broadcast_to(widths, (ndim, 2)).astype(np.int64)
    except ValueError:
        raise ValueError(
            f"pad_width of shape {np.shape(pad_width)} cannot be broadcast to ({ndim}, 2)"
        ) from None
    if (widths < 0).any():
        raise ValueError(f"pad_width must not contain negative values, but was {widths.tolist()}")
    values = np.asarray(
        constant_values.tolist() if isinstance(constant_values, DNDarray) else constant_values
    )
    try:
        values = np.broadcast_to(values, (ndim, 2)).tolist()
    except ValueError:
        raise ValueError(
            f"constant_values of shape {values.shape} cannot be broadcast to ({ndim}, 2)"
        ) from None
    if mode != "constant":
        for ax in range(ndim):
            if array.gshape[ax] == 0 and widths[ax].any():
                raise ValueError(f"cannot extend empty axis {ax} using modes other than 'constant'")
    local = array.larray
    gshape = list(array.gshape)
    balanced = array._balanced
    distributed = _is_distributed(array)
    padded = False
    for ax in range(ndim):
        before, after = int(widths[ax][0]), int(widths[ax][1])
        if before == 0 and after == 0:
            continue
        if distributed and ax == array.split:
            current = _wrap(local, array, gshape, array.split, balanced)
            local = _pad_axis_split(current, local, before, after, mode, values[ax])
            balanced = True
        else:
            local = _pad_axis_local(local, ax, before, after, mode, values[ax])
        gshape[ax] += before + after
        padded = True
    if not padded:
        local = local.clone()
    return _wrap(local, array, gshape, array.split, balanced)


def _repeats_tensor(repeats, n: int) -> Union[int, torch.Tensor]:
    """``repeats`` as an int or as an int64 tensor of length ``n``."""
    if _is_int(repeats):
        value = int(repeats.__index__())
        if value < 0:
            raise ValueError(f"repeats must not be negative, but was {value}")
        return value
    if isinstance(repeats, DNDarray):
        repeats = repeats.numpy()
    values = np.asarray(repeats.cpu().numpy() if isinstance(repeats, torch.Tensor) else repeats)
    if values.dtype.kind not in "iu" and not (values.size == 0 and values.dtype.kind == "f"):
        raise TypeError(f"repeats must be integers, but had dtype {values.dtype}")
    if values.ndim > 1:
        raise ValueError(f"repeats must be an integer or 1-D, but had shape {values.shape}")
    values = values.reshape(-1).astype(np.int64)
    if (values < 0).any():
        raise ValueError("repeats must not contain negative values")
    if values.size == 1:
        return int(values[0])
    if values.size != n:
        raise ValueError(f"repeats has {values.size} entries, but the axis has length {n}")
    return torch.from_numpy(values)


def _repeat_along(local: torch.Tensor, reps: Union[int, torch.Tensor], axis: int) -> torch.Tensor:
    """``torch.repeat_interleave(local, reps, dim=axis)`` without its slow CPU kernel."""
    if isinstance(reps, int):
        # every row repeated: a broadcast view, copied once by reshape
        expanded = list(local.shape)
        expanded.insert(axis + 1, reps)
        shape = list(local.shape)
        shape[axis] *= reps
        return local.unsqueeze(axis + 1).expand(expanded).reshape(shape)
    if local.device.type == "cpu":
        # NumPy builds the index faster than torch's CPU repeat_interleave kernel (measured
        # 2.5x on one thread here, and ~100x when two threads compete for busy cores)
        counts = reps.cpu().numpy()
        index = torch.from_numpy(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    else:
        index = torch.repeat_interleave(reps.to(local.device))
    return local.index_select(axis, index.to(local.device))


def repeat(a: DNDarray, repeats, axis: Optional[int] = None) -> DNDarray:
    """
    Repeat each element, as :func:`numpy.repeat`.

    Along the split axis every process repeats its own rows, without communication; the result
    is therefore balanced only if the repeated counts happen to be (its ``balanced`` flag says
    which; ``balance_()`` fixes it in one collective). ``axis=None`` repeats the flattened array.

    Parameters
    ----------
    a : DNDarray
    repeats : int or 1-D sequence of int
        Repetitions of every element, or of each element along ``axis`` (one per element).
    axis : int, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``repeats`` is not integral.
    ValueError
        If ``repeats`` is negative or has the wrong length, or ``axis`` is out of range.

    Examples
    --------
    >>> ht.repeat(ht.arange(3, split=0), 2).tolist()
    [0, 0, 1, 1, 2, 2]
    """
    sanitize_in(a, "a")
    if axis is None:
        reps = _repeats_tensor(repeats, a.size)
        x = flatten(a) if a.ndim != 1 else a
        axis = 0
    else:
        axis = sanitize_axis(a.gshape, axis)
        if not isinstance(axis, int):
            raise TypeError(f"axis must be an integer or None, but was {axis!r}")
        if a.ndim == 0:
            return repeat(a, repeats, None)
        reps = _repeats_tensor(repeats, a.gshape[axis])
        x = a
    gshape = list(x.gshape)
    if isinstance(reps, int):
        gshape[axis] *= reps
    else:
        gshape[axis] = int(reps.sum())
    if not _is_distributed(x) or axis != x.split:
        local = _repeat_along(x.larray, reps, axis)
        return _wrap(local, x, gshape, x.split, x._balanced)
    counts = _counts_of(x)
    if isinstance(reps, int):
        out_counts = tuple(c * reps for c in counts)
        local_reps = reps
    else:
        displs = _displs(counts)
        out_counts = tuple(int(reps[d : d + c].sum()) for d, c in zip(displs, counts))
        rank = x.comm.rank
        local_reps = reps[displs[rank] : displs[rank] + counts[rank]]
    local = _repeat_along(x.larray, local_reps, axis)
    balanced = out_counts == _balanced_counts(x.comm, gshape[axis])
    return _wrap(local, x, gshape, x.split, balanced)


def tile(A: DNDarray, reps) -> DNDarray:
    """
    Repeat the whole array ``reps`` times along each axis, as :func:`numpy.tile`.

    If ``reps`` is longer than ``A.ndim``, ``A`` gets new leading axes; if shorter, ``reps`` is
    padded with ones in front. Along the split axis the copies are assembled in the balanced
    result layout in one all-to-all; the other axes are tiled locally.

    Parameters
    ----------
    A : DNDarray
    reps : int or sequence of int
        Non-negative repetitions per axis.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``A`` is not a DNDarray or ``reps`` is not integral.
    ValueError
        If ``reps`` contains negative values.

    Examples
    --------
    >>> ht.tile(ht.arange(3, split=0), 2).tolist()
    [0, 1, 2, 0, 1, 2]
    """
    sanitize_in(A, "A")
    reps = (reps,) if _is_int(reps) else reps
    if not isinstance(reps, (tuple, list)):
        raise TypeError(f"reps must be an integer or a sequence of integers, but was {reps!r}")
    for r in reps:
        if not _is_int(r):
            raise TypeError(f"reps must contain integers, but contained {r!r}")
    reps = [int(r.__index__()) for r in reps]
    if any(r < 0 for r in reps):
        raise ValueError(f"reps must not be negative, but was {tuple(reps)}")
    x = A
    if len(reps) > A.ndim:
        x = (
            reshape(A, (1,) * (len(reps) - A.ndim) + A.gshape)
            if A.ndim == 0
            else expand_dims(A, tuple(range(len(reps) - A.ndim)))
        )
    reps = [1] * (x.ndim - len(reps)) + reps
    local, balanced = x.larray, x._balanced
    gshape = [d * r for d, r in zip(x.gshape, reps)]
    if _is_distributed(x) and reps[x.split] != 1:
        n = x.gshape[x.split]
        if reps[x.split] == 0 or n == 0:
            local = local.narrow(x.split, 0, 0)
        else:
            counts = _counts_of(x)
            segments = [
                [(k * n + d, c, 0, 1) for k in range(reps[x.split])] if c else []
                for d, c in zip(_displs(counts), counts)
            ]
            out_counts = _balanced_counts(x.comm, n * reps[x.split])
            local = _exchange_segments(local, x.split, x.comm, segments, _ranges(out_counts))
        balanced = True
        reps[x.split] = 1
    local = local.repeat(reps) if local.ndim else local.clone()
    return _wrap(local, x, gshape, x.split, balanced)


# ---------------------------------------------------------------------------------------------
# sliding windows
# ---------------------------------------------------------------------------------------------
def unfold(a: DNDarray, axis: int, size: int, step: int = 1) -> DNDarray:
    """
    All windows of length ``size`` along ``axis``, ``step`` apart, with the semantics of
    :meth:`torch.Tensor.unfold`: ``axis`` becomes the window index and a new last axis of length
    ``size`` holds each window.

    Along the split axis a window belongs to the process that holds its first row; that process
    fetches the at most ``size - 1`` rows its windows need from the following processes (a halo,
    one all-to-all). The result is therefore not balanced in general (its ``balanced`` flag
    says so).

    Parameters
    ----------
    a : DNDarray
    axis : int
        The axis to slide along.
    size : int
        Window length, ``1 <= size <= a.shape[axis]``.
    step : int
        Distance between window starts, at least 1.

    Returns
    -------
    DNDarray
        Shape ``a.shape`` with ``a.shape[axis]`` replaced by ``(a.shape[axis] - size) // step + 1``,
        plus ``(size,)``; split like ``a``.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis``, ``size`` or ``step`` is not an integer.
    ValueError
        If ``a`` is 0-d, ``axis`` is out of range, ``size`` is not in ``[1, a.shape[axis]]`` or
        ``step`` is smaller than 1.

    Examples
    --------
    >>> ht.unfold(ht.arange(5, split=0), 0, 2, 1).tolist()
    [[0, 1], [1, 2], [2, 3], [3, 4]]
    """
    sanitize_in(a, "a")
    if a.ndim == 0:
        raise ValueError("cannot unfold a 0-d array")
    axis = sanitize_axis(a.gshape, axis)
    if not isinstance(axis, int):
        raise TypeError(f"axis must be an integer, but was {axis!r}")
    for name, value in (("size", size), ("step", step)):
        if not _is_int(value):
            raise TypeError(f"{name} must be an integer, but was {type(value).__name__}")
    size, step = int(size), int(step)
    n = a.gshape[axis]
    if not 1 <= size <= n:
        raise ValueError(f"size must be in [1, {n}] (the length of axis {axis}), but was {size}")
    if step < 1:
        raise ValueError(f"step must be at least 1, but was {step}")
    windows = (n - size) // step + 1
    gshape = list(a.gshape)
    gshape[axis] = windows
    gshape.append(size)
    if not _is_distributed(a) or axis != a.split:
        return _wrap(a.larray.unfold(axis, size, step), a, gshape, a.split, a._balanced)
    counts = _counts_of(a)
    window_counts, targets = [], []
    for d, c in zip(_displs(counts), counts):
        first = -(-d // step)
        last = min(windows, -(-(d + c) // step))
        if last > first:
            window_counts.append(last - first)
            targets.append((first * step, (last - 1) * step + size))
        else:
            window_counts.append(0)
            targets.append((0, 0))
    segments = [[(d, c, 0, 1)] if c else [] for d, c in zip(_displs(counts), counts)]
    rows = _exchange_segments(a.larray, axis, a.comm, segments, targets)
    if window_counts[a.comm.rank]:
        local = rows.unfold(axis, size, step)
    else:
        shape = list(rows.shape)
        shape[axis] = 0
        local = torch.empty(shape + [size], dtype=rows.dtype, device=rows.device)
    balanced = tuple(window_counts) == _balanced_counts(a.comm, windows)
    return _wrap(local, a, gshape, a.split, balanced)
