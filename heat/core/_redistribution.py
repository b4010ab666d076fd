"""
The data movements every layout change is made of: a DNDarray's metadata in, this process's new
local tensor out.

These are the primitives below the engines: :mod:`heat.core._operations` aligns operands with
them, and the public layout functions (:mod:`heat.core.layout`: ``resplit``, ``redistribute``,
``balance``, ...) validate their arguments and wrap what these return. Each is one collective:
resplit between two axes is one all-to-all, to None one all-gather, from None local slicing, and
redistribution to any counts one all-to-all. The all-to-alls send strided views of the local
tensor and receive straight into views of the result (``comm.Alltoallw`` describes them to MPI as
derived datatypes): no packing copies, and no memory beyond the result.

Counts and ranges here are plain global information (no communication).
"""

from __future__ import annotations

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
    # split -> axis: one all-to-all from column blocks of the local tensor straight into row
    # blocks of the result (strided views travel as MPI datatypes, nothing is packed)
    source_counts = x.counts_displs()[0]
    source_displs = displacements(source_counts)
    target_counts = balanced_counts(comm, x.gshape[axis])
    target_displs = displacements(target_counts)
    local = x.larray
    shape = list(x.gshape)
    shape[axis] = target_counts[comm.rank]
    result = torch.empty(shape, dtype=local.dtype, device=local.device)
    comm.Alltoallw(
        [local.narrow(axis, target_displs[r], target_counts[r]) for r in range(comm.size)],
        [result.narrow(x.split, source_displs[r], source_counts[r]) for r in range(comm.size)],
    )
    return result, True


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
