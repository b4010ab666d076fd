"""
``PartialH5Dataset``: HeAT's name for training on an HDF5 file larger than memory, as a front
over :class:`~heat.utils.data.StreamingDataLoader`.

HeAT 1.8's class loads a window of each process's own contiguous share, never moves samples
between processes, leaves the remainder rows out and shuffles with the unseeded global RNG. This
front keeps its constructor and its use (``DataLoader(PartialH5Dataset(...), batch_size=...)``)
but streams through the StreamingDataLoader, so it inherits its guarantees: a shuffle across
processes keyed by (seed, epoch), every row exactly once per epoch (no dropped remainder unless
``drop_last``), bounded memory and a background reader.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple, Union

import torch
import torch.utils.data as torch_data

import heat as ht

from .streaming import StreamingDataLoader, _check_flag, _check_int

__all__ = ["PartialH5Dataset", "PartialH5DataLoaderIter"]


class PartialH5Dataset(torch_data.Dataset):
    """
    Rows of HDF5 datasets streamed into training through :class:`heat.utils.data.DataLoader`,
    globally shuffled and exactly once per epoch.

    Parameters
    ----------
    file : str or os.PathLike
        The HDF5 file.
    comm : MPICommunication
        The processes that share the data.
    dataset_names : str or sequence of str
        The datasets read in step (e.g. ``["images", "labels"]``); a batch holds one tensor per
        dataset (a single tensor for one dataset).
    transforms : callable or sequence of callables or None
        Per row and dataset, as in :class:`StreamingDataLoader`.
    use_gpu : bool
        Batches on the GPU when one is available.
    validate_set : bool
        A validation set is not shuffled.
    initial_load : int
        Rows per read window of each process (HeAT: rows loaded at first); sets the memory budget
        (about four windows of rows per process).
    load_length : int
        Kept for HeAT compatibility: the background reader refills window by window.
    seed : int
        Key of the shuffle, with the epoch.

    Attributes
    ----------
    total_size : int
        Rows in the file.

    Examples
    --------
    >>> ds = ht.utils.data.PartialH5Dataset("train.h5", dataset_names=["x", "y"], initial_load=4096)
    >>> loader = ht.utils.data.DataLoader(ds, batch_size=64)
    >>> for epoch in range(3):
    ...     for x, y in loader:
    ...         pass
    """

    def __init__(
        self,
        file: Union[str, os.PathLike],
        comm: Any = None,
        dataset_names: Union[str, Sequence[str]] = "data",
        transforms: Union[None, Callable, Sequence[Optional[Callable]]] = None,
        use_gpu: bool = True,
        validate_set: bool = False,
        initial_load: int = 7000,
        load_length: int = 1000,
        seed: int = 0,
    ):
        if not isinstance(file, (str, os.PathLike)):
            raise TypeError(f"file must be a str or os.PathLike, got {type(file).__name__}")
        self.use_gpu = _check_flag(use_gpu, "use_gpu")
        self.validate_set = _check_flag(validate_set, "validate_set")
        self.initial_load = _check_int(initial_load, "initial_load", 1)
        self.load_length = _check_int(load_length, "load_length", 1)
        self.file = os.fspath(file)
        self.comm = ht.sanitize_comm(comm)
        self.dataset_names = (
            [dataset_names] if isinstance(dataset_names, str) else list(dataset_names)
        )
        self.transforms = transforms
        self.seed = seed
        self.device = "gpu" if self.use_gpu and torch.cuda.is_available() else "cpu"
        # inspect the files once (checks every argument and file, on every process alike)
        probe = StreamingDataLoader(
            self.file,
            self.dataset_names,
            batch_size=1,
            shuffle=not self.validate_set,
            seed=seed,
            transforms=transforms,
            device=self.device,
            comm=self.comm,
        )
        self.total_size = probe.rows
        row_bytes = sum(info.row_bytes for info in probe._infos)
        self._window_bytes = max(1, 4 * self.initial_load * row_bytes)
        self._loaders: Dict[Tuple[int, bool], StreamingDataLoader] = {}

    def _loader(self, batch_size: int, drop_last: bool) -> StreamingDataLoader:
        """The streaming loader for this batch size and tail policy (built once, collective)."""
        key = (int(batch_size), bool(drop_last))
        if key not in self._loaders:
            self._loaders[key] = StreamingDataLoader(
                self.file,
                self.dataset_names,
                batch_size=key[0],
                shuffle=not self.validate_set,
                seed=self.seed,
                window_bytes=self._window_bytes,
                tail="drop" if drop_last else "short",
                transforms=self.transforms,
                device=self.device,
                comm=self.comm,
            )
        return self._loaders[key]

    def __len__(self) -> int:
        """Rows of this process's balanced share of the file (a share, not an exact count)."""
        p, r = self.comm.size, self.comm.rank
        return self.total_size // p + (r < self.total_size % p)

    def __getitem__(self, index):
        raise TypeError(
            "PartialH5Dataset is not indexed: iterate it through heat.utils.data.DataLoader"
        )

    def Shuffle(self) -> None:
        """Kept for HeAT: the loader shuffles across processes every epoch by itself."""

    def Ishuffle(self) -> None:
        """Kept for HeAT: the loader shuffles across processes every epoch by itself."""


class PartialH5DataLoaderIter:
    """
    One epoch of a :class:`heat.utils.data.DataLoader` over a :class:`PartialH5Dataset`: the
    batches of this process, as torch tensors (a tuple with several datasets).

    Examples
    --------
    >>> for x, y in ht.utils.data.DataLoader(ds, batch_size=64):  # creates this iterator
    ...     pass
    """

    def __init__(self, loader):
        self._loader = loader
        self._stream = loader.dataset._loader(loader.batch_size, loader.drop_last)
        self._stream.set_epoch(loader.epoch)
        self._length = len(self._stream)
        self._batches = iter(self._stream)
        self._single = len(loader.dataset.dataset_names) == 1

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator:
        return self

    def __next__(self):
        try:
            batch = next(self._batches)
        except StopIteration:
            self._loader.epoch = self._stream.epoch  # the stream moved on to the next epoch
            raise
        return batch[0] if self._single else tuple(batch)
