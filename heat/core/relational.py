"""
Elementwise comparisons: ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge`` and their NumPy names
``equal``, ``not_equal``, ``less``, ``less_equal``, ``greater``, ``greater_equal``.

The DNDarray operators ``==``, ``!=``, ``<``, ... call these. Operands are promoted to a common
type first (NumPy 2 rules, Python scalars are weak) and broadcast; differently distributed
operands are aligned by :func:`heat.core._operations.binary_op`. Results are boolean.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import torch

from . import _docstrings, types
from ._operations import local_op, register_unsigned
from .arithmetics import _binary, _operand_result_type
from .dndarray import DNDarray

__all__ = [
    "eq",
    "equal",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "le",
    "less",
    "less_equal",
    "lt",
    "ne",
    "not_equal",
]


# NumPy's comparison kernels are about twice as fast as torch's on CPU (bool output; measured
# in benchmarks/elementwise.py), and CPU tensors convert to NumPy without a copy
_NUMPY_KERNEL_TYPES = frozenset(
    (
        torch.bool,
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.float32,
        torch.float64,
    )
)
_NUMPY_KERNEL_MIN_SIZE = 1 << 15  # below this, the conversions cost more than they save


def _fastest_kernel(torch_op, numpy_ufunc):
    """
    ``torch_op(a, b)``, computed by ``numpy_ufunc`` on the same memory for large CPU tensors of
    a type both libraries share (``b`` a tensor of ``a``'s type or a Python scalar).
    """

    def compare(a: torch.Tensor, b) -> torch.Tensor:
        if (
            a.dtype in _NUMPY_KERNEL_TYPES
            and a.numel() >= _NUMPY_KERNEL_MIN_SIZE
            and a.device.type == "cpu"
            and not a.is_neg()
        ):
            if type(b) is torch.Tensor:
                if b.dtype is a.dtype and b.device.type == "cpu" and not b.is_neg():
                    return torch.from_numpy(numpy_ufunc(a.numpy(), b.numpy()))
            elif type(b) is float or type(b) is int:
                return torch.from_numpy(numpy_ufunc(a.numpy(), b))
        return torch_op(a, b)

    compare.__name__ = numpy_ufunc.__name__
    return compare


def _complex_order(real_op, strict_op, tie_op):
    """``real_op`` for real tensors; lexicographic order for complex ones, as NumPy's."""

    def ordered(a: torch.Tensor, b) -> torch.Tensor:
        if not a.is_complex():
            return real_op(a, b)
        return strict_op(a.real, b.real) | (torch.eq(a.real, b.real) & tie_op(a.imag, b.imag))

    return ordered


_equal = _fastest_kernel(torch.eq, np.equal)
_not_equal = _fastest_kernel(torch.ne, np.not_equal)
_less = _complex_order(_fastest_kernel(torch.lt, np.less), torch.lt, torch.lt)
_less_equal = _complex_order(_fastest_kernel(torch.le, np.less_equal), torch.lt, torch.le)
_greater = _complex_order(_fastest_kernel(torch.gt, np.greater), torch.gt, torch.gt)
_greater_equal = _complex_order(_fastest_kernel(torch.ge, np.greater_equal), torch.gt, torch.ge)
for _comparison in (_equal, _not_equal, _less, _less_equal, _greater, _greater_equal):
    register_unsigned(_comparison, "order")
del _comparison


def _compare(operation, x, y, out, where, name: str) -> DNDarray:
    _operand_result_type(x, y, name)  # raises TypeError naming the function for bad operands
    return _binary(operation, x, y, out, where, name, result_type=types.bool)


def _is_comparable(value) -> bool:
    if isinstance(value, (DNDarray, bool, int, float, complex)):
        return True
    try:
        _operand_result_type(value, 0, "")
        return True
    except TypeError:
        return False


def _constant_like(x: DNDarray, value: bool) -> DNDarray:
    return local_op(
        lambda t: torch.full(t.shape, value, dtype=torch.bool, device=t.device), x, no_cast=True
    )


def eq(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x == y``.

    Parameters
    ----------
    x, y : DNDarray, scalar or array-like
        Operands; promoted to a common type and broadcast together.
    out : DNDarray, optional
        Where to store the result (same shape as the broadcast result, any layout).
    where : DNDarray or array-like of bool, optional
        Compare only where True; elsewhere ``out`` keeps its value (False without ``out``).

    Returns
    -------
    DNDarray
        Boolean array. Comparing a DNDarray with an object that is not numeric (``None``,
        a string) gives all False, as NumPy's ``==`` does.

    Raises
    ------
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.eq(ht.array([1, 2, 3], split=0), 2)
    DNDarray([False,  True, False], dtype=ht.bool, device=cpu:0, split=0)
    """
    if isinstance(x, DNDarray) and out is None and where is None and not _is_comparable(y):
        return _constant_like(x, False)
    return _compare(_equal, x, y, out, where, "eq")


equal = eq


def ne(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x != y``.

    Parameters
    ----------
    x, y : DNDarray, scalar or array-like
        Operands; promoted to a common type and broadcast together.
    out : DNDarray, optional
        Where to store the result.
    where : DNDarray or array-like of bool, optional
        Compare only where True; elsewhere ``out`` keeps its value (False without ``out``).

    Returns
    -------
    DNDarray
        Boolean array (all True against a non-numeric object such as ``None``).

    Raises
    ------
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.ne(ht.array([1, 2, 3], split=0), 2)
    DNDarray([ True, False,  True], dtype=ht.bool, device=cpu:0, split=0)
    """
    if isinstance(x, DNDarray) and out is None and where is None and not _is_comparable(y):
        return _constant_like(x, True)
    return _compare(_not_equal, x, y, out, where, "ne")


not_equal = ne


@_docstrings.sections(_docstrings.ORDER_COMPARISON)
def lt(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x < y`` (complex values are ordered lexicographically, as NumPy).

    {parameters}

    Examples
    --------
    >>> ht.lt(ht.array([1, 2, 3]), 2)
    DNDarray([ True, False, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _compare(_less, x, y, out, where, "lt")


less = lt


@_docstrings.sections(_docstrings.ORDER_COMPARISON)
def le(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x <= y`` (complex values are ordered lexicographically, as NumPy).

    {parameters}

    Examples
    --------
    >>> ht.le(ht.array([1, 2, 3]), 2)
    DNDarray([ True,  True, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _compare(_less_equal, x, y, out, where, "le")


less_equal = le


@_docstrings.sections(_docstrings.ORDER_COMPARISON)
def gt(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x > y`` (complex values are ordered lexicographically, as NumPy).

    {parameters}

    Examples
    --------
    >>> ht.gt(ht.array([1, 2, 3]), 2)
    DNDarray([False, False,  True], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _compare(_greater, x, y, out, where, "gt")


greater = gt


@_docstrings.sections(_docstrings.ORDER_COMPARISON)
def ge(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x >= y`` (complex values are ordered lexicographically, as NumPy).

    {parameters}

    Examples
    --------
    >>> ht.ge(ht.array([1, 2, 3]), 2)
    DNDarray([False,  True,  True], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _compare(_greater_equal, x, y, out, where, "ge")


greater_equal = ge
