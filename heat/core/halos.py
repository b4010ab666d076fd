"""
Halos: the rows next to a process's block, fetched from the processes that hold them.

A stencil, a convolution or a sliding window over a split array needs, at the edges of each
process's block, a few rows that live on the neighbouring processes. :func:`get_halo` fetches
them in one collective and keeps them with the array (``x.halo_prev`` / ``x.halo_next``);
``x.array_with_halos`` is the local block with its halos attached, ready for a local kernel.

These functions are installed as methods and properties of :class:`~heat.core.dndarray.DNDarray`
by :mod:`heat.core._methods`:

==========================  ======================================================
``x.get_halo(size, ...)``   :func:`get_halo`
``x.halo_prev``             :func:`halo_prev` (property)
``x.halo_next``             :func:`halo_next` (property)
``x.array_with_halos``      :func:`array_with_halos` (property)
``x.is_distributed()``      :func:`is_distributed`
==========================  ======================================================

Which rows a halo holds
-----------------------
The halos are defined by global positions, not by process ranks: if process ``r`` holds the rows
``[start, stop)`` of the split axis, its previous halo is the rows ``[start - size, start)`` and
its next halo the rows ``[stop, stop + size)``, both cut at the ends of the array. The rows are
fetched from whichever processes hold them, so

* processes with empty blocks are skipped: a block's neighbours are the nearest non-empty blocks
  before and after it;
* a halo may be longer than a neighbour's block: it then gathers rows from several processes
  (it is never an error). Only the ends of the global array cut a halo short, so a halo has
  ``min(size, start)`` rows before and ``min(size, n - stop)`` rows after the block.

A process with an empty block gets no halos (both None), and so does a process whose halo would be
empty (the first non-empty block has no previous halo, the last no next halo). An array that is
not distributed (:func:`is_distributed` is False) has no halos either.

The halos are a snapshot taken by :func:`get_halo`: writing to ``x.larray`` afterwards does not
update them, and a new :func:`get_halo` call replaces them.
"""

from __future__ import annotations

import operator
import weakref
from typing import Dict, List, Optional, Tuple

import torch

from .dndarray import DNDarray
from .sanitation import sanitize_in

__all__ = []

# The halos of each array, by id(). DNDarray has fixed slots and no hash, so they are kept beside
# it; the weak reference's callback removes the entry when the array is garbage collected.
_HALOS: Dict[int, Tuple["weakref.ref", Optional[torch.Tensor], Optional[torch.Tensor]]] = {}


def _forget(key: int) -> None:
    _HALOS.pop(key, None)


def _stored(x: DNDarray) -> Tuple[Optional[torch.Tensor], Optional[torch.Tensor]]:
    entry = _HALOS.get(id(x))
    if entry is None or entry[0]() is not x:
        return None, None
    return entry[1], entry[2]


def _store(x: DNDarray, prev: Optional[torch.Tensor], next: Optional[torch.Tensor]) -> None:
    key = id(x)
    if prev is None and next is None:
        _HALOS.pop(key, None)
        return
    _HALOS[key] = (weakref.ref(x, lambda _, key=key: _forget(key)), prev, next)


def is_distributed(x: DNDarray) -> bool:
    """
    Whether ``x`` is spread over several processes: it is split and its communicator has more
    than one process. No communication.

    Parameters
    ----------
    x : DNDarray

    Returns
    -------
    bool

    Examples
    --------
    >>> ht.zeros(4, split=0).is_distributed()  # at 2 processes
    True
    >>> ht.zeros(4).is_distributed()
    False
    """
    return x.split is not None and x.comm.is_distributed()


def _check_halo_arguments(halo_size, prev, next) -> int:
    if isinstance(halo_size, bool) or not hasattr(halo_size, "__index__"):
        raise TypeError(f"halo_size must be an int, but was {type(halo_size).__name__}")
    halo_size = operator.index(halo_size)
    if halo_size < 0:
        raise ValueError(f"halo_size must be non-negative, but was {halo_size}")
    for name, flag in (("prev", prev), ("next", next)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, but was {type(flag).__name__}")
    return halo_size


def _halo_ranges(
    counts: Tuple[int, ...], displs: Tuple[int, ...], halo_size: int, prev: bool, next: bool
) -> List[Tuple[Tuple[int, int], Tuple[int, int]]]:
    """
    For every process, the global ranges ``[begin, end)`` of its previous and next halo along the
    split axis (empty ranges where it has none). The same on every process.
    """
    total = sum(counts)
    ranges = []
    for count, displ in zip(counts, displs):
        if count == 0 or halo_size == 0:
            ranges.append(((displ, displ), (displ, displ)))
            continue
        stop = displ + count
        before = (max(0, displ - halo_size), displ) if prev else (displ, displ)
        after = (stop, min(total, stop + halo_size)) if next else (stop, stop)
        ranges.append((before, after))
    return ranges


def get_halo(x: DNDarray, halo_size: int, prev: bool = True, next: bool = True) -> None:
    """
    Fetch the ``halo_size`` rows (slices along the split axis) before and after this process's
    block from the processes that hold them, and keep them as ``x.halo_prev`` and
    ``x.halo_next``. Collective: call it on every process.

    The halos are defined by global position (see :mod:`heat.core.halos`): the rows
    ``[start - halo_size, start)`` and ``[stop, stop + halo_size)`` of the block ``[start, stop)``,
    cut at the ends of the array. Empty blocks are skipped, and a halo longer than the
    neighbouring block collects rows from several processes. All rows move in one all-to-all
    (after one allgather of the local lengths when the layout is not known to be balanced).

    Parameters
    ----------
    x : DNDarray
        The array; if it is not distributed (:func:`is_distributed` is False), nothing is fetched
        and the halos are None.
    halo_size : int
        The number of rows per halo, at least 0 (0 gives no halos).
    prev : bool
        Fetch the halo before the block (``x.halo_prev``); if False it is None.
    next : bool
        Fetch the halo after the block (``x.halo_next``); if False it is None.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, ``halo_size`` not an int, or ``prev``/``next`` not bools.
    ValueError
        If ``halo_size`` is negative.

    Examples
    --------
    >>> x = ht.arange(6, split=0)  # at 3 processes: [0, 1] [2, 3] [4, 5]
    >>> x.get_halo(1)
    >>> x.halo_prev, x.halo_next  # on rank 1
    (tensor([1]), tensor([4]))
    >>> x.array_with_halos  # on rank 1
    tensor([1, 2, 3, 4])
    >>> x.get_halo(3)  # longer than a block: rows from several processes
    >>> x.array_with_halos  # on rank 1
    tensor([0, 1, 2, 3, 4, 5])
    """
    sanitize_in(x)
    halo_size = _check_halo_arguments(halo_size, prev, next)
    if not is_distributed(x):
        _store(x, None, None)
        return None
    comm, split = x.comm, x.split
    counts, displs = x.counts_displs()
    ranges = _halo_ranges(counts, displs, halo_size, prev, next)
    me = comm.rank
    block, start, stop = x.larray, displs[me], displs[me] + counts[me]

    # what this process sends to each process: the part of its block inside that process's
    # previous or next halo (a non-empty block lies in at most one of the two)
    sends = []
    for before, after in ranges:
        pieces = []
        for begin, end in (before, after):
            lo, hi = max(begin, start), min(end, stop)
            if lo < hi:
                pieces.append(block.narrow(split, lo - start, hi - lo))
        sends.append(pieces)

    # what it receives: its halos, cut into the parts each process holds
    shape = list(block.shape)
    halos: List[Optional[torch.Tensor]] = []
    receives: List[List[torch.Tensor]] = [[] for _ in counts]
    for begin, end in ranges[me]:
        if begin == end:
            halos.append(None)
            continue
        shape[split] = end - begin
        halo = torch.empty(shape, dtype=block.dtype, device=block.device)
        halos.append(halo)
        for rank, (count, displ) in enumerate(zip(counts, displs)):
            lo, hi = max(begin, displ), min(end, displ + count)
            if lo < hi:
                receives[rank].append(halo.narrow(split, lo - begin, hi - lo))
    comm.Alltoallw(sends, receives)
    _store(x, halos[0], halos[1])
    return None


def halo_prev(x: DNDarray) -> Optional[torch.Tensor]:
    """
    The rows just before this process's block fetched by the last :func:`get_halo`, as a
    ``torch.Tensor``, or None (no halo fetched, first non-empty block, empty block, or an array
    that is not distributed).

    Examples
    --------
    >>> x = ht.arange(6, split=0); x.get_halo(2)
    >>> x.halo_prev  # on rank 1 of 3
    tensor([0, 1])
    """
    return _stored(x)[0]


def halo_next(x: DNDarray) -> Optional[torch.Tensor]:
    """
    The rows just after this process's block fetched by the last :func:`get_halo`, as a
    ``torch.Tensor``, or None (no halo fetched, last non-empty block, empty block, or an array
    that is not distributed).

    Examples
    --------
    >>> x = ht.arange(6, split=0); x.get_halo(2)
    >>> x.halo_next  # on rank 1 of 3
    tensor([4, 5])
    """
    return _stored(x)[1]


def array_with_halos(x: DNDarray) -> torch.Tensor:
    """
    The local block with the halos of the last :func:`get_halo` attached before and after it
    along the split axis (the block itself when there are none). No communication.

    Examples
    --------
    >>> x = ht.arange(6, split=0); x.get_halo(1)
    >>> x.array_with_halos  # on rank 0 of 3
    tensor([0, 1, 2])
    """
    prev, next = _stored(x)
    if prev is None and next is None:
        return x.larray
    parts = [t for t in (prev, x.larray, next) if t is not None]
    return torch.cat(parts, dim=x.split)
