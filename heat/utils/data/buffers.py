"""
Row buffers of the streaming loader: one pool, explicit leases, views counted by the pool.

Every buffer the loader fills -- a window the reader reads, the rows a round sends and receives,
the rows of a round in yield order, a batch copied across two rounds -- is a :class:`Buffer` of
one :class:`BufferPool`: one array per dataset, ``capacity`` rows each. A buffer is

* **leased** from :meth:`BufferPool.take` until :meth:`BufferPool.release`: its holder writes and
  reads its raw arrays (:attr:`Buffer.arrays`) freely -- and only then;
* **viewed** after its release while a tensor from :meth:`Buffer.view` is alive: batches that
  are slices of it. Not reused, so a batch the consumer keeps is never overwritten;
* **free** once released and no view is alive: the next :meth:`BufferPool.take` may hand it out
  again, so that memory stays flat from round to round and epoch to epoch (fresh pages cost a
  page fault each, a noticeable share of a pass over a file in the page cache).

The pool counts views with weak references: each :meth:`Buffer.view` builds its tensors on a new
NumPy view object, which ``torch.from_numpy`` keeps alive for as long as any tensor shares the
memory -- slices, ``.numpy()`` of them, a DNDarray around them -- whatever the consumer does. So
no reference counts are compared with thresholds and no ``del`` manages a lifetime: a raw array
kept after the release is a bug of the holder, a view kept is the consumer's right.

The pool holds only released buffers: a lease never given back (an iterator abandoned on another
thread) is collected with its holder. Free buffers beyond ``keep`` are dropped, the oldest first.
Every method may be called from any thread (the reader's, the round assembler's, the consumer's).

With ``pinned=True`` (batches copied to a GPU) the arrays are page-locked host memory; a copy to
the device reads them after the batch is gone, so :meth:`BufferPool.note_device_copy` records an
event after queuing copies and a reused buffer is handed out only once that event completed.
"""

from __future__ import annotations

import threading
import weakref
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

__all__ = ["Buffer", "BufferPool"]


class Buffer:
    """
    One array per dataset, ``capacity`` rows each (see the module notes for its states).

    Attributes
    ----------
    arrays : list of numpy.ndarray
        The raw arrays: read and write them only while holding the lease.
    capacity : int
        Rows of every array.
    filled : int
        Rows filled by the holder (the reader sets it to the rows of the window it read).
    """

    __slots__ = ("arrays", "capacity", "filled", "leased", "_views")

    def __init__(self, arrays: List[np.ndarray]):
        self.arrays = arrays
        self.capacity = int(arrays[0].shape[0]) if arrays else 0
        self.filled = 0
        self.leased = False
        self._views: List[weakref.ref] = []

    def view(self, rows: Optional[int] = None) -> List[torch.Tensor]:
        """
        Tensors on the first ``rows`` rows of every array (default: all), counted by the pool:
        the buffer is not reused while any tensor sharing their memory is alive.

        Examples
        --------
        >>> buffer = pool.take(100)  # doctest: +SKIP
        >>> x, y = buffer.view(10)  # doctest: +SKIP
        >>> pool.release(buffer)  # reused only once x, y and their slices are gone  # doctest: +SKIP
        """
        if not self.leased:
            raise ValueError("view: the buffer is not leased (views are made by its holder)")
        rows = self.capacity if rows is None else int(rows)
        tensors = []
        for array in self.arrays:
            handle = array[:rows].view()  # a new object: torch keeps it alive with the memory
            self._views.append(weakref.ref(handle))
            tensors.append(torch.from_numpy(handle))
        return tensors

    @property
    def viewed(self) -> bool:
        """Whether a tensor from :meth:`view` (or one sharing its memory) is alive."""
        self._views = [ref for ref in self._views if ref() is not None]
        return bool(self._views)


class BufferPool:
    """
    The buffers of one loader (see the module notes).

    Parameters
    ----------
    row_shapes : sequence of tuple
        The row shape of each dataset.
    dtypes : sequence of numpy dtypes
        The type of each dataset.
    pinned : bool
        Page-locked memory (for copies to a GPU).
    keep : int
        Free buffers kept for reuse at most.

    Examples
    --------
    >>> pool = BufferPool([(3,), ()], [np.float32, np.int64])
    >>> buffer = pool.take(10)
    >>> buffer.arrays[0].shape, buffer.leased
    ((10, 3), True)
    >>> pool.release(buffer)
    >>> pool.take(8) is buffer  # free again: reused
    True
    """

    def __init__(
        self,
        row_shapes: Sequence[Tuple[int, ...]],
        dtypes: Sequence,
        pinned: bool = False,
        keep: int = 8,
    ):
        self.row_shapes = [tuple(int(n) for n in shape) for shape in row_shapes]
        self.dtypes = [np.dtype(d) for d in dtypes]
        self.pinned = bool(pinned)
        self.keep = int(keep)
        self.allocated = 0  # buffers made so far (tests and statistics)
        self._released: List[Buffer] = []  # viewed or free, oldest first
        self._lock = threading.Lock()
        self._device_copy = None  # the CUDA event after the last queued device copies

    def take(self, rows: int, capacity: Optional[int] = None) -> Buffer:
        """
        A leased buffer of at least ``rows`` rows: the smallest free one of at most twice
        ``capacity`` (default ``rows``) rows, or a new one of ``capacity`` rows.
        """
        rows = int(rows)
        want = max(rows, int(capacity) if capacity is not None else rows, 1)
        with self._lock:
            fitting = [b for b in self._released if rows <= b.capacity <= 2 * want and not b.viewed]
            if fitting:
                buffer = min(fitting, key=lambda b: b.capacity)
                self._released.remove(buffer)
                event = self._device_copy
            else:
                buffer, event = None, None
        if buffer is None:
            buffer = Buffer(self._allocate(want))
            with self._lock:
                self.allocated += 1
        elif event is not None:
            event.synchronize()  # a copy to the device may still read it
        buffer.leased, buffer.filled = True, 0
        return buffer

    def release(self, buffer: Optional[Buffer]) -> None:
        """
        End the lease of ``buffer`` (None: nothing): its raw arrays are no longer the holder's.
        It is reused once no view of it is alive.
        """
        if buffer is None:
            return
        if not buffer.leased:
            raise ValueError("release: the buffer is not leased (released twice?)")
        buffer.leased = False
        with self._lock:
            self._released.append(buffer)
            free = [b for b in self._released if not b.viewed]
            for extra in free[: max(0, len(free) - self.keep)]:
                self._released.remove(extra)

    def counts(self) -> Tuple[int, int]:
        """``(viewed, free)``: released buffers still viewed, and free ones."""
        with self._lock:
            viewed = sum(1 for b in self._released if b.viewed)
            return viewed, len(self._released) - viewed

    def note_device_copy(self) -> None:
        """Record that copies from views to the device were queued (pinned pools only)."""
        if self.pinned:
            event = torch.cuda.Event()
            event.record()
            self._device_copy = event

    def _allocate(self, rows: int) -> List[np.ndarray]:
        if not self.pinned:
            return [np.empty((rows,) + s, dtype=d) for s, d in zip(self.row_shapes, self.dtypes)]
        return [
            torch.empty(
                (rows,) + s, dtype=torch.from_numpy(np.empty(0, d)).dtype, pin_memory=True
            ).numpy()
            for s, d in zip(self.row_shapes, self.dtypes)
        ]
