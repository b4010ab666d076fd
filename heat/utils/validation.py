"""
The input checks heat's estimators share, so that all of them reject bad data with the same errors
(as scikit-learn's ``sklearn.utils.validation``): :func:`validate_samples`,
:func:`check_n_features`, :func:`validate_targets`; and the layout of the per-sample arrays
supervised estimators take next to the samples (targets ``y``, ``sample_weight``):
:func:`aligned_rows` hands an estimator exactly the entries that belong to its local rows of ``x``,
whatever the layout ``y`` came in. Label helpers (:func:`unique_labels`, :func:`encode_labels`)
and blockwise checks (:func:`is_finite`) complete them.

For estimator implementations (ht.cluster, ht.regression, ...); the public estimator interface
(``BaseEstimator``, the mixins, ``check_is_fitted``) is :mod:`heat.core.base`.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np
import torch

from ..core import layout, types
from ..core.communication import MPI
from ..core.dndarray import DNDarray
from ..core.factories import array

__all__ = [
    "aligned_rows",
    "check_n_features",
    "column_sums",
    "encode_labels",
    "is_finite",
    "row_blocks",
    "rows_like",
    "rows_of",
    "unique_labels",
    "validate_samples",
    "validate_targets",
]

# elements of the largest temporary the blockwise checks below create
_BLOCK_ENTRIES = 1 << 20


def row_blocks(local: torch.Tensor):
    """Blocks of rows of ``local`` of about ``_BLOCK_ENTRIES`` elements each."""
    row_entries = max(1, local[0].numel()) if local.ndim > 1 and local.shape[0] else 1
    rows = max(1, _BLOCK_ENTRIES // row_entries)
    for first in range(0, local.shape[0], rows):
        yield local[first : first + rows]


def is_finite(local: torch.Tensor) -> bool:
    """Whether every entry of ``local`` is finite; local, a block of rows at a time (torch's
    ``isfinite`` of a whole float tensor costs several times its size)."""
    if not (local.is_floating_point() or local.is_complex()):
        return True
    return all(bool(torch.isfinite(block).all()) for block in row_blocks(local))


def validate_samples(
    x: Any, name: str = "x", ensure_finite: bool = True, min_samples: int = 0
) -> DNDarray:
    """
    ``x`` as a 2-D floating-point DNDarray of samples (rows) and features (columns), the way
    every estimator checks its input. Collective when ``ensure_finite`` is True.

    NumPy arrays, torch tensors and nested sequences become a DNDarray that every process holds
    whole (``split=None``), as :func:`heat.array` makes them; DNDarrays keep their layout.
    Floating-point data keeps its type; integers and booleans are promoted with float32 (as
    NumPy's ``promote_types``: int8/int16/uint8 -> float32, int32/int64 -> float64).

    Parameters
    ----------
    x : DNDarray or array_like
        The samples, shape ``(n_samples, n_features)``.
    name : str
        The argument's name, for error messages.
    ensure_finite : bool
        Raise if any value is NaN or infinite (one allreduce of a flag).
    min_samples : int
        Raise if ``x`` has fewer rows.

    Returns
    -------
    DNDarray
        ``x`` itself when nothing had to change, else a converted copy.

    Raises
    ------
    TypeError
        If ``x`` is no array or has a complex type.
    ValueError
        If ``x`` is not 2-D, has fewer than ``min_samples`` rows, or (with ``ensure_finite``)
        holds NaN or infinity. Every process raises alike: the checks use the global shape and
        type, and the finiteness flag is agreed by all processes.

    Examples
    --------
    >>> import heat as ht
    >>> from heat.core.base import validate_samples
    >>> validate_samples(ht.arange(6).reshape((3, 2))).dtype
    <class 'heat.core.types.float64'>
    >>> validate_samples(ht.array([[1.0, float("nan")]]))
    Traceback (most recent call last):
    ...
    ValueError: x contains NaN or infinity
    """
    if not isinstance(x, DNDarray):
        if not isinstance(x, (np.ndarray, torch.Tensor, list, tuple)):
            raise TypeError(f"{name} must be a DNDarray or array-like, but was {type(x).__name__}")
        x = array(x)
    if types.heat_type_is_complexfloating(x.dtype):
        raise TypeError(f"{name} must be real-valued, but has type {x.dtype.__name__}")
    if x.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features), but has shape {tuple(x.shape)}"
        )
    if x.shape[0] < min_samples:
        raise ValueError(f"{name} has {x.shape[0]} samples, but at least {min_samples} are needed")
    if not types.heat_type_is_realfloating(x.dtype):
        x = x.astype(types.promote_types(x.dtype, types.float32))
    if ensure_finite:
        if not x.comm.allreduce(is_finite(x.larray), op=MPI.LAND):
            raise ValueError(f"{name} contains NaN or infinity")
    return x


def check_n_features(estimator: Any, x: DNDarray, name: str = "x") -> None:
    """
    Raise ValueError unless ``x`` has the number of features the fitted ``estimator`` saw
    (``estimator.n_features_in_``).

    Examples
    --------
    >>> import heat as ht
    >>> from heat.core.base import check_n_features
    >>> scaler = ht.preprocessing.StandardScaler().fit(ht.ones((4, 3)))
    >>> check_n_features(scaler, ht.ones((4, 2)))
    Traceback (most recent call last):
    ...
    ValueError: x has 2 features, but StandardScaler was fitted with 3 features
    """
    expected = estimator.n_features_in_
    if x.shape[1] != expected:
        raise ValueError(
            f"{name} has {x.shape[1]} features, but {type(estimator).__name__} was fitted with "
            f"{expected} features"
        )


# -- per-sample arrays of supervised estimators (targets, weights) ------------------------------
def validate_targets(y: Any, x: DNDarray, name: str = "y") -> DNDarray:
    """
    ``y`` as a 1-D DNDarray with one entry per row of ``x``. No communication.

    Raises
    ------
    TypeError
        If ``y`` is no array or is complex.
    ValueError
        If ``y`` is not 1-D or its length differs from the number of rows of ``x`` (from the
        global shapes: every process raises alike).
    """
    if not isinstance(y, DNDarray):
        if not isinstance(y, (np.ndarray, torch.Tensor, list, tuple)):
            raise TypeError(f"{name} must be a DNDarray or array-like, but was {type(y).__name__}")
        y = array(y, comm=x.comm, device=x.device)
    if types.heat_type_is_complexfloating(y.dtype):
        raise TypeError(f"{name} must be real-valued, but has type {y.dtype.__name__}")
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,), but has shape {tuple(y.shape)}")
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"{name} has {y.shape[0]} entries, but x has {x.shape[0]} samples; they must match"
        )
    return y


def aligned_rows(y: DNDarray, x: DNDarray) -> torch.Tensor:
    """
    The entries of the 1-D ``y`` that belong to the local rows of ``x`` (split 0 or None), as a
    tensor. Communicates only if ``y`` is distributed differently from the rows of ``x``.
    """
    if x.split is None or x.comm.size == 1:
        if y.split is None or y.comm.size == 1:
            return y.larray
        return y.comm.allgather_tensors(y.larray)
    counts, displs = x.counts_displs()
    rank = x.comm.rank
    if y.split is None:
        return y.larray[displs[rank] : displs[rank] + counts[rank]]
    if tuple(y.counts_displs()[0]) == tuple(counts):
        return y.larray
    return layout.redistribute(y, counts).larray


def column_sums(local: torch.Tensor) -> torch.Tensor:
    """float64 column sums of the 2-D ``local`` (or the sum of a 1-D one), a block at a time
    (``sum(dtype=float64)`` of a whole tensor converts all of it first)."""
    total = local.new_zeros(local.shape[1:], dtype=torch.float64)
    for block in row_blocks(local):
        total += block.sum(0, dtype=torch.float64)
    return total


def rows_like(x: DNDarray, values: torch.Tensor, dtype) -> DNDarray:
    """Per-sample results ``values`` of the local rows of ``x`` as a DNDarray laid out like them."""
    shape = (x.shape[0],) + tuple(values.shape[1:])
    return DNDarray(values, shape, dtype, x.split, x.device, x.comm, x.balanced)


def rows_of(x: DNDarray) -> DNDarray:
    """``x`` split along the rows or not at all (data split along the features is resplit)."""
    return layout.resplit(x, 0) if x.split == 1 else x


def unique_labels(labels: torch.Tensor, split: bool, comm) -> torch.Tensor:
    """
    The sorted distinct values of the labels of all processes (``split``) or of the replicated
    ``labels``. One allgather of the local distinct values.
    """
    local = torch.unique(labels)
    if split and comm.size > 1:
        local = torch.unique(comm.allgather_tensors(local))
    return local


def encode_labels(labels: torch.Tensor, classes: torch.Tensor) -> Tuple[torch.Tensor, bool]:
    """
    The index into the sorted ``classes`` of every label, and whether all labels are classes.
    Local.
    """
    if classes.numel() == 0:
        return torch.zeros_like(labels, dtype=torch.int64), labels.numel() == 0
    common = torch.promote_types(classes.dtype, labels.dtype)
    classes, labels = classes.to(common), labels.to(common)
    index = torch.searchsorted(classes, labels).clamp_(max=classes.numel() - 1)
    known = bool((classes[index] == labels).all()) if labels.numel() else True
    return index, known
