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
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.utils.data as torch_data

import heat as ht
from heat.core.sanitation import check_bool, check_int

from .streaming import StreamingDataLoader

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
        self.use_gpu = check_bool(use_gpu, "use_gpu")
        self.validate_set = check_bool(validate_set, "validate_set")
        self.initial_load = check_int(initial_load, "initial_load", 1)
        self.load_length = check_int(load_length, "load_length", 1)
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
            per_item = self.has_item_access()
            self._loaders[key] = StreamingDataLoader(
                self.file,
                self.dataset_names,
                batch_size=key[0],
                shuffle=not self.validate_set,
                seed=self.seed,
                window_bytes=self._window_bytes,
                tail="drop" if drop_last else "short",
                # a subclass's __getitem__ sees the rows as read; the transforms then apply to
                # what it returns, and the collated batch moves to the device (as in HeAT)
                transforms=None if per_item else self.transforms,
                device="cpu" if per_item else self.device,
                comm=self.comm,
            )
        return self._loaders[key]

    def has_item_access(self) -> bool:
        """Whether a subclass defines ``__getitem__`` (HeAT's way to build samples)."""
        return type(self).__getitem__ is not PartialH5Dataset.__getitem__

    def _set_rows(self, rows: Sequence[torch.Tensor]) -> None:
        """Expose rows as attributes named after the datasets, NumPy arrays as HeAT reads them."""
        for name, values in zip(self.dataset_names, rows):
            setattr(self, name, values.numpy())

    def _check_item_attributes(self) -> None:
        """A dataset name must not hide an attribute or method of the dataset (same everywhere)."""
        own = set(getattr(self, "_row_attributes", ()))
        for name in self.dataset_names:
            if not name.isidentifier():
                raise ValueError(
                    f"dataset_names: {name!r} is no Python identifier, so __getitem__ cannot "
                    "reach it as an attribute; use the loader without overriding __getitem__"
                )
            if hasattr(type(self), name) or (name in vars(self) and name not in own):
                raise ValueError(
                    f"dataset_names: {name!r} would replace the dataset's attribute of that name, "
                    "which __getitem__ reaches the rows by; rename the dataset or the attribute"
                )
        self._row_attributes = tuple(self.dataset_names)

    def _transformed(self, item: Any) -> Any:
        """HeAT's rule: ``transforms[k]`` applies to element ``k`` of what __getitem__ returns."""
        transforms = self.transforms
        if transforms is None:
            return item
        if callable(transforms):
            transforms = [transforms]
        if not isinstance(item, tuple):
            return item if transforms[0] is None else transforms[0](item)
        return tuple(
            value if k >= len(transforms) or transforms[k] is None else transforms[k](value)
            for k, value in enumerate(item)
        )

    def _first_row(self) -> List[torch.Tensor]:
        """Row 0 of every dataset (this process reads it: the template of empty batches)."""
        import h5py

        with h5py.File(self.file, "r") as handle:
            return [torch.from_numpy(np.asarray(handle[name][0:1])) for name in self.dataset_names]

    def __len__(self) -> int:
        """Rows of this process's balanced share of the file (a share, not an exact count)."""
        p, r = self.comm.size, self.comm.rank
        return self.total_size // p + (r < self.total_size % p)

    def __getitem__(self, index):
        """
        Override it to build samples as in HeAT: during iteration the attributes named after
        the datasets hold the rows of the batch being built (NumPy arrays), ``index`` is a row
        of them, and ``transforms[k]`` applies to element ``k`` of what it returns; the loader's
        ``collate_fn`` (torch's default) stacks the samples into the batch. A process whose
        rows ran out before the others' gets an empty batch: torch's default collation gives it
        the form of a full one (from a template row); a ``collate_fn`` of the loader is called
        with an empty list.
        """
        raise TypeError(
            "PartialH5Dataset is not indexed: iterate it through heat.utils.data.DataLoader, or "
            "override __getitem__ in a subclass to build samples"
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
        self._per_item = loader.dataset.has_item_access()
        if self._per_item:
            loader.dataset._check_item_attributes()
            collate = getattr(loader, "collate_fn", None)
            self._collate = collate if collate is not None else torch_data.default_collate

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
        if self._per_item:
            return self._samples(batch)
        return batch[0] if self._single else tuple(batch)

    def _samples(self, batch: Sequence[torch.Tensor]) -> Any:
        """The batch built sample by sample by the subclass's ``__getitem__``, collated."""
        dataset = self._loader.dataset
        rows = len(batch[0])
        if rows == 0 and self._collate is not torch_data.default_collate:
            return self._collate([])  # a process without rows left: the user's function decides
        empty = rows == 0  # default collation: a template row gives the empty batch its form
        dataset._set_rows(dataset._first_row() if empty else batch)
        samples = [dataset._transformed(dataset[i]) for i in range(1 if empty else rows)]
        collated = self._collate(samples)
        if empty:
            collated = _map_tensors(collated, lambda t: t[:0])
        if dataset.device != "cpu":
            collated = _map_tensors(collated, lambda t: t.to("cuda", non_blocking=True))
        return collated


def _map_tensors(value: Any, function: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """``function`` applied to every tensor in a nest of tuples, lists and dicts."""
    if isinstance(value, torch.Tensor):
        return function(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(_map_tensors(v, function) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(_map_tensors(v, function) for v in value)
    if isinstance(value, dict):
        return {key: _map_tensors(v, function) for key, v in value.items()}
    return value
