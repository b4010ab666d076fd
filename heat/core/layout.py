"""
Layout primitives: changing the split axis and redistributing rows between processes.

Every other function that has to move data reuses these. Each is one collective: resplit
between two axes is one all-to-all, redistribution to any target layout is one all-to-all,
resplit to None is one all-gather, and resplit from None is local slicing. The all-to-alls
send strided views of the local tensor and receive straight into views of the result
(``comm.Alltoallw`` describes them to MPI as derived datatypes): no packing copies, and no
memory beyond the result.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from .dndarray import DNDarray
from .sanitation import sanitize_in, sanitize_split

__all__ = ["balance", "collect", "redistribute", "resplit"]


def _balanced_counts(x: DNDarray, axis: int) -> Tuple[int, ...]:
    return tuple(x.comm.counts_displs_shape(x.gshape, axis)[0])


def _displs(counts: Sequence[int]) -> Tuple[int, ...]:
    displs, total = [], 0
    for c in counts:
        displs.append(total)
        total += c
    return tuple(displs)


def _resplit_tensor(x: DNDarray, axis: Optional[int]) -> Tuple[torch.Tensor, Optional[bool]]:
    """The local tensor and balancedness of ``x`` resplit along ``axis``."""
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
    source_displs = _displs(source_counts)
    target_counts = _balanced_counts(x, axis)
    target_displs = _displs(target_counts)
    local = x.larray
    shape = list(x.gshape)
    shape[axis] = target_counts[comm.rank]
    result = torch.empty(shape, dtype=local.dtype, device=local.device)
    comm.Alltoallw(
        [local.narrow(axis, target_displs[r], target_counts[r]) for r in range(comm.size)],
        [result.narrow(x.split, source_displs[r], source_counts[r]) for r in range(comm.size)],
    )
    return result, True


def resplit(x: DNDarray, axis: Optional[int] = None) -> DNDarray:
    """
    A copy of ``x`` distributed along ``axis`` (None: every process holds the whole array).

    ``i -> j`` is one all-to-all, ``i -> None`` one all-gather, ``None -> j`` local slicing
    without communication. The result has the balanced layout.

    Parameters
    ----------
    x : DNDarray
    axis : int or None
        The new split axis.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``axis`` is not an integer or None.
    ValueError
        If ``axis`` is out of range.

    Examples
    --------
    >>> x = ht.zeros((4, 6), split=0)
    >>> ht.resplit(x, 1).split
    1
    """
    sanitize_in(x)
    axis = sanitize_split(x.gshape, axis, name="axis")
    if axis == x.split:
        return DNDarray(
            x.larray.clone(), x.gshape, x.dtype, x.split, x.device, x.comm, x._balanced
        )
    local, balanced = _resplit_tensor(x, axis)
    if local is x.larray:
        # a single process needs no data movement, but the result is still a copy
        local = local.clone()
    return DNDarray(local, x.gshape, x.dtype, axis, x.device, x.comm, balanced)


def resplit_(x: DNDarray, axis: Optional[int] = None) -> DNDarray:
    """In-place :func:`resplit`."""
    sanitize_in(x)
    axis = sanitize_split(x.gshape, axis, name="axis")
    if axis != x.split:
        local, balanced = _resplit_tensor(x, axis)
        x._set_layout(local, axis, balanced)
    return x


def _overlap(own: Tuple[int, int], other: Tuple[int, int]) -> Tuple[int, int]:
    """``(start, length)`` of the intersection of two ranges, relative to ``own``'s start."""
    lo, hi = max(own[0], other[0]), min(own[1], other[1])
    return (lo - own[0], hi - lo) if hi > lo else (0, 0)


def _ranges(counts: Sequence[int]) -> Tuple[Tuple[int, int], ...]:
    """``(start, stop)`` of the rows each process holds."""
    return tuple((d, d + c) for d, c in zip(_displs(counts), counts))


def _redistribute_tensor(x: DNDarray, target_counts: Sequence[int]) -> torch.Tensor:
    comm = x.comm
    counts = x.counts_displs()[0]
    if tuple(counts) == tuple(target_counts):
        return x.larray
    shape = list(x.gshape)
    shape[x.split] = target_counts[comm.rank]
    result = torch.empty(shape, dtype=x.larray.dtype, device=x.larray.device)
    sources, targets = _ranges(counts), _ranges(target_counts)
    mine, wanted = sources[comm.rank], targets[comm.rank]
    # to r: this process's rows inside r's target range; from r: r's rows inside this one's
    comm.Alltoallw(
        [x.larray.narrow(x.split, *_overlap(mine, other)) for other in targets],
        [result.narrow(x.split, *_overlap(wanted, other)) for other in sources],
    )
    return result


def _check_target_counts(x: DNDarray, target_counts) -> Tuple[int, ...]:
    target_counts = tuple(int(c) for c in target_counts)
    if len(target_counts) != x.comm.size or any(c < 0 for c in target_counts):
        raise ValueError(
            f"target counts must be {x.comm.size} non-negative integers, but were {target_counts}"
        )
    if sum(target_counts) != x.gshape[x.split]:
        raise ValueError(
            f"target counts sum to {sum(target_counts)}, but the split axis has length "
            f"{x.gshape[x.split]}"
        )
    return target_counts


def redistribute(x: DNDarray, target_counts: Sequence[int]) -> DNDarray:
    """
    A copy of ``x`` whose process ``r`` holds ``target_counts[r]`` rows along the split axis
    (one all-to-all).

    Parameters
    ----------
    x : DNDarray
        A split array.
    target_counts : sequence of int
        Rows per process; must sum to ``x.shape[x.split]``.

    Examples
    --------
    >>> x = ht.arange(6, split=0)            # at 2 processes: counts (3, 3)
    >>> ht.redistribute(x, (1, 5)).lshape    # on rank 1
    (5,)
    """
    sanitize_in(x)
    if x.split is None:
        raise ValueError("redistribute needs a split array, but x.split is None")
    target_counts = _check_target_counts(x, target_counts)
    local = _redistribute_tensor(x, target_counts)
    result = DNDarray(local, x.gshape, x.dtype, x.split, x.device, x.comm, None)
    if local is x.larray:
        result.larray = local.clone()
    return result


def redistribute_(x: DNDarray, target_map: torch.Tensor) -> DNDarray:
    """In-place :func:`redistribute`; ``target_map`` is a ``(comm.size, ndim)`` lshape map."""
    sanitize_in(x)
    if x.split is None:
        return x
    target_map = torch.as_tensor(target_map)
    target_counts = _check_target_counts(x, target_map[:, x.split].tolist())
    local = _redistribute_tensor(x, target_counts)
    x._set_layout(local, x.split, None)
    return x


def balance(x: DNDarray, copy: bool = False) -> DNDarray:
    """
    ``x`` in the default balanced layout (process r holds ``n // p`` rows, plus one if
    ``r < n % p``). Returns ``x`` itself if it is already balanced, unless ``copy``.

    Examples
    --------
    >>> ht.balance(ht.arange(10, split=0)).balanced
    True
    """
    sanitize_in(x)
    if x.is_balanced():
        return DNDarray(x.larray.clone(), x.gshape, x.dtype, x.split, x.device, x.comm, True) if copy else x
    local = _redistribute_tensor(x, _balanced_counts(x, x.split))
    return DNDarray(local, x.gshape, x.dtype, x.split, x.device, x.comm, True)


def balance_(x: DNDarray) -> DNDarray:
    """In-place :func:`balance`."""
    sanitize_in(x)
    if not x.is_balanced():
        local = _redistribute_tensor(x, _balanced_counts(x, x.split))
        x._set_layout(local, x.split, True)
    return x


def collect(x: DNDarray, target_rank: int = 0) -> DNDarray:
    """
    A copy of ``x`` whose rows all live on ``target_rank`` (others hold empty blocks).

    Examples
    --------
    >>> ht.collect(ht.arange(5, split=0)).lshape   # on rank 0
    (5,)
    """
    sanitize_in(x)
    if not isinstance(target_rank, int) or not 0 <= target_rank < x.comm.size:
        raise ValueError(f"target_rank must be in [0, {x.comm.size}), but was {target_rank}")
    if x.split is None:
        return DNDarray(x.larray.clone(), x.gshape, x.dtype, None, x.device, x.comm, True)
    counts = [0] * x.comm.size
    counts[target_rank] = x.gshape[x.split]
    return redistribute(x, counts)
