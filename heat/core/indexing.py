"""
Indexing of DNDarrays: ``x[key]`` and ``x[key] = value`` with NumPy's rules, ``nonzero`` and
``where``.

How a key is served depends on what it does to the split axis:

- Basic indexing (integers, slices, ``...``, ``None``) is local slicing plus metadata. A slice of
  the split axis keeps the result split (possibly unbalanced; ``balanced`` is computed exactly from
  the global layout, without communication). A negative step along the split axis reverses the
  blocks with one all-to-all into the balanced layout. An integer on the split axis leaves the data
  with one process: it broadcasts the result (one ``Bcast``), which is not split.
- A boolean mask is applied locally. When the split axis is the mask's first axis, the masked
  elements of each process already are a contiguous piece of the global order, so the result is
  split along the masked axis without communication (only the total count is reduced if the mask
  itself is distributed). When the split axis is a later axis of the mask, the elements are put
  into global order with one all-gather of per-row counts and one all-to-all.
- Advanced (integer array) indexing of non-split axes is local. Along the split axis the result
  is split along the first axis of the (broadcast) index, in balanced blocks. When every process
  holds the whole index, each one computes which of its rows every block needs and where they
  land: one all-to-all of the rows, no exchange of indices. A distributed index is routed to the
  owners (all-to-all of the indices, the owners answer with the values, all-to-all back).

On CPU, boolean selection goes through NumPy: torch's first turns the mask into int64 coordinates
(or prefix sums), up to 16 bytes per mask element; NumPy writes the selected values directly and
releases the GIL, so row blocks are selected on the process's threads.

All checks (index bounds, mask shapes, too many indices, value shapes) are done from global
information before any data moves, so a bad key raises the same ``IndexError`` on every rank.
"""

from __future__ import annotations

import bisect
import math
from typing import Optional, Sequence, Tuple, Union

import numpy as np
import torch

from . import types
from ._operations import (
    _UNSIGNED_TYPES,
    align_local,
    as_replicated_array,
    signed_bits,
    unsigned_from_bits,
)
from ._redistribution import balanced_counts as _balanced_counts
from ._redistribution import displacements as _displs
from .dndarray import DNDarray
from .parallel import run_pieces
from .sanitation import broadcast_shapes, sanitize_in

__all__ = ["nonzero", "take", "take_along_axis", "where"]

# kinds of key entries
_NEW, _ELLIPSIS, _BOOL0, _INT, _SLICE, _ARRAY, _MASK = range(7)

_INVALID_INDEX = (
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean "
    "arrays are valid indices"
)
_NON_INTEGER_ARRAY = "arrays used as indices must be of integer (or boolean) type"


# ---------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------
def _full_tensor(obj) -> torch.Tensor:
    """The whole of an index (tensor, or DNDarray gathered if it is distributed)."""
    if isinstance(obj, DNDarray):
        if obj.split is None or obj.comm.size == 1:
            return obj.larray
        from .layout import resplit

        return resplit(obj, None).larray
    return obj


def _is_distributed(obj) -> bool:
    return isinstance(obj, DNDarray) and obj.split is not None and obj.comm.size > 1


def _gshape_of(obj) -> Tuple[int, ...]:
    return obj.gshape if isinstance(obj, DNDarray) else tuple(obj.shape)


# Boolean selection on CPU tensors goes through NumPy's compress: torch's (``t[mask]``,
# ``masked_select``) first turns the mask into int64 coordinates or prefix sums, 8-16 bytes per
# mask element (measured: +38 MB for an 8 MB result of a 4e6-element mask), and NumPy's own
# ``a[mask]`` is ~4x slower than ``np.compress`` on the flattened mask (30 ms vs 7 ms for 4e6
# float32 here). compress writes straight into a preallocated result and releases the GIL, so
# row chunks are selected by several threads at once.
_THREADED_SELECT_MIN = 1 << 18  # elements below which one unchunked call is faster
_SELECT_CHUNK = 1 << 16  # elements per chunk: compress makes int64 indices of the chunk's selection


def _numpy_view(t: torch.Tensor) -> np.ndarray:
    """Zero-copy NumPy view of a CPU tensor (bfloat16, which NumPy lacks, as int16)."""
    if t.dtype is torch.bfloat16:
        t = t.view(torch.int16)
    return t.detach().resolve_conj().resolve_neg().numpy()


def _from_numpy(array: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    result = torch.from_numpy(array)
    return result.view(dtype) if dtype is torch.bfloat16 else result


def _count_true(mask: torch.Tensor) -> int:
    """The number of ``True`` entries (torch's ``sum`` makes an int64 copy of a CPU mask)."""
    if mask.device.type == "cpu":
        return int(np.count_nonzero(_numpy_view(mask)))
    return int(mask.sum())


def _select_masked(t: torch.Tensor, mask: torch.Tensor, dim: int) -> torch.Tensor:
    """
    ``t[(slice(None),) * dim + (mask,)]``: the elements of ``t`` where the boolean ``mask``
    (covering axes ``dim .. dim + mask.ndim``) is true, in row-major order.
    """
    key = (slice(None),) * dim
    if t.device.type != "cpu" or t.requires_grad:
        return t[key + (mask,)]
    values, flags = _numpy_view(t), _numpy_view(mask).reshape(-1)
    before, after = tuple(t.shape[:dim]), tuple(t.shape[dim + mask.ndim :])
    # the masked axes merged into one: (before, masked, after), a view when t is contiguous
    merged = values.reshape((math.prod(before), flags.size, math.prod(after)))
    if before or t.numel() < _THREADED_SELECT_MIN:
        selected = np.compress(flags, merged, axis=1)
        return _from_numpy(selected.reshape(before + (selected.shape[1],) + after), t.dtype)
    # chunks of the masked axis select consecutive pieces of the result (so that compress's index
    # temporaries stay small); each thread compresses its share of the chunks straight into the
    # preallocated result
    workers = max(1, min(torch.get_num_threads(), flags.size))
    row = max(1, math.prod(after))
    step = max(1, _SELECT_CHUNK // row)
    bounds = list(range(0, flags.size, step)) + [flags.size]
    sizes = [int(np.count_nonzero(flags[a:b])) for a, b in zip(bounds, bounds[1:])]
    starts = _displs(sizes)
    result = np.empty((1, sum(sizes)) + (merged.shape[2],), dtype=values.dtype)
    n_chunks = len(sizes)

    def select(worker: int) -> None:
        for chunk in range(n_chunks * worker // workers, n_chunks * (worker + 1) // workers):
            a, b = bounds[chunk], bounds[chunk + 1]
            target = result[:, starts[chunk] : starts[chunk] + sizes[chunk]]
            np.compress(flags[a:b], merged[:, a:b], axis=1, out=target)

    run_pieces(select, workers)
    return _from_numpy(result.reshape((result.shape[1],) + after), t.dtype)


def _exchange(send: torch.Tensor, send_rows: Sequence[int], recv_rows: Sequence[int], comm):
    """
    One ``Alltoallv`` of rows (dim 0) whose counts both sides know: ``send_rows[r]`` rows go to
    rank r, ``recv_rows[r]`` rows arrive from rank r. Returns the received rows, in rank order.
    """
    row = math.prod(send.shape[1:])
    send = send.contiguous()
    shape = (sum(recv_rows),) + tuple(send.shape[1:])
    recv = torch.empty(shape, dtype=send.dtype, device=send.device)
    comm.Alltoallv((send, [c * row for c in send_rows]), (recv, [c * row for c in recv_rows]))
    return recv


def _route_to_counts(
    local: torch.Tensor,
    axis: int,
    start: int,
    starts: Sequence[int],
    sizes: Sequence[int],
    target_counts: Sequence[int],
    comm,
) -> torch.Tensor:
    """
    Move contiguous pieces of a distributed sequence to the layout ``target_counts``.

    This process holds positions ``[start, start + local.shape[axis])`` of the sequence; rank r
    holds ``[starts[r], starts[r] + sizes[r])`` (the pieces are disjoint and cover the sequence,
    in any rank order). One ``Alltoallv``.
    """
    moved = local.movedim(axis, 0)
    target_displs = _displs(target_counts)
    n_local = moved.shape[0]
    send_rows = []
    for r in range(comm.size):
        lo = max(start, target_displs[r])
        hi = min(start + n_local, target_displs[r] + target_counts[r])
        send_rows.append(max(hi - lo, 0))
    # pieces of my range go out in position order, which is rank order of the targets
    me = comm.rank
    lo_me, hi_me = target_displs[me], target_displs[me] + target_counts[me]
    recv_rows = []
    for r in range(comm.size):
        lo = max(starts[r], lo_me)
        hi = min(starts[r] + sizes[r], hi_me)
        recv_rows.append(max(hi - lo, 0))
    received = _exchange(moved, send_rows, recv_rows, comm)
    # received pieces are in source-rank order; put them in position order
    pieces = list(torch.split(received, recv_rows, dim=0))
    order = sorted(range(comm.size), key=lambda r: starts[r])
    if order != list(range(comm.size)):
        received = torch.cat([pieces[r] for r in order], dim=0)
    return received.movedim(0, axis).contiguous()


def _ordered_rows(mask_local: torch.Tensor, axis: int, payload: torch.Tensor, comm):
    """
    Put the masked elements of a mask distributed along ``axis > 0`` into global (row-major) order.

    ``mask_local`` is this process's block of a boolean mask that is distributed along ``axis``
    (dims before ``axis`` are whole), ``payload`` has one row per ``True`` of ``mask_local`` (in
    local row-major order). Returns ``(rows, total)``: this process's share of the payload rows in
    global order, balanced, and the global number of ``True`` elements. One all-gather of per-row
    counts and one all-to-all.
    """
    device = mask_local.device
    prefix = math.prod(mask_local.shape[:axis])
    flat = mask_local.reshape(prefix, math.prod(mask_local.shape[axis:]))
    if flat.device.type == "cpu":  # torch's sum would make an int64 copy of the mask
        local_counts = torch.from_numpy(np.count_nonzero(_numpy_view(flat), axis=1)).long()
    else:
        local_counts = flat.sum(dim=1, dtype=torch.int64)
    all_counts = comm.allgather_tensors(local_counts.reshape(1, prefix), axis=0)  # (p, prefix)
    per_row = all_counts.sum(dim=0)
    total = int(per_row.sum())
    row_starts = torch.cumsum(per_row, 0) - per_row
    rank_cum = torch.cumsum(all_counts, dim=0)  # inclusive over ranks
    rank_starts = rank_cum - all_counts
    me = comm.rank
    # global position of every local True: start of its row + the row's elements on earlier
    # ranks + its place among this rank's elements of the row
    row_of = torch.repeat_interleave(torch.arange(prefix, device=device), local_counts)
    local_row_starts = torch.cumsum(local_counts, 0) - local_counts
    within = torch.arange(row_of.shape[0], device=device) - local_row_starts[row_of]
    positions = row_starts[row_of] + rank_starts[me][row_of] + within
    target_counts = _balanced_counts(comm, total)
    target_ends = torch.tensor(np.cumsum(target_counts), dtype=torch.int64, device=device)
    dest = torch.searchsorted(target_ends, positions, right=True)
    send_rows = torch.bincount(dest, minlength=comm.size).tolist()
    # which source holds each position of my target range (computable from the counts alone)
    target_start = sum(target_counts[:me])
    mine = torch.arange(target_start, target_start + target_counts[me], device=device)
    row_ends = torch.cumsum(per_row, 0)
    row_of_mine = torch.searchsorted(row_ends, mine, right=True)
    offset_in_row = mine - row_starts[row_of_mine]
    source = (rank_cum[:, row_of_mine] <= offset_in_row.unsqueeze(0)).sum(dim=0)
    recv_rows = torch.bincount(source, minlength=comm.size).tolist()
    received = _exchange(payload, send_rows, recv_rows, comm)
    if received.shape[0] == 0:
        return received, total
    rows = torch.empty_like(received)
    source_order = torch.argsort(source, stable=True)
    rows[source_order] = received
    return rows, total


class _View:
    """A local tensor with global metadata: shape, split axis and counts along it."""

    __slots__ = ("t", "gshape", "split", "counts", "balanced")

    def __init__(self, t, gshape, split, counts, balanced):
        self.t = t
        self.gshape = gshape
        self.split = split
        self.counts = counts
        self.balanced = balanced


# ---------------------------------------------------------------------------------------------
# parsing the key
# ---------------------------------------------------------------------------------------------
def _classify(item, device) -> Tuple[int, object]:
    """The kind of one key entry and its normalized value (tensors are int64 or bool)."""
    if item is None:
        return _NEW, None
    if item is Ellipsis:
        return _ELLIPSIS, None
    if isinstance(item, (bool, np.bool_)):
        return _BOOL0, bool(item)
    if isinstance(item, (int, np.integer)):
        return _INT, int(item)
    if isinstance(item, slice):
        return _SLICE, item
    if isinstance(item, DNDarray):
        if item.dtype is types.bool:
            if item.ndim == 0:
                return _BOOL0, bool(item.larray.item())
            return _MASK, item
        if not types.issubdtype(item.dtype, types.integer):
            raise IndexError(_NON_INTEGER_ARRAY)
        if item.ndim == 0:
            return _INT, int(item.larray.item())
        if item.dtype is not types.int64:
            item = item.astype(types.int64)
        return _ARRAY, item
    if isinstance(item, (list, tuple)):
        try:
            item = np.asarray(item)
        except ValueError:
            raise IndexError(_INVALID_INDEX) from None
        if item.size == 0 and item.dtype.kind == "f":
            item = item.astype(np.int64)
    if isinstance(item, np.ndarray):
        if item.dtype.kind == "b":
            tensor = torch.from_numpy(np.ascontiguousarray(item))
        elif item.dtype.kind in "iu":
            tensor = torch.from_numpy(np.ascontiguousarray(item.astype(np.int64, copy=False)))
        elif item.dtype.kind == "O":
            raise IndexError(_INVALID_INDEX)
        else:
            raise IndexError(_NON_INTEGER_ARRAY)
        item = tensor
    if isinstance(item, torch.Tensor):
        if item.dtype is torch.bool:
            if item.ndim == 0:
                return _BOOL0, bool(item.item())
            return _MASK, item.to(device)
        if item.is_floating_point() or item.is_complex():
            raise IndexError(_NON_INTEGER_ARRAY)
        if item.ndim == 0:
            return _INT, int(item.item())
        return _ARRAY, item.to(device=device, dtype=torch.int64)
    if hasattr(item, "__index__"):
        return _INT, item.__index__()
    raise IndexError(_INVALID_INDEX)


def _prepare(x: DNDarray, key):
    """
    Parse ``key`` for ``x``: validate it (identically on every rank), insert the new axes of
    ``None`` (and of boolean scalars) into a view of ``x``, and return ``(view, entries,
    advanced)``. ``entries`` holds one ``(kind, value, dim)`` per indexed axis group of the view.
    """
    if not isinstance(key, tuple):
        key = (key,)
    device = x.larray.device
    items = [_classify(item, device) for item in key]
    n_ellipsis = sum(1 for kind, _ in items if kind == _ELLIPSIS)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = 0
    for kind, value in items:
        if kind in (_INT, _SLICE, _ARRAY):
            consumed += 1
        elif kind == _MASK:
            consumed += value.ndim
    if consumed > x.ndim:
        raise IndexError(
            f"too many indices for array: array is {x.ndim}-dimensional, but {consumed} were "
            "indexed"
        )
    if n_ellipsis == 0:
        items.append((_ELLIPSIS, None))

    entries = []
    new_dims = []
    x_dim = 0
    y_dim = 0
    for kind, value in items:
        if kind == _ELLIPSIS:
            for _ in range(x.ndim - consumed):
                entries.append((_SLICE, slice(None), y_dim))
                x_dim += 1
                y_dim += 1
        elif kind == _NEW:
            new_dims.append(y_dim)
            entries.append((_SLICE, slice(None), y_dim))
            y_dim += 1
        elif kind == _BOOL0:
            # NumPy: a boolean scalar adds an axis of length 1 (True) or 0 (False) that is indexed
            new_dims.append(y_dim)
            index = torch.zeros(1 if value else 0, dtype=torch.int64, device=device)
            entries.append((_ARRAY, index, y_dim))
            y_dim += 1
        elif kind == _MASK:
            mask_shape = _gshape_of(value)
            for i, m in enumerate(mask_shape):
                n = x.gshape[x_dim + i]
                if m != n:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {x_dim + i}; size "
                        f"of axis is {n} but size of corresponding boolean axis is {m}"
                    )
            entries.append((_MASK, value, y_dim))
            x_dim += len(mask_shape)
            y_dim += len(mask_shape)
        else:
            n = x.gshape[x_dim]
            if kind == _INT:
                if not -n <= value < n:
                    raise IndexError(
                        f"index {value} is out of bounds for axis {x_dim} with size {n}"
                    )
                if value < 0:
                    value += n
            elif kind == _ARRAY and not _is_distributed(value):
                _check_bounds(_full_tensor(value), n, x_dim)
            entries.append((kind, value, y_dim))
            x_dim += 1
            y_dim += 1

    advanced = any(kind in (_ARRAY, _MASK) for kind, _, _ in entries)
    counts = x.counts_displs()[0] if x.split is not None else None
    t = x.larray
    gshape = list(x.gshape)
    split = x.split
    for pos in new_dims:
        t = t.unsqueeze(pos)
        gshape.insert(pos, 1)
        if split is not None and pos <= split:
            split += 1
    view = _View(t, tuple(gshape), split, counts, x._balanced if split is not None else True)
    return view, entries, advanced


def _check_bounds(index: torch.Tensor, n: int, axis: int) -> None:
    if index.numel() == 0:
        return
    low, high = int(index.min()), int(index.max())
    if low < -n:
        raise IndexError(f"index {low} is out of bounds for axis {axis} with size {n}")
    if high >= n:
        raise IndexError(f"index {high} is out of bounds for axis {axis} with size {n}")


# ---------------------------------------------------------------------------------------------
# basic indexing: the plan (no data touched), then get / set
# ---------------------------------------------------------------------------------------------
class _Plan:
    """What basic indexing does on this process (all slices turned into ascending ones)."""

    __slots__ = ("key", "flips", "gshape", "split", "counts", "reverse", "owner", "length")

    def __init__(self):
        self.key = []
        self.flips = []  # result axes whose order is reversed relative to the local selection
        self.gshape = []
        self.split = None  # split axis of the result
        self.counts = None  # per-rank selected counts along the result's split axis (ascending)
        self.reverse = False  # negative step along the split axis
        self.owner = None  # rank that holds an integer-indexed split axis
        self.length = 0  # length of the result along the split axis


def _ascending(start: int, step: int, length: int) -> Tuple[int, int]:
    """First index and positive step of the ascending walk over a slice's selection."""
    if step > 0:
        return start, step
    return start + (length - 1) * step, -step


def _plan(view: _View, entries, comm, keep_ints: bool) -> _Plan:
    """
    Plan basic indexing of ``view``. Array and mask entries (and integers if ``keep_ints``)
    keep their axes whole; they are handled by the advanced step.
    """
    plan = _Plan()
    rank = comm.rank
    for kind, value, dim in entries:
        if kind in (_ARRAY, _MASK) or (kind == _INT and keep_ints):
            width = len(_gshape_of(value)) if kind == _MASK else 1
            for d in range(dim, dim + width):
                if d == view.split:
                    plan.split = len(plan.gshape)
                    plan.counts = view.counts
                    plan.length = view.gshape[d]
                plan.key.append(slice(None))
                plan.gshape.append(view.gshape[d])
            continue
        n = view.gshape[dim]
        if kind == _INT:
            if dim == view.split:
                displs = _displs(view.counts)
                owner = bisect.bisect_right(displs, value) - 1
                while view.counts[owner] == 0:  # skip empty blocks that share the offset
                    owner -= 1
                plan.owner = owner
                plan.key.append(value - displs[owner] if rank == owner else 0)
            else:
                plan.key.append(value)
            continue
        start, stop, step = value.indices(n)
        length = len(range(start, stop, step))
        first, astep = _ascending(start, step, length)
        if dim == view.split:
            counts, local = [], None
            offset = 0
            for r, c in enumerate(view.counts):
                if length == 0:
                    j_lo = j_hi = 0
                else:
                    j_lo = max(0, -(-(offset - first) // astep))
                    j_hi = min(length, -(-(offset + c - first) // astep))
                cnt = max(0, j_hi - j_lo)
                counts.append(cnt)
                if r == rank:
                    a = first + j_lo * astep - offset
                    local = slice(a, a + (cnt - 1) * astep + 1, astep) if cnt > 0 else slice(0, 0)
                offset += c
            plan.split = len(plan.gshape)
            plan.counts = tuple(counts)
            plan.length = length
            plan.key.append(local)
            if step < 0:
                plan.reverse = True
                plan.flips.append(len(plan.gshape))
        else:
            if length == 0:
                plan.key.append(slice(0, 0))
            else:
                plan.key.append(slice(first, first + (length - 1) * astep + 1, astep))
                if step < 0:
                    plan.flips.append(len(plan.gshape))
        plan.gshape.append(length)
    plan.gshape = tuple(plan.gshape)
    return plan


def _reverse_blocks(local: torch.Tensor, plan: _Plan, comm) -> torch.Tensor:
    """
    Blocks of a negative-step selection along the split axis: this process's (already flipped)
    rows are positions ``[L - J - c, L - J)`` of the result; move them to the balanced layout.
    """
    length = plan.length
    ascending_starts = _displs(plan.counts)
    starts = [length - a - c for a, c in zip(ascending_starts, plan.counts)]
    me = comm.rank
    return _route_to_counts(
        local, plan.split, starts[me], starts, plan.counts, _balanced_counts(comm, length), comm
    )


def _basic_get(x: DNDarray, view: _View, entries) -> DNDarray:
    comm = x.comm
    plan = _plan(view, entries, comm, keep_ints=False)
    gshape = plan.gshape
    if plan.owner is not None:
        if comm.rank == plan.owner:
            result = view.t[tuple(plan.key)]
            result = result.flip(plan.flips) if plan.flips else result.clone()
            result = result.contiguous()
        else:
            result = torch.empty(gshape, dtype=view.t.dtype, device=view.t.device)
        if comm.size > 1:
            comm.Bcast(result, root=plan.owner)
        return DNDarray(result, gshape, x.dtype, None, x.device, comm, True)
    result = view.t[tuple(plan.key)]
    if plan.flips:
        result = result.flip(plan.flips)
    if plan.split is None:
        return DNDarray(result, gshape, x.dtype, None, x.device, comm, True)
    if plan.reverse and comm.size > 1:
        result = _reverse_blocks(result, plan, comm)
        balanced = True
    else:
        balanced = plan.counts == _balanced_counts(comm, plan.length)
    return DNDarray(result, gshape, x.dtype, plan.split, x.device, comm, balanced)


# ---------------------------------------------------------------------------------------------
# advanced indexing
# ---------------------------------------------------------------------------------------------
def _adjacent(adv_entries) -> bool:
    """Whether the advanced entries are next to each other (NumPy keeps their place then)."""
    end = None
    for kind, value, dim in adv_entries:
        if end is not None and dim != end:
            return False
        end = dim + (len(_gshape_of(value)) if kind == _MASK else 1)
    return True


class _Layout:
    """Where the broadcast index shape B and the remaining axes R go in the result."""

    def __init__(self, y_gshape, adv_dims, adjacent, bshape):
        self.adv_dims = adv_dims
        self.rest = [d for d in range(len(y_gshape)) if d not in adv_dims]
        self.bshape = tuple(bshape)
        nb = len(bshape)
        self.n_pre = sum(1 for d in self.rest if d < adv_dims[0]) if adjacent else 0
        pre = [y_gshape[d] for d in self.rest[: self.n_pre]]
        post = [y_gshape[d] for d in self.rest[self.n_pre :]]
        self.gshape = tuple(pre) + self.bshape + tuple(post)
        self.b_start = self.n_pre  # result axis of B's first axis
        self.nb = nb

    def out_axis(self, y_dim: int) -> int:
        """The result axis of a non-advanced axis of y."""
        pos = self.rest.index(y_dim)
        return pos if pos < self.n_pre else pos + self.nb

    def to_result(self, t: torch.Tensor) -> torch.Tensor:
        """(B..., R...) -> the result's axis order."""
        if self.n_pre == 0 or self.nb == 0:
            return t
        moved = t.movedim(tuple(range(self.nb)), tuple(range(self.n_pre, self.n_pre + self.nb)))
        return moved.contiguous()

    def from_result(self, t: torch.Tensor) -> torch.Tensor:
        """The result's axis order -> (B..., R...)."""
        if self.n_pre == 0 or self.nb == 0:
            return t
        return t.movedim(tuple(range(self.n_pre, self.n_pre + self.nb)), tuple(range(self.nb)))


def _index_sources(adv_entries, view: _View, gather: bool):
    """
    Per advanced axis of y: the index (a tensor, or a distributed DNDarray unless ``gather``).
    Masks become their nonzero coordinates. Returns ``(adv_dims, sources)``.
    """
    adv_dims, sources = [], []
    for kind, value, dim in adv_entries:
        if kind == _INT:
            adv_dims.append(dim)
            sources.append(torch.tensor(value, dtype=torch.int64, device=view.t.device))
        elif kind == _ARRAY:
            adv_dims.append(dim)
            sources.append(_full_tensor(value) if gather else value)
        else:
            k = len(_gshape_of(value))
            adv_dims.extend(range(dim, dim + k))
            if _is_distributed(value) and not gather:
                sources.extend(nonzero(value))
            else:
                sources.extend(torch.nonzero(_full_tensor(value), as_tuple=True))
    return adv_dims, sources


def _broadcast_index_shape(sources) -> Tuple[int, ...]:
    shapes = [_gshape_of(s) for s in sources]
    try:
        return broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing arrays could not be broadcast together with shapes "
            + " ".join(str(tuple(s)) for s in shapes)
        ) from None


def _check_source_bounds(sources, adv_dims, gshape, comm) -> None:
    """Bounds of distributed index arrays: checked locally, agreed on in one allreduce."""
    distributed = [(s, d) for s, d in zip(sources, adv_dims) if _is_distributed(s)]
    if not distributed:
        return
    bad = None
    for s, d in distributed:
        n = gshape[d]
        local = s.larray
        if local.numel() and (int(local.min()) < -n or int(local.max()) >= n):
            bad = (d, n)
            break
    all_bad = comm.allgather(bad)
    for entry in all_bad:
        if entry is not None:
            d, n = entry
            raise IndexError(f"index out of bounds for axis {d} with size {n}")


def _chunks(sources, bshape, comm):
    """
    This process's share of the broadcast index arrays, distributed along B's first axis.
    Returns ``(chunks, counts, balanced)``; every chunk has shape ``(counts[rank],) + B[1:]``.
    """
    from .layout import redistribute, resplit

    counts, balanced = None, True
    for s in sources:
        if (
            _is_distributed(s)
            and s.ndim == len(bshape)
            and s.split == 0
            and s.gshape[0] == bshape[0]
        ):
            counts = s.counts_displs()[0]
            balanced = s._balanced
            break
    if counts is None:
        counts = _balanced_counts(comm, bshape[0])
    me = comm.rank
    offset, count = sum(counts[:me]), counts[me]
    local_shape = (count,) + tuple(bshape[1:])
    chunks = []
    for s in sources:
        if _is_distributed(s) and s.ndim == len(bshape) and s.gshape[0] == bshape[0] != 1:
            if s.split != 0:
                s = resplit(s, 0)
            if s.counts_displs()[0] != tuple(counts):
                s = redistribute(s, counts)
            local = s.larray
        else:
            full = _full_tensor(s)
            local = torch.broadcast_to(full, bshape).narrow(0, offset, count)
        chunks.append(torch.broadcast_to(local, local_shape).to(torch.int64))
    return chunks, tuple(counts), balanced


def _take_local(t: torch.Tensor, adv_dims, indices) -> torch.Tensor:
    """``t`` indexed by ``indices`` along ``adv_dims``: shape (B..., remaining axes...)."""
    rest = [d for d in range(t.ndim) if d not in adv_dims]
    permuted = t.permute(list(adv_dims) + rest)
    return permuted[tuple(indices)]


def _take_rows(t: torch.Tensor, adv_dims, coords) -> torch.Tensor:
    """:func:`_take_local` with 1-D non-negative coordinates (``index_select`` along axis 0)."""
    if list(adv_dims) == [0]:
        return t.index_select(0, coords[0])
    return _take_local(t, adv_dims, coords)


def _replicated_take(y: _View, adv_dims, sources, bshape, comm) -> Tuple[torch.Tensor, bool]:
    """
    Advanced indexing along the split axis of ``y`` with index arrays that every process holds
    whole. The result is split along B's first axis.

    Every process knows every request, so it computes on its own which of its rows each process
    needs and which of its block's elements come from whom: one ``Alltoallv`` of the rows into
    balanced blocks, no exchange of indices. Rows requested by the process that owns them are
    copied directly. When the owners of the requests do not decrease (a sorted index, say) and
    no process would get more rows than it holds or than its balanced share, the rows stay
    where they are: no communication, the result possibly unbalanced.
    Returns ``(block, balanced)``: this process's block, shape
    ``(block of B...) + (remaining axes of y...)``, and whether the layout is the balanced one.
    """
    device = y.t.device
    me, size = comm.rank, comm.size
    s = y.split
    rest_shape = tuple(y.gshape[d] for d in range(len(y.gshape)) if d not in adv_dims)
    row = math.prod(rest_shape)
    b_counts = _balanced_counts(comm, bshape[0])
    inner = math.prod(bshape[1:])
    block_ends = [(d + c) * inner for d, c in zip(_displs(b_counts), b_counts)]
    lo = block_ends[me] - b_counts[me] * inner
    hi = block_ends[me]

    # every index broadcast to B, flattened, negative entries counted from the end
    flat_indices = []
    for source, dim in zip(sources, adv_dims):
        index = torch.broadcast_to(_full_tensor(source), bshape).reshape(-1)
        if index.numel():
            index = torch.where(index < 0, index + y.gshape[dim], index)
        flat_indices.append(index)
    split_index = flat_indices[adv_dims.index(s)]
    rank_ends = torch.tensor(np.cumsum(y.counts), dtype=torch.int64, device=device)
    owner = torch.searchsorted(rank_ends, split_index, right=True)
    offset = sum(y.counts[:me])

    def local_coords(positions):
        return [
            index[positions] - offset if dim == s else index[positions]
            for index, dim in zip(flat_indices, adv_dims)
        ]

    if owner.numel() and bool((owner[1:] >= owner[:-1]).all()):
        stay = _stay_counts(owner, inner, y.counts, b_counts)
        if stay is not None:
            start, count = sum(stay[:me]) * inner, stay[me] * inner
            taken = _take_rows(y.t, adv_dims, local_coords(slice(start, start + count)))
            shape = (stay[me],) + tuple(bshape[1:]) + rest_shape
            return taken.reshape(shape), tuple(stay) == tuple(b_counts)

    # the positions (in flat result order) that this process serves, ascending; they fall into
    # the result blocks in rank order
    served = torch.nonzero(owner == me).squeeze(1)
    cuts = torch.searchsorted(
        served, torch.tensor([0] + block_ends, dtype=torch.int64, device=device)
    ).tolist()
    send_rows = [b - a for a, b in zip(cuts, cuts[1:])]
    send_rows[me] = 0
    outgoing = torch.cat((served[: cuts[me]], served[cuts[me + 1] :]))
    send = _take_rows(y.t, adv_dims, local_coords(outgoing))
    # what arrives: the rows of my block owned by others, grouped by owner
    block_owner = owner[lo:hi]
    recv_rows = torch.bincount(block_owner, minlength=size).tolist()
    recv_rows[me] = 0
    recv = torch.empty((sum(recv_rows),) + rest_shape, dtype=y.t.dtype, device=device)
    comm.Alltoallv((send, [c * row for c in send_rows]), (recv, [c * row for c in recv_rows]))
    del send
    arriving = torch.nonzero(block_owner != me).squeeze(1)
    if arriving.numel() == hi - lo and bool((block_owner[1:] >= block_owner[:-1]).all()):
        block = recv  # all of the block arrived, in position order
    elif list(adv_dims) == [0] and y.t.shape[0] > 0:
        # one gather writes the whole block (rows that arrive read row 0 meanwhile), then the
        # arrivals overwrite their places: no scratch copy of my own rows
        rows = torch.where(block_owner == me, split_index[lo:hi] - offset, 0)
        block = torch.index_select(y.t, 0, rows)
    else:
        block = torch.empty((hi - lo,) + rest_shape, dtype=y.t.dtype, device=device)
        staying = torch.nonzero(block_owner == me).squeeze(1)
        block.index_copy_(0, staying, _take_rows(y.t, adv_dims, local_coords(staying + lo)))
    if block is not recv and arriving.numel():
        by_owner = arriving[torch.argsort(block_owner[arriving], stable=True)]
        block.index_copy_(0, by_owner, recv)
    return block.reshape((b_counts[me],) + tuple(bshape[1:]) + rest_shape), True


def _stay_counts(owner: torch.Tensor, inner: int, counts, balanced_counts):
    """
    Per-rank lengths along B's first axis when every process keeps the requests it serves
    (``owner``, non-decreasing over the flat requests, groups of ``inner``), or None if a group
    would straddle two processes or a process would get more rows than ``max(counts[r],
    balanced_counts[r])`` (repeated indices must not pile up on one process).
    """
    per_rank = torch.bincount(owner, minlength=len(counts)).tolist()
    stay = []
    for r, n in enumerate(per_rank):
        if n % inner:
            return None
        rows = n // inner
        if rows > max(counts[r], balanced_counts[r]):
            return None
        stay.append(rows)
    return stay


def _route_requests(flat_indices, adv_dims, y: _View, comm):
    """
    Send every request (one coordinate per advanced axis) to the owner of its split-axis index.
    Returns ``(order, send_rows, requests, recv_rows)``: the permutation that sorts my requests
    by owner, how many went to each rank, and the requests I must serve (local coordinates).
    """
    device = y.t.device
    split_pos = adv_dims.index(y.split)
    normalized = []
    for f, d in zip(flat_indices, adv_dims):
        n = y.gshape[d]
        normalized.append(torch.where(f < 0, f + n, f))
    ends = torch.tensor(np.cumsum(y.counts), dtype=torch.int64, device=device)
    owner = torch.searchsorted(ends, normalized[split_pos], right=True)
    order = torch.argsort(owner, stable=True)
    coords = (
        torch.stack(normalized, dim=1)[order]
        if normalized[0].numel()
        else torch.empty((0, len(adv_dims)), dtype=torch.int64, device=device)
    )
    displs = torch.tensor(_displs(y.counts), dtype=torch.int64, device=device)
    coords[:, split_pos] -= displs[owner[order]]
    send_rows = torch.bincount(owner, minlength=comm.size).tolist()
    received = comm.alltoallv_tensors(list(torch.split(coords, send_rows, dim=0)), axis=0)
    recv_rows = [r.shape[0] for r in received]
    requests = torch.cat(received, dim=0)
    return order, send_rows, requests, recv_rows


def _mask_get(x: DNDarray, y: _View, mask, dim: int) -> DNDarray:
    """``y`` indexed by one boolean mask at ``dim`` (all other axes already sliced)."""
    comm = x.comm
    k = len(_gshape_of(mask))
    s = y.split
    pre, post = y.gshape[:dim], y.gshape[dim + k :]
    if s is not None and comm.size > 1 and dim <= s < dim + k:
        mask_local = _align(mask, s - dim, y.counts, comm).to(torch.bool)
        selected = _select_masked(y.t, mask_local, dim)
        if s == dim:
            if _is_distributed(mask):
                total = comm.allreduce(selected.shape[dim])
            else:
                total = _count_true(_full_tensor(mask))
            return DNDarray(selected, pre + (total,) + post, x.dtype, dim, x.device, comm, None)
        rows, total = _ordered_rows(mask_local, s - dim, selected.movedim(dim, 0), comm)
        result = rows.movedim(0, dim).contiguous()
        return DNDarray(result, pre + (total,) + post, x.dtype, dim, x.device, comm, True)
    if s is None and _is_distributed(mask) and mask.split == 0:
        # replicated data, distributed mask: every process serves its rows of the mask
        counts = mask.counts_displs()[0]
        offset = sum(counts[: comm.rank])
        selected = _select_masked(y.t.narrow(dim, offset, counts[comm.rank]), mask.larray, dim)
        total = comm.allreduce(selected.shape[dim])
        return DNDarray(selected, pre + (total,) + post, x.dtype, dim, x.device, comm, None)
    full = _full_tensor(mask).to(torch.bool)
    selected = _select_masked(y.t, full, dim)
    total = selected.shape[dim]
    if s is None:
        split, balanced = None, True
    elif dim <= s < dim + k:  # one process
        split, balanced = dim, True
    else:
        split = s if s < dim else s - k + 1
        balanced = y.balanced
    return DNDarray(selected, pre + (total,) + post, x.dtype, split, x.device, comm, balanced)


def _align(obj, axis: int, counts, comm) -> torch.Tensor:
    """
    The local block of ``obj`` (tensor or DNDarray, whose axis ``axis`` has ``sum(counts)``
    entries) for the layout ``counts`` along ``axis``.
    """
    if not isinstance(obj, DNDarray):
        me = comm.rank
        return obj.narrow(axis, sum(counts[:me]), counts[me])
    return align_local(obj, obj.gshape, axis, counts)


def _advanced_get(x: DNDarray, view: _View, entries) -> DNDarray:
    comm = x.comm
    plan = _plan(view, entries, comm, keep_ints=True)
    local = view.t[tuple(plan.key)]
    if plan.flips:
        local = local.flip(plan.flips)
    counts, balanced = plan.counts, view.balanced
    if plan.split is not None:
        balanced = plan.counts == _balanced_counts(comm, plan.length)
        if plan.reverse and comm.size > 1:
            local = _reverse_blocks(local, plan, comm)
            counts, balanced = _balanced_counts(comm, plan.length), True
    y = _View(local, plan.gshape, plan.split, counts, balanced)

    adv_entries = [e for e in entries if e[0] in (_INT, _ARRAY, _MASK)]
    if len(adv_entries) == 1 and adv_entries[0][0] == _MASK:
        return _mask_get(x, y, adv_entries[0][1], adv_entries[0][2])

    adjacent = _adjacent(adv_entries)
    s = y.split
    values = [e[1] for e in adv_entries]
    adv_dims_probe = []
    for kind, value, dim in adv_entries:
        adv_dims_probe.extend(range(dim, dim + (len(_gshape_of(value)) if kind == _MASK else 1)))
    distributed = comm.size > 1 and (
        (s is not None and s in adv_dims_probe)
        or (s is None and any(_is_distributed(v) for v in values))
    )
    adv_dims, sources = _index_sources(adv_entries, y, gather=not distributed)
    bshape = _broadcast_index_shape(sources)
    layout = _Layout(y.gshape, adv_dims, adjacent, bshape)

    if not distributed:
        for source, dim in zip(sources, adv_dims):
            _check_bounds(source, y.gshape[dim], dim)
        if len(adv_dims) == 1 and sources[0].ndim == 1:
            # one index vector: index_select puts the axis in place (and is faster than torch's
            # advanced indexing)
            index = sources[0]
            if index.numel() and int(index.min()) < 0:
                index = torch.where(index < 0, index + y.gshape[adv_dims[0]], index)
            result = y.t.index_select(adv_dims[0], index)
        else:
            result = layout.to_result(_take_local(y.t, adv_dims, sources))
        if s is None:
            return DNDarray(result, layout.gshape, x.dtype, None, x.device, comm, True)
        if s in adv_dims:  # one process: split along the selection, as with several
            return DNDarray(result, layout.gshape, x.dtype, layout.b_start, x.device, comm, True)
        return DNDarray(
            result, layout.gshape, x.dtype, layout.out_axis(s), x.device, comm, y.balanced
        )

    if s is not None and not any(_is_distributed(source) for source in sources):
        # every process holds the whole index (bounds were checked when the key was parsed)
        taken, balanced = _replicated_take(y, adv_dims, sources, bshape, comm)
        result = layout.to_result(taken)
        return DNDarray(result, layout.gshape, x.dtype, layout.b_start, x.device, comm, balanced)
    _check_source_bounds(sources, adv_dims, y.gshape, comm)
    chunks, b_counts, b_balanced = _chunks(sources, bshape, comm)
    if s is None:
        taken = _take_local(y.t, adv_dims, chunks)
    else:
        flat = [c.reshape(-1) for c in chunks]
        order, send_rows, requests, recv_rows = _route_requests(flat, adv_dims, y, comm)
        served = _take_local(y.t, adv_dims, requests.unbind(1) if requests.shape[1] else ())
        answers = _exchange(served, recv_rows, send_rows, comm)
        taken = torch.empty_like(answers)
        taken[order] = answers
        rest_shape = tuple(y.gshape[d] for d in layout.rest)
        taken = taken.reshape(tuple(chunks[0].shape) + rest_shape)
    result = layout.to_result(taken)
    return DNDarray(result, layout.gshape, x.dtype, layout.b_start, x.device, comm, b_balanced)


# ---------------------------------------------------------------------------------------------
# public: getitem / setitem
# ---------------------------------------------------------------------------------------------
def _getitem_int(x: DNDarray, key: int) -> Optional[DNDarray]:
    """
    Fast path for ``x[i]`` with a Python int (None: take the general path, e.g. to raise).
    Along the split axis of a balanced array the owner is computed arithmetically and broadcasts
    the row (one ``Bcast``).
    """
    split = x._split
    n = x._gshape[0]
    if not -n <= key < n:
        return None
    comm = x._comm
    if split is None:
        return DNDarray(x._array[key], x._gshape[1:], x._dtype, None, x._device, comm, True)
    if split == 0 and comm.size == 1:  # a copy, as with several processes
        local = x._array[key].clone()
        return DNDarray(local, x._gshape[1:], x._dtype, None, x._device, comm, True)
    if split != 0:
        return DNDarray(
            x._array[key], x._gshape[1:], x._dtype, split - 1, x._device, x._comm, x._balanced
        )
    if not x._balanced:
        return None
    if key < 0:
        key += n
    size = comm.size
    base, remainder = divmod(n, size)
    big = (base + 1) * remainder  # rows held by the ranks that have one extra row
    owner = key // (base + 1) if key < big else remainder + (key - big) // base
    if comm.rank == owner:
        result = x._array[key - (owner * base + min(owner, remainder))].clone()
    else:
        result = torch.empty(x._gshape[1:], dtype=x._array.dtype, device=x._array.device)
    if size > 1:
        comm.Bcast(result, root=owner)
    return DNDarray(result, x._gshape[1:], x._dtype, None, x._device, comm, True)


def getitem(x: DNDarray, key) -> DNDarray:
    """
    ``x[key]`` with NumPy's rules for basic and advanced indexing (``DNDarray.__getitem__``).

    Parameters
    ----------
    x : DNDarray
        The array to index.
    key : int, slice, Ellipsis, None, array-like, DNDarray or tuple of these
        Integers (negative count from the end), slices (any step), ``...``, ``None``, boolean
        masks (DNDarray, NumPy array, torch tensor or list, distributed or not) and integer index
        arrays (broadcast together; NumPy's rule places the broadcast axes first when advanced
        indices are separated by a slice).

    Returns
    -------
    DNDarray
        A slice of a split axis stays split along the corresponding result axis (possibly
        unbalanced); an integer on the split axis gives a non-split result (one broadcast from
        the owner); boolean masks and index arrays along the split axis give results that are
        split along the first axis of the selection.

    Raises
    ------
    IndexError
        If an index is out of bounds, there are too many indices, a mask's shape does not match,
        index arrays cannot be broadcast together, or an entry is not a valid index.

    Examples
    --------
    >>> x = ht.arange(10, split=0)
    >>> x[3]
    DNDarray(3, dtype=ht.int64, device=cpu:0, split=None)
    >>> x[::-3]
    DNDarray([9, 6, 3, 0], dtype=ht.int64, device=cpu:0, split=0)
    >>> x[x % 4 == 1]
    DNDarray([1, 5, 9], dtype=ht.int64, device=cpu:0, split=0)
    >>> x[[7, 0, 7]]
    DNDarray([7, 0, 7], dtype=ht.int64, device=cpu:0, split=0)
    """
    if type(x) is not DNDarray and not isinstance(x, DNDarray):
        raise TypeError(f"x must be a DNDarray, but was {type(x).__name__}")
    key_type = type(key)
    if key_type is int and x._gshape:
        if x._split is None:  # fast path: a view, as in NumPy (torch raises the IndexError)
            return DNDarray(x._array[key], x._gshape[1:], x._dtype, None, x._device, x._comm, True)
        result = _getitem_int(x, key)
        if result is not None:
            return result
    elif (
        x._split is None
        and key_type is slice
        and (key.step is None or (type(key.step) is int and key.step > 0))
    ):
        # fast path: an ascending slice of a non-distributed array is a view
        local = x._array[key]
        return DNDarray(local, tuple(local.shape), x._dtype, None, x._device, x._comm, True)
    if x._dtype in _UNSIGNED_TYPES:
        # torch only stores uint16/32/64: select the bits through a signed view
        return unsigned_from_bits(getitem(signed_bits(x), key), x._dtype)
    view, entries, advanced = _prepare(x, key)
    if not advanced:
        return _basic_get(x, view, entries)
    return _advanced_get(x, view, entries)


def _value_operand(value, x: DNDarray):
    """The value of an assignment: a DNDarray of x's dtype, or a tensor of x's dtype."""
    torch_type = x.larray.dtype
    device = x.larray.device
    if isinstance(value, DNDarray):
        if value.dtype is not x.dtype:
            value = value.astype(x.dtype)
        return value
    if isinstance(value, torch.Tensor):
        return value.to(device=device, dtype=torch_type)
    if isinstance(value, (bool, int, float, complex, np.generic)) and not isinstance(
        value, np.ndarray
    ):
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, complex) and not torch_type.is_complex:
            raise TypeError(
                f"cannot assign a complex value to an array of dtype {x.dtype.__name__}"
            )
        return torch.tensor(value, dtype=torch_type, device=device)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"value could not be converted to an array: {error}") from None
    if array.dtype.kind not in "biufc":
        raise TypeError(f"value has NumPy dtype {array.dtype}, which heat cannot assign")
    if array.dtype.kind == "c" and not torch_type.is_complex:
        raise TypeError(f"cannot assign complex values to an array of dtype {x.dtype.__name__}")
    if array.dtype.kind == "u" and array.dtype.itemsize > 1:
        array = array.astype(np.int64)
    return torch.from_numpy(np.ascontiguousarray(array)).to(device=device, dtype=torch_type)


def _strip_value(value, target_shape: Tuple[int, ...]):
    """Check that ``value`` broadcasts to ``target_shape`` (dropping leading unit axes as NumPy)."""
    vshape = _gshape_of(value)
    extra = len(vshape) - len(target_shape)
    if extra > 0 and all(d == 1 for d in vshape[:extra]):
        if isinstance(value, DNDarray):
            if value.split is not None and value.split < extra:
                value = DNDarray(
                    _full_tensor(value),
                    value.gshape,
                    value.dtype,
                    None,
                    value.device,
                    value.comm,
                    True,
                )
            local = value.larray.reshape(value.larray.shape[extra:])
            split = None if value.split is None else value.split - extra
            value = DNDarray(
                local, vshape[extra:], value.dtype, split, value.device, value.comm, value._balanced
            )
        else:
            value = value.reshape(vshape[extra:])
        vshape = vshape[extra:]
    try:
        ok = broadcast_shapes(vshape, target_shape) == tuple(target_shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"could not broadcast input array from shape {tuple(vshape)} into shape "
            f"{tuple(target_shape)}"
        )
    return value


def _local_value(value, shape, axis, counts, flips, comm) -> torch.Tensor:
    """
    The part of ``value`` (broadcast to the global ``shape``, then reversed along ``flips``) that
    this process writes: rows ``counts`` along ``axis`` (None: everything).
    """
    me = comm.rank
    ndim = len(shape)
    if isinstance(value, DNDarray) and _is_distributed(value) and axis is not None:
        vdim = axis - (ndim - value.ndim)
        if vdim >= 0 and value.gshape[vdim] != 1:
            if axis in flips:
                reverse = (slice(None),) * vdim + (slice(None, None, -1),)
                value = getitem(value, reverse)
                flips = [f for f in flips if f != axis]
            local = _align(value, vdim, counts, comm)
            local_shape = list(shape)
            local_shape[axis] = counts[me]
            local = torch.broadcast_to(local, local_shape)
            return local.flip(flips) if flips else local
    full = _full_tensor(value)
    full = torch.broadcast_to(full, tuple(shape))
    if flips:
        full = full.flip(flips)
    if axis is not None:
        full = full.narrow(axis, sum(counts[:me]), counts[me])
    return full


def _basic_set(x: DNDarray, view: _View, entries, value) -> None:
    comm = x.comm
    plan = _plan(view, entries, comm, keep_ints=False)
    value = _strip_value(value, plan.gshape)
    if plan.owner is not None:
        if _is_distributed(value):
            from .layout import collect

            value = collect(value, plan.owner)
            local = value.larray if comm.rank == plan.owner else None
        else:
            local = _full_tensor(value)
        if comm.rank == plan.owner:
            local = torch.broadcast_to(local, plan.gshape)
            region = view.t[tuple(plan.key)]
            region.copy_(local.flip(plan.flips) if plan.flips else local)
        return
    region = view.t[tuple(plan.key)]
    local = _local_value(value, plan.gshape, plan.split, plan.counts, plan.flips, comm)
    region.copy_(local)


def _advanced_set(x: DNDarray, view: _View, entries, value) -> None:
    comm = x.comm
    plan = _plan(view, entries, comm, keep_ints=True)
    region = view.t[tuple(plan.key)]
    y = _View(region, plan.gshape, plan.split, plan.counts, None)
    s = y.split
    adv_entries = [e for e in entries if e[0] in (_INT, _ARRAY, _MASK)]
    adjacent = _adjacent(adv_entries)
    adv_dims_probe = []
    for kind, v, dim in adv_entries:
        adv_dims_probe.extend(range(dim, dim + (len(_gshape_of(v)) if kind == _MASK else 1)))
    split_advanced = s is not None and comm.size > 1 and s in adv_dims_probe

    single_mask = len(adv_entries) == 1 and adv_entries[0][0] == _MASK
    if single_mask and _numel(value) == 1:
        # one value where one mask is true: filled in place, locally (torch's boolean setitem
        # first turns the mask into int64 coordinates, 16 bytes per element of a 2-D mask)
        mask, dim = adv_entries[0][1], adv_entries[0][2]
        _strip_value(value, ())
        scalar = _full_tensor(value).reshape(())
        if split_advanced:
            mask_local = _align(mask, s - dim, y.counts, comm)
        else:
            mask_local = _full_tensor(mask)
        post = (1,) * (y.t.ndim - dim - mask_local.ndim)
        y.t.masked_fill_(mask_local.to(torch.bool).reshape(tuple(mask_local.shape) + post), scalar)
        return

    # one mask whose first axis is the split axis: local, the value aligned to the local counts
    if split_advanced and single_mask and adv_entries[0][2] == s:
        mask, dim = adv_entries[0][1], adv_entries[0][2]
        k = len(_gshape_of(mask))
        mask_local = _align(mask, s - dim, y.counts, comm).to(torch.bool)
        lead = (slice(None),) * dim
        if _is_distributed(mask):
            nnz = tuple(comm.allgather(_count_true(mask_local)))
        else:
            full = _full_tensor(mask).to(torch.bool)
            nnz = tuple(
                _count_true(full.narrow(0, start, count))
                for start, count in zip(_displs(y.counts), y.counts)
            )
        shape = y.gshape[:dim] + (sum(nnz),) + y.gshape[dim + k :]
        value = _strip_value(value, shape)
        flips = _result_flips(plan.flips, dim, k)
        local = _local_value(value, shape, dim, nnz, flips, comm)
        y.t[lead + (mask_local,)] = local
        return

    adv_dims, sources = _index_sources(adv_entries, y, gather=not split_advanced)
    bshape = _broadcast_index_shape(sources)
    layout = _Layout(y.gshape, adv_dims, adjacent, bshape)
    value = _strip_value(value, layout.gshape)
    flips = [layout.out_axis(f) for f in plan.flips]

    if not split_advanced:
        for source, dim in zip(sources, adv_dims):
            _check_bounds(source, y.gshape[dim], dim)
        if s is None or comm.size == 1:
            local = _local_value(value, layout.gshape, None, None, flips, comm)
        else:
            local = _local_value(value, layout.gshape, layout.out_axis(s), y.counts, flips, comm)
        rest = [d for d in range(y.t.ndim) if d not in adv_dims]
        permuted = y.t.permute(adv_dims + rest)
        _put_last_wins(permuted, tuple(sources), layout.from_result(local))
        return

    _check_source_bounds(sources, adv_dims, y.gshape, comm)
    chunks, b_counts, _ = _chunks(sources, bshape, comm)
    rest = [d for d in range(y.t.ndim) if d not in adv_dims]
    permuted = y.t.permute(adv_dims + rest)
    flat = [c.reshape(-1) for c in chunks]
    if _numel(value) == 1:
        # the owners need only the positions: one exchange less
        _, _, requests, _ = _route_requests(flat, adv_dims, y, comm)
        permuted[tuple(requests.unbind(1))] = _full_tensor(value).reshape(())
        return
    local = _local_value(value, layout.gshape, layout.b_start, b_counts, flips, comm)
    local = layout.from_result(local)
    rest_shape = tuple(y.gshape[d] for d in layout.rest)
    flat_values = local.reshape((math.prod(chunks[0].shape),) + rest_shape)
    order, send_rows, requests, recv_rows = _route_requests(flat, adv_dims, y, comm)
    incoming = _exchange(flat_values[order], send_rows, recv_rows, comm)
    _put_last_wins(permuted, tuple(requests.unbind(1)), incoming)


def _put_last_wins(target: torch.Tensor, indices: Tuple[torch.Tensor, ...], values) -> None:
    """
    ``target[indices] = values`` (integer index tensors on the leading axes) where a position
    named twice keeps the last value, as in NumPy. The CPU kernel writes in order; CUDA's writes
    in parallel and keeps any of them, so there only the last occurrence of each position is
    written.
    """
    if target.device.type == "cpu" or not indices:
        target[indices] = values
        return
    shape = torch.broadcast_shapes(*(i.shape for i in indices))
    flat = [i.to(target.device).expand(shape).reshape(-1) for i in indices]
    count = flat[0].numel()
    if count <= 1:
        target[indices] = values
        return
    position = torch.zeros(count, dtype=torch.int64, device=target.device)
    for index, size in zip(flat, target.shape[: len(flat)]):
        position = position * size + torch.remainder(index, size)
    order = torch.sort(position, stable=True).indices
    in_order = position[order]
    last = torch.ones(count, dtype=torch.bool, device=target.device)
    last[:-1] = in_order[1:] != in_order[:-1]
    keep = order[last]
    rest = tuple(target.shape[len(flat) :])
    values = torch.as_tensor(values, device=target.device).expand(tuple(shape) + rest)
    target[tuple(index[keep] for index in flat)] = values.reshape((count,) + rest)[keep]


def _numel(value) -> int:
    return value.size if isinstance(value, DNDarray) else value.numel()


def _result_flips(flips, dim: int, k: int):
    """Map reversed axes of y to the axes of a mask selection (mask axes dim..dim+k -> one)."""
    return [f if f < dim else f - k + 1 for f in flips]


def setitem(x: DNDarray, key, value) -> None:
    """
    ``x[key] = value`` with NumPy's rules (``DNDarray.__setitem__``).

    Parameters
    ----------
    x : DNDarray
        The array written to (in place).
    key : see :func:`getitem`
    value : scalar, array-like or DNDarray
        Broadcast to the shape of ``x[key]`` and cast to ``x.dtype``. A distributed value is
        aligned to the selected region of ``x`` (one collective when the layouts differ).

    Raises
    ------
    IndexError
        As :func:`getitem`.
    ValueError
        If ``value`` does not broadcast to the shape of ``x[key]``.

    Examples
    --------
    >>> x = ht.zeros(6, split=0)
    >>> x[1::2] = 1
    >>> x[x > 0] = ht.arange(3, dtype=ht.float32, split=0)
    >>> x
    DNDarray([0., 0., 0., 1., 0., 2.], dtype=ht.float32, device=cpu:0, split=0)
    """
    if not isinstance(x, DNDarray):
        raise TypeError(f"x must be a DNDarray, but was {type(x).__name__}")
    if x._dtype in _UNSIGNED_TYPES:
        # torch only stores uint16/32/64: write the bits through a signed view of x's memory
        if isinstance(value, DNDarray):
            value = value.astype(x._dtype, copy=False)
        else:
            value = as_replicated_array(value, x._dtype, x.device, x.comm)
        return setitem(signed_bits(x), key, signed_bits(value))
    if x._split is None and type(key) is int and x._gshape and isinstance(value, (int, float)):
        x._array[key] = value
        return
    view, entries, advanced = _prepare(x, key)
    value = _value_operand(value, x)
    if not advanced:
        _basic_set(x, view, entries, value)
    else:
        _advanced_set(x, view, entries, value)


# ---------------------------------------------------------------------------------------------
# nonzero, where
# ---------------------------------------------------------------------------------------------
def _integer_indices(indices, x: DNDarray, name: str = "indices") -> DNDarray:
    """``indices`` as an integer DNDarray (array-likes become non-split arrays)."""
    if not isinstance(indices, DNDarray):
        try:
            indices = as_replicated_array(indices, device=x.device, comm=x.comm)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"{name} must be an array of integers, but was {type(indices).__name__}"
            ) from error
    if not types.heat_type_is_exact(indices.dtype) or indices.dtype is types.bool:
        raise TypeError(
            f"{name} must be an array of integers, but had dtype {indices.dtype.__name__}"
        )
    return indices


def _index_axis(x: DNDarray, axis, name: str = "axis") -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{name} must be an integer or None, but was {axis!r}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{name} {axis} is out of bounds for an array of {x.ndim} dimensions")
    return int(axis) % x.ndim


def take(x: DNDarray, indices, /, *, axis: Optional[int] = None) -> DNDarray:
    """
    The elements of ``x`` at ``indices`` along ``axis``, as :func:`numpy.take` and the array API
    standard's ``take``: ``x[:, ..., :, indices]`` with ``indices`` at place ``axis``.

    Distributed as advanced indexing (:func:`getitem`): only the selected elements move.

    Parameters
    ----------
    x : DNDarray
    indices : DNDarray or array-like of int
        The positions along ``axis`` (negative ones count from the end); NumPy's any-dimensional
        index arrays are accepted (the standard's are 1-D).
    axis : int, optional
        The axis to select from; None (only valid in the standard for 1-D ``x``) selects from
        the flattened array, as NumPy.

    Returns
    -------
    DNDarray
        Of shape ``x.shape[:axis] + indices.shape + x.shape[axis + 1:]``.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``indices`` not integers.
    ValueError
        If ``axis`` is out of range.
    IndexError
        If an index is out of range.

    Examples
    --------
    >>> ht.take(ht.array([[1, 2, 3], [4, 5, 6]], split=0), [2, 0], axis=1)
    DNDarray([[3, 1],
              [6, 4]], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(x, "x")
    indices = _integer_indices(indices, x)
    if axis is None:
        if x.ndim != 1:
            x = x.flatten()
        axis = 0
    if x.ndim == 0:
        raise ValueError("take needs an array of at least one dimension")
    axis = _index_axis(x, axis)
    return getitem(x, (slice(None),) * axis + (indices,))


def take_along_axis(x: DNDarray, indices, /, *, axis: Optional[int] = -1) -> DNDarray:
    """
    The elements of ``x`` at ``indices`` along ``axis``, matched element by element in the other
    axes, as :func:`numpy.take_along_axis` and the array API standard's ``take_along_axis``
    (e.g. with the result of :func:`argsort`).

    Distributed as advanced indexing (:func:`getitem`) with ``indices`` and ranges of the other
    axes: only the selected elements move.

    Parameters
    ----------
    x : DNDarray
    indices : DNDarray or array-like of int
        Of the same number of dimensions as ``x``; its shape broadcasts with ``x``'s in every
        axis but ``axis``.
    axis : int or None
        The axis to select along (default the last); None selects from the flattened ``x`` with
        1-D ``indices``, as NumPy.

    Returns
    -------
    DNDarray
        Of the broadcast shape of ``x`` and ``indices`` (``indices.shape[axis]`` along ``axis``).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``indices`` not integers.
    ValueError
        If the numbers of dimensions differ, the shapes do not broadcast, or ``axis`` is out of
        range.
    IndexError
        If an index is out of range.

    Examples
    --------
    >>> x = ht.array([[10, 30, 20], [60, 40, 50]], split=0)
    >>> ht.take_along_axis(x, ht.argsort(x, axis=1), axis=1)
    DNDarray([[10, 20, 30],
              [40, 50, 60]], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(x, "x")
    indices = _integer_indices(indices, x)
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(
                f"indices must be 1-D when axis is None, but has {indices.ndim} dimensions"
            )
        x, axis = x.flatten(), 0
    if x.ndim == 0:
        raise ValueError("take_along_axis needs an array of at least one dimension")
    axis = _index_axis(x, axis)
    if indices.ndim != x.ndim:
        raise ValueError(
            f"indices must have as many dimensions as x ({x.ndim}), but has {indices.ndim}"
        )
    other = [d for d in range(x.ndim) if d != axis]
    broadcast_shapes(tuple(x.gshape[d] for d in other), tuple(indices.gshape[d] for d in other))
    key = []
    for d in range(x.ndim):
        if d == axis:
            key.append(indices)
            continue
        shape = [1] * x.ndim
        shape[d] = x.gshape[d]
        positions = torch.arange(x.gshape[d], device=x.larray.device).reshape(shape)
        if x.gshape[d] == 1:
            positions = positions.zero_()
        key.append(DNDarray(positions, tuple(shape), types.int64, None, x.device, x.comm, True))
    return getitem(x, tuple(key))


def nonzero(x: DNDarray) -> Tuple[DNDarray, ...]:
    """
    The indices of the non-zero elements, one index array per axis, in row-major order (as
    :func:`numpy.nonzero`).

    For a distributed ``x`` the index arrays are distributed along their only axis. With
    ``split=0`` each process keeps its own indices (no data moves; one allreduce for the total);
    with another split the indices are put into global order with one all-gather of per-row
    counts and one all-to-all, into the balanced layout.

    Parameters
    ----------
    x : DNDarray
        Input array, at least 1-D.

    Returns
    -------
    tuple of DNDarray
        ``x.ndim`` int64 arrays of equal length.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray.
    ValueError
        If ``x`` is 0-dimensional (as NumPy 2).

    Examples
    --------
    >>> x = ht.array([[3, 0, 0], [0, 4, 5]], split=1)
    >>> rows, cols = ht.nonzero(x)
    >>> rows
    DNDarray([0, 1, 1], dtype=ht.int64, device=cpu:0, split=0)
    >>> cols
    DNDarray([0, 1, 2], dtype=ht.int64, device=cpu:0, split=0)
    """
    if not isinstance(x, DNDarray):
        raise TypeError(f"x must be a DNDarray, but was {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use ht.atleast_1d(scalar).nonzero() "
            "instead."
        )
    if x._dtype in _UNSIGNED_TYPES:
        x = signed_bits(x)  # nonzero bits, nonzero values
    comm = x.comm
    local = x.larray
    split = x.split
    if split is None or comm.size == 1:
        coords = torch.nonzero(local)
        total = coords.shape[0]
        result_split = None if split is None else 0
        balanced = True
    elif split == 0:
        coords = torch.nonzero(local)
        coords[:, 0] += x.global_offset()
        total = comm.allreduce(coords.shape[0])
        result_split, balanced = 0, None
    else:
        mask = local != 0
        coords = torch.nonzero(mask)
        coords[:, split] += x.global_offset()
        coords, total = _ordered_rows(mask, split, coords, comm)
        result_split, balanced = 0, True
    return tuple(
        DNDarray(
            coords[:, i].contiguous(), (total,), types.int64, result_split, x.device, comm, balanced
        )
        for i in range(x.ndim)
    )


def where(cond, x=None, y=None) -> Union[DNDarray, Tuple[DNDarray, ...]]:
    """
    Elements of ``x`` where ``cond`` is true, of ``y`` elsewhere (as :func:`numpy.where`).

    With only ``cond``, this is :func:`nonzero`. The three operands are broadcast together; the
    result is distributed like the largest distributed operand, the others are aligned to it (as
    in every binary operation).

    Parameters
    ----------
    cond : DNDarray or array-like
        Where true, take ``x``; non-boolean values count as true when non-zero.
    x, y : DNDarray, scalar or array-like, optional
        The values to choose from (both or neither).

    Returns
    -------
    DNDarray or tuple of DNDarray
        The type of the result is ``ht.result_type(x, y)``.

    Raises
    ------
    ValueError
        If only one of ``x`` and ``y`` is given, or the shapes cannot be broadcast together.
    TypeError
        If an operand cannot be converted to an array.

    Examples
    --------
    >>> a = ht.arange(6, split=0)
    >>> ht.where(a < 3, a, -1)
    DNDarray([ 0,  1,  2, -1, -1, -1], dtype=ht.int64, device=cpu:0, split=0)
    """
    from ._operations import _as_operand, _result_layout, _weak_scalar, signed_view
    from .factories import array

    if (x is None) != (y is None):
        raise ValueError("either both or neither of x and y should be given")
    if not isinstance(cond, DNDarray):
        try:
            cond = array(cond)
        except (TypeError, ValueError) as error:
            raise TypeError(f"cond must be a DNDarray or array-like: {error}") from None
    if x is None:
        return nonzero(cond)
    x = _as_operand(x, cond, "x")
    y = _as_operand(y, cond, "y")
    arrays = [cond] + [t for t in (x, y) if isinstance(t, DNDarray)]
    for name, t in zip(("x", "y"), (x, y)):
        if isinstance(t, DNDarray) and t.device != cond.device:
            raise ValueError(
                f"cond and {name} live on different devices: {cond.device} and {t.device}"
            )
    gshape = broadcast_shapes(*(a.gshape for a in arrays))
    result_type = types.result_type(x, y)
    torch_type = result_type.torch_type()
    split, leader = _result_layout(arrays, gshape)
    cond_local = align_local(cond, gshape, split, leader)
    if cond_local.dtype is not torch.bool:
        cond_local = cond_local != 0
    operands = []
    for t in (x, y):
        if isinstance(t, DNDarray):
            operands.append(align_local(t, gshape, split, leader).to(torch_type))
        else:
            operands.append(_weak_scalar(t, result_type, cond_local.device))
    # selection only: uint16/32/64 as the signed type of their width (no CUDA kernel for them)
    result = torch.where(cond_local, signed_view(operands[0]), signed_view(operands[1]))
    result = result.view(torch_type)
    lshape = list(gshape)
    if split is not None:
        lshape[split] = leader.lshape[leader.split]
        balanced = leader._balanced
    else:
        balanced = True
    if tuple(result.shape) != tuple(lshape):
        result = result.expand(lshape).contiguous()
    return DNDarray(result, gshape, result_type, split, cond.device, cond.comm, balanced)
