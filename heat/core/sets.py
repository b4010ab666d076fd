"""
Set routines: ``unique`` (and the array-API ``unique_values``, ``unique_counts``,
``unique_inverse``, ``unique_all``), ``isin``, ``in1d``, ``intersect1d``, ``union1d`` and
``setdiff1d``.

Distributed unique values come from the sample-sort machinery of :mod:`heat.core.sorting`:
every process reduces its block to its local unique values, one all-to-all sends each local
unique value to the process that owns its value range (equal values always meet on one
process), the owners merge, and one more all-to-all balances the result. Results are identical at
every process count: the unique values of a split input are returned split along 0 with the
balanced layout; for a non-split input they are not split.

Values are compared as in NumPy's ``unique``: ``-0.0 == 0.0``; with ``equal_nan=True`` (the
default of ``unique``) all NaNs are one value, which sorts last; the array-API functions
(``unique_values``, ...) keep every NaN apart, as NumPy's do. In ``isin`` (and so in
``intersect1d`` and ``setdiff1d``) NaN is never found, as in NumPy, because NaN != NaN.
Complex arrays are not supported (they have no order).

``isin`` with a split ``test_elements`` never gathers it: its distributed unique values stay in
disjoint sorted blocks, and each element is answered by the one block that could hold it. The
trade-off is two all-to-alls of the (split) element array instead of one allgather of the test
set, which wins as soon as the unique test values do not fit comfortably on every process.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Optional, Tuple, Union

import numpy as np
import torch

from . import _sort_engine, types
from ._sort_engine import (
    _FLOAT_KEY_TYPES,
    _alltoallv_columns,
    _as_bytes,
    _from_bytes,
    _from_keys,
    _rebalance,
    _route,
    _sample_exchange,
    _to_keys,
)
from .communication import MPI
from .dndarray import DNDarray
from .sanitation import check_bool, sanitize_axis, sanitize_in
from .sorting import _block_starts, _global_flat_index, _owners, _wrap

__all__ = [
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
    "in1d",
    "intersect1d",
    "isin",
    "setdiff1d",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])

_INT64_MAX = torch.iinfo(torch.int64).max


# =============================================================================================
# helpers
# =============================================================================================
def _as_dndarray(obj, name: str, like: Optional[DNDarray] = None) -> DNDarray:
    if isinstance(obj, DNDarray):
        return obj
    from .factories import array

    try:
        return array(
            obj,
            device=None if like is None else like.device,
            comm=None if like is None else like.comm,
        )
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a DNDarray or array-like: {error}") from None


def _check_orderable(x: DNDarray, name: str) -> None:
    if types.heat_type_is_complexfloating(x.dtype):
        raise TypeError(f"{name} has the complex dtype {x.dtype.__name__}, which is not supported")


# Integer keys spanning at most this many values per key are counted (np.bincount, O(n + span))
# instead of sorted; wider spans make the count table outgrow the data, and sorting is as fast.
_COUNT_SPAN_PER_KEY = 0.5
# counting walks through the keys in pieces of at least this many (bounds its int64 temporaries)
_COUNT_CHUNK = 1 << 20


def _numpy_unique(
    keys: torch.Tensor, axis, want_index: bool, want_inverse: bool, want_counts: bool
):
    """NumPy's unique (its CPU kernel) on a CPU tensor: (values, first, inverse, counts), None where not asked."""
    found = np.unique(
        keys.numpy(),
        axis=axis,
        return_index=want_index,
        return_inverse=want_inverse,
        return_counts=want_counts,
    )
    found = found if isinstance(found, tuple) else (found,)
    values = torch.from_numpy(np.ascontiguousarray(found[0]))
    rest = [torch.from_numpy(np.asarray(f, dtype=np.int64).reshape(-1)) for f in found[1:]]
    first = rest.pop(0) if want_index else None
    inverse = rest.pop(0) if want_inverse else None
    counts = rest.pop(0) if want_counts else None
    return values, first, inverse, counts


def _counted_unique(array: np.ndarray, low: int, span: int, want_inverse: bool, want_counts: bool):
    """
    Unique values of the 1-D integer ``array``, all in ``[low, low + span)``, by counting: no
    sort, O(n + span). Returns NumPy ``(values, inverse, counts)``, None where not asked.
    """
    n = array.shape[0]
    chunk = max(_COUNT_CHUNK, span)

    def offsets(start: int) -> np.ndarray:
        # one piece of ``array - low`` as intp, the index type bincount and take work in
        piece = array[start : start + chunk]
        if low == 0 and piece.dtype == np.intp:
            return piece
        return np.subtract(piece, low, dtype=np.intp)

    tally = np.zeros(span, dtype=np.int64)
    for start in range(0, n, chunk):
        tally += np.bincount(offsets(start), minlength=span)
    present = np.flatnonzero(tally)
    values = (present + low).astype(array.dtype)
    inverse = None
    if want_inverse:
        position = np.zeros(span, dtype=np.int64)
        position[present] = np.arange(present.shape[0])
        inverse = np.empty(n, dtype=np.int64)
        for start in range(0, n, chunk):
            np.take(position, offsets(start), out=inverse[start : start + chunk])
    return values, inverse, tally[present] if want_counts else None


def _sorted_unique(array: np.ndarray, scratch: bool, want_counts: bool):
    """
    Unique values (and counts, else None) of the non-empty 1-D NumPy ``array``: one sort (in
    place if ``scratch``) and a comparison of neighbours.
    """
    if scratch:
        array.sort()
    else:
        array = np.sort(array)
    n = array.shape[0]
    new_value = np.empty(n, dtype=bool)
    new_value[0] = True
    np.not_equal(array[1:], array[:-1], out=new_value[1:])
    values = array[new_value]
    counts = np.diff(np.flatnonzero(new_value), append=n) if want_counts else None
    return values, counts


def _local_unique(
    keys: torch.Tensor,
    want_index: bool,
    want_inverse: bool,
    want_counts: bool,
    scratch: bool = False,
):
    """
    Sorted unique values of 1-D ``keys``; with the position of each one's first occurrence, the
    inverse (index of every element's unique value) and the counts, as requested (else None).

    ``scratch``: ``keys`` may be reordered in place (the caller no longer needs it).
    On CPU: integer keys of a narrow range are counted (O(n)); otherwise the values (and
    counts) come from one NumPy sort, and the index or inverse from one sort of (key, position)
    pairs packed into 64 bits (an argsort where the keys span more than 32 bits). NumPy's own
    ``unique`` is avoided: its hash table is far slower than a sort for many distinct values.
    """
    n = keys.shape[0]
    if keys.device.type != "cpu":
        values, inverse, counts = torch.unique(
            keys, sorted=True, return_inverse=True, return_counts=True
        )
        first = None
        if want_index:
            positions = torch.arange(n, dtype=torch.int64, device=keys.device)
            first = torch.full(
                (values.shape[0],), _INT64_MAX, dtype=torch.int64, device=keys.device
            )
            first.scatter_reduce_(0, inverse, positions, reduce="amin")
        return values, first, inverse if want_inverse else None, counts if want_counts else None
    if n == 0:
        return _numpy_unique(keys, None, want_index, want_inverse, want_counts)
    array = keys.numpy()
    low, high = int(array.min()), int(array.max())
    span = high - low + 1
    if not want_index and span <= n * _COUNT_SPAN_PER_KEY:
        values, inverse, counts = _counted_unique(array, low, span, want_inverse, want_counts)
        return _as_tensors(values, None, inverse, counts)
    if not want_index and not want_inverse:
        values, counts = _sorted_unique(array, scratch, want_counts)
        return _as_tensors(values, None, None, counts)
    if span <= 2**32 and n <= 2**32:
        # one fast sort of (key - low, position) packed into a uint64 gives everything at once
        packed = np.subtract(array, low, dtype=np.int64).view(np.uint64)
        packed <<= 32
        packed |= np.arange(n, dtype=np.uint64)
        packed.sort()
        order = (packed & 0xFFFFFFFF).view(np.int64)
        packed >>= 32
        values, first, inverse, counts = _unique_from_order(
            packed.view(np.int64), order, True, want_index, want_inverse, want_counts
        )
        values += low
        values = values.astype(array.dtype)
    else:
        # 64-bit keys of a wide range: NumPy's unstable (fast) argsort; the smallest position
        # of each run is its first occurrence
        order = np.argsort(array)
        values, first, inverse, counts = _unique_from_order(
            array[order], order, False, want_index, want_inverse, want_counts
        )
    return _as_tensors(values, first, inverse, counts)


def _as_tensors(*arrays):
    """The NumPy arrays as tensors (zero-copy); None stays None."""
    return tuple(None if a is None else torch.from_numpy(a) for a in arrays)


def _unique_from_order(
    sorted_keys: np.ndarray,
    order: np.ndarray,
    stable: bool,
    want_index: bool,
    want_inverse: bool,
    want_counts: bool,
):
    """
    Unique values, first positions, inverse and counts (None where not asked) of keys from
    their sorted 64-bit copy ``sorted_keys`` (overwritten) and the permutation ``order`` that
    sorts them. ``stable``: ties are in position order (else a run's first position is its
    smallest).
    """
    n = sorted_keys.shape[0]
    new_value = np.empty(n, dtype=bool)
    new_value[0] = True
    np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new_value[1:])
    starts = np.flatnonzero(new_value)
    values = sorted_keys[starts]
    first = None
    if want_index:
        first = order[starts] if stable else np.minimum.reduceat(order, starts)
    counts = np.diff(starts, append=n) if want_counts else None
    inverse = None
    if want_inverse:
        # the sorted keys are no longer needed: their memory holds the ranks
        ranks = sorted_keys.view(np.int64)
        np.cumsum(new_value, out=ranks)
        ranks -= 1
        inverse = np.empty(n, dtype=np.int64)
        inverse[order] = ranks
    return values, first, inverse, counts


def _distributed_unique(
    comm,
    keys: torch.Tensor,
    global_index: Optional[torch.Tensor],
    want_inverse: bool,
    want_counts: bool,
    rebalance: bool = True,
    global_size: int = 0,
    scratch: bool = False,
):
    """
    Global unique values of the 1-D local ``keys`` of all processes (at least one non-empty;
    ``global_size``, their total number or a bound, must be the same on every process).
    ``scratch``: ``keys`` may be reordered in place; pass it as a temporary (not a variable the
    caller keeps) and its memory is released as soon as the local unique values exist.

    Returns ``(values, first, inverse, counts, total)``: this process's block of the sorted
    unique keys (balanced if ``rebalance``; otherwise the owner blocks: disjoint, in rank
    order), the smallest ``global_index`` of each (if given), the global unique index of every
    local key (if ``want_inverse``), the global counts (if ``want_counts``), and the number of
    unique values. Collectives: the sample-sort exchange, an allgather of the block sizes, one
    all-to-all back for the inverse, one to rebalance.
    """
    want_index = global_index is not None
    values, first, inverse, counts = _local_unique(
        keys, want_index, want_inverse, want_counts, scratch
    )
    del keys
    payloads = []
    if want_counts:
        payloads.append(counts.view(1, -1))
    if want_index:
        payloads.append(global_index[first].view(1, -1))
    del counts, first
    # equal keys must meet on one process: no tie-breaking by position
    separate = global_size > _sort_engine._PACK_LIMIT
    columns, _, send_counts, recv_counts = _sample_exchange(
        comm, values.view(1, -1), payloads, tie_break=False, separate=separate
    )
    del values, payloads
    # the received keys are a new tensor: merge them in place
    need_inverse = want_inverse or want_counts or want_index
    merged, _, merged_inverse, _ = _local_unique(
        columns.pop(0), False, need_inverse, False, scratch=True
    )
    size = merged.shape[0]
    device = merged.device
    merged_columns = [merged]
    del merged
    if want_counts:
        total_counts = torch.zeros(size, dtype=torch.int64, device=device)
        total_counts.index_add_(0, merged_inverse, columns[0])
        merged_columns.append(total_counts)
    if want_index:
        firsts = torch.full((size,), _INT64_MAX, dtype=torch.int64, device=device)
        firsts.scatter_reduce_(0, merged_inverse, columns[-1], reduce="amin")
        merged_columns.append(firsts)
    del columns
    sizes = comm.allgather(size)
    offset, total = sum(sizes[: comm.rank]), sum(sizes)
    local_inverse = None
    if want_inverse:
        (global_ids,) = _alltoallv_columns(
            comm, [merged_inverse + offset], recv_counts, send_counts
        )
        local_inverse = global_ids[inverse]
    del merged_inverse, inverse
    if rebalance:
        out_counts = comm.counts_displs_shape((total,), 0)[0]
        all_sizes = torch.tensor(sizes, dtype=torch.int64).view(-1, 1)
        merged_columns = [
            c.reshape(-1)
            for c in _rebalance(
                comm, merged_columns, torch.tensor([size]), out_counts, all_sizes, separate
            )
        ]
    result = merged_columns.pop(0)
    result_counts = merged_columns.pop(0) if want_counts else None
    result_first = merged_columns.pop(0) if want_index else None
    return result, result_first, local_inverse, result_counts, total


def _chunk_1d(t: torch.Tensor, comm) -> torch.Tensor:
    """This process's balanced chunk of a 1-D tensor every process holds."""
    offset, lshape, _ = comm.chunk(tuple(t.shape), 0)
    return t.narrow(0, offset, lshape[0])


def _replicated_to_split(
    local: torch.Tensor, like: DNDarray, split: Optional[int], axis: int = 0
) -> DNDarray:
    """Wrap the whole array ``local`` (held by every process), keeping only this process's
    balanced block along ``axis`` when ``split`` is not None (no communication)."""
    gshape = tuple(local.shape)
    if split is None or like.comm.size == 1:
        return _wrap(local, like, gshape, None if split is None else axis, True)
    offset, lshape, _ = like.comm.chunk(gshape, axis)
    return _wrap(local.narrow(axis, offset, lshape[axis]).clone(), like, gshape, axis, True)


def _compress(x: DNDarray, mask: torch.Tensor) -> DNDarray:
    """The elements of the 1-D ``x`` where the local ``mask`` holds, balanced (one collective
    for the size, one to balance)."""
    local = x.larray[mask]
    if x.split is None or x.comm.size == 1:
        return _wrap(local, x, (local.shape[0],), x.split, True)
    total = x.comm.allreduce(int(local.shape[0]), MPI.SUM)
    result = _wrap(local, x, (total,), 0, None)
    return result.balance_()


def _flatten(x: DNDarray) -> DNDarray:
    if x.ndim == 1:
        return x
    from . import manipulations

    return manipulations.flatten(x)


def _unique_result(values, index, inverse, counts, return_index, return_inverse, return_counts):
    result = [values]
    if return_index:
        result.append(index)
    if return_inverse:
        result.append(inverse)
    if return_counts:
        result.append(counts)
    return result[0] if len(result) == 1 else tuple(result)


# =============================================================================================
# unique
# =============================================================================================
def unique(
    ar: DNDarray,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: Optional[int] = None,
    *,
    equal_nan: bool = True,
    sorted: bool = True,
) -> Union[DNDarray, Tuple[DNDarray, ...]]:
    """
    The sorted unique elements of an array (or unique slices along ``axis``).

    The result is the same at every process count. For ``axis=None`` on a split array the work
    is distributed (no process ever holds all values): local unique values, one all-to-all
    that brings equal values together, one all-to-all to balance; ``return_inverse`` sends each
    local unique value's global index back along the same route.

    Parameters
    ----------
    ar : DNDarray
        The input (not complex).
    return_index : bool, optional
        Also return the (global, flat for ``axis=None``) index of the first occurrence of each
        unique value.
    return_inverse : bool, optional
        Also return, for every element of ``ar``, the index of its unique value; it has ``ar``'s
        shape and layout for ``axis=None``, else it is 1-D along ``axis``.
    return_counts : bool, optional
        Also return how often each unique value occurs.
    axis : int, optional
        Unique slices along this axis (e.g. unique rows for 0) instead of unique elements of
        the flattened array. A split array is first resplit along ``axis`` if needed; then each
        process's unique slices are gathered on every process (which holds ``processes x
        local unique slices`` rows at most), so this path suits arrays with few distinct slices.
    equal_nan : bool, optional
        True (default): all NaNs are one unique value. False: every NaN is a unique value of
        its own (they sort last, in their original order).
    sorted : bool, optional
        Accepted for NumPy compatibility; the result is always sorted.

    Returns
    -------
    unique : DNDarray
        The unique values: split along 0 (along ``axis``) with the balanced layout if ``ar`` is
        split, else not split.
    unique_indices : DNDarray, optional
        int64, the layout of ``unique``'s first axis.
    unique_inverse : DNDarray, optional
        int64.
    unique_counts : DNDarray, optional
        int64, the layout of ``unique``'s first axis.

    Raises
    ------
    TypeError
        If ``ar`` is not a DNDarray or complex, or a flag is not a bool.
    ValueError
        If ``axis`` is out of bounds.

    Notes
    -----
    With ``axis`` given, slices holding NaN at the same places compare equal (NumPy keeps them
    apart).

    Examples
    --------
    >>> x = ht.array([3, 1, 3, 2, 1, 3], split=0)
    >>> ht.unique(x)
    DNDarray([1, 2, 3], dtype=ht.int64, device=cpu:0, split=0)
    >>> values, counts = ht.unique(x, return_counts=True)
    >>> counts
    DNDarray([2, 1, 3], dtype=ht.int64, device=cpu:0, split=0)
    >>> ht.unique(ht.array([[1, 2], [0, 5], [1, 2]]), axis=0)
    DNDarray([[0, 5],
              [1, 2]], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(ar, "ar")
    _check_orderable(ar, "ar")
    return_index = check_bool(return_index, "return_index")
    return_inverse = check_bool(return_inverse, "return_inverse")
    return_counts = check_bool(return_counts, "return_counts")
    check_bool(sorted, "sorted")
    nan_distinct = not check_bool(equal_nan, "equal_nan") and types.heat_type_is_realfloating(
        ar.dtype
    )
    if axis is not None:
        if ar.ndim == 0:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
        axis = sanitize_axis(ar.gshape, axis)
        if not isinstance(axis, int):
            raise TypeError(f"axis must be an integer or None, but was {axis!r}")
        return _unique_axis(ar, axis, return_index, return_inverse, return_counts)

    comm = ar.comm
    dtype = ar.larray.dtype
    split = None if ar.split is None else 0
    # float and bool keys are a new tensor, integer keys are the data itself
    scratch = ar.larray.is_floating_point() or ar.larray.dtype == torch.bool
    if ar.split is None or comm.size == 1 or ar.size == 0:
        # the keys are passed as a temporary, so that their memory goes when unique is done
        values, first, inverse, counts = _local_unique(
            _unique_keys(ar, nan_distinct), return_index, return_inverse, return_counts, scratch
        )
        like = ar
        values = _wrap(
            _unique_values(values, dtype, nan_distinct), like, (values.shape[0],), split, True
        )
        if return_index:
            first = _wrap(first, like, (first.shape[0],), split, True)
        if return_counts:
            counts = _wrap(counts, like, (counts.shape[0],), split, True)
        if return_inverse:
            inverse = _wrap(inverse.reshape(ar.lshape), like, ar.gshape, ar.split, ar._balanced)
        return _unique_result(
            values, first, inverse, counts, return_index, return_inverse, return_counts
        )

    global_index = _global_flat_index(ar) if return_index else None
    values, first, inverse, counts, total = _distributed_unique(
        comm,
        _unique_keys(ar, nan_distinct),
        global_index,
        return_inverse,
        return_counts,
        global_size=ar.size,
        scratch=scratch,
    )
    values = _wrap(_unique_values(values, dtype, nan_distinct), ar, (total,), 0, True)
    if return_index:
        first = _wrap(first, ar, (total,), 0, True)
    if return_counts:
        counts = _wrap(counts, ar, (total,), 0, True)
    if return_inverse:
        inverse = _wrap(inverse.reshape(ar.lshape), ar, ar.gshape, ar.split, ar._balanced)
    return _unique_result(
        values, first, inverse, counts, return_index, return_inverse, return_counts
    )


def _special_keys(dtype: torch.dtype) -> Tuple[int, int]:
    """The keys of +inf and of the canonical NaN of a float dtype."""
    both = _to_keys(torch.tensor([float("inf"), float("nan")], dtype=dtype))
    return int(both[0]), int(both[1])


def _unique_keys(ar: DNDarray, nan_distinct: bool) -> torch.Tensor:
    """
    Keys of the flattened local block. With ``nan_distinct`` (``equal_nan=False``) the keys are
    int64 and every NaN gets its own key above +inf, ordered by its global flat index, so NaNs
    stay apart and sort last in their original order (as in NumPy).
    """
    flat = ar.larray.reshape(-1)
    keys = _to_keys(flat)
    if not nan_distinct:
        return keys
    inf_key, _ = _special_keys(flat.dtype)
    keys = keys.to(torch.int64)
    nan = torch.isnan(flat)
    if bool(nan.any()):
        keys[nan] = inf_key + 1 + _global_flat_index(ar)[nan]
    return keys


def _unique_values(keys: torch.Tensor, dtype: torch.dtype, nan_distinct: bool) -> torch.Tensor:
    """The values of the unique keys made by :func:`_unique_keys`."""
    if nan_distinct:
        inf_key, nan_key = _special_keys(dtype)
        keys = torch.where(keys > inf_key, torch.full_like(keys, nan_key), keys)
        keys = keys.to(_FLOAT_KEY_TYPES[dtype])
    return _from_keys(keys, dtype)


# CPU unique rows rank the columns one by one (a few fast sorts each) from this many rows per
# column on; below it (few, wide rows) NumPy's unique(axis=0) is cheaper
_ROW_RANKS_MIN_ROWS_PER_COLUMN = 64


def _row_ranks(rows: torch.Tensor) -> torch.Tensor:
    """
    One int64 key per row of the 2-D integer CPU tensor ``rows`` (at least one column, fewer
    than ``2**31`` rows) whose order is the lexicographic order of the rows: the ranks of the
    columns, combined column by column (``key * distinct + rank``) and re-ranked (to at most
    ``n`` distinct keys) before the product could pass ``2**63``.
    """
    array = rows.numpy()
    n = array.shape[0]
    combined, distinct = None, 1
    for j in range(array.shape[1]):
        column = torch.from_numpy(np.ascontiguousarray(array[:, j]))
        values, _, rank, _ = _local_unique(column, False, True, False, True)
        count = values.shape[0]
        if combined is None:
            combined, distinct = rank.numpy(), count
            continue
        if distinct * count > 2**32 and distinct > n:
            values, _, ranked, _ = _local_unique(
                torch.from_numpy(combined), False, True, False, True
            )
            combined, distinct = ranked.numpy(), values.shape[0]
        combined *= count
        combined += rank.numpy()
        distinct *= count
    return torch.from_numpy(combined)


def _local_unique_rows(rows: torch.Tensor, want_index: bool, want_inverse: bool, want_counts: bool):
    """Unique rows of a 2-D key tensor (lexicographic order), as :func:`_local_unique`."""
    if rows.device.type == "cpu":
        n, width = rows.shape
        if width == 0 or n == 0 or n < _ROW_RANKS_MIN_ROWS_PER_COLUMN * width:
            return _numpy_unique(rows, 0, want_index, want_inverse, want_counts)
        _, first, inverse, counts = _local_unique(
            _row_ranks(rows), True, want_inverse, want_counts, True
        )
        return rows[first], first if want_index else None, inverse, counts
    n, width = rows.shape
    if n == 0 or width == 0:
        # torch.unique(dim=0) refuses 0-sized dimensions; rows of no columns are all equal
        distinct = min(n, 1)
        values = rows[:distinct]
        inverse = torch.zeros(n, dtype=torch.int64, device=rows.device)
        counts = torch.full((distinct,), n, dtype=torch.int64, device=rows.device)
        first = torch.zeros(distinct, dtype=torch.int64, device=rows.device)
        return (
            values,
            first if want_index else None,
            inverse if want_inverse else None,
            counts if want_counts else None,
        )
    values, inverse, counts = torch.unique(
        rows, sorted=True, return_inverse=True, return_counts=True, dim=0
    )
    first = None
    if want_index:
        positions = torch.arange(rows.shape[0], dtype=torch.int64, device=rows.device)
        first = torch.full((values.shape[0],), _INT64_MAX, dtype=torch.int64, device=rows.device)
        first.scatter_reduce_(0, inverse, positions, reduce="amin")
    return values, first, inverse if want_inverse else None, counts if want_counts else None


def _unique_axis(
    ar: DNDarray, axis: int, return_index: bool, return_inverse: bool, return_counts: bool
):
    """unique(..., axis=axis): unique slices, gathered (see :func:`unique`)."""
    comm = ar.comm
    dtype = ar.larray.dtype
    split_in = ar.split
    distributed = split_in is not None and comm.size > 1 and ar.size > 0
    if split_in is not None and split_in != axis and distributed:
        from .layout import resplit

        ar = resplit(ar, axis)
    if ar.size == 0 and split_in is not None and comm.size > 1:
        # no values anywhere: compute on an empty array of the global shape (no communication)
        local = torch.empty(ar.gshape, dtype=dtype, device=ar.larray.device)
    else:
        local = ar.larray
    moved = local.movedim(axis, 0)
    rest_shape = tuple(moved.shape[1:])
    width = 1
    for d in rest_shape:
        width *= d
    rows = _to_keys(moved.reshape(moved.shape[0], width))
    want_index = return_index or distributed
    values, first, inverse, counts = _local_unique_rows(
        rows, want_index, return_inverse, return_counts or distributed
    )
    inverse_split = None if split_in is None else 0

    if distributed:
        offset = ar.global_offset()
        meta = torch.stack(
            [counts, first + offset, torch.full_like(counts, comm.rank)], dim=1
        )  # (u, 3) int64
        # one allgather of (key row, count, first index, rank) rows, as bytes
        packed = torch.cat([_as_bytes(values).flatten(1), _as_bytes(meta).flatten(1)], dim=1)
        gathered = comm.allgather_tensors(packed, axis=0)
        key_bytes = width * values.element_size()
        all_rows = _from_bytes(
            gathered[:, :key_bytes].reshape(-1, width, values.element_size()), values.dtype
        )
        all_meta = _from_bytes(gathered[:, key_bytes:].reshape(-1, 3, 8), torch.int64)
        merged, _, merged_inverse, _ = _local_unique_rows(all_rows, False, True, False)
        size = merged.shape[0]
        total_counts = torch.zeros(size, dtype=torch.int64, device=merged.device)
        total_counts.index_add_(0, merged_inverse, all_meta[:, 0])
        firsts = torch.full((size,), _INT64_MAX, dtype=torch.int64, device=merged.device)
        firsts.scatter_reduce_(0, merged_inverse, all_meta[:, 1], reduce="amin")
        if return_inverse:
            mine = merged_inverse[all_meta[:, 2] == comm.rank]
            inverse = mine[inverse]
        values, first, counts = merged, firsts, total_counts
        inverse_balanced = ar._balanced
    else:
        inverse_balanced = True if split_in is None else ar._balanced

    result_split = None if split_in is None else axis
    slices = _from_keys(values, dtype).reshape((values.shape[0],) + rest_shape).movedim(0, axis)
    values_out = _replicated_to_split(slices.contiguous(), ar, result_split, axis)
    first_out = _replicated_to_split(first, ar, inverse_split) if return_index else None
    counts_out = _replicated_to_split(counts, ar, inverse_split) if return_counts else None
    inverse_out = None
    if return_inverse:
        if split_in is not None and comm.size > 1 and ar.size == 0:
            inverse = _chunk_1d(inverse, comm)
            inverse_balanced = True
        inverse_out = _wrap(inverse, ar, (ar.gshape[axis],), inverse_split, inverse_balanced)
    return _unique_result(
        values_out, first_out, inverse_out, counts_out, return_index, return_inverse, return_counts
    )


def unique_values(x: DNDarray) -> DNDarray:
    """
    The unique values of ``x`` (flattened), sorted (array API).

    Every NaN is a unique value of its own (``equal_nan=False``), as in NumPy.

    Parameters
    ----------
    x : DNDarray

    Returns
    -------
    DNDarray
        1-D, split along 0 (balanced) if ``x`` is split.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or complex.

    Examples
    --------
    >>> ht.unique_values(ht.array([2, 1, 2], split=0))
    DNDarray([1, 2], dtype=ht.int64, device=cpu:0, split=0)
    """
    return unique(x, equal_nan=False)


def unique_counts(x: DNDarray) -> UniqueCountsResult:
    """
    The unique values of ``x`` (flattened) and how often each occurs (array API).

    Every NaN is a unique value of its own (``equal_nan=False``), as in NumPy.

    Parameters
    ----------
    x : DNDarray

    Returns
    -------
    UniqueCountsResult
        ``(values, counts)``; both 1-D with the same layout.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or complex.

    Examples
    --------
    >>> ht.unique_counts(ht.array([2, 1, 2])).counts
    DNDarray([1, 2], dtype=ht.int64, device=cpu:0, split=None)
    """
    values, counts = unique(x, return_counts=True, equal_nan=False)
    return UniqueCountsResult(values, counts)


def unique_inverse(x: DNDarray) -> UniqueInverseResult:
    """
    The unique values of ``x`` (flattened) and, for every element, the index of its value
    among them (array API).

    Every NaN is a unique value of its own (``equal_nan=False``), as in NumPy.

    Parameters
    ----------
    x : DNDarray

    Returns
    -------
    UniqueInverseResult
        ``(values, inverse_indices)``; ``inverse_indices`` (int64) has ``x``'s shape and layout,
        and ``values[inverse_indices] == x``.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or complex.

    Examples
    --------
    >>> ht.unique_inverse(ht.array([[2, 1], [2, 3]], split=0)).inverse_indices
    DNDarray([[1, 0],
              [1, 2]], dtype=ht.int64, device=cpu:0, split=0)
    """
    values, inverse = unique(x, return_inverse=True, equal_nan=False)
    return UniqueInverseResult(values, inverse)


def unique_all(x: DNDarray) -> UniqueAllResult:
    """
    The unique values of ``x`` (flattened) with first-occurrence indices, inverse indices and
    counts (array API).

    Every NaN is a unique value of its own (``equal_nan=False``), as in NumPy.

    Parameters
    ----------
    x : DNDarray

    Returns
    -------
    UniqueAllResult
        ``(values, indices, inverse_indices, counts)``; ``indices`` are flat global indices.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or complex.

    Examples
    --------
    >>> ht.unique_all(ht.array([2, 1, 2])).indices
    DNDarray([1, 0], dtype=ht.int64, device=cpu:0, split=None)
    """
    values, indices, inverse, counts = unique(x, True, True, True, equal_nan=False)
    return UniqueAllResult(values, indices, inverse, counts)


# =============================================================================================
# membership
# =============================================================================================
def _member(value_keys: torch.Tensor, sorted_unique: torch.Tensor) -> torch.Tensor:
    """Whether each key occurs in the sorted unique 1-D ``sorted_unique`` (bool, same shape)."""
    if sorted_unique.shape[0] == 0:
        return torch.zeros(value_keys.shape, dtype=torch.bool, device=value_keys.device)
    flat = value_keys.reshape(-1).contiguous()
    position = torch.searchsorted(sorted_unique, flat).clamp(max=sorted_unique.shape[0] - 1)
    return (sorted_unique[position] == flat).reshape(value_keys.shape)


def _common_type(x1: DNDarray, x2: DNDarray):
    return types.result_type(x1, x2)


def isin(
    element,
    test_elements,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    kind: Optional[str] = None,
) -> DNDarray:
    """
    Whether each element of ``element`` occurs in ``test_elements``; same shape and layout as
    ``element``.

    A split ``test_elements`` is never gathered: its distributed unique values (one sample-sort
    exchange) stay in disjoint sorted blocks. A non-split ``element`` is then tested by every
    process against its block, and one Allreduce (logical or) of ``element``'s size combines the
    answers; a split ``element`` sends each value to the one process whose block could hold it
    and gets the answer back (two all-to-alls of ``element``'s local size).

    Parameters
    ----------
    element : DNDarray or array_like
        The values to look up.
    test_elements : DNDarray, array_like or scalar
        The values to look for (flattened).
    assume_unique : bool, optional
        Accepted for NumPy compatibility (no effect).
    invert : bool, optional
        Return the negation (``element not in test_elements``).
    kind : {None, 'sort', 'table'}, optional
        Accepted for NumPy compatibility (no effect).

    Returns
    -------
    DNDarray
        bool, ``element``'s shape and layout.

    Raises
    ------
    TypeError
        If the inputs are not array-like or complex, or a flag is not a bool.
    ValueError
        If ``kind`` is not one of the accepted values.

    Notes
    -----
    NaN is never found (NaN != NaN), as in NumPy; ``-0.0`` is found where ``0.0`` is.

    Examples
    --------
    >>> ht.isin(ht.array([1, 2, 3, 4], split=0), ht.array([4, 2], split=0))
    DNDarray([False,  True, False,  True], dtype=ht.bool, device=cpu:0, split=0)
    """
    element = _as_dndarray(element, "element")
    test_elements = _as_dndarray(test_elements, "test_elements", element)
    _check_orderable(element, "element")
    _check_orderable(test_elements, "test_elements")
    check_bool(assume_unique, "assume_unique")
    invert = check_bool(invert, "invert")
    if kind not in (None, "sort", "table"):
        raise ValueError(f"kind must be None, 'sort' or 'table', but was {kind!r}")
    comm = element.comm
    torch_type = _common_type(element, test_elements).torch_type()
    local = element.larray.to(torch_type)
    value_keys = _to_keys(local)
    test_keys = _to_keys(test_elements.larray.to(torch_type)).reshape(-1)

    if test_elements.split is None or comm.size == 1 or test_elements.size == 0:
        if test_elements.size == 0:
            found = torch.zeros(value_keys.shape, dtype=torch.bool, device=value_keys.device)
        elif test_keys.device.type == "cpu":
            found = torch.from_numpy(np.isin(value_keys.numpy(), test_keys.numpy())).reshape(
                value_keys.shape
            )
        else:
            found = torch.isin(value_keys, test_keys)
    else:
        blocks, _, _, _, _ = _distributed_unique(
            comm, test_keys, None, False, False, rebalance=False, global_size=test_elements.size
        )
        if element.split is None:
            found = comm.allreduce_tensor(_member(value_keys, blocks), MPI.LOR)
        else:
            ranks, firsts, _ = _block_starts(comm, blocks)
            flat = value_keys.reshape(-1)
            owner = _owners(firsts, ranks, flat, side="right")
            (found,) = _route(comm, owner, [flat], lambda cols: [_member(cols[0], blocks)])
            found = found.reshape(value_keys.shape)
    if local.is_floating_point():
        found = found & ~torch.isnan(local)
    if invert:
        found = ~found
    return _wrap(found, element, element.gshape, element.split, element._balanced)


def in1d(ar1, ar2, assume_unique: bool = False, invert: bool = False) -> DNDarray:
    """
    :func:`isin` of the flattened ``ar1`` (NumPy's former ``in1d``).

    Parameters
    ----------
    ar1 : DNDarray or array_like
    ar2 : DNDarray or array_like
    assume_unique : bool, optional
        No effect.
    invert : bool, optional
        Return ``ar1 not in ar2``.

    Returns
    -------
    DNDarray
        1-D bool of ``ar1.size`` elements.

    Raises
    ------
    TypeError
        As :func:`isin`.

    Examples
    --------
    >>> ht.in1d(ht.array([0, 1, 2, 5]), ht.array([1, 2]))
    DNDarray([False,  True,  True, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    ar1 = _as_dndarray(ar1, "ar1")
    return _flatten(isin(ar1, ar2, assume_unique=assume_unique, invert=invert))


# =============================================================================================
# set operations on 1-D results
# =============================================================================================
def _any_split(*arrays: DNDarray) -> bool:
    return any(a.split is not None for a in arrays)


def _spread(x: DNDarray, split: bool) -> DNDarray:
    """A non-split 1-D result as split along 0 (local slicing) when ``split`` asks for it."""
    if not split or x.split is not None:
        return x
    return _replicated_to_split(x.larray, x, 0)


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False):
    """
    The sorted unique values that occur in both arrays.

    Parameters
    ----------
    ar1, ar2 : DNDarray or array_like
        Flattened if not 1-D.
    assume_unique : bool, optional
        Accepted for NumPy compatibility (no effect: the inputs are always made unique).
    return_indices : bool, optional
        Also return the flat indices of the first occurrences of the common values in ``ar1``
        and in ``ar2``.

    Returns
    -------
    intersect1d : DNDarray
        In the promoted dtype; split along 0 (balanced) if an input is split.
    comm1, comm2 : DNDarray, optional
        int64 indices into ``ar1`` and ``ar2``, same layout.

    Raises
    ------
    TypeError
        If the inputs are not array-like or complex.

    Examples
    --------
    >>> ht.intersect1d(ht.array([1, 3, 4, 3], split=0), ht.array([3, 1, 2, 1]))
    DNDarray([1, 3], dtype=ht.int64, device=cpu:0, split=0)
    """
    ar1 = _as_dndarray(ar1, "ar1")
    ar2 = _as_dndarray(ar2, "ar2", ar1)
    _check_orderable(ar1, "ar1")
    _check_orderable(ar2, "ar2")
    check_bool(assume_unique, "assume_unique")
    return_indices = check_bool(return_indices, "return_indices")
    common = _common_type(ar1, ar2)
    split = _any_split(ar1, ar2)
    x1 = ar1.astype(common, copy=False)
    x2 = ar2.astype(common, copy=False)
    if not return_indices:
        values = unique(x1)
        return _spread(_compress(values, isin(values, x2).larray), split)
    values1, index1 = unique(x1, return_index=True)
    keep1 = isin(values1, x2).larray
    values2, index2 = unique(x2, return_index=True)
    keep2 = isin(values2, x1).larray
    result = _spread(_compress(values1, keep1), split)
    return (
        result,
        _spread(_compress(index1, keep1), split),
        _spread(_compress(index2, keep2), split),
    )


def union1d(ar1, ar2) -> DNDarray:
    """
    The sorted unique values that occur in either array.

    Split inputs are never gathered: every process contributes its blocks (its balanced chunk
    of a non-split input) to one distributed unique.

    Parameters
    ----------
    ar1, ar2 : DNDarray or array_like
        Flattened if not 1-D.

    Returns
    -------
    DNDarray
        In the promoted dtype; split along 0 (balanced) if an input is split.

    Raises
    ------
    TypeError
        If the inputs are not array-like or complex.

    Examples
    --------
    >>> ht.union1d(ht.array([-1, 0, 1], split=0), ht.array([-2, 0, 2]))
    DNDarray([-2, -1,  0,  1,  2], dtype=ht.int64, device=cpu:0, split=0)
    """
    ar1 = _as_dndarray(ar1, "ar1")
    ar2 = _as_dndarray(ar2, "ar2", ar1)
    _check_orderable(ar1, "ar1")
    _check_orderable(ar2, "ar2")
    common = _common_type(ar1, ar2)
    torch_type = common.torch_type()
    comm = ar1.comm
    split = _any_split(ar1, ar2)
    if not split or comm.size == 1 or ar1.size + ar2.size == 0:
        keys = torch.cat([_to_keys(a.larray.to(torch_type).reshape(-1)) for a in (ar1, ar2)])
        values, _, _, _ = _local_unique(keys, False, False, False, scratch=True)
        result = _wrap(_from_keys(values, torch_type), ar1, (values.shape[0],), None, True)
        return _spread(result, split)
    parts = []
    for a in (ar1, ar2):
        flat = a.larray.to(torch_type).reshape(-1)
        parts.append(_to_keys(flat if a.split is not None else _chunk_1d(flat, comm)))
    values, _, _, _, total = _distributed_unique(
        comm,
        torch.cat(parts),
        None,
        False,
        False,
        global_size=ar1.size + ar2.size,
        scratch=True,
    )
    return _wrap(_from_keys(values, torch_type), ar1, (total,), 0, True)


def setdiff1d(ar1, ar2, assume_unique: bool = False) -> DNDarray:
    """
    The values of ``ar1`` that are not in ``ar2``: sorted and unique, or, with
    ``assume_unique``, the elements of the flattened ``ar1`` in their original order.

    Parameters
    ----------
    ar1, ar2 : DNDarray or array_like
    assume_unique : bool, optional
        ``ar1`` is known to be unique: skip the unique step (the order of ``ar1`` is kept).

    Returns
    -------
    DNDarray
        ``ar1``'s dtype; split along 0 (balanced) if an input is split.

    Raises
    ------
    TypeError
        If the inputs are not array-like or complex.

    Notes
    -----
    NaNs of ``ar1`` are kept (NaN is never found in ``ar2``), as in NumPy.

    Examples
    --------
    >>> ht.setdiff1d(ht.array([5, 1, 3, 1, 4], split=0), ht.array([3, 9]))
    DNDarray([1, 4, 5], dtype=ht.int64, device=cpu:0, split=0)
    """
    ar1 = _as_dndarray(ar1, "ar1")
    ar2 = _as_dndarray(ar2, "ar2", ar1)
    _check_orderable(ar1, "ar1")
    _check_orderable(ar2, "ar2")
    assume_unique = check_bool(assume_unique, "assume_unique")
    split = _any_split(ar1, ar2)
    values = _flatten(ar1) if assume_unique else unique(ar1)
    keep = isin(values, ar2, invert=True).larray
    return _spread(_compress(values, keep), split)
