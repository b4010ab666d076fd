"""
Local building blocks of the distributed compressed sparse matrices.

Every helper works in terms of the *compressed axis* ``axis``: 0 for CSR (rows are compressed
and distributed), 1 for CSC (columns). A local block is then ``(indptr, indices, values)`` with
``len(indptr) == lshape[axis] + 1`` and ``indices`` counting along the other axis.
"""

from __future__ import annotations

import warnings
from typing import List, Sequence, Tuple

import torch

__all__: List[str] = []

LAYOUTS = {0: torch.sparse_csr, 1: torch.sparse_csc}


def compressed_parts(
    local: torch.Tensor, axis: int
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(indptr, indices, values)`` of a local CSR (``axis=0``) or CSC (``axis=1``) tensor."""
    if axis == 0:
        return local.crow_indices(), local.col_indices(), local.values()
    return local.ccol_indices(), local.row_indices(), local.values()


def build(
    indptr: torch.Tensor,
    indices: torch.Tensor,
    values: torch.Tensor,
    lshape: Sequence[int],
    axis: int,
) -> torch.Tensor:
    """A torch CSR/CSC tensor of shape ``lshape`` with int64 index arrays."""
    with warnings.catch_warnings():
        # torch's "sparse CSR support is in beta" notice says nothing about this call
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_compressed_tensor(
            indptr.to(torch.int64),
            indices.to(torch.int64),
            values,
            size=tuple(int(s) for s in lshape),
            layout=LAYOUTS[axis],
            check_invariants=False,
        )


def to_layout(tensor: torch.Tensor, axis: int) -> torch.Tensor:
    """Any 2-D torch tensor (strided, COO, CSR, CSC) as a CSR (``axis=0``) or CSC tensor."""
    target = LAYOUTS[axis]
    if tensor.layout == target:
        return tensor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if tensor.layout == torch.sparse_coo:
            tensor = tensor.coalesce()
        return tensor.to_sparse_csr() if axis == 0 else tensor.to_sparse_csc()


def slice_major(
    indptr: torch.Tensor, indices: torch.Tensor, values: torch.Tensor, start: int, stop: int
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rows (CSR) / columns (CSC) ``start:stop`` of a compressed block, copied."""
    first, last = int(indptr[start]), int(indptr[stop])
    return (
        (indptr[start : stop + 1] - first).clone(),
        indices[first:last].clone(),
        values[first:last].clone(),
    )


def major_ids(indptr: torch.Tensor) -> torch.Tensor:
    """The compressed-axis index of every stored entry."""
    lengths = indptr[1:] - indptr[:-1]
    return torch.repeat_interleave(torch.arange(lengths.numel(), device=indptr.device), lengths)


def from_keys(
    keys: torch.Tensor, values: torch.Tensor, n_major: int, n_minor: int
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """
    ``(indptr, indices, values)`` from sorted linear keys ``major * n_minor + minor``.
    """
    stride = max(n_minor, 1)
    majors = torch.div(keys, stride, rounding_mode="floor")
    counts = torch.bincount(majors, minlength=n_major)[:n_major]
    indptr = torch.zeros(n_major + 1, dtype=torch.int64, device=keys.device)
    torch.cumsum(counts, 0, out=indptr[1:])
    return indptr, keys - majors * stride, values


def keys_of(indptr: torch.Tensor, indices: torch.Tensor, n_minor: int) -> torch.Tensor:
    """Linear keys ``major * n_minor + minor`` of the stored entries (sorted for canonical blocks)."""
    return major_ids(indptr) * max(n_minor, 1) + indices.to(torch.int64)


def merge_add(keys1, values1, keys2, values2) -> Tuple[torch.Tensor, torch.Tensor]:
    """Union of two entry sets, duplicate keys summed; entries that sum to zero are dropped."""
    keys = torch.cat([keys1, keys2])
    values = torch.cat([values1, values2])
    if keys.numel() == 0:
        return keys, values
    unique, inverse = torch.unique(keys, sorted=True, return_inverse=True)
    summed = torch.zeros(unique.numel(), dtype=values.dtype, device=values.device)
    summed.index_add_(0, inverse, values)
    keep = summed != 0
    return unique[keep], summed[keep]


def merge_mul(keys1, values1, keys2, values2) -> Tuple[torch.Tensor, torch.Tensor]:
    """Intersection of two entry sets, values multiplied; zero products are dropped."""
    empty = keys1[:0], values1[:0]
    if keys1.numel() == 0 or keys2.numel() == 0:
        return empty
    keys1, values1 = _sum_duplicates(keys1, values1)
    keys2, values2 = _sum_duplicates(keys2, values2)
    position = torch.searchsorted(keys2, keys1).clamp_(max=keys2.numel() - 1)
    common = keys2[position] == keys1
    keys = keys1[common]
    values = values1[common] * values2[position[common]]
    keep = values != 0
    return keys[keep], values[keep]


def _sum_duplicates(keys, values):
    """Sorted unique keys, values of repeated keys summed (canonical blocks pass through cheaply)."""
    if keys.numel() > 1 and not bool((keys[1:] > keys[:-1]).all()):
        unique, inverse = torch.unique(keys, sorted=True, return_inverse=True)
        summed = torch.zeros(unique.numel(), dtype=values.dtype, device=values.device)
        summed.index_add_(0, inverse, values)
        return unique, summed
    return keys, values


def spmm(
    indptr: torch.Tensor,
    indices: torch.Tensor,
    values: torch.Tensor,
    dense: torch.Tensor,
    out: torch.Tensor,
    accumulate: bool,
) -> None:
    """
    ``out (+)= S @ dense`` for a local CSR block ``S`` given by its parts (rows = ``out`` rows).

    Floating types use torch's sparse kernel; others (integers, bool as int) accumulate the
    products of the stored entries in pieces, so the temporaries stay bounded.
    """
    if not accumulate:
        out.zero_()
    if values.numel() == 0 or dense.shape[1] == 0:
        return
    values = values.to(out.dtype)
    dense = dense.to(out.dtype)
    if out.dtype in (torch.float32, torch.float64) and out.is_contiguous():
        matrix = build(indptr, indices, values, (out.shape[0], dense.shape[0]), 0)
        out.add_(torch.sparse.mm(matrix, dense))
        return
    rows = major_ids(indptr)
    piece = max(1, (1 << 20) // max(dense.shape[1], 1))
    for first in range(0, values.numel(), piece):
        last = first + piece
        contribution = values[first:last, None] * dense[indices[first:last]]
        out.index_add_(0, rows[first:last], contribution)
