"""
Sorting and searching: ``sort``, ``argsort``, ``topk`` and ``searchsorted``.

Along an axis that is not the split axis everything is local: one copy of the block, sorted in
place. Along the split axis of an array with many lanes (all other axes; e.g. the columns of a
2-D array split and sorted along 0) whole lanes are dealt to the processes: one ``Alltoallw``
gives each process a balanced share of complete lanes, it sorts them in place, and one more
``Alltoallw`` restores the balanced layout (strided blocks travel as MPI datatypes, so at most two
block-sized tensors exist at once). Otherwise (few lanes, e.g. 1-D arrays, or lanes on both
sides of the split axis) the functions run a parallel sample sort whose output has the default
balanced layout:

1. every process sorts its block (lane by lane: all other axes are independent lanes);
2. every process draws ``p - 1`` regular samples per lane; one ``Allgather`` of the samples gives
   every process the same ``p - 1`` global splitters per lane. Samples and splitters are
   (value, global index) pairs, so even runs of equal values are cut evenly (constant data
   still ends up balanced);
3. every process cuts its sorted lanes at the splitters; a small ``Alltoall`` of the piece sizes,
   then ONE ``Alltoallv`` moves each piece (values, plus global indices where they are needed)
   to the process that owns its range;
4. every process merges what it received (a stable sort of ``p`` sorted runs);
5. an ``Allgather`` of the lane lengths, then ONE more ``Alltoallv`` moves the rows to the
   balanced layout (skipped when nothing has to move).

Order and ties
--------------
Values are compared through order-preserving integer *keys* (floats: their bit patterns with the
negative half flipped), which makes every dtype (bool, integers, float16, bfloat16, float32,
float64) sort with one code path and fixes the meaning of NaN and of ties:

- NaN sorts after everything (as in NumPy); ``descending=True`` is the exact reverse of the
  ascending value order, so NaNs come *first* (as in ``torch.sort`` and ``torch.topk``, which
  treat NaN as the largest value).
- ``-0.0`` and ``0.0`` are equal (as in NumPy).
- Ties keep their original order (the order of their global indices), in both directions: the
  result is always the stable order, whatever ``kind``/``stable`` ask for (any order is a valid
  answer for an unstable sort, and this one is identical at every process count).

Complex arrays cannot be sorted (torch has no complex ordering); a TypeError says so.

On the CPU the local sorts run NumPy's kernels on zero-copy views of the torch blocks (much faster
than ``torch.sort`` on CPU); on the GPU they run ``torch.sort``. The keys, the local kernels and
the sample sort live in the private :mod:`heat.core._sort_engine`, which sets.py shares.
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

from . import types
from ._operations import (
    _TORCH_TO_HEAT,
    _UNSIGNED_COMPUTE,
    align_local,
    from_order_key,
    order_key,
)
from ._sort_engine import (
    _argsort_,
    _argsort_last,
    _as_bytes,
    _check_sortable,
    _distributed_sort,
    _from_bytes,
    _from_keys,
    _from_keys_,
    _route,
    _sort_,
    _to_keys,
    _to_keys_,
    _topk_last,
)
from .communication import MPI
from .dndarray import DNDarray
from .sanitation import check_bool, sanitize_axis, sanitize_in

__all__ = ["argsort", "searchsorted", "sort", "topk"]


# =============================================================================================
# argument handling
# =============================================================================================
_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _check_kind(kind, stable) -> None:
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, but was {kind!r}")
    if stable not in (None, True, False):
        raise ValueError(f"stable must be None, True or False, but was {stable!r}")
    if kind is not None and stable is False:
        raise ValueError("kind and stable=False cannot be given together")


def _sort_axis(a: DNDarray, axis) -> Optional[int]:
    if axis is None:
        return None
    if a.ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
    axis = sanitize_axis(a.gshape, axis)
    if not isinstance(axis, int):
        raise TypeError(f"axis must be an integer or None, but was {axis!r}")
    return axis


def _lanes(local: torch.Tensor, axis: int) -> torch.Tensor:
    """The local block as ``(m, n)`` lanes along ``axis`` (axis moved last)."""
    moved = local.movedim(axis, -1)
    lanes = 1
    for d in moved.shape[:-1]:
        lanes *= d
    return moved.reshape(lanes, moved.shape[-1])


def _unlanes(lanes: torch.Tensor, lshape: Sequence[int], axis: int) -> torch.Tensor:
    """Inverse of :func:`_lanes` for a block of local shape ``lshape`` (length along axis may differ)."""
    moved_shape = tuple(d for i, d in enumerate(lshape) if i != axis) + (lanes.shape[-1],)
    return lanes.reshape(moved_shape).movedim(-1, axis).contiguous()


def _global_flat_index(x: DNDarray) -> torch.Tensor:
    """Global row-major flat index (int64) of every element of the local block, flattened."""
    device = x.larray.device
    lshape = x.lshape
    index = torch.zeros((), dtype=torch.int64, device=device)
    stride = 1
    offset = x.global_offset() if x.split is not None else 0
    for dim in range(x.ndim - 1, -1, -1):
        coords = torch.arange(lshape[dim], dtype=torch.int64, device=device)
        if dim == x.split:
            coords = coords + offset
        shape = [1] * x.ndim
        shape[dim] = lshape[dim]
        index = index + (coords * stride).view(shape)
        stride *= x.gshape[dim]
    return index.expand(lshape).reshape(-1)


def _wrap(local: torch.Tensor, a: DNDarray, gshape, split, balanced) -> DNDarray:
    return DNDarray(
        local,
        tuple(gshape),
        types.canonical_heat_type(local.dtype),
        split,
        a.device,
        a.comm,
        balanced,
    )


def _write(result: DNDarray, out: Optional[DNDarray]) -> DNDarray:
    if out is None:
        return result
    from ._operations import write_out

    return write_out(result, out)


def _check_out(out, gshape, name: str = "out") -> None:
    if out is not None:
        if not isinstance(out, DNDarray):
            raise TypeError(f"{name} must be a DNDarray, but was {type(out).__name__}")
        if out.gshape != tuple(gshape):
            raise ValueError(
                f"{name} has shape {out.gshape}, but the result has shape {tuple(gshape)}"
            )


# =============================================================================================
# sort / argsort
# =============================================================================================
def _lane_exchange_side(gshape: Sequence[int], axis: int, p: int) -> Optional[bool]:
    """
    Whether a sort along the split ``axis`` can deal whole lanes to the processes (see
    :func:`_sort_by_lane_exchange`): True if the lanes are the flattened axes after ``axis``
    (all axes before it have length 1), False if they are the axes before it (all after have
    length 1), None if neither, or if the lanes are too few to share evenly (every process
    needs one, and the largest share may exceed the mean by a quarter at most).
    """
    before = math.prod(gshape[:axis])
    after = math.prod(gshape[axis + 1 :])
    for lanes_after, lanes, other in ((True, after, before), (False, before, after)):
        if other == 1 and lanes >= p and 4 * p * -(-lanes // p) <= 5 * lanes:
            return lanes_after
    return None


def _sort_by_lane_exchange(
    a: DNDarray, axis: int, lanes_after: bool, descending: bool, want_indices: bool
) -> torch.Tensor:
    """
    Sort (or argsort) along the split ``axis`` by moving whole lanes: one ``Alltoallw`` gives
    every process complete lanes (a balanced share of them), which it sorts in place, and one
    more returns the sorted lanes to the balanced layout along ``axis``. The strided blocks
    travel as MPI datatypes straight out of and into the tensors (nothing is packed), so each
    process holds at most two block-sized tensors at once; no global indices or lane labels
    are built.

    The local block is viewed as ``(n, lanes)`` (``lanes_after``: the split axis leads) or as
    ``(lanes, n)`` (the split axis is the last one of length > 1). Returns the local block of
    the result (values, or int64 global indices along ``axis``).
    """
    comm = a.comm
    p, rank = comm.size, comm.rank
    dtype = a.larray.dtype
    device = a.larray.device
    n = a.gshape[axis]
    lanes = a.size // n
    row_counts, row_displs = a.counts_displs()
    out_counts, out_displs, out_lshape = comm.counts_displs_shape(a.gshape, axis)
    lane_counts, lane_displs, _ = comm.counts_displs_shape((lanes,), 0)
    sort_dim, lane_dim = (0, 1) if lanes_after else (1, 0)

    def shaped(length: int, lane_count: int) -> Tuple[int, int]:
        return (length, lane_count) if lanes_after else (lane_count, length)

    block = a.larray.reshape(shaped(row_counts[rank], lanes))
    owned = torch.empty(shaped(n, lane_counts[rank]), dtype=dtype, device=device)
    comm.Alltoallw(
        [block.narrow(lane_dim, lane_displs[d], lane_counts[d]) for d in range(p)],
        [owned.narrow(sort_dim, row_displs[s], row_counts[s]) for s in range(p)],
    )

    keys = _to_keys_(owned, merge_zero=want_indices, invert=descending)
    if want_indices:
        # the lanes are complete and in global order: local positions are the global indices
        result = _argsort_(keys, sort_dim)
    else:
        _sort_(keys, sort_dim)
        result = _from_keys_(keys, dtype, descending)
    del keys, owned  # (result may be a view of the same memory: freed with it)

    out = torch.empty(shaped(out_counts[rank], lanes), dtype=result.dtype, device=device)
    comm.Alltoallw(
        [result.narrow(sort_dim, out_displs[t], out_counts[t]) for t in range(p)],
        [out.narrow(lane_dim, lane_displs[s], lane_counts[s]) for s in range(p)],
    )
    return out.reshape(out_lshape)


def _sort_local(
    local: torch.Tensor, dim: int, descending: bool, want_indices: bool
) -> torch.Tensor:
    """Sort or argsort of a process-local tensor along ``dim``: one copy, sorted in place."""
    if (
        not descending
        and not want_indices
        and local.device.type == "cpu"
        and local.dtype in (torch.float32, torch.float64)
    ):
        # NumPy's float sort already puts NaN (any sign, any payload) last: no key transform
        values = local.clone(memory_format=torch.contiguous_format)
        _sort_(values, dim)
        return values
    keys = _to_keys_(
        local.clone(memory_format=torch.contiguous_format),
        merge_zero=want_indices,
        invert=descending,
    )
    if want_indices:
        return _argsort_(keys, dim)
    _sort_(keys, dim)
    return _from_keys_(keys, local.dtype, descending)


def _sort_impl(a: DNDarray, axis: Optional[int], descending: bool, want_indices: bool) -> DNDarray:
    """Shared body of sort (values) and argsort (global indices along the axis)."""
    comm = a.comm
    dtype = a.larray.dtype
    if axis is None and want_indices and a.split not in (None, 0) and comm.size > 1 and a.size:
        # ties are broken by (rank, local position), which is the flat order only for split 0
        from .layout import resplit

        a = resplit(a, 0)
    if axis is None:  # the flattened array
        gshape, split, axis_out = (a.size,), (None if a.split is None else 0), 0
        distributed = a.split is not None and comm.size > 1
    else:
        gshape, split, axis_out = a.gshape, a.split, axis
        distributed = split is not None and split == axis and comm.size > 1

    if distributed and a.size == 0:
        lshape = list(gshape)
        lshape[axis_out] = comm.counts_displs_shape(gshape, axis_out)[0][comm.rank]
        result_type = torch.int64 if want_indices else dtype
        return _wrap(
            torch.empty(lshape, dtype=result_type, device=a.larray.device), a, gshape, split, True
        )

    if not distributed:
        # one process or a local axis: local indices are the global ones
        if axis is None:
            result = _sort_local(a.larray.reshape(-1), 0, descending, want_indices)
            return _wrap(result, a, gshape, split, True)
        result = _sort_local(a.larray, axis, descending, want_indices)
        return _wrap(result, a, gshape, split, a._balanced)

    if axis is not None:
        lanes_after = _lane_exchange_side(a.gshape, axis, comm.size)
        if lanes_after is not None:
            result = _sort_by_lane_exchange(a, axis, lanes_after, descending, want_indices)
            return _wrap(result, a, gshape, split, True)
        local = _lanes(a.larray, axis)
    else:
        local = a.larray.reshape(1, -1)

    keys = _to_keys(local, merge_zero=want_indices)
    if descending:
        keys = ~keys
    out_counts = comm.counts_displs_shape(gshape, axis_out)[0]
    if want_indices:
        # split 0 (after the resplit above) for the flat case: the local block is one
        # contiguous range of global (flat) indices, starting at the global offset
        offset = a.global_offset()
        if axis is None:
            offset *= a.size // max(a.gshape[0], 1)
        _, result = _distributed_sort(comm, keys, [], out_counts, a.size, index_offset=offset)
    else:
        (sorted_keys,) = _distributed_sort(comm, keys, [], out_counts, a.size)
        result = _from_keys(~sorted_keys if descending else sorted_keys, dtype)
    if axis is None:
        return _wrap(result.reshape(-1), a, gshape, 0, True)
    return _wrap(_unlanes(result, a.lshape, axis), a, gshape, split, True)


def sort(
    a: DNDarray,
    axis: Optional[int] = -1,
    kind: Optional[str] = None,
    order=None,
    *,
    stable: Optional[bool] = True,
    descending: bool = False,
    out: Optional[DNDarray] = None,
) -> DNDarray:
    """
    A sorted copy of an array.

    Along the split axis this is a distributed sample sort (one all-to-all of the values, one to
    restore the balanced layout); along any other axis it is local. The result along the split
    axis always has the balanced layout.

    Parameters
    ----------
    a : DNDarray
        The array to sort.
    axis : int or None, optional
        The axis to sort along (default: the last). None sorts the flattened array; the result
        is then 1-D, split along 0 if ``a`` is split.
    kind : {None, 'quicksort', 'mergesort', 'heapsort', 'stable'}, optional
        Accepted for NumPy compatibility; the result is always the stable order.
    order : None
        NumPy's field order for structured arrays; heat has none, so it must be None.
    stable : bool, optional
        Default True, as the array API standard (the sort is always stable; only
        ``stable=False`` together with ``kind`` is rejected).
    descending : bool, optional
        Sort from the largest to the smallest value (heat extension). NaNs then come first:
        the result is the exact reverse of the ascending value order.
    out : DNDarray, optional
        Where to store the result (its layout and dtype are kept).

    Returns
    -------
    DNDarray
        The sorted values, same dtype and shape as ``a`` (1-D for ``axis=None``). Unlike HeAT's
        ``sort`` (which returned values and indices) this follows NumPy: use :func:`argsort`
        for the indices.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray, is complex, or ``descending`` is not a bool.
    ValueError
        If ``axis`` is out of bounds, ``kind``/``stable`` are invalid, or ``order`` is given.

    Notes
    -----
    NaNs sort to the end (as in NumPy); ``-0.0`` and ``0.0`` compare equal.

    Examples
    --------
    >>> x = ht.array([[3, 1, 2], [9, 7, 8]], split=1)
    >>> ht.sort(x)
    DNDarray([[1, 2, 3],
              [7, 8, 9]], dtype=ht.int64, device=cpu:0, split=1)
    >>> ht.sort(ht.array([2.0, float("nan"), 1.0], split=0), descending=True)
    DNDarray([nan, 2., 1.], dtype=ht.float32, device=cpu:0, split=0)
    """
    sanitize_in(a, "a")
    _check_sortable(a, "a")
    _check_kind(kind, stable)
    if order is not None:
        raise ValueError("order is only meaningful for structured arrays, which heat does not have")
    descending = check_bool(descending, "descending")
    axis = _sort_axis(a, axis)
    _check_out(out, (a.size,) if axis is None else a.gshape)
    return _write(_sort_impl(a, axis, descending, want_indices=False), out)


def argsort(
    a: DNDarray,
    axis: Optional[int] = -1,
    kind: Optional[str] = None,
    order=None,
    *,
    stable: Optional[bool] = True,
    descending: bool = False,
) -> DNDarray:
    """
    The indices that sort an array along an axis.

    The indices are global: along the split axis they point into the whole axis, not into the
    local block. The result (int64) has the layout :func:`sort` would give.

    Parameters
    ----------
    a : DNDarray
        The array.
    axis : int or None, optional
        The axis to sort along (default: the last); None: flat indices into the flattened array.
    kind : {None, 'quicksort', 'mergesort', 'heapsort', 'stable'}, optional
        Accepted for NumPy compatibility; the result is always the stable order.
    order : None
        Must be None (no structured arrays).
    stable : bool, optional
        Default True, as the array API standard: ties are always kept in their original order,
        so the result equals NumPy's ``argsort(..., kind='stable')``.
    descending : bool, optional
        Indices of a descending sort (heat extension): the values are ordered from the largest
        to the smallest (NaNs first), ties still in their original order (as
        ``torch.sort(..., descending=True, stable=True)``).

    Returns
    -------
    DNDarray
        int64 indices, same shape as ``a`` (1-D for ``axis=None``).

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray, is complex, or ``descending`` is not a bool.
    ValueError
        If ``axis`` is out of bounds, ``kind``/``stable`` are invalid, or ``order`` is given.

    Examples
    --------
    >>> ht.argsort(ht.array([3, 1, 2, 1], split=0))
    DNDarray([1, 3, 2, 0], dtype=ht.int64, device=cpu:0, split=0)
    >>> ht.argsort(ht.array([3, 1, 2, 1]), descending=True)
    DNDarray([0, 2, 1, 3], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(a, "a")
    _check_sortable(a, "a")
    _check_kind(kind, stable)
    if order is not None:
        raise ValueError("order is only meaningful for structured arrays, which heat does not have")
    descending = check_bool(descending, "descending")
    axis = _sort_axis(a, axis)
    return _sort_impl(a, axis, descending, want_indices=True)


# =============================================================================================
# topk
# =============================================================================================
# below this many candidate elements (lanes x k x processes) topk gathers the local candidates
# (one collective) instead of running the sample sort on them
_TOPK_GATHER_LIMIT = 1 << 16


def _pack_rows(columns: Sequence[torch.Tensor]) -> torch.Tensor:
    """Columns of equal shape ``(..., n)`` as one uint8 tensor ``(..., n, bytes per row)``."""
    return torch.cat([_as_bytes(c) for c in columns], dim=-1)


def _unpack_rows(rows: torch.Tensor, like: Sequence[torch.Tensor]) -> List[torch.Tensor]:
    result, start = [], 0
    for c in like:
        w = c.element_size()
        result.append(_from_bytes(rows[..., start : start + w], c.dtype))
        start += w
    return result


def topk(
    a: DNDarray,
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,
    out: Optional[Tuple[DNDarray, DNDarray]] = None,
) -> Tuple[DNDarray, DNDarray]:
    """
    The ``k`` largest (or smallest) elements along a dimension, and their global indices.

    Along the split dimension every process selects its local top ``k`` (a linear-time
    selection), then the candidates are combined: gathered when small (``lanes * k * processes``
    up to 65536), otherwise by the distributed sample sort. The result is split along ``dim``
    with the balanced layout of ``k`` elements; along other dimensions everything is local.

    Parameters
    ----------
    a : DNDarray
        The input (not complex).
    k : int
        How many elements to return, ``0 <= k <= a.shape[dim]``.
    dim : int, optional
        The dimension to select along (default: the last).
    largest : bool, optional
        The largest (default) or the smallest elements. NaN counts as the largest value (as in
        ``torch.topk``).
    sorted : bool, optional
        Accepted for torch compatibility; the result is always sorted (largest first for
        ``largest=True``), ties in the order of their indices.
    out : tuple of two DNDarrays, optional
        Where to store the values and the indices.

    Returns
    -------
    values : DNDarray
        The selected values (``a``'s dtype), shape of ``a`` with ``k`` along ``dim``.
    indices : DNDarray
        Their int64 indices along ``dim`` in ``a``.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or complex, ``k`` is not an integer, or ``largest`` /
        ``sorted`` are not bools.
    ValueError
        If ``dim`` is out of bounds or ``k`` is negative or larger than ``a.shape[dim]``.

    Examples
    --------
    >>> values, indices = ht.topk(ht.array([1, 5, 3, 4, 2], split=0), 2)
    >>> values
    DNDarray([5, 4], dtype=ht.int64, device=cpu:0, split=0)
    >>> indices
    DNDarray([1, 3], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(a, "a")
    _check_sortable(a, "a")
    if isinstance(k, bool) or not hasattr(k, "__index__"):
        raise TypeError(f"k must be an integer, but was {type(k).__name__}")
    k = k.__index__()
    largest = check_bool(largest, "largest")
    check_bool(sorted, "sorted")
    if a.ndim == 0:
        raise ValueError("dim is out of bounds for array of dimension 0")
    dim = sanitize_axis(a.gshape, dim, name="dim")
    if not isinstance(dim, int):
        raise TypeError(f"dim must be an integer, but was {dim!r}")
    if not 0 <= k <= a.gshape[dim]:
        raise ValueError(
            f"k must be in [0, {a.gshape[dim]}] (the length of dim {dim}), but was {k}"
        )
    gshape = list(a.gshape)
    gshape[dim] = k
    gshape = tuple(gshape)
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("out must be a tuple of two DNDarrays (values, indices)")
        _check_out(out[0], gshape, "out[0]")
        _check_out(out[1], gshape, "out[1]")
    if a.larray.dtype in _UNSIGNED_COMPUTE:
        # torch gathers no uint16/32/64: select among signed keys that order alike
        keys = order_key(a.larray)
        keyed = DNDarray(
            keys, a.gshape, _TORCH_TO_HEAT[keys.dtype], a.split, a.device, a.comm, a._balanced
        )
        key_values, indices = topk(keyed, k, dim, largest, sorted)
        values = DNDarray(
            from_order_key(key_values.larray, a.larray.dtype),
            gshape,
            a.dtype,
            key_values.split,
            a.device,
            a.comm,
            key_values._balanced,
        )
        return _write_pair(values, indices, out)

    comm = a.comm
    local = _lanes(a.larray, dim)
    m = local.shape[0]
    distributed = a.split == dim and comm.size > 1
    if distributed:
        out_counts = comm.counts_displs_shape(gshape, dim)[0]
        mine = out_counts[comm.rank]
    if distributed and a.size == 0:
        lshape = list(gshape)
        lshape[dim] = mine
        values = _wrap(local.new_empty(lshape), a, gshape, dim, True)
        indices = _wrap(
            torch.empty(lshape, dtype=torch.int64, device=local.device), a, gshape, dim, True
        )
        return _write_pair(values, indices, out)

    keys = _to_keys(local, merge_zero=True)
    if largest:
        keys = ~keys
    local_k = min(k, local.shape[-1])
    positions = _topk_last(keys, local_k)
    values = torch.take_along_dim(local, positions, dim=-1)
    if not distributed:
        lshape = list(a.lshape)
        lshape[dim] = k
        values = _wrap(_unlanes(values, lshape, dim), a, gshape, a.split, a._balanced)
        indices = _wrap(_unlanes(positions, lshape, dim), a, gshape, a.split, a._balanced)
        return _write_pair(values, indices, out)

    candidate_keys = torch.take_along_dim(keys, positions, dim=-1)
    candidate_index = positions + a.global_offset()
    if m * k * comm.size <= _TOPK_GATHER_LIMIT:
        columns = [candidate_keys, candidate_index, values]
        gathered = comm.allgather_tensors(_pack_rows(columns), axis=1)
        all_keys, all_index, all_values = _unpack_rows(gathered, columns)
        # gathered in rank order, each rank's candidates in (key, index) order: the stable order
        start = sum(out_counts[: comm.rank])
        chosen = _argsort_last(all_keys)[:, start : start + mine]
        index_lanes = torch.take_along_dim(all_index, chosen, dim=-1)
        value_lanes = torch.take_along_dim(all_values, chosen, dim=-1)
    else:
        _, index_lanes, value_lanes = _distributed_sort(
            comm, candidate_keys, [candidate_index, values], out_counts, m * k * comm.size
        )
    lshape = list(a.lshape)
    lshape[dim] = mine
    values = _wrap(_unlanes(value_lanes, lshape, dim), a, gshape, dim, True)
    indices = _wrap(_unlanes(index_lanes, lshape, dim), a, gshape, dim, True)
    return _write_pair(values, indices, out)


def _write_pair(values: DNDarray, indices: DNDarray, out) -> Tuple[DNDarray, DNDarray]:
    if out is None:
        return values, indices
    return _write(values, out[0]), _write(indices, out[1])


# =============================================================================================
# searchsorted
# =============================================================================================
def _search(sorted_keys: torch.Tensor, value_keys: torch.Tensor, side: str) -> torch.Tensor:
    """Local searchsorted of any-shaped ``value_keys`` in the 1-D ``sorted_keys`` (int64)."""
    if sorted_keys.device.type == "cpu":
        found = np.searchsorted(sorted_keys.numpy(), value_keys.contiguous().numpy(), side=side)
        return torch.from_numpy(np.asarray(found, dtype=np.int64)).reshape(value_keys.shape)
    flat = value_keys.reshape(-1)
    return torch.searchsorted(sorted_keys, flat, side=side).reshape(value_keys.shape)


def _block_starts(comm, keys: torch.Tensor) -> Tuple[List[int], torch.Tensor, List[int]]:
    """
    For a 1-D globally sorted array with local block ``keys``: the non-empty ranks, their first
    keys (int64 tensor) and the global offset of every rank's block. One allgather.
    """
    n = keys.shape[0]
    info = comm.allgather((n, int(keys[0]) if n else 0))
    offsets, total = [], 0
    for count, _ in info:
        offsets.append(total)
        total += count
    ranks = [r for r, (count, _) in enumerate(info) if count]
    firsts = torch.tensor([info[r][1] for r in ranks], dtype=torch.int64)
    return ranks, firsts, offsets


def _owners(
    firsts: torch.Tensor, ranks: Sequence[int], value_keys: torch.Tensor, side: str
) -> torch.Tensor:
    """
    The rank whose block of a globally sorted array decides ``value_keys`` (int64): the last
    non-empty block whose first key is below (``side='left'``) or not above (``'right'``) the
    value; the first non-empty block if there is none.
    """
    block = torch.searchsorted(firsts, value_keys.cpu().to(torch.int64), side=side) - 1
    block = block.clamp(min=0)
    return torch.tensor(list(ranks), dtype=torch.int64)[block].to(value_keys.device)


def _gather_by_index(a: DNDarray, index: torch.Tensor) -> torch.Tensor:
    """``a``'s values (a 1-D split array) at the global positions ``index`` (any process)."""
    comm = a.comm
    counts, displs = a.counts_displs()
    displs_t = torch.tensor(displs, dtype=torch.int64)
    owner = (torch.searchsorted(displs_t, index.cpu(), side="right") - 1).to(index.device)
    mine = displs[comm.rank]
    local = a.larray
    (values,) = _route(comm, owner, [index], lambda cols: [local[cols[0] - mine]])
    return values


def _apply_sorter(a: DNDarray, sorter) -> DNDarray:
    """``a[sorter]`` with ``a``'s layout (validated first; one collective for the range check)."""
    from .factories import array

    if not isinstance(sorter, DNDarray):
        try:
            sorter = array(sorter, device=a.device, comm=a.comm)
        except (TypeError, ValueError) as error:
            raise TypeError(f"sorter must be an array of integers: {error}") from None
    if not types.heat_type_is_exact(sorter.dtype) or sorter.dtype is types.bool:
        raise TypeError(f"sorter must hold integers, but has dtype {sorter.dtype.__name__}")
    if sorter.gshape != a.gshape:
        raise ValueError(
            f"sorter must have the shape of a {a.gshape}, but has shape {sorter.gshape}"
        )
    comm = a.comm
    local_sorter = sorter.larray.to(torch.int64)
    ok = (
        bool(((local_sorter >= 0) & (local_sorter < a.gshape[0])).all())
        if local_sorter.numel()
        else True
    )
    if sorter.split is not None and comm.size > 1:
        ok = comm.allreduce(ok, MPI.LAND)
    if not ok:
        raise ValueError("sorter index out of range")
    if a.split is None or comm.size == 1:
        if sorter.split is not None and comm.size > 1:
            local_sorter = comm.allgather_tensors(local_sorter, axis=0)
        return _wrap(a.larray[local_sorter], a, a.gshape, a.split, a._balanced)
    block = align_local(sorter, sorter.gshape, 0, a).to(torch.int64)
    return _wrap(_gather_by_index(a, block), a, a.gshape, a.split, a._balanced)


def searchsorted(a: DNDarray, v, side: str = "left", sorter=None) -> DNDarray:
    """
    Indices where the elements of ``v`` would be inserted into the sorted 1-D ``a`` to keep it
    sorted.

    ``a`` may be split: for a non-split ``v`` every process searches its block and one Allreduce
    adds the counts; for a split ``v`` each element travels to the one process whose block
    decides it and its answer travels back (two all-to-alls of ``v``'s size, no gathering of
    ``a``). The result has ``v``'s shape and layout.

    Parameters
    ----------
    a : DNDarray
        1-D, sorted ascending (NaNs last), unless ``sorter`` is given.
    v : DNDarray, scalar or array_like
        The values to insert.
    side : {'left', 'right'}, optional
        'left': the first suitable position; 'right': the last.
    sorter : DNDarray or array_like of int, optional
        Indices that sort ``a`` (as :func:`argsort` returns them).

    Returns
    -------
    DNDarray
        int64 insertion indices, shape and layout of ``v`` (0-d for a scalar ``v``).

    Raises
    ------
    TypeError
        If ``a`` is not array-like, ``a`` or ``v`` is complex, or ``sorter`` does not hold
        integers.
    ValueError
        If ``a`` is not 1-D, ``side`` is invalid, or ``sorter`` has the wrong shape or an index
        out of range.

    Examples
    --------
    >>> a = ht.array([1, 2, 2, 3, 5], split=0)
    >>> ht.searchsorted(a, ht.array([2, 4, 6]))
    DNDarray([1, 4, 5], dtype=ht.int64, device=cpu:0, split=None)
    >>> ht.searchsorted(a, 2, side="right")
    DNDarray(3, dtype=ht.int64, device=cpu:0, split=None)
    """
    from .factories import array

    if not isinstance(a, DNDarray):
        try:
            a = array(a)
        except (TypeError, ValueError) as error:
            raise TypeError(f"a must be a DNDarray or array-like: {error}") from None
    if a.ndim != 1:
        raise ValueError(f"a must be 1-D, but has {a.ndim} dimensions")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', but was {side!r}")
    _check_sortable(a, "a")
    raw_v = v
    if not isinstance(v, DNDarray):
        try:
            v = array(v, device=a.device, comm=a.comm)
        except (TypeError, ValueError) as error:
            raise TypeError(f"v must be a DNDarray, a scalar or array-like: {error}") from None
    _check_sortable(v, "v")
    common = types.result_type(a, raw_v if isinstance(raw_v, (bool, int, float)) else v)
    if sorter is not None:
        a = _apply_sorter(a, sorter)

    comm = a.comm
    torch_type = common.torch_type()
    value_keys = _to_keys(v.larray.to(torch_type), merge_zero=True)
    sorted_keys = _to_keys(a.larray.to(torch_type), merge_zero=True).reshape(-1)
    if a.split is None or comm.size == 1 or a.size == 0:
        if a.size == 0:
            found = torch.zeros(value_keys.shape, dtype=torch.int64, device=value_keys.device)
        else:
            found = _search(sorted_keys, value_keys, side)
        return _wrap(found, v, v.gshape, v.split, v._balanced)
    if v.split is None or comm.size == 1:
        # every process counts the elements of its block below each value; the counts add up
        partial = _search(sorted_keys, value_keys, side)
        found = comm.allreduce_tensor(partial, MPI.SUM)
        return _wrap(found, v, v.gshape, v.split, True)
    ranks, firsts, offsets = _block_starts(comm, sorted_keys)
    flat = value_keys.reshape(-1)
    owner = _owners(firsts, ranks, flat, side)
    offset = offsets[comm.rank]
    (found,) = _route(
        comm, owner, [flat], lambda cols: [_search(sorted_keys, cols[0], side) + offset]
    )
    return _wrap(found.reshape(value_keys.shape), v, v.gshape, v.split, v._balanced)
