"""Element-wise arithmetic of distributed sparse matrices: :func:`add`, :func:`mul`."""

from __future__ import annotations

import numbers
from typing import Callable, Union

import numpy as np
import torch

from ..core import types
from . import _operations
from .dcsx_matrix import _DCSXMatrix
from .manipulations import _share

__all__ = ["add", "mul"]

Operand = Union[_DCSXMatrix, int, float, complex]


def add(t1: Operand, t2: Operand) -> _DCSXMatrix:
    """
    Element-wise sum of two sparse matrices of the same format and shape (``t1 + t2``).

    Entries stored in either operand are added; sums that are zero are not stored (as in
    ``scipy.sparse``). The result has the layout of the first distributed operand; a
    differently distributed second operand is redistributed to it.

    Parameters
    ----------
    t1, t2 : DCSR_matrix or DCSC_matrix, or the number 0
        Both matrices of one format. Adding a nonzero scalar would make every entry nonzero:
        as in ``scipy.sparse`` it is refused (HeAT 1.8 added it to the stored entries only).

    Returns
    -------
    DCSR_matrix or DCSC_matrix
        Values of the promoted type of the operands.

    Raises
    ------
    TypeError
        If an operand is neither a sparse matrix nor a number, or the formats differ.
    ValueError
        If the shapes differ.
    NotImplementedError
        If a scalar operand is not 0.

    Examples
    --------
    >>> a = ht.sparse.sparse_csr_matrix([[1.0, 0, 2], [0, 0, 3]], split=0)
    >>> ht.sparse.to_dense(a + a)
    DNDarray([[2., 0., 4.],
              [0., 0., 6.]], dtype=ht.float32, device=cpu:0, split=0)
    """
    return _binary(t1, t2, "add", _operations.merge_add)


def mul(t1: Operand, t2: Operand) -> _DCSXMatrix:
    """
    Element-wise product (not the matrix product) of two sparse matrices of the same format
    and shape, or of a sparse matrix and a scalar (``t1 * t2``).

    Only entries stored in both operands can be nonzero; zero products are not stored (as in
    ``scipy.sparse``'s ``multiply``). A scalar scales the stored values and keeps the structure.

    Parameters
    ----------
    t1, t2 : DCSR_matrix or DCSC_matrix, or a number

    Returns
    -------
    DCSR_matrix or DCSC_matrix

    Raises
    ------
    TypeError
        If an operand is neither a sparse matrix nor a number, or the formats differ.
    ValueError
        If the shapes differ.

    Examples
    --------
    >>> a = ht.sparse.sparse_csr_matrix([[1.0, 0, 2], [0, 0, 3]], split=0)
    >>> ht.sparse.to_dense(a * a)
    DNDarray([[1., 0., 4.],
              [0., 0., 9.]], dtype=ht.float32, device=cpu:0, split=0)
    >>> (a * 2).gnnz
    3
    """
    return _binary(t1, t2, "mul", _operations.merge_mul)


def _is_scalar(value) -> bool:
    return isinstance(value, (numbers.Number, np.number, np.bool_))


def _binary(t1, t2, name: str, merge: Callable) -> _DCSXMatrix:
    """Shared checks, alignment and the local merge of :func:`add` and :func:`mul`."""
    for argument, value in (("t1", t1), ("t2", t2)):
        if not isinstance(value, _DCSXMatrix) and not _is_scalar(value):
            raise TypeError(
                f"{name}: {argument} must be a DCSR_matrix, DCSC_matrix or a number, "
                f"got {type(value).__name__}"
            )
    if not isinstance(t1, _DCSXMatrix) and not isinstance(t2, _DCSXMatrix):
        raise TypeError(f"{name}: at least one operand must be a sparse matrix")
    if not isinstance(t1, _DCSXMatrix) or not isinstance(t2, _DCSXMatrix):
        matrix, scalar = (t1, t2) if isinstance(t1, _DCSXMatrix) else (t2, t1)
        return _with_scalar(matrix, scalar, name)
    if type(t1) is not type(t2):
        raise TypeError(
            f"{name}: t1 and t2 must have the same format, got {type(t1).__name__} and "
            f"{type(t2).__name__} (convert one with to_sparse_csr/to_sparse_csc)"
        )
    if t1.shape != t2.shape:
        raise ValueError(f"{name}: shapes {t1.shape} and {t2.shape} differ")
    if t1.comm != t2.comm:
        raise ValueError(f"{name}: t1 and t2 must live on the same communicator")
    dtype = types.promote_types(t1.dtype, t2.dtype)
    axis = t1._axis
    if t1.split is not None or t2.split is not None:
        leader = t1 if t1.split is not None else t2
        leader._gather_counts()
        t1, t2 = _share(t1, leader._counts), _share(t2, leader._counts)
    lshape = t1.lshape
    n_minor = lshape[1 - axis]
    # booleans are summed as integers and compared with 0 (logical or), as scipy.sparse does
    torch_type = (
        torch.int64
        if dtype is types.bool and merge is _operations.merge_add
        else dtype.torch_type()
    )
    parts = []
    for operand in (t1, t2):
        indptr, indices, values = _operations.compressed_parts(operand.larray, axis)
        parts += [_operations.keys_of(indptr, indices, n_minor), values.to(torch_type)]
    keys, values = merge(*parts)
    values = values.to(dtype.torch_type()) if values.dtype != dtype.torch_type() else values
    local = _operations.build(
        *_operations.from_keys(keys, values, lshape[axis], n_minor), lshape, axis
    )
    return type(t1)._from_local(local, t1.gshape, dtype, t1.split, t1.device, t1.comm, t1._counts)


def _with_scalar(matrix: _DCSXMatrix, scalar, name: str) -> _DCSXMatrix:
    dtype = types.result_type(matrix.dtype, scalar)
    if name == "add" and scalar != 0:
        raise NotImplementedError(
            "adding a nonzero scalar to a sparse matrix is not supported (every entry would be "
            "nonzero): add it to the dense array, ht.sparse.to_dense(matrix) + scalar"
        )
    axis = matrix._axis
    indptr, indices, values = _operations.compressed_parts(matrix.larray, axis)
    values = values.to(dtype.torch_type())
    values = values * scalar if name == "mul" else values.clone()
    local = _operations.build(indptr.clone(), indices.clone(), values, matrix.lshape, axis)
    result = type(matrix)(
        local,
        matrix.gnnz,
        matrix.gshape,
        dtype,
        matrix.split,
        matrix.device,
        matrix.comm,
        matrix._balanced,
    )
    result._counts, result._nnz_counts = matrix._counts, matrix._nnz_counts
    return result
