"""
``StreamingDataLoader``: train on HDF5 datasets larger than memory, globally shuffled, exactly
once per epoch, resumable on any number of processes.

The loader composes three parts, each in its own module:

* the plan (:mod:`.plan`): which rows each process yields in which order -- pure, and the only
  thing a resume rebuilds; its docstring states the guarantees;
* the reader (:mod:`.reader`): contiguous windows from HDF5 on one background thread per process,
  into a ring of reused buffers;
* the exchange (:mod:`.exchange`): one all-to-all per round through the communicator.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import math
import os
import sys
import time
import weakref
from collections import deque
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

import heat as ht
from heat.core.communication import verdicts

from .exchange import Exchanger, _row_bytes_view
from .plan import TAIL_POLICIES, EpochPlan, derive_key
from .reader import DatasetInfo, WindowReader, inspect_datasets, window_rows_for

__all__ = ["StreamingDataLoader", "WINDOW_BUFFERS"]

#: Window-sized buffers a process holds at most: the reader's ring (one window being read, one
#: waiting), the shuffled rows of two rounds being yielded (the current and the previous one, which
#: the last batches may still view), and with several processes, shuffled, the rows received in a
#: round (behind each window of the ring: up to two more) and the outgoing rows of a round as bytes
#: (``(p - 1) / p`` of a window each). One process needs only the first four.
WINDOW_BUFFERS = 7
_STATE_FORMAT = "heat.utils.data.StreamingDataLoader/1"
_MASK63 = (1 << 63) - 1


def _state_summary(position: Tuple[int, List[List[int]]]) -> Tuple[str, Dict[str, str]]:
    """What the processes must agree on after checking a loaded state: the position."""
    epoch, history = position
    return "the loader states", {"epoch": repr(epoch), "history": repr(history)}


def _check_flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _check_int(value: Any, name: str, low: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def _check_paths(paths: Any) -> List[str]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    if not isinstance(paths, (list, tuple)) or not paths:
        raise TypeError(f"paths must be a path or a non-empty sequence of paths, got {paths!r}")
    result = []
    for path in paths:
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"paths must hold str or os.PathLike, got {type(path).__name__}")
        path = os.fsdecode(os.fspath(path))
        if not path:
            raise ValueError("paths must not hold an empty path")
        result.append(path)
    if len(set(result)) != len(result):
        raise ValueError(f"paths must not repeat a file, got {result}")
    return result


def _check_names(datasets: Any) -> List[str]:
    if isinstance(datasets, str):
        datasets = [datasets]
    if not isinstance(datasets, (list, tuple)) or not datasets:
        raise TypeError(f"datasets must be a name or a non-empty sequence of names, got {datasets!r}")
    for name in datasets:
        if not isinstance(name, str) or not name:
            raise TypeError(f"datasets must hold non-empty str names, got {name!r}")
    if len(set(datasets)) != len(datasets):
        raise ValueError(f"datasets must not repeat a name, got {list(datasets)}")
    return list(datasets)


def _accepts_generator(function: Callable) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return any(
        p.name == "generator" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
    )


def _check_transforms(transforms: Any, count: int) -> List[Optional[Tuple[Callable, bool]]]:
    if transforms is None:
        return [None] * count
    if callable(transforms):
        if count != 1:
            raise ValueError(
                f"transforms: one callable for {count} datasets is ambiguous; pass a sequence "
                f"with one callable (or None) per dataset"
            )
        transforms = [transforms]
    if not isinstance(transforms, (list, tuple)) or len(transforms) != count:
        raise TypeError(
            f"transforms must be None, a callable or a sequence of {count} callables or None"
        )
    checked = []
    for transform in transforms:
        if transform is not None and not callable(transform):
            raise TypeError(f"transforms must hold callables or None, got {type(transform).__name__}")
        checked.append(None if transform is None else (transform, _accepts_generator(transform)))
    return checked


def _is_range(index: np.ndarray) -> bool:
    """Whether ``index`` counts up by one (``a, a + 1, ..., b - 1``; empty included)."""
    n = len(index)
    return n == 0 or (index[-1] - index[0] == n - 1 and (n == 1 or bool((np.diff(index) == 1).all())))


def _release_unused(reader: WindowReader, pending: List[int]) -> None:
    """Give the reader back every pending slot that no batch views any more."""
    for slot in list(pending):
        if not reader.in_use(slot):
            reader.release(slot)
            pending.remove(slot)


class _Round:
    """
    The rows of one round this process yields, in yield order: one contiguous tensor per
    dataset (batches are views of it), their global row numbers, and what to give back when the
    last row is taken.
    """

    def __init__(self, tensors: List[torch.Tensor], rows: np.ndarray, release, holds_slot: bool):
        self.tensors = tensors
        self.rows = rows
        self.release = release
        self.holds_slot = holds_slot  # the tensors view a buffer of the reader's ring
        self.at = 0

    @property
    def left(self) -> int:
        return len(self.rows) - self.at

    def detach(self) -> None:
        """Copy the rows still to be yielded out of the reader's buffer and give it back."""
        self.tensors = [t[self.at :].clone() for t in self.tensors]
        self.rows = self.rows[self.at :]
        self.at = 0
        self._give_back()

    def drop(self) -> None:
        """All rows taken: no reference to the buffers may remain (the reader checks that)."""
        self.tensors = []
        self._give_back()

    def _give_back(self) -> None:
        self.holds_slot = False
        release, self.release = self.release, None
        if release is not None:
            release()


class _OutputPool:
    """
    Buffers for the shuffled rows of a round, reused once no batch views them any more (the
    NumPy array's reference count tells: every batch view holds a reference to it).
    """

    def __init__(self, infos: Sequence[DatasetInfo], pinned: bool):
        self._infos = infos
        self._pinned = pinned
        self._free: List[List[np.ndarray]] = []

    def take(self, rows: int) -> List[np.ndarray]:
        for i, arrays in enumerate(self._free):
            if arrays[0].shape[0] >= rows and all(sys.getrefcount(a) <= 3 for a in arrays):
                if self._pinned:
                    # no batch views it any more, but a copy to the GPU may still read it
                    torch.cuda.current_stream().synchronize()
                return self._free.pop(i)
        del self._free[3:]  # keep a few; the rest go to whoever still views them
        capacity = max(rows, 1)
        if self._pinned:
            return [
                torch.empty((capacity,) + info.row_shape, dtype=_torch_dtype(info), pin_memory=True).numpy()
                for info in self._infos
            ]
        return [np.empty((capacity,) + info.row_shape, dtype=info.dtype) for info in self._infos]

    def give_back(self, arrays: List[np.ndarray]) -> None:
        self._free.append(arrays)


def _torch_dtype(info: DatasetInfo) -> torch.dtype:
    return torch.from_numpy(np.empty(0, dtype=info.dtype)).dtype


def _gather_into(sources: Sequence[torch.Tensor], index: np.ndarray, targets: Sequence[torch.Tensor]) -> None:
    """
    The rows ``index`` of every source into the first rows of the matching target. Rows travel
    as bytes: one memcpy per row whatever the row's shape and type (``index_select`` of wide
    float rows is several times slower than of the same rows as bytes).
    """
    order = torch.from_numpy(index)
    n = len(index)
    for source, target in zip(sources, targets):
        items = int(np.prod(source.shape[1:], dtype=np.int64))
        torch.index_select(
            _row_bytes_view(source, source.shape[0], items), 0, order,
            out=_row_bytes_view(target, n, items),
        )


def _gather(sources: Sequence[torch.Tensor], index: np.ndarray, pool: _OutputPool):
    """The rows ``index`` of every source, into a pooled buffer: (tensors, release)."""
    arrays = pool.take(len(index))
    tensors = [torch.from_numpy(array[: len(index)]) for array in arrays]
    _gather_into(sources, index, tensors)
    return tensors, lambda: pool.give_back(arrays)


class _Agreement:
    """
    Whether a window read failed anywhere, agreed on without making the processes wait for each
    other in every round: a non-blocking allreduce of the flag, completed one round later (or at
    the end). A process whose read failed completes its own at once; the others learn it when
    they complete theirs. Rounds that exchange rows carry the flag in the exchange. Once a
    failure is known, one all-gather of the errors (:meth:`fail`) makes every process raise the
    same exception: the lowest failing process's, with its message, as ``ht.load`` does.
    """

    def __init__(self, comm):
        self.comm = comm
        self._pending = None  # (request, result tensor)

    def start(self, error: Optional[BaseException]) -> None:
        """Start this round's verdict; a process whose read failed waits for it and raises."""
        if self.comm.size == 1:
            self.fail(error)
            return
        flag = torch.tensor([int(error is not None)], dtype=torch.int32)
        self._pending = (self.comm.Iallreduce(flag, torch.empty(1, dtype=torch.int32)), flag)
        if error is not None:
            pending, self._pending = self._pending, None
            pending[0].Wait()  # the others learn of it from this allreduce
            self.fail(error)

    def settle(self, error: Optional[BaseException] = None) -> None:
        """
        Complete the previous round's verdict; if a read failed anywhere, raise (``error``: this
        process's failure of the current round, if any, which then takes part in the verdict).
        """
        pending, self._pending = self._pending, None
        if pending is not None:
            failed = int(pending[0].Wait()[0])
            if failed:
                self.fail(error)

    def fail(self, error: Optional[BaseException]) -> None:
        """
        Called by every process once all know that a read failed (``error``: this process's,
        or None): raise the same exception everywhere (one all-gather of the errors), or return
        if there is none (one process).
        """
        if self.comm.size == 1:
            if error is not None:
                raise error
            return
        verdicts.raise_if_any(self.comm, error)
        raise RuntimeError("reading a window failed on another process")  # pragma: no cover


class StreamingDataLoader:
    """
    Stream rows of HDF5 datasets into training: globally shuffled, exactly once per epoch,
    resumable on any number of processes, in bounded memory.

    Every process reads contiguous, chunk-aligned windows of rows (per dataset one h5py
    ``read_direct``, or for uncompressed data ``os.preadv`` straight from the file, about twice as
    fast) on one background thread into a small ring of reused buffers; the windows all processes hold
    at a time form a round, whose rows are shuffled uniformly across the processes in one
    all-to-all. Each process then yields batches of its share. Which rows each process yields in
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
        reader's ring holds two windows (one being read, one waiting), the shuffled rows of two
        rounds are held while their batches are yielded, and with several processes the rows
        a round sends and receives take up to three more (one process uses four windows). Windows are
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
    are fresh tensors, except without shuffle, where a batch that lies in one window is a view of
    the reader's buffer (which is then not reused while the batch is alive).

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
        self.paths = _check_paths(paths)
        self.datasets = _check_names(datasets)
        self.batch_size = _check_int(batch_size, "batch_size", 1)
        self.shuffle = _check_flag(shuffle, "shuffle")
        self.seed = _check_int(seed, "seed", 0)
        if self.seed > _MASK63:
            raise ValueError(f"seed must be < 2**63, got {seed}")
        self.window_bytes = _check_int(window_bytes, "window_bytes", 1)
        if not isinstance(tail, str) or tail not in TAIL_POLICIES:
            raise ValueError(f"tail must be one of {TAIL_POLICIES}, got {tail!r}")
        self.tail = tail
        self.return_indices = _check_flag(return_indices, "return_indices")
        self._transforms = _check_transforms(transforms, len(self.datasets))
        self._any_transform = any(t is not None for t in self._transforms)
        self.progress = _check_flag(progress, "progress")
        self.as_dndarray = _check_flag(as_dndarray, "as_dndarray")
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
        self._stats = dict(samples=0, batches=0, bytes=0, elapsed=0.0, waiting=0.0)
        # kept from epoch to epoch (created by the first one): the reader's ring, the exchange's
        # buffers and the pools of shuffled rows and of batches across rounds
        self._ring: List[List[np.ndarray]] = []
        self._exchanger: Optional[Exchanger] = None
        self._pool: Optional[_OutputPool] = None
        self._batch_pool: Optional[_OutputPool] = None
        self._layouts: dict = {}  # where uncompressed datasets lie in their files (reader.py)

    # -- files -------------------------------------------------------------------------------------

    def _inspect_everywhere(self) -> List[DatasetInfo]:
        """Inspect the files on every process; raise the same error everywhere if one failed."""
        paths = [os.path.abspath(path) for path in self.paths]
        try:
            infos, error = inspect_datasets(paths, self.datasets), None
        except (OSError, ValueError, TypeError) as caught:
            infos, error = None, (type(caught).__name__, str(caught))
        outcomes = self.comm.allgather(
            error if error else [info.describe() for info in infos]
        )
        for rank, outcome in enumerate(outcomes):
            if isinstance(outcome, tuple):
                kind = {"FileNotFoundError": FileNotFoundError, "TypeError": TypeError}.get(
                    outcome[0], ValueError
                )
                where = "" if rank == self.comm.rank else f" (on process {rank})"
                raise kind(outcome[1] + where)
        if any(outcome != outcomes[0] for outcome in outcomes):
            raise ValueError(
                "paths: the processes see different files (paths, shapes, types or sizes differ)"
            )
        return infos

    # -- position ----------------------------------------------------------------------------------

    def _plan(self) -> EpochPlan:
        key = (self.epoch, tuple(tuple(entry) for entry in self._history[:-1]),
               tuple(self._history[-1][:2]) if self._history else None, self.comm.size)
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
        epoch = _check_int(epoch, "epoch", 0)
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
            "format": _STATE_FORMAT,
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
        epoch, history = verdicts.agree(
            self.comm, self._checked_position, state, fingerprint=_state_summary
        )
        self._close_active()
        self.epoch, self._history = epoch, history

    def _checked_position(self, state: Any) -> Tuple[int, List[List[int]]]:
        """The (epoch, history) of a state from :meth:`state_dict`, checked against this loader."""
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict from state_dict(), got {type(state).__name__}")
        if state.get("format") != _STATE_FORMAT:
            raise ValueError(f"state: not a state of this loader (format {state.get('format')!r})")
        if state.get("fingerprint") != self._fingerprint:
            raise ValueError(
                "state: it was saved for other data (the paths, dataset names, shapes, types or "
                "file sizes differ)"
            )
        for name in ("seed", "shuffle", "tail", "window_rows"):
            if state.get(name) != getattr(self, name):
                raise ValueError(
                    f"state: saved with {name}={state.get(name)!r}, but this loader has "
                    f"{name}={getattr(self, name)!r}; construct the loader with the same value"
                    + (" (window_bytes)" if name == "window_rows" else "")
                )
        epoch, history = state.get("epoch"), state.get("history")
        _check_int(epoch, "state['epoch']", 0)
        if not isinstance(history, (list, tuple)) or not all(
            isinstance(entry, (list, tuple)) and len(entry) == 3 for entry in history
        ):
            raise ValueError("state['history'] must be a list of [processes, batch_size, steps]")
        history = [[_check_int(v, "state['history']", 0) for v in entry] for entry in history]
        # raises ValueError for an impossible position
        EpochPlan(
            self.rows, self.window_rows, self.comm.size, self.batch_size, seed=self.seed,
            epoch=epoch, shuffle=self.shuffle, tail=self.tail, history=history,
        )
        return int(epoch), history

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

    def _iterate(self):
        plan = self._plan()
        segment, comm = plan.segment, self.comm
        rank = comm.rank
        tasks = plan.tasks(rank)
        windows = [
            (int(segment.starts[t.window]), int(segment.stops[t.window]))
            for t in tasks
            if t.window is not None
        ]
        # buffers live as long as the loader: fresh pages cost a page fault each, every epoch
        ring, self._ring = self._ring, []
        reader = (
            WindowReader(self._infos, windows, self.window_rows, buffers=ring,
                         layouts=self._layouts, spare_rows=self._spare_rows())
            if windows
            else None
        )
        del ring
        cuda = self.device.torch_device.startswith("cuda")
        if self._exchanger is None:
            self._exchanger = Exchanger(
                comm, [info.row_shape for info in self._infos], [_torch_dtype(i) for i in self._infos]
            )
            self._pool = _OutputPool(self._infos, pinned=cuda)  # the shuffled rows of rounds
            self._batch_pool = _OutputPool(self._infos, pinned=cuda)  # batches across two rounds
        exchanger, pool = self._exchanger, self._pool
        bar = None
        if self.progress and rank == 0:
            from tqdm import tqdm

            bar = tqdm(total=plan.steps, initial=plan.steps_before + plan.start_step, unit="batch")
        rounds: deque = deque()
        pending: List[int] = []  # reader slots to give back once no batch views them
        stats = self._stats = dict(samples=0, batches=0, bytes=0, elapsed=0.0, waiting=0.0)
        self._history = plan.history(plan.start_step)
        position = self._history[-1]  # [processes, batch size, steps]: updated in place
        full, last = segment.batch_sizes(rank)
        batch_size = segment.batch_size
        due = [t.due_step for t in tasks] + [segment.steps]
        next_task, step = 0, plan.start_step
        finished = False
        self._agreement = _Agreement(comm)
        # batches that are plain views (no transform, no device copy, no DNDarray) are cut in
        # bulk: a run of full batches inside one round is one split per dataset
        plain_views = not (self._any_transform or cuda or self.as_dndarray)
        began = time.perf_counter()
        try:
            while step < segment.steps:
                entered = time.perf_counter()
                # slots whose batches are gone go back to the reader; one that the batch yielded
                # last may still view (a loop variable) waits a step rather than being replaced
                if pending:
                    _release_unused(reader, pending)
                while due[next_task] <= step:
                    rounds.extend(
                        self._take_round(tasks[next_task], plan, reader, exchanger, pool, rounds, pending)
                    )
                    next_task += 1
                run = 0
                if plain_views and rounds and step < full:
                    # full batches left in the front round before the next round is due
                    run = min(rounds[0].left // batch_size, full - step, due[next_task] - step)
                if run > 1:
                    batches = self._cut(rounds, run, batch_size)
                    stats["waiting"] += time.perf_counter() - entered
                    for i in range(run):
                        batch, batches[i] = batches[i], None  # the consumer's is the only one
                        step += 1
                        position[2] = step
                        stats["samples"] += batch_size
                        stats["batches"] += 1
                        stats["elapsed"] = time.perf_counter() - began
                        if bar is not None:
                            bar.update(1)
                        yield batch
                        del batch
                        if pending:
                            _release_unused(reader, pending)
                    continue
                count = batch_size if step < full else last[step - full]
                batch = self._assemble(rounds, count, plan.epoch, cuda)
                step += 1
                position[2] = step
                stats["samples"] += count
                stats["batches"] += 1
                now = time.perf_counter()
                stats["waiting"] += now - entered
                stats["elapsed"] = now - began
                if bar is not None:
                    bar.update(1)
                yield batch
            self._agreement.settle()
            # the epoch is complete: the next iteration is the next epoch
            self.epoch, self._history = plan.epoch + 1, []
            finished = True
        finally:
            try:
                self._agreement.settle()  # never leave a collective behind
            except Exception:  # noqa: BLE001 - already failing or closing: the first error wins
                pass
            stats["elapsed"] = time.perf_counter() - began
            if reader is not None:
                stats["bytes"] = reader.bytes_read
            while rounds:
                rounds.popleft().drop()
            if reader is not None:
                # wait for the thread only on the normal path: a closed or failed iterator may be
                # finalised where waiting could deadlock (the thread needs h5py's lock to finish)
                reader.close(wait=finished)
                self._ring = reader.take_buffers()
            if bar is not None:
                bar.close()

    def _spare_rows(self) -> int:
        """
        Rows behind each window in the reader's buffers for the rows received in a shuffled
        round: about ``(p - 1) / p`` of a window arrive (the share of a round is about a window,
        of which ``1 / p`` comes from the own window), plus 8 standard deviations of that count
        and a batch of wrap padding. A round that needs more lands its rows elsewhere.
        """
        p = self.comm.size
        if not self.shuffle or p == 1:
            return 0
        return -(-self.window_rows * (p - 1) // p) + 8 * math.isqrt(self.window_rows) + 8 + self.batch_size

    def _take_round(self, task, plan, reader, exchanger, pool, rounds, pending) -> List[_Round]:
        """
        Read (and exchange) one round; returns this process's rows of it in yield order, as
        one or more pieces.
        """
        segment, comm = plan.segment, self.comm
        rank, j = comm.rank, task.round
        if task.window is not None and reader.slots_out >= reader.depth:
            # the reader needs a free buffer to read the next window: give back the ones
            # waiting for the next step, and if that is not enough (rounds smaller than a
            # batch), copy the rows left in the rounds held out of the ring
            if not pending:
                for held in rounds:
                    if held.holds_slot:
                        held.detach()
            for slot in pending:
                reader.release(slot)
            pending.clear()
        slot, arrays, error = None, None, None
        if task.window is not None:
            try:
                slot, arrays = reader.get()
            except Exception as caught:  # noqa: BLE001 - every failure must reach all processes
                error = caught
        self._agreement.settle(error)  # the previous round's verdict, before anything new
        start = int(segment.starts[task.window]) if task.window is not None else 0
        order = segment.yield_order(j, rank)[task.skip : task.skip + task.take]
        if segment.is_local(j):
            # no rows move; the processes agree on failures one round later (no waiting here)
            self._agreement.start(error)
            offsets, _ = segment.send_plan(j, rank)
            index = offsets[order]
            sources = [torch.from_numpy(a) for a in arrays] if arrays is not None else []
            del arrays
            if len(index) and _is_range(index):
                # the rows in file order: batches are views of the reader's buffer
                first = int(index[0])
                tensors = [t[first : first + len(index)] for t in sources]
                del sources
                return [_Round(tensors, start + index, lambda: pending.append(slot), True)]
            tensors, release = _gather(sources, index, pool)
            del sources
            if slot is not None:
                reader.release(slot)  # copied out: the reader may refill it at once
            return [_Round(tensors, start + index, release, False)]
        if task.window is not None:
            offsets, send_counts = segment.send_plan(j, rank)
        else:
            offsets, send_counts = np.zeros(0, np.int64), np.zeros(comm.size, np.int64)
        begin = int(send_counts[:rank].sum())
        kept = offsets[begin : begin + int(send_counts[rank])]  # the rows this process keeps
        # without shuffle the rows arrive in file order, which is the yield order: the rows this
        # process keeps stay in its window (its batches view them), nothing is gathered
        in_file_order = not plan.shuffle and _is_range(kept) and _is_range(order)
        window = None if (slot is None or error is not None) else reader.full(slot)
        land = None
        if window is not None and not in_file_order:
            # received rows land behind the window: the round is then one array per dataset
            read = len(arrays[0])
            land = [torch.from_numpy(buffer[read:]) for buffer in window]
        received = exchanger.exchange(
            arrays, start, offsets, send_counts, failed=error is not None, land=land,
            reserve=0 if in_file_order else len(kept),
        )
        del land
        if received.failed:
            del arrays, window
            if slot is not None:
                reader.release(slot)
            exchanger.give_back(received.buffers)
            self._agreement.fail(error)
        lower = int(received.counts[:rank].sum())  # rows from lower ranks arrive first
        if in_file_order:
            own = int(kept[0]) if len(kept) else 0
            del window
            return self._file_order_pieces(
                received, arrays, slot, start, own, lower, order, exchanger, pending
            )
        if received.buffers is None:  # landed behind the window
            sources = [torch.from_numpy(a) for a in window]
            own_at, foreign_at = kept, len(arrays[0])
        else:  # in pooled buffers: the kept rows go in front of the received ones
            sources = received.buffers
            own_at, foreign_at = np.arange(len(kept), dtype=np.int64), len(kept)
            if len(kept):
                _gather_into([torch.from_numpy(a) for a in arrays], kept, sources)
        del arrays, window
        total = len(received.numbers)
        # where each row of the round's arrival order (by source rank) lies in ``sources``
        where = np.concatenate([
            foreign_at + np.arange(lower, dtype=np.int64),
            own_at,
            foreign_at + np.arange(lower, total, dtype=np.int64),
        ])
        numbers = np.concatenate([received.numbers[:lower], start + kept, received.numbers[lower:]])
        tensors, release = _gather(sources, where[order], pool)
        del sources
        exchanger.give_back(received.buffers)
        del received  # views of the reader's buffer: gone before the buffer goes back
        if slot is not None:
            reader.release(slot)
        return [_Round(tensors, numbers[order], release, False)]

    def _file_order_pieces(
        self, received, arrays, slot, start, own, lower, order, exchanger, pending
    ) -> List[_Round]:
        """
        A round in file order as pieces: the rows received from lower ranks, this process's own
        rows as a view of its window (from window offset ``own`` on; the window's first row is
        global row ``start``), the rows received from
        higher ranks; ``order`` selects a contiguous range of them all (see :func:`_is_range`).
        """
        a, b = (int(order[0]), int(order[-1]) + 1) if len(order) else (0, 0)
        own_count = int(received.counts[self.comm.rank])
        own_begin, own_end = lower, lower + own_count
        total = len(received.numbers)
        held = [2]  # received pieces not yet dropped: the exchanger's buffers go back after both

        def give_back() -> None:
            held[0] -= 1
            if held[0] == 0:
                exchanger.give_back(received.buffers)

        def received_piece(low: int, high: int, shift: int) -> List[_Round]:
            # arrival positions low:high, which lie at low - shift:high - shift of the received rows
            if high <= low:
                give_back()
                return []
            tensors = [t[low - shift : high - shift] for t in received.rows]
            return [_Round(tensors, received.numbers[low - shift : high - shift], give_back, False)]

        pieces = received_piece(a, min(b, own_begin), 0)
        low, high = max(a, own_begin), min(b, own_end)
        if high > low:
            first = own + (low - own_begin)
            tensors = [torch.from_numpy(w[first : first + high - low]) for w in arrays]
            rows = start + np.arange(first, first + high - low, dtype=np.int64)
            pieces.append(_Round(tensors, rows, lambda: pending.append(slot), True))
        elif slot is not None:
            pending.append(slot)  # given back at the next step, once nothing views it
        return pieces + received_piece(max(a, own_end), min(b, total + own_count), own_count)

    def _cut(self, rounds: deque, run: int, batch_size: int) -> List[tuple]:
        """``run`` full batches from the front round, as views: one split per tensor."""
        first = rounds[0]
        a, b = first.at, first.at + run * batch_size
        first.at = b
        parts = [t[a:b].split(batch_size) for t in first.tensors]
        if self.return_indices:
            parts.append(torch.from_numpy(first.rows[a:b]).split(batch_size))
        if first.left == 0:
            rounds.popleft().drop()
        return list(zip(*parts))

    def _assemble(self, rounds: deque, count: int, epoch: int, cuda: bool):
        """Take ``count`` rows from the front rounds and build the batch."""
        first = rounds[0] if rounds else None
        if first is not None and first.left >= count:
            # the common case: a slice of one round, no copy
            a = first.at
            first.at += count
            tensors = [t[a : a + count] for t in first.tensors]
            rows = first.rows[a : a + count]
            if first.left == 0:
                rounds.popleft().drop()
        else:
            pieces, need = [], count
            while need:
                current = rounds[0]
                take = min(need, current.left)
                pieces.append([t[current.at : current.at + take] for t in current.tensors])
                pieces[-1].append(current.rows[current.at : current.at + take])
                current.at += take
                need -= take
                if current.left == 0:
                    rounds.popleft().drop()
            if pieces:
                # the batch across rounds: into a pooled buffer (fresh pages cost more than the copy)
                arrays = self._batch_pool.take(count)
                tensors = []
                for d, array in enumerate(arrays):
                    at = 0
                    for piece in pieces:
                        # a plain memcpy: torch's copies run in its thread pool, whose threads
                        # wait for each other (and the reader thread) on a busy machine
                        n = len(piece[d])
                        np.copyto(array[at : at + n], piece[d].numpy())
                        at += n
                    tensors.append(torch.from_numpy(array[:count]))
                self._batch_pool.give_back(arrays)  # reused once the batch is gone
                rows = np.concatenate([p[-1] for p in pieces])
            else:  # an empty batch
                tensors = [
                    torch.empty((0,) + info.row_shape, dtype=_torch_dtype(info))
                    for info in self._infos
                ]
                rows = np.zeros(0, np.int64)
        if self._any_transform:
            tensors = self._apply_transforms(tensors, rows, epoch)
        if self.return_indices:
            tensors.append(torch.from_numpy(rows))
        if cuda:
            tensors = [t.to(self.device.torch_device, non_blocking=True) for t in tensors]
        if self.as_dndarray:
            tensors = [
                ht.array(t, copy=None, is_split=0, device=self.device, comm=self.comm)
                for t in tensors
            ]
        return tuple(tensors)

    def _apply_transforms(self, tensors: List[torch.Tensor], rows: np.ndarray, epoch: int):
        result = []
        for tensor, transform in zip(tensors, self._transforms):
            if transform is None:
                result.append(tensor)
                continue
            function, wants_generator = transform
            samples = []
            for sample, row in zip(tensor, rows.tolist()):
                if wants_generator:
                    generator = torch.Generator()
                    generator.manual_seed(derive_key(self.seed, epoch, row) & _MASK63)
                    samples.append(function(sample, generator=generator))
                else:
                    samples.append(function(sample))
            if samples:
                result.append(torch.stack([torch.as_tensor(s) for s in samples]))
            else:  # an empty batch: the transform's output shape is unknown, keep the rows' shape
                result.append(tensor)
        return result

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
            (the longest elapsed time of a process).

        Examples
        --------
        >>> loader.stats()["samples_per_s"]  # doctest: +SKIP
        1234567.8
        """
        s = self._stats
        mine = (s["samples"], s["bytes"], s["elapsed"], s["waiting"] / s["elapsed"] if s["elapsed"] else 0.0)
        everyone = self.comm.allgather(mine)
        samples = sum(e[0] for e in everyone)
        nbytes = sum(e[1] for e in everyone)
        seconds = max(e[2] for e in everyone)
        fractions = [e[3] for e in everyone]
        return {
            "samples_per_s": samples / seconds if seconds else 0.0,
            "mb_per_s": nbytes / 1e6 / seconds if seconds else 0.0,
            "wait_fraction": max(fractions),
            "wait_fraction_mean": sum(fractions) / len(fractions),
            "samples": float(samples),
            "bytes": float(nbytes),
            "seconds": seconds,
        }
