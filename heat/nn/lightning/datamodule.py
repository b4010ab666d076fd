"""
:class:`StreamingDataModule`: a LightningDataModule over
:class:`heat.utils.data.StreamingDataLoader`, resumable mid-epoch on any number of processes.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Sequence, Union

from ...core.communication import MPICommunication, sanitize_comm
from ...core.sanitation import check_int
from ...utils.data.arguments import check_names, check_paths
from ...utils.data.streaming import StreamingDataLoader
from ._imports import pl

__all__ = ["StreamingDataModule"]

_SPLITS = ("train", "val", "test", "predict")
_Paths = Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]


class _TrainLoader:
    """
    The training loader as the fit loop sees it: its length, its batches, its position
    (``state_dict``/``load_state_dict``: Lightning saves it in the checkpoint's loop state and
    restores it before the epoch continues), and ``sampler.set_epoch``, which the fit loop calls
    at the start of every epoch.
    """

    def __init__(self, loader: StreamingDataLoader):
        self.loader = loader
        self.sampler = loader  # the fit loop calls sampler.set_epoch(epoch) every epoch

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self):
        # the loader's iteration begins at the first batch, after the fit loop has set the
        # epoch (Lightning calls iter() before set_epoch at the start of training)
        yield from self.loader

    def state_dict(self) -> Dict[str, Any]:
        return self.loader.state_dict()

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.loader.load_state_dict(state)


class _EvaluationLoader:
    """An evaluation loader: the same rows in the same order every time, no position saved."""

    def __init__(self, loader: StreamingDataLoader):
        self.loader = loader

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self):
        self.loader.set_epoch(0)
        yield from self.loader


class StreamingDataModule(pl.LightningDataModule):
    """
    A LightningDataModule whose loaders are :class:`heat.utils.data.StreamingDataLoader`: rows
    of HDF5 datasets larger than memory, globally shuffled, every row exactly once per epoch,
    the same number of batches on every process.

    The training loader's position is part of Lightning's checkpoint (the fit loop saves the
    state of stateful loaders), so ``trainer.fit(model, datamodule, ckpt_path=...)`` continues
    an interrupted epoch with every remaining row exactly once -- also on another number of
    processes. The fit loop selects the loader's epoch (``set_epoch``) at the start of every
    epoch. Evaluation loaders yield their rows in file order, the same every time.

    Parameters
    ----------
    train, val, test, predict : str, os.PathLike or sequence of them, optional
        The HDF5 file(s) of each split (None: the split has no loader). Splits may share a
        file with different datasets (see ``datasets``).
    datasets : str, sequence of str, or dict
        The datasets read in step (a batch holds one tensor each, in this order); a dict maps a
        split's name (``"train"``, ``"val"``, ``"test"``, ``"predict"``) to its datasets, e.g.
        ``{"train": ("x_train", "y_train"), "val": ("x_val", "y_val")}`` for splits of one file.
    batch_size : int
        Rows per batch and process.
    eval_batch_size : int, optional
        Rows per batch and process of the evaluation loaders (default ``batch_size``).
    comm : MPICommunication, optional
        The processes that share the data (default: heat's default communicator).
    **loader_options
        Passed to every :class:`StreamingDataLoader` (``seed``, ``window_bytes``,
        ``return_indices``, ``transforms``, ``device``, ``progress``, ...); ``shuffle`` and
        ``tail`` only to the training loader (evaluation loaders: file order, every row).

    Raises
    ------
    TypeError, ValueError
        At construction, for a bad split, dataset name or batch size.
    FileNotFoundError, ValueError
        On every process, when the Trainer sets the module up (before training), for a missing
        or bad file or dataset.

    Examples
    --------
    >>> from heat.nn.lightning import DASOStrategy, StreamingDataModule
    >>> data = StreamingDataModule(train="train.h5", val="val.h5", batch_size=64)
    >>> trainer = lightning.pytorch.Trainer(strategy=DASOStrategy(), max_epochs=10)
    >>> trainer.fit(model, datamodule=data)
    >>> trainer.fit(model, datamodule=data, ckpt_path="last")  # resumes mid-epoch
    """

    def __init__(
        self,
        train: Optional[_Paths] = None,
        val: Optional[_Paths] = None,
        test: Optional[_Paths] = None,
        predict: Optional[_Paths] = None,
        *,
        datasets: Union[str, Sequence[str], Dict[str, Sequence[str]]] = ("x", "y"),
        batch_size: int = 32,
        eval_batch_size: Optional[int] = None,
        comm: Optional[MPICommunication] = None,
        **loader_options: Any,
    ):
        super().__init__()
        given = dict(train=train, val=val, test=test, predict=predict)
        self.paths = {split: check_paths(p) for split, p in given.items() if p is not None}
        if not self.paths:
            raise ValueError("StreamingDataModule needs at least one of train, val, test, predict")
        if isinstance(datasets, dict):
            unknown = sorted(set(datasets) - set(_SPLITS))
            if unknown:
                raise ValueError(f"datasets: unknown splits {unknown}, expected some of {_SPLITS}")
            missing = sorted(set(self.paths) - set(datasets))
            if missing:
                raise ValueError(f"datasets names no datasets for the splits {missing}")
            self.datasets = {split: check_names(datasets[split]) for split in self.paths}
        else:
            names = check_names(datasets)
            self.datasets = {split: names for split in self.paths}
        self.batch_size = check_int(batch_size, "batch_size", 1)
        self.eval_batch_size = (
            self.batch_size
            if eval_batch_size is None
            else check_int(eval_batch_size, "eval_batch_size", 1)
        )
        for name in ("paths", "datasets", "batch_size", "comm"):
            if name in loader_options:
                raise TypeError(f"StreamingDataModule: pass {name!r} as its own argument")
        self.comm = sanitize_comm(comm)
        self.loader_options = loader_options
        self.loaders: Dict[str, StreamingDataLoader] = {}
        self._views: Dict[str, Any] = {}

    def _loader(self, split: str) -> Optional[StreamingDataLoader]:
        """The split's loader, constructed on first use (collective: it inspects the files)."""
        if split not in self.paths:
            return None
        if split not in self.loaders:
            options = dict(self.loader_options)
            training = split == "train"
            if not training:
                options.update(shuffle=False, tail="short")
            self.loaders[split] = StreamingDataLoader(
                self.paths[split],
                self.datasets[split],
                batch_size=self.batch_size if training else self.eval_batch_size,
                comm=self.comm,
                **options,
            )
            view = _TrainLoader if training else _EvaluationLoader
            self._views[split] = view(self.loaders[split])
        return self.loaders[split]

    def setup(self, stage: str) -> None:
        """Open the loaders the stage needs (on every process: a missing file raises on all)."""
        needed = {
            "fit": ("train", "val"),
            "validate": ("val",),
            "test": ("test",),
            "predict": ("predict",),
        }.get(stage, _SPLITS)
        for split in needed:
            self._loader(split)

    def _view(self, split: str) -> Any:
        if self._loader(split) is None:
            return []  # Lightning treats an empty list as "no loader"
        return self._views[split]

    def train_dataloader(self) -> Any:
        return self._view("train")

    def val_dataloader(self) -> Any:
        return self._view("val")

    def test_dataloader(self) -> Any:
        return self._view("test")

    def predict_dataloader(self) -> Any:
        return self._view("predict")
