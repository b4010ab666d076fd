"""
Checks and layout of the per-sample arrays that supervised estimators take next to the samples
``x``: targets ``y`` (regression values or class labels) and ``sample_weight``. Shared by
:mod:`heat.classification`, :mod:`heat.naive_bayes` and :mod:`heat.regression`.

The estimators work on the local rows of ``x``; :func:`aligned_rows` hands them exactly the
entries of ``y`` that belong to those rows, whatever the layout ``y`` came in.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np
import torch

import heat as ht
from heat.core.base import is_finite, row_blocks

__all__ = []


def validate_targets(y: Any, x: "ht.DNDarray", name: str = "y") -> "ht.DNDarray":
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
    if not isinstance(y, ht.DNDarray):
        if not isinstance(y, (np.ndarray, torch.Tensor, list, tuple)):
            raise TypeError(f"{name} must be a DNDarray or array-like, but was {type(y).__name__}")
        y = ht.array(y, comm=x.comm, device=x.device)
    if ht.types.heat_type_is_complexfloating(y.dtype):
        raise TypeError(f"{name} must be real-valued, but has type {y.dtype.__name__}")
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D (n_samples,), but has shape {tuple(y.shape)}")
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"{name} has {y.shape[0]} entries, but x has {x.shape[0]} samples; they must match"
        )
    return y


def aligned_rows(y: "ht.DNDarray", x: "ht.DNDarray") -> torch.Tensor:
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
    return ht.redistribute(y, counts).larray


def column_sums(local: torch.Tensor) -> torch.Tensor:
    """float64 column sums of the 2-D ``local`` (or the sum of a 1-D one), a block at a time
    (``sum(dtype=float64)`` of a whole tensor converts all of it first)."""
    total = local.new_zeros(local.shape[1:], dtype=torch.float64)
    for block in row_blocks(local):
        total += block.sum(0, dtype=torch.float64)
    return total


def rows_like(x: "ht.DNDarray", values: torch.Tensor, dtype) -> "ht.DNDarray":
    """Per-sample results ``values`` of the local rows of ``x`` as a DNDarray laid out like them."""
    shape = (x.shape[0],) + tuple(values.shape[1:])
    return ht.DNDarray(values, shape, dtype, x.split, x.device, x.comm, x.balanced)


def rows_of(x: "ht.DNDarray") -> "ht.DNDarray":
    """``x`` split along the rows or not at all (data split along the features is resplit)."""
    return ht.resplit(x, 0) if x.split == 1 else x


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
