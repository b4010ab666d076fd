"""
The streaming loader's arguments, checked from the arguments alone (the same on every process,
before any communication), the states it is given to resume from, and the per-row transforms.
Integers and flags are checked by :mod:`heat.core.sanitation`'s ``check_int`` / ``check_bool``.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import torch

from heat.core.sanitation import check_int

from .plan import EpochPlan, derive_key

__all__ = ["MASK63", "STATE_FORMAT", "Transforms", "check_names", "check_paths", "check_state"]

#: seeds and the keys of the transforms' generators are below 2**63 (torch takes int64 seeds)
MASK63 = (1 << 63) - 1
#: the format entry of the loader's states
STATE_FORMAT = "heat.utils.data.StreamingDataLoader/1"


def check_paths(paths: Any) -> List[str]:
    """One path or a non-empty sequence of distinct paths, as a list of str."""
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


def check_names(datasets: Any) -> List[str]:
    """One dataset name or a non-empty sequence of distinct names, as a list."""
    if isinstance(datasets, str):
        datasets = [datasets]
    if not isinstance(datasets, (list, tuple)) or not datasets:
        raise TypeError(
            f"datasets must be a name or a non-empty sequence of names, got {datasets!r}"
        )
    for name in datasets:
        if not isinstance(name, str) or not name:
            raise TypeError(f"datasets must hold non-empty str names, got {name!r}")
    if len(set(datasets)) != len(datasets):
        raise ValueError(f"datasets must not repeat a name, got {list(datasets)}")
    return list(datasets)


def check_state(state: Any, loader: Any) -> Tuple[int, List[List[int]]]:
    """
    The position ``(epoch, history)`` of a state from ``StreamingDataLoader.state_dict``,
    checked against ``loader``: its format, the data it was saved for, the settings that shape
    the plan, and a possible position (TypeError or ValueError naming what differs).
    """
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict from state_dict(), got {type(state).__name__}")
    if state.get("format") != STATE_FORMAT:
        raise ValueError(f"state: not a state of this loader (format {state.get('format')!r})")
    if state.get("fingerprint") != loader.state_dict()["fingerprint"]:
        raise ValueError(
            "state: it was saved for other data (the paths, dataset names, shapes, types or "
            "file sizes differ)"
        )
    for name in ("seed", "shuffle", "tail", "window_rows"):
        if state.get(name) != getattr(loader, name):
            raise ValueError(
                f"state: saved with {name}={state.get(name)!r}, but this loader has "
                f"{name}={getattr(loader, name)!r}; construct the loader with the same value"
                + (" (window_bytes)" if name == "window_rows" else "")
            )
    epoch, history = state.get("epoch"), state.get("history")
    check_int(epoch, "state['epoch']", 0)
    if not isinstance(history, (list, tuple)) or not all(
        isinstance(entry, (list, tuple)) and len(entry) == 3 for entry in history
    ):
        raise ValueError("state['history'] must be a list of [processes, batch_size, steps]")
    history = [[check_int(v, "state['history']", 0) for v in entry] for entry in history]
    # raises ValueError for an impossible position
    EpochPlan(
        loader.rows,
        loader.window_rows,
        loader.comm.size,
        loader.batch_size,
        seed=loader.seed,
        epoch=epoch,
        shuffle=loader.shuffle,
        tail=loader.tail,
        history=history,
    )
    return int(epoch), history


def _accepts_generator(function: Callable) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return any(p.name == "generator" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


class Transforms:
    """
    One transform per dataset (None: unchanged), applied per row, as ``transform(row)`` or --
    when it has a ``generator`` parameter -- ``transform(row, generator=g)`` with a
    ``torch.Generator`` seeded from (seed, epoch, global row number), so random augmentations
    reproduce, also after a resume. The results of a batch are stacked.

    Raises
    ------
    TypeError, ValueError
        For transforms that are not None, a callable, or a sequence of ``count`` of them.
    """

    def __init__(self, transforms: Any, count: int):
        self._transforms = _checked_transforms(transforms, count)
        self.any = any(t is not None for t in self._transforms)

    def apply(self, tensors: List[torch.Tensor], rows: np.ndarray, seed: int, epoch: int):
        """The transformed rows of a batch (``rows``: their global numbers)."""
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
                    generator.manual_seed(derive_key(seed, epoch, row) & MASK63)
                    samples.append(function(sample, generator=generator))
                else:
                    samples.append(function(sample))
            if samples:
                result.append(torch.stack([torch.as_tensor(s) for s in samples]))
            else:  # an empty batch: the transform's output shape is unknown, keep the rows' shape
                result.append(tensor)
        return result


def _checked_transforms(transforms: Any, count: int) -> List[Optional[Tuple[Callable, bool]]]:
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
            raise TypeError(
                f"transforms must hold callables or None, got {type(transform).__name__}"
            )
        checked.append(None if transform is None else (transform, _accepts_generator(transform)))
    return checked
