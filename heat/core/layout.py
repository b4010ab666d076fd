"""
Changing the split axis and redistributing rows between processes: the public layout functions.

Every other function that has to move data reuses these (or, below the families, the movements
they are made of in :mod:`heat.core._redistribution`). Each is one collective: resplit between
two axes is one all-to-all, redistribution to any target layout is one all-to-all, resplit to
None is one all-gather, and resplit from None is local slicing.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from ._redistribution import balanced_counts, redistribute_tensor, resplit_tensor
from .communication import MPI
from .dndarray import DNDarray
from .sanitation import sanitize_in, sanitize_split

__all__ = ["balance", "collect", "redistribute", "resplit"]


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
        return DNDarray(x.larray.clone(), x.gshape, x.dtype, x.split, x.device, x.comm, x._balanced)
    local, balanced = resplit_tensor(x, axis)
    if local is x.larray:
        # a single process needs no data movement, but the result is still a copy
        local = local.clone()
    return DNDarray(local, x.gshape, x.dtype, axis, x.device, x.comm, balanced)


def resplit_(x: DNDarray, axis: Optional[int] = None) -> DNDarray:
    """In-place :func:`resplit`."""
    sanitize_in(x)
    axis = sanitize_split(x.gshape, axis, name="axis")
    if axis != x.split:
        local, balanced = resplit_tensor(x, axis)
        x._set_layout(local, axis, balanced)
    return x


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
    local = redistribute_tensor(x, target_counts)
    result = DNDarray(local, x.gshape, x.dtype, x.split, x.device, x.comm, None)
    if local is x.larray:
        result.larray = local.clone()
    return result


def _as_map(x: DNDarray, lshape_map, name: str) -> torch.Tensor:
    """``lshape_map`` as a ``(comm.size, ndim)`` integer tensor, checked alike on every process."""
    try:
        lshape_map = torch.as_tensor(lshape_map)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(
            f"{name} must be a tensor of local shapes, but was {type(lshape_map).__name__}"
        ) from None
    if lshape_map.is_floating_point() or lshape_map.is_complex() or lshape_map.dtype is torch.bool:
        raise TypeError(f"{name} must hold integers, but has dtype {lshape_map.dtype}")
    if tuple(lshape_map.shape) != (x.comm.size, x.ndim):
        raise ValueError(
            f"{name} must have shape {(x.comm.size, x.ndim)} (processes, dimensions), but has "
            f"shape {tuple(lshape_map.shape)}"
        )
    return lshape_map


def _adopt_lshape_map(x: DNDarray, lshape_map) -> None:
    """
    Take the caller's map of the current local shapes instead of gathering it (HeAT's
    ``redistribute_(lshape_map=...)``), after the checks that need no communication.
    """
    lshape_map = _as_map(x, lshape_map, "lshape_map").to(device="cpu", dtype=torch.int64)
    expected = torch.tensor(x.gshape, dtype=torch.int64)
    columns = [i for i in range(x.ndim) if i != x.split]
    if not bool((lshape_map[:, columns] == expected[columns]).all()) or (
        x.split is not None
        and (
            bool((lshape_map[:, x.split] < 0).any())
            or int(lshape_map[:, x.split].sum()) != x.gshape[x.split]
        )
    ):
        raise ValueError(
            f"lshape_map {lshape_map.tolist()} does not describe local shapes of an array of "
            f"global shape {x.gshape} split along {x.split}"
        )
    # only the process itself sees whether the map fits its block: agree on it (one small
    # all-reduce), so that a wrong map raises on every process, never on one alone
    fits = tuple(lshape_map[x.comm.rank].tolist()) == x.lshape
    if not (x.comm.allreduce(fits, op=MPI.LAND) if x.comm.size > 1 else fits):
        raise ValueError(
            "lshape_map contradicts the blocks the processes hold"
            + (
                ""
                if fits
                else f": it gives process {x.comm.rank} the shape "
                f"{tuple(lshape_map[x.comm.rank].tolist())}, but its block has shape {x.lshape}"
            )
        )
    x._lshape_map = lshape_map.clone()


def redistribute_(
    x: DNDarray,
    target_map: Optional[torch.Tensor] = None,
    lshape_map: Optional[torch.Tensor] = None,
) -> DNDarray:
    """
    In-place :func:`redistribute`; ``target_map`` is a ``(comm.size, ndim)`` lshape map (None:
    the balanced layout). ``lshape_map``, the current local shapes if the caller knows them,
    saves gathering them.
    """
    sanitize_in(x)
    if lshape_map is not None:
        _adopt_lshape_map(x, lshape_map)
    if x.split is None:
        return x
    if target_map is None:
        return balance_(x)
    target_map = _as_map(x, target_map, "target_map")
    target_counts = _check_target_counts(x, target_map[:, x.split].tolist())
    local = redistribute_tensor(x, target_counts)
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
        return (
            DNDarray(x.larray.clone(), x.gshape, x.dtype, x.split, x.device, x.comm, True)
            if copy
            else x
        )
    local = redistribute_tensor(x, balanced_counts(x.comm, x.gshape[x.split]))
    return DNDarray(local, x.gshape, x.dtype, x.split, x.device, x.comm, True)


def balance_(x: DNDarray) -> DNDarray:
    """In-place :func:`balance`."""
    sanitize_in(x)
    if not x.is_balanced():
        local = redistribute_tensor(x, balanced_counts(x.comm, x.gshape[x.split]))
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
