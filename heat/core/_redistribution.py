"""
The data movements every layout change is made of: a DNDarray's metadata in, this process's new
local tensor out.

These are the primitives below the engines: :mod:`heat.core._operations` aligns operands with
them, and the public layout functions (:mod:`heat.core.layout`: ``resplit``, ``redistribute``,
``balance``, ...) validate their arguments and wrap what these return. Each is one collective:
resplit between two axes is one all-to-all, to None one all-gather, from None local slicing, and
redistribution to any counts one all-to-all. The all-to-alls send strided views of the local
tensor and receive straight into views of the result (``comm.Alltoallw`` describes them to MPI as
derived datatypes): no packing copies, and no memory beyond the result — except where MPI is
slow with strided blocks on the sending side (resplit 0 -> 1): those are packed, a bounded slab
at a time.

Counts and ranges here are plain global information (no communication).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import torch

from .dndarray import DNDarray

__all__ = [
    "balanced_counts",
    "displacements",
    "overlap",
    "redistribute_tensor",
    "resplit_tensor",
    "row_ranges",
]


def balanced_counts(comm, n: int) -> Tuple[int, ...]:
    """
    Rows per process of the default balanced layout of ``n`` rows over ``comm``: ``n // p``,
    plus one for the first ``n % p`` processes.

    Examples
    --------
    >>> balanced_counts(comm_of_size_3, 7)
    (3, 2, 2)
    """
    return tuple(comm.counts_displs_shape((n,), 0)[0])


def displacements(counts: Sequence[int]) -> Tuple[int, ...]:
    """
    The offset of each process's first row (the exclusive prefix sums of ``counts``).

    Examples
    --------
    >>> displacements((3, 2, 2))
    (0, 3, 5)
    """
    displs, total = [], 0
    for c in counts:
        displs.append(total)
        total += c
    return tuple(displs)


def row_ranges(counts: Sequence[int]) -> Tuple[Tuple[int, int], ...]:
    """
    ``(start, stop)`` of the global rows each process holds.

    Examples
    --------
    >>> row_ranges((3, 2, 2))
    ((0, 3), (3, 5), (5, 7))
    """
    return tuple((d, d + c) for d, c in zip(displacements(counts), counts))


def overlap(own: Tuple[int, int], other: Tuple[int, int]) -> Tuple[int, int]:
    """
    ``(start, length)`` of the intersection of two ranges, relative to ``own``'s start
    (``(0, 0)`` when they do not intersect).

    Examples
    --------
    >>> overlap((3, 5), (4, 9))
    (1, 1)
    """
    lo, hi = max(own[0], other[0]), min(own[1], other[1])
    return (lo - own[0], hi - lo) if hi > lo else (0, 0)


def resplit_tensor(x: DNDarray, axis: Optional[int]) -> Tuple[torch.Tensor, Optional[bool]]:
    """
    This process's block of ``x`` distributed along ``axis`` in the balanced layout, and whether
    that layout is balanced. Returns ``x.larray`` itself (no copy) when nothing moves: ``axis``
    is ``x.split`` (balancedness unchanged) or the communicator has one process.
    """
    comm = x.comm
    if axis == x.split:
        return x.larray, x._balanced
    if comm.size == 1:
        return x.larray, True
    if axis is None:
        return comm.allgather_tensors(x.larray, axis=x.split).reshape(x.gshape), True
    if x.split is None:
        offset, lshape, _ = comm.chunk(x.gshape, axis)
        return x.larray.narrow(axis, offset, lshape[axis]).clone(), True
    # split -> axis: the blocks of the local tensor along ``axis`` go to their processes, and
    # arrive as blocks along ``split`` of the result
    source_counts = x.counts_displs()[0]
    source_displs = displacements(source_counts)
    target_counts = balanced_counts(comm, x.gshape[axis])
    target_displs = displacements(target_counts)
    local = x.larray
    shape = list(x.gshape)
    shape[axis] = target_counts[comm.rank]
    result = torch.empty(shape, dtype=local.dtype, device=local.device)
    # the blocks sent are strided when a dimension before ``axis`` is longer than 1; decided from
    # the global shape, so that every process takes the same path (the local block may be empty)
    if not any(x.gshape[d] > 1 for d in range(axis)):
        # (e.g. split 1 -> 0) received straight into strided views of the result
        comm.Alltoallw(
            [local.narrow(axis, target_displs[r], target_counts[r]) for r in range(comm.size)],
            [result.narrow(x.split, source_displs[r], source_counts[r]) for r in range(comm.size)],
        )
        return result, True
    _exchange_packed_slabs(x, axis, result, source_counts, target_counts)
    return result, True


#: Bytes of the local tensor packed per all-to-all by :func:`_exchange_packed_slabs`.
PACK_SLAB_BYTES = 64 * 2**20


def _exchange_packed_slabs(x, axis, result, source_counts, target_counts) -> None:
    """
    The all-to-all of :func:`resplit_tensor` when the blocks to send are strided (e.g. the
    column blocks of split 0 -> 1), in slabs along ``x.split`` of about
    :data:`PACK_SLAB_BYTES`: each slab's blocks are packed by one copy into one of two reused
    buffers and travel contiguous, two slabs in flight, so the packing of the next overlaps the
    exchange of the previous; the process's own block is copied straight into the result.

    Measured with MPICH 5 (3 processes, 1 GiB each, benchmarks/resplit.py): the strided blocks
    handed to MPI as derived datatypes made 0 -> 1 about 4x slower than 1 -> 0, whose strided
    side is the receiving one.
    """
    comm, split, local = x.comm, x.split, x.larray
    p, me = comm.size, comm.rank
    source_displs = displacements(source_counts)
    target_displs = displacements(target_counts)
    # rows per slab from global information, so that every process agrees on the slab count
    row_bytes = max(1, local.element_size() * math.prod(x.gshape) // max(1, x.gshape[split]))
    rows = max(1, PACK_SLAB_BYTES // row_bytes)
    slabs = -(-max(source_counts) // rows)

    def part(count: int, start: int) -> Tuple[int, int]:
        """(offset, length) of slab rows [start, start + rows) within ``count`` rows."""
        return min(start, count), max(0, min(rows, count - start))

    slab_elements = min(rows, local.shape[split]) * (row_bytes // local.element_size())
    buffers = [local.new_empty(slab_elements) for _ in range(min(2, slabs))]
    nothing = local.new_empty(0)
    in_flight = None
    for k in range(slabs):
        start = k * rows
        slab = local.narrow(split, *part(local.shape[split], start))
        flat, offset, sends = buffers[k % 2], 0, []
        for r in range(p):
            block = slab.narrow(axis, target_displs[r], target_counts[r])
            if r == me:
                sends.append(nothing)
                continue
            packed = flat[offset : offset + block.numel()].view(block.shape)
            packed.copy_(block)
            offset += block.numel()
            sends.append(packed)
        receives = []
        for q in range(p):
            offset_q, length = part(source_counts[q], start)
            target = result.narrow(split, source_displs[q] + offset_q, length)
            if q == me:
                target.copy_(slab.narrow(axis, target_displs[me], target_counts[me]))
                target = nothing
            receives.append(target)
        request = comm.Ialltoallw(sends, receives)
        if in_flight is not None:
            in_flight.Wait()
        in_flight = request
    if in_flight is not None:
        in_flight.Wait()


def redistribute_tensor(x: DNDarray, target_counts: Sequence[int]) -> torch.Tensor:
    """
    This process's block of the split array ``x`` when process ``r`` holds ``target_counts[r]``
    rows along ``x.split`` (one all-to-all). Returns ``x.larray`` itself when the counts are the
    current ones. ``target_counts`` must be valid (validated by the caller).
    """
    comm = x.comm
    counts = x.counts_displs()[0]
    if tuple(counts) == tuple(target_counts):
        return x.larray
    shape = list(x.gshape)
    shape[x.split] = target_counts[comm.rank]
    result = torch.empty(shape, dtype=x.larray.dtype, device=x.larray.device)
    sources, targets = row_ranges(counts), row_ranges(target_counts)
    mine, wanted = sources[comm.rank], targets[comm.rank]
    # to r: this process's rows inside r's target range; from r: r's rows inside this one's
    comm.Alltoallw(
        [x.larray.narrow(x.split, *overlap(mine, other)) for other in targets],
        [result.narrow(x.split, *overlap(wanted, other)) for other in sources],
    )
    return result
