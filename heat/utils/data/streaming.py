"""
``StreamingDataLoader``: train on HDF5 datasets larger than memory, globally shuffled, exactly
once per epoch, resumable on any number of processes.

The loader composes parts, each in its own module:

* the plan (:mod:`.plan`): which rows each process yields in which order -- pure, and the only
  thing a resume rebuilds; its docstring states the guarantees;
* the reader (:mod:`.reader`): contiguous windows from HDF5 on one background thread per process;
* the exchange (:mod:`.exchange`): one all-to-all per round through the communicator;
* the rounds (:mod:`.rounds`): a round's rows in yield order, assembled on a background thread
  while the consumer works on the round before;
* the buffers (:mod:`.buffers`): one pool of row buffers with explicit leases and counted views.

This module keeps the public class: its arguments, the position (epoch, resume) and the loop
that hands out batches.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import time
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torch

import heat as ht
from heat.core.communication import verdicts
from heat.core.sanitation import check_bool, check_int

from .arguments import MASK63, STATE_FORMAT, Transforms, check_names, check_paths, check_state
from .buffers import BufferPool
from .plan import TAIL_POLICIES, EpochPlan
from .reader import DatasetInfo, inspect_datasets, window_rows_for
from .rounds import RoundsAhead, RowQueue, start_epoch

__all__ = ["StreamingDataLoader", "WINDOW_BUFFERS"]

#: Window-sized buffers a process holds at most: the reader's two windows (the one the round being
#: assembled takes its rows from, and the next one), the rows of two rounds in yield order (the
#: one being yielded and the next one, assembled ahead; the one before is free again once the
#: consumer holds a batch of the current one), and with several processes, shuffled, the rows
#: received in a round (behind each of the reader's windows: up to two more) and the rows a round
#: sends (``(p - 1) / p`` of a window, in the node's shared memory or a buffer for MPI). One
#: process needs only the first four.
WINDOW_BUFFERS = 7
#: the background times of an iteration that :meth:`StreamingDataLoader.stats` reports
_TIMES = ("read", "read_wait", "exchange", "gather", "round_wait")


def _fresh_stats() -> Dict[str, float]:
    return dict(
        samples=0, batches=0, bytes=0, elapsed=0.0, waiting=0.0, **dict.fromkeys(_TIMES, 0.0)
    )


def _position(position: Tuple[int, List[List[int]]]) -> Tuple[str, Dict[str, str]]:
    """What the processes must agree on after checking a loaded state: the position."""
    epoch, history = position
    return "the loader states", {"epoch": repr(epoch), "history": repr(history)}


def _files(infos: List[DatasetInfo]) -> Tuple[str, Dict[str, str]]:
    """What the processes must see alike: every dataset's file, shape, type and file size."""
    return "the files", {f"dataset {info.name!r}": repr(info.describe()) for info in infos}


class StreamingDataLoader:
    """
    Stream rows of HDF5 datasets into training: globally shuffled, exactly once per epoch,
    resumable on any number of processes, in bounded memory.

    Every process reads contiguous, chunk-aligned windows of rows (per dataset one h5py
    ``read_direct``, or for uncompressed data ``os.preadv`` straight from the file, about twice as
    fast) on one background thread into reused buffers; the windows all processes hold at a time
    form a round, whose rows are shuffled uniformly across the processes in one all-to-all, on a
    second background thread while the consumer works on the round before. Each process then
    yields batches of its share. Which rows each process yields in
    which order is a pure function of (seed, epoch, data size, process count, batch size, tail
    policy, position) -- :mod:`heat.utils.data.plan` states the guarantees: exactly once per epoch
    (or the explicit tail policy), a uniform shuffle within a round of ``processes x window``
    rows, determinism, and resume on another process count.

    Parameters
    ----------
    paths : str, os.PathLike or sequence of them
        HDF5 file(s). With one file every dataset is in it; with several, each dataset name must
        be in exactly one of them. All datasets need the same number of rows (axis 0).
    datasets : str or sequence of str
        The datasets read in step; a batch holds one tensor per dataset, in this order.
    batch_size : int
        Rows per batch and process (see ``tail`` for the last batches).
    shuffle : bool
        Shuffle (keyed by ``seed`` and the epoch); without, rows come in file order, the
        processes' shares interleaved by windows.
    seed : int
        Non-negative.
    window_bytes : int
        Memory budget of the loader's row buffers per process. A window is a seventh of it: the
        reader holds two windows (one being read, one waiting), the shuffled rows of two rounds
        are held (the one being yielded, the next one assembled ahead), and with several
        processes the rows a round sends and receives take up to three more (one process uses
        four windows). Windows are
        aligned to the chunks of the datasets (at least one chunk). The shuffle buffer is
        ``processes x window`` rows.
    tail : {"short", "drop", "wrap"}
        What happens when the rows do not fill the last global batch (``processes x
        batch_size``): "short" -- every row exactly once, the last two batches of each process
        share its rest evenly; "drop" -- fewer than one global batch of rows is left out
        (:attr:`dropped`); "wrap" -- the last batches are filled with rows yielded a second time
        (:attr:`wrapped`). Every process yields the same number of batches in every case.
    return_indices : bool
        Append each batch's global row numbers (int64) as the last element.
    transforms : callable or sequence of callables or None
        One per dataset (None: unchanged); a single callable if there is one dataset. Called per
        row, as ``transform(row)`` or -- when it has a ``generator`` parameter --
        ``transform(row, generator=g)`` with a ``torch.Generator`` seeded from (seed, epoch, global
        row number), so random augmentations reproduce, also after a resume. The results of a
        batch are stacked.
    device : str, heat Device, torch.device or None
        Where batches go (default: heat's default device). On a GPU the rows are staged in pinned
        host memory and copied without blocking.
    comm : MPICommunication or None
        The processes that share the data (default: heat's default communicator).
    progress : bool
        Show a tqdm progress bar on rank 0 (needs the ``tqdm`` package: ``pip install heat-mpi[progress]``).
    as_dndarray : bool
        Yield split-0 DNDarrays (one row block per process) instead of torch tensors.

    Attributes
    ----------
    epoch : int
        The epoch the next iteration yields (see :meth:`set_epoch`).
    window_rows : int
        Rows per window.
    rows : int
        Rows of the data.

    Raises
    ------
    TypeError, ValueError
        For a bad argument, naming it, on every process before any communication.
    FileNotFoundError, ValueError
        For a missing or bad file or dataset, on every process.

    Notes
    -----
    Iterate once per epoch on every process together (each round is an all-to-all). Iterating to
    the end moves the loader to the next epoch; :meth:`set_epoch` selects one explicitly. Batches
    are views of the loader's buffers, which are not reused while a batch (or a view of it) is
    alive: keeping batches is safe, and costs memory.

    Examples
    --------
    >>> loader = ht.utils.data.StreamingDataLoader("data.h5", ["x", "y"], batch_size=256)
    >>> for epoch in range(loader.epoch, 10):
    ...     loader.set_epoch(epoch)
    ...     for x, y in loader:
    ...         loss = train_step(x, y)
    ...     if ht.MPI_WORLD.rank == 0:
    ...         torch.save(loader.state_dict(), "loader.pt")
    """

    def __init__(
        self,
        paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
        datasets: Union[str, Sequence[str]] = ("x", "y"),
        batch_size: int = 32,
        shuffle: bool = True,
        seed: int = 0,
        window_bytes: int = 256 * 2**20,
        tail: str = "short",
        return_indices: bool = False,
        transforms: Any = None,
        device: Any = None,
        comm: Any = None,
        progress: bool = False,
        as_dndarray: bool = False,
    ):
        # every check before any communication, from the arguments alone (the same on all ranks)
        self.paths = check_paths(paths)
        self.datasets = check_names(datasets)
        self.batch_size = check_int(batch_size, "batch_size", 1)
        self.shuffle = check_bool(shuffle, "shuffle")
        self.seed = check_int(seed, "seed", 0)
        if self.seed > MASK63:
            raise ValueError(f"seed must be < 2**63, got {seed}")
        self.window_bytes = check_int(window_bytes, "window_bytes", 1)
        if not isinstance(tail, str) or tail not in TAIL_POLICIES:
            raise ValueError(f"tail must be one of {TAIL_POLICIES}, got {tail!r}")
        self.tail = tail
        self.return_indices = check_bool(return_indices, "return_indices")
        self._transforms = Transforms(transforms, len(self.datasets))
        self.progress = check_bool(progress, "progress")
        self.as_dndarray = check_bool(as_dndarray, "as_dndarray")
        self.device = ht.sanitize_device(device)
        self.comm = ht.sanitize_comm(comm)
        if self.progress:
            try:
                import tqdm  # noqa: F401
            except ImportError:
                raise ImportError(
                    "progress=True needs the tqdm package (pip install tqdm, or heat-mpi[progress])"
                ) from None

        self._infos = self._inspect_everywhere()
        self.rows = self._infos[0].rows
        self.window_rows = window_rows_for(self._infos, self.window_bytes, WINDOW_BUFFERS)
        description = [info.describe() for info in self._infos]
        self._fingerprint = hashlib.sha256(json.dumps(description).encode()).hexdigest()

        self.epoch = 0
        self._history: List[List[int]] = []  # segments of the current epoch (see plan.EpochPlan)
        self._plan_cache: Optional[Tuple[Tuple, EpochPlan]] = None
        self._active = None
        self._stats = _fresh_stats()
        # the buffers of every epoch (fresh pages cost a page fault each, every epoch)
        self._pool: Optional[BufferPool] = None
        self._running: Optional[RoundsAhead] = None  # the rounds thread of the last epoch
        self._node = None  # the node's shared memory of the exchange (exchange.NodeRoute)
        self._layouts: dict = {}  # where uncompressed datasets lie in their files (reader.py)

    # -- files -------------------------------------------------------------------------------------

    def _inspect_everywhere(self) -> List[DatasetInfo]:
        """Inspect the files on every process: the same error everywhere, or the same files."""
        paths = [os.path.abspath(path) for path in self.paths]
        return verdicts.agree(self.comm, inspect_datasets, paths, self.datasets, fingerprint=_files)

    # -- position ----------------------------------------------------------------------------------

    def _plan(self) -> EpochPlan:
        key = (
            self.epoch,
            tuple(tuple(entry) for entry in self._history[:-1]),
            tuple(self._history[-1][:2]) if self._history else None,
            self.comm.size,
        )
        if self._plan_cache is None or self._plan_cache[0] != key:
            plan = EpochPlan(
                self.rows,
                self.window_rows,
                self.comm.size,
                self.batch_size,
                seed=self.seed,
                epoch=self.epoch,
                shuffle=self.shuffle,
                tail=self.tail,
                history=self._history,
            )
            self._plan_cache = (key, plan)
        plan = self._plan_cache[1]
        if self._history and tuple(self._history[-1][:2]) == (plan.process_count, plan.batch_size):
            if plan.start_step != self._history[-1][2]:
                plan = copy.copy(plan)  # the same segment at another step
                plan.start_step = self._history[-1][2]
        return plan

    def __len__(self) -> int:
        """Batches this process yields in the current epoch (the same on every process)."""
        return self._plan().steps

    @property
    def dropped(self) -> int:
        """Rows the current epoch leaves out (``tail="drop"``; 0 otherwise)."""
        return self._plan().dropped

    @property
    def wrapped(self) -> int:
        """Rows the current epoch yields a second time (``tail="wrap"``; 0 otherwise)."""
        return self._plan().wrapped

    def set_epoch(self, epoch: int) -> None:
        """
        Select the epoch the next iteration yields. Selecting the current epoch keeps the
        position (e.g. one loaded by :meth:`load_state_dict`); another epoch starts at its
        beginning.

        Examples
        --------
        >>> loader.set_epoch(3)  # doctest: +SKIP
        """
        epoch = check_int(epoch, "epoch", 0)
        if epoch != self.epoch:
            self._close_active()
            self.epoch, self._history = epoch, []

    def state_dict(self) -> Dict[str, Any]:
        """
        The position: a few integers and a fingerprint of the data; the same on every process.

        It counts the batches yielded so far (not the ones read ahead). Save it from one process
        and load it on all of them, also on another number of processes.

        Examples
        --------
        >>> state = loader.state_dict()  # doctest: +SKIP
        >>> state["epoch"], state["history"]  # (processes, batch size, batches) per segment  # doctest: +SKIP
        (2, [[3, 64, 120]])
        """
        return {
            "format": STATE_FORMAT,
            "fingerprint": self._fingerprint,
            "seed": self.seed,
            "shuffle": self.shuffle,
            "tail": self.tail,
            "window_rows": self.window_rows,
            "epoch": self.epoch,
            "history": [list(entry) for entry in self._history],
        }

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """
        Continue from a saved position (call it on every process, after constructing the loader,
        with the same state: save it from one process, load it on all).

        Every process checks the state, then one small all-gather agrees on the outcome and on
        the position, so a bad state, or states that differ between processes (which would
        yield some rows twice and others never), raise the same error on every process.

        Raises
        ------
        TypeError
            If ``state`` is not a state dict (on every process, if on one).
        ValueError
            If it was saved for other data (paths, dataset names, shapes, types or file sizes
            differ) or with another seed, shuffle, tail or window size, or is inconsistent (on
            every process, if on one); or if the processes were given different states (naming
            the first entry that differs and which processes have which value).

        Examples
        --------
        >>> loader.load_state_dict(torch.load("loader.pt"))  # doctest: +SKIP
        """
        epoch, history = verdicts.agree(self.comm, check_state, state, self, fingerprint=_position)
        self._close_active()
        self.epoch, self._history = epoch, history

    # -- iteration ---------------------------------------------------------------------------------

    def _close_active(self) -> None:
        active = self._active() if self._active is not None else None
        self._active = None
        if active is not None:
            active.close()

    def __iter__(self):
        self._close_active()
        iterator = self._iterate()
        # a weak reference: an abandoned iterator is then closed at once by reference counting,
        # not later by the cycle collector (which may run in any thread, e.g. inside an h5py call)
        self._active = weakref.ref(iterator)
        return iterator

    def _end_running(self) -> None:
        """Let an earlier epoch's rounds thread finish the rounds it started (everywhere)."""
        running, self._running = self._running, None
        if running is not None:
            running.end()

    def _iterate(self):
        plan = self._plan()
        segment, rank = plan.segment, self.comm.rank
        cuda = self.device.torch_device.startswith("cuda")
        self._end_running()
        if self._pool is None:
            shapes, dtypes = zip(*((info.row_shape, info.dtype) for info in self._infos))
            self._pool = BufferPool(shapes, dtypes, pinned=cuda)
        ahead = self._running = start_epoch(
            plan, self.comm, self._infos, self.window_rows, self._pool, self._layouts, self._node
        )
        self._node = ahead.assembler.exchanger.node or self._node  # its shared memory, kept
        reader = ahead.assembler.reader
        rows = RowQueue(self._pool)
        bar = None
        if self.progress and rank == 0:
            from tqdm import tqdm

            bar = tqdm(total=plan.steps, initial=plan.steps_before + plan.start_step, unit="batch")
        stats = self._stats = _fresh_stats()
        self._history = plan.history(plan.start_step)
        position = self._history[-1]  # [processes, batch size, steps]: updated in place
        full, last = segment.batch_sizes(rank)
        batch_size, step = segment.batch_size, plan.start_step
        finished = False
        # batches that are plain views (no transform, no device copy, no DNDarray) are cut in
        # bulk: a run of full batches inside one piece is one split per dataset
        plain_views = not (self._transforms.any or cuda or self.as_dndarray)
        began = time.perf_counter()
        try:
            while step < segment.steps:
                entered = time.perf_counter()
                rows.extend(ahead.due(step))
                run = 0
                if plain_views and step < full:
                    # full batches left in the front piece before the next round is due
                    due = ahead.next_due()
                    run = min(
                        rows.front // batch_size,
                        full - step,
                        (segment.steps if due is None else due) - step,
                    )
                if run > 1:
                    batches = rows.cut(run, batch_size, self.return_indices)
                else:
                    size = batch_size if step < full else last[step - full]
                    batches = [self._batch(rows, size, plan.epoch, cuda)]
                stats["waiting"] += time.perf_counter() - entered
                for i in range(len(batches)):
                    batch, batches[i] = batches[i], None  # the consumer's is the only one
                    stats["samples"] += batch_size if step < full else last[step - full]
                    step += 1
                    position[2] = step
                    stats["batches"] += 1
                    stats["elapsed"] = time.perf_counter() - began
                    if bar is not None:
                        bar.update(1)
                    yield batch
                    if i + 1 < len(batches):
                        entered = time.perf_counter()
                        ahead.step(step)  # the next round may start while this one is consumed
                        stats["waiting"] += time.perf_counter() - entered
            ahead.finish()
            # the epoch is complete: the next iteration is the next epoch
            self.epoch, self._history = plan.epoch + 1, []
            finished = True
        finally:
            ahead.stop()
            rows.clear()
            stats["elapsed"] = time.perf_counter() - began
            assembler = ahead.assembler
            stats.update(
                round_wait=ahead.wait_seconds,
                exchange=assembler.exchange_seconds,
                gather=assembler.gather_seconds,
            )
            if reader is not None:
                stats.update(
                    bytes=reader.bytes_read, read=reader.read_seconds, read_wait=reader.wait_seconds
                )
            if finished:
                self._end_running()  # the thread has ended: frees its communicator
            if bar is not None:
                bar.close()

    def _batch(self, rows: RowQueue, count: int, epoch: int, cuda: bool) -> tuple:
        """The next ``count`` rows as a batch: transformed, on the device, as DNDarrays."""
        tensors, numbers = rows.take(count)
        if self._transforms.any:
            tensors = self._transforms.apply(tensors, numbers, self.seed, epoch)
        if self.return_indices:
            tensors.append(torch.from_numpy(numbers))
        if cuda:
            tensors = [t.to(self.device.torch_device, non_blocking=True) for t in tensors]
            self._pool.note_device_copy()  # the pinned rows are reused after these copies
        if self.as_dndarray:
            tensors = [
                ht.array(t, copy=None, is_split=0, device=self.device, comm=self.comm)
                for t in tensors
            ]
        return tuple(tensors)

    # -- statistics ----------------------------------------------------------------------------

    def stats(self) -> Dict[str, float]:
        """
        Throughput of the current or last iteration, reduced over the processes (collective:
        call it on every process).

        Returns
        -------
        dict
            ``samples_per_s`` (rows yielded by all processes per second), ``mb_per_s`` (MB read
            from the files by all processes per second), ``wait_fraction`` (of the elapsed time,
            the share the consumer spent inside the loader, waiting for data -- the largest over
            the processes) and ``wait_fraction_mean``; ``samples``, ``bytes`` and ``seconds``
            (the longest elapsed time of a process); where the time went in the background,
            the largest over the processes: ``read_s`` (the reader thread reading),
            ``read_wait_s`` (the rounds thread waiting for windows), ``exchange_s`` and
            ``gather_s`` (the rounds thread exchanging rows and gathering them into yield
            order), ``round_wait_s`` (the consumer waiting for a round: the stall).

        Examples
        --------
        >>> loader.stats()["samples_per_s"]  # doctest: +SKIP
        1234567.8
        """
        s = self._stats
        mine = [
            s["samples"],
            s["bytes"],
            s["elapsed"],
            s["waiting"] / s["elapsed"] if s["elapsed"] else 0.0,
        ]
        mine += [s[name] for name in _TIMES]
        everyone = self.comm.allgather(mine)
        samples = sum(e[0] for e in everyone)
        nbytes = sum(e[1] for e in everyone)
        seconds = max(e[2] for e in everyone)
        fractions = [e[3] for e in everyone]
        result = {
            "samples_per_s": samples / seconds if seconds else 0.0,
            "mb_per_s": nbytes / 1e6 / seconds if seconds else 0.0,
            "wait_fraction": max(fractions),
            "wait_fraction_mean": sum(fractions) / len(fractions),
            "samples": float(samples),
            "bytes": float(nbytes),
            "seconds": seconds,
        }
        for i, name in enumerate(_TIMES):
            result[name + "_s"] = max(e[4 + i] for e in everyone)
        return result
