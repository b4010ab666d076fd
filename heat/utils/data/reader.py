"""
Reading contiguous windows of rows from HDF5 datasets on one background thread.

h5py serialises every HDF5 call under one lock, so several reader threads would not read faster;
but it releases the GIL inside the actual read, so ONE background thread overlaps file IO with the
consumer's work (shared/notes/streaming-facts.md). The reader therefore

* reads a fixed, known-in-advance sequence of row ranges, each with one ``read_direct`` per
  dataset (a single hyperslab: the fast path; never per-row index lists), into a small ring of
  preallocated buffers that is reused window after window -- so memory stays flat whatever the
  file size;
* opens the files itself, in the process that reads (never before a fork), with a chunk cache
  that holds the chunk rows two neighbouring windows can share (windows are chunk-aligned, so
  every chunk is read and decompressed once);
* hands a failure to the consumer, which raises it (the loader agrees on failures across
  processes before every exchange, so a bad file never leaves a process waiting).

Uncompressed data whose bytes on disk are the rows in memory (native byte order, no filters,
contiguous storage or chunks spanning whole rows, a plain file without user block) is read
without HDF5: the file offsets of its blocks come from HDF5 once (:func:`direct_layout`), and a
window is then one ``os.preadv`` per run of blocks that lie one after the other in the file,
straight into the buffer. That path releases the GIL, takes no h5py lock and skips HDF5's
per-chunk work: about twice the rate of ``read_direct`` from the page cache (23 vs 43 ms for
128 MB here). Blocks never written (fill values) and every other layout go through h5py.

The buffers are leased from the loader's :class:`~.buffers.BufferPool`: a buffer the consumer
still views (a batch that is a slice of it) is not reused, and the reader takes another one.

The threads are daemons (an abandoned iterator must never keep a script from ending), but a
daemon thread frozen by the interpreter's shutdown in the middle of a read would hold h5py's lock
for ever, and the h5py objects finalised after it would wait for that lock (a hang) or HDF5 would
be torn down under the read (a segfault) -- seen after ``break`` out of a loader's epoch in the
last lines of a script. So every reader still running at exit is stopped and joined by an
:mod:`atexit` hook, which runs before that shutdown.
"""

from __future__ import annotations

import atexit
import math
import os
import queue
import threading
import time
import weakref
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import h5py
import numpy as np
import torch

from .buffers import Buffer, BufferPool

__all__ = [
    "DatasetInfo",
    "DirectLayout",
    "direct_layout",
    "inspect_datasets",
    "window_rows_for",
    "WindowReader",
]

#: datasets with more blocks than this are read through HDF5 (the direct path's table of block
#: offsets takes 8 bytes a block: 32 MiB at this limit)
DIRECT_MAX_BLOCKS = 1 << 22


@dataclass(frozen=True)
class DatasetInfo:
    """What the loader needs to know about one dataset: where it is, its rows and layout."""

    path: str
    name: str
    shape: Tuple[int, ...]
    dtype: np.dtype
    chunk_rows: Optional[int]  # rows per chunk (None: contiguous storage)
    chunk_bytes: int  # bytes of one chunk (0: contiguous storage)
    file_size: int

    @property
    def rows(self) -> int:
        return self.shape[0]

    @property
    def row_shape(self) -> Tuple[int, ...]:
        return self.shape[1:]

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.row_shape, dtype=np.int64)) * self.dtype.itemsize

    def describe(self) -> Tuple:
        """The fingerprint entry of this dataset: path, name, shape, dtype and file size."""
        return (self.path, self.name, list(self.shape), self.dtype.str, self.file_size)


def _torch_can_hold(dtype: np.dtype) -> bool:
    try:
        torch.from_numpy(np.zeros(2, dtype=dtype)).index_select(0, torch.zeros(1, dtype=torch.long))
        return True
    except (TypeError, RuntimeError):
        return False


def inspect_datasets(paths: Sequence[str], names: Sequence[str]) -> List[DatasetInfo]:
    """
    Open the files, find every dataset and check that they can be streamed together.

    With one path every dataset is in that file; with several, each name must be in exactly one
    of them. The files are closed again.

    Parameters
    ----------
    paths : sequence of str
    names : sequence of str

    Returns
    -------
    list of DatasetInfo
        One per name, in the order of ``names``.

    Raises
    ------
    FileNotFoundError
        If a path does not exist.
    ValueError
        If a file is not HDF5, a dataset is missing (or in several files), is a scalar, has a
        type torch cannot hold, or the datasets differ in their number of rows.
    """
    files = []
    try:
        for path in paths:
            if not os.path.exists(path):
                raise FileNotFoundError(f"paths: no such file {path!r}")
            try:
                files.append(_open(path))
            except OSError as error:
                raise ValueError(f"paths: {path!r} is not a readable HDF5 file ({error})") from None
        infos = []
        for name in names:
            holders = [i for i, f in enumerate(files) if isinstance(f.get(name), h5py.Dataset)]
            if len(holders) != 1:
                where = "none of" if not holders else "several of"
                raise ValueError(
                    f"datasets: {name!r} is in {where} the files {[paths[i] for i in holders] or list(paths)}"
                    f"; each dataset must be in exactly one file"
                )
            path = paths[holders[0]]
            dataset = files[holders[0]][name]
            if dataset.ndim == 0:
                raise ValueError(f"datasets: {name!r} in {path!r} is a scalar; it needs rows")
            dtype = dataset.dtype
            native = dtype.newbyteorder("=")  # what the rows are read as (HDF5 swaps the bytes)
            if dtype.kind not in "biufc" or dtype.fields is not None or not _torch_can_hold(native):
                raise ValueError(
                    f"datasets: {name!r} in {path!r} has type {dtype}, which torch cannot hold"
                )
            chunks = dataset.chunks
            infos.append(
                DatasetInfo(
                    path=path,
                    name=name,
                    shape=tuple(int(n) for n in dataset.shape),
                    dtype=native,
                    chunk_rows=int(chunks[0]) if chunks else None,
                    chunk_bytes=int(np.prod(chunks, dtype=np.int64)) * dtype.itemsize
                    if chunks
                    else 0,
                    file_size=os.path.getsize(path),
                )
            )
        rows = {info.name: info.rows for info in infos}
        if len(set(rows.values())) > 1:
            raise ValueError(
                f"datasets: the datasets must have the same number of rows, got {rows}"
            )
        return infos
    finally:
        for f in files:
            f.close()


def window_rows_for(infos: Sequence[DatasetInfo], window_bytes: int, buffers: int) -> int:
    """
    Rows per window: ``buffers`` windows of all datasets (and their int64 row numbers) fit in
    ``window_bytes``, rounded down to whole chunks.

    Windows are aligned to the chunk rows of all datasets if one such window fits the budget,
    else to the chunk rows of the dataset with the largest rows; a window is never smaller than
    one chunk of that dataset (which may exceed a very small budget).

    Examples
    --------
    >>> info = DatasetInfo("f.h5", "x", (1000, 4), np.dtype("float32"), 100, 1600, 0)
    >>> window_rows_for([info], window_bytes=4 * 250 * 24, buffers=4)
    200
    """
    row_bytes = sum(info.row_bytes for info in infos) + 8
    rows = max(1, int(window_bytes) // (buffers * row_bytes))
    chunked = [info for info in infos if info.chunk_rows]
    if chunked:
        together = math.lcm(*(info.chunk_rows for info in chunked))
        main = max(chunked, key=lambda info: info.row_bytes).chunk_rows
        unit = together if together <= rows else main
        rows = max(unit, rows // unit * unit)
    n_rows = infos[0].rows if infos else 0
    return max(1, min(rows, n_rows))


@dataclass(frozen=True, eq=False)
class DirectLayout:
    """
    Where the rows of an uncompressed dataset lie in its file: blocks of ``block_rows`` rows
    (the chunks; the whole dataset for contiguous storage), block ``k`` at byte ``offsets[k]``
    of the file, -1 for a block never written.
    """

    block_rows: int
    offsets: np.ndarray
    row_bytes: int

    def runs(self, start: int, stop: int):
        """
        ``(first_row, stop_row, file_offset)`` for the rows ``start:stop``: each a stretch of
        rows lying one after the other in the file; ``file_offset`` is -1 for rows never
        written.

        Examples
        --------
        >>> layout = DirectLayout(10, np.array([100, 140, -1, 50]), row_bytes=4)
        >>> list(layout.runs(5, 38))
        [(5, 20, 120), (20, 30, -1), (30, 38, 50)]
        """
        rows, block_bytes = self.block_rows, self.block_rows * self.row_bytes
        at = start
        while at < stop:
            block = at // rows
            offset = int(self.offsets[block])
            end = min(stop, (block + 1) * rows)
            if offset >= 0:
                # extend over the following blocks that continue in the file
                follows = offset + block_bytes
                while end < stop and int(self.offsets[block + 1]) == follows:
                    block += 1
                    end = min(stop, (block + 1) * rows)
                    follows += block_bytes
                yield at, end, offset + (at - at // rows * rows) * self.row_bytes
            else:
                yield at, end, -1
            at = end


def direct_layout(dataset: h5py.Dataset) -> Optional[DirectLayout]:
    """
    The :class:`DirectLayout` of a dataset whose stored bytes are its rows as in memory, or None
    where HDF5 must read it (filters, another byte order, a type that converts, chunks that cut
    rows, compact, virtual or external storage, a user block, another file driver, storage not
    yet allocated, or more than :data:`DIRECT_MAX_BLOCKS` chunks).

    Examples
    --------
    >>> with h5py.File("data.h5", "r") as f:  # doctest: +SKIP
    ...     layout = direct_layout(f["x"])
    """
    if not hasattr(os, "preadv") or dataset.ndim == 0 or dataset.shape[0] == 0:
        return None
    file = dataset.file
    if file.driver != "sec2" or file.userblock_size:
        return None
    dtype = dataset.dtype
    if not dtype.isnative or dtype.fields is not None or dtype.kind not in "biufc":
        return None
    stored = dataset.id.get_type()
    if stored.get_size() != dtype.itemsize:
        return None
    if isinstance(stored, h5py.h5t.TypeAtomicID) and (
        stored.get_precision() != 8 * dtype.itemsize or stored.get_offset() != 0
    ):
        return None  # padded or narrow numbers: HDF5 converts them
    plist = dataset.id.get_create_plist()
    if plist.get_nfilters() or plist.get_external_count():
        return None
    rows = int(dataset.shape[0])
    row_bytes = int(np.prod(dataset.shape[1:], dtype=np.int64)) * dtype.itemsize
    layout = plist.get_layout()
    if layout == h5py.h5d.CONTIGUOUS:
        offset = dataset.id.get_offset()
        if offset is None:
            return None
        return DirectLayout(rows, np.array([offset], dtype=np.int64), row_bytes)
    if layout != h5py.h5d.CHUNKED:
        return None
    chunks = dataset.chunks
    if tuple(chunks[1:]) != tuple(dataset.shape[1:]):
        return None
    block_rows = int(chunks[0])
    blocks = -(-rows // block_rows)
    if blocks > DIRECT_MAX_BLOCKS:
        return None
    offsets = np.full(blocks, -1, dtype=np.int64)
    block_bytes = block_rows * row_bytes
    sizes_ok = True

    def note(info) -> None:
        nonlocal sizes_ok
        if info.byte_offset is None:
            return
        if info.size != block_bytes:
            sizes_ok = False
        block = info.chunk_offset[0] // block_rows
        if block < blocks:
            offsets[block] = info.byte_offset

    if hasattr(dataset.id, "chunk_iter"):  # HDF5 >= 1.14: one pass over the chunk index
        dataset.id.chunk_iter(note)
    else:
        for index in range(dataset.id.get_num_chunks()):
            note(dataset.id.get_chunk_info(index))
    return DirectLayout(block_rows, offsets, row_bytes) if sizes_ok else None


def _pread_into(fd: int, target: memoryview, offset: int, what: str) -> None:
    """Fill ``target`` from the file at ``offset`` (several reads where the system splits it)."""
    while len(target):
        count = os.preadv(fd, [target], offset)
        if count <= 0:
            raise OSError(f"{what}: the file ends before the dataset's data (truncated?)")
        target = target[count:]
        offset += count


def _cache_bytes(infos: Sequence[DatasetInfo], window_rows: int) -> int:
    """
    Chunk cache per dataset: the chunks of one band of chunk rows (what two neighbouring windows
    can share when they are not aligned to every dataset's chunks), at least HDF5's 1 MiB default,
    never more than a window.
    """
    largest = 1 << 20
    for info in infos:
        if info.chunk_rows:
            band = -(-info.row_bytes * info.chunk_rows // info.chunk_bytes) * info.chunk_bytes
            window = -(-window_rows // info.chunk_rows) * info.chunk_rows * info.row_bytes
            largest = max(largest, min(band, window))
    return int(largest)


def _open(path: str, cache_bytes: int = 1 << 20) -> h5py.File:
    """Open read-only; where file locks fail (some parallel file systems), without them."""
    kwargs = dict(rdcc_nbytes=cache_bytes, rdcc_nslots=10007, rdcc_w0=1.0)
    try:
        # HDF5's default locking first: a file open elsewhere in this process with the default
        # flags cannot be opened again with other flags
        return h5py.File(path, "r", **kwargs)
    except OSError as error:
        if "lock" not in str(error).lower():
            raise
        return h5py.File(path, "r", locking=False, **kwargs)


_CLOSED = object()

#: readers whose thread may still run (a thread references its reader, so it stays in here)
_RUNNING_READERS: "weakref.WeakSet[WindowReader]" = weakref.WeakSet()
#: how long the exit hook waits for one reader's thread (it ends after the window being read)
EXIT_JOIN_TIMEOUT_S = 60.0


@atexit.register
def _stop_readers_at_exit() -> None:
    """Stop and join every reader thread before the interpreter shuts down (module docstring)."""
    for reader in list(_RUNNING_READERS):
        reader.close(wait=True, timeout=EXIT_JOIN_TIMEOUT_S)


class WindowReader:
    """
    Read a sequence of row ranges from several datasets (in step) on one background thread.

    Each window is read into a buffer leased from ``pool`` (:mod:`.buffers`); :meth:`get` hands
    the lease to the consumer, who gives it back with :meth:`release`. At most ``depth`` buffers
    are leased by the reader and not yet released: one being read, the others waiting.

    Parameters
    ----------
    infos : sequence of DatasetInfo
    windows : sequence of (start, stop)
        The row ranges to read, in order; each at most ``capacity`` rows.
    capacity : int
        Rows per window.
    pool : BufferPool, optional
        Where the buffers come from (default: a pool of its own). The loader passes its pool, so
        buffers are reused from epoch to epoch.
    depth : int
        Windows read ahead of the consumer at most (2: one being consumed, one being read).
    layouts : dict, optional
        ``(path, dataset name) -> DirectLayout or None``, filled on first use: pass the same
        dict to the readers of the same files to find the layouts once.
    spare_rows : int
        Rows more in each buffer, behind the window, which the consumer may fill (the loader
        lands the rows other processes send in a round there).

    Attributes
    ----------
    bytes_read : int
    read_seconds : float
        Time the thread spent reading.
    wait_seconds : float
        Time :meth:`get` waited for a window.

    Examples
    --------
    >>> reader = WindowReader(infos, [(0, 100), (100, 200)], capacity=100)  # doctest: +SKIP
    >>> buffer = reader.get()  # the first window: buffer.arrays[d][:buffer.filled]  # doctest: +SKIP
    >>> reader.release(buffer)  # doctest: +SKIP
    >>> reader.close()  # doctest: +SKIP
    """

    def __init__(
        self,
        infos: Sequence[DatasetInfo],
        windows: Sequence[Tuple[int, int]],
        capacity: int,
        pool: Optional[BufferPool] = None,
        depth: int = 2,
        layouts: Optional[dict] = None,
        spare_rows: int = 0,
    ):
        self.infos = list(infos)
        self.spare_rows = int(spare_rows)
        self.layouts = {} if layouts is None else layouts
        self.windows = [(int(a), int(b)) for a, b in windows]
        self.capacity = int(capacity)
        self.pool = (
            pool
            if pool is not None
            else BufferPool(
                [info.row_shape for info in self.infos], [info.dtype for info in self.infos]
            )
        )
        self.depth = max(1, int(depth))
        self._cache_bytes = _cache_bytes(self.infos, self.capacity)
        self._permits = threading.Semaphore(self.depth)
        self._ready: "queue.Queue" = queue.Queue()
        self._stopping = threading.Event()
        self.bytes_read = 0
        self.read_seconds = 0.0
        self.wait_seconds = 0.0
        self._next = 0
        self._thread = threading.Thread(target=self._run, name="heat-window-reader", daemon=True)
        _RUNNING_READERS.add(self)
        self._thread.start()

    def _dataset(self, files: dict, info: DatasetInfo) -> h5py.Dataset:
        """The h5py dataset, its file opened on first use (the direct path needs none)."""
        if info.path not in files:
            files[info.path] = _open(info.path, self._cache_bytes)
        return files[info.path][info.name]

    def _read(self, files, descriptors, info, layout, buffer, start, stop) -> None:
        """Rows ``start:stop`` of one dataset into the front of ``buffer``."""
        if not 0 <= start <= stop <= info.rows:
            raise IndexError(
                f"rows {start}:{stop} are outside dataset {info.name!r} of {info.rows} rows"
            )
        if layout is None:
            self._dataset(files, info).read_direct(
                buffer, np.s_[start:stop], np.s_[0 : stop - start]
            )
            return
        flat = memoryview(buffer.reshape(-1).view(np.uint8))
        row_bytes = info.row_bytes
        for first, end, offset in layout.runs(start, stop):
            if offset < 0:  # never written: HDF5 knows the fill value
                self._dataset(files, info).read_direct(
                    buffer, np.s_[first:end], np.s_[first - start : end - start]
                )
                continue
            target = flat[(first - start) * row_bytes : (end - start) * row_bytes]
            _pread_into(descriptors[info.path], target, offset, f"{info.path!r}, {info.name!r}")

    def _run(self) -> None:
        files, descriptors, buffer = {}, {}, None
        try:
            layouts = []
            for info in self.infos:
                key = (info.path, info.name)
                if key not in self.layouts:
                    self.layouts[key] = direct_layout(self._dataset(files, info))
                layouts.append(self.layouts[key])
                if layouts[-1] is not None and info.path not in descriptors:
                    descriptors[info.path] = os.open(info.path, os.O_RDONLY)
            for start, stop in self.windows:
                self._permits.acquire()
                if self._stopping.is_set():
                    return
                began = time.perf_counter()
                buffer = self.pool.take(self.capacity + self.spare_rows)
                count = stop - start
                for info, layout, array in zip(self.infos, layouts, buffer.arrays):
                    if count:
                        self._read(files, descriptors, info, layout, array, start, stop)
                buffer.filled = count
                self.read_seconds += time.perf_counter() - began
                self.bytes_read += count * sum(info.row_bytes for info in self.infos)
                self._ready.put(buffer)
                buffer = None
        except BaseException as error:  # handed to the consumer, which raises it
            self._ready.put(error)
        finally:
            if buffer is not None:
                self.pool.release(buffer)
            for f in files.values():
                try:
                    f.close()
                except Exception:  # closing after a failure must not hide the failure
                    pass
            for fd in descriptors.values():
                os.close(fd)
            _RUNNING_READERS.discard(self)
            self._ready.put(_CLOSED)

    def get(self) -> Buffer:
        """
        The next window, in a leased buffer: ``buffer.arrays[d][:buffer.filled]`` are its rows
        of dataset ``d``. Blocks until it is read; raises the reader's error (or RuntimeError if
        the reader was closed).
        """
        if self._next >= len(self.windows):
            raise IndexError("the reader has no more windows")
        began = time.perf_counter()
        item = self._ready.get()
        self.wait_seconds += time.perf_counter() - began
        if not isinstance(item, Buffer):
            self._next = len(self.windows)
            if item is _CLOSED:
                raise RuntimeError("the reader was closed before it read the window")
            raise item
        self._next += 1
        return item

    def release(self, buffer: Optional[Buffer]) -> None:
        """Give back a buffer from :meth:`get` (None: nothing); the reader may read the next window."""
        if buffer is not None:
            self.pool.release(buffer)
            self._permits.release()

    def close(self, wait: bool = True, timeout: Optional[float] = None) -> None:
        """
        Stop the thread (at the latest after the window being read), give back the windows read
        and not taken; ``wait`` for it to end, at most ``timeout`` seconds (None: as long as it
        takes).

        Do not wait where the caller may hold h5py's lock (a finaliser can run inside any h5py
        call): the thread needs that lock to close its files.
        """
        self._stopping.set()
        self._permits.release()
        if wait:
            self._thread.join(timeout)
            if not self._thread.is_alive():
                _RUNNING_READERS.discard(self)
        while True:
            try:
                item = self._ready.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, Buffer):
                self.pool.release(item)
            elif item is _CLOSED:
                self._ready.put(_CLOSED)  # a later get() must not wait
                break
