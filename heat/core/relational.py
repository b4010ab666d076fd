"""
Elementwise comparisons: ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge`` and their NumPy names
``equal``, ``not_equal``, ``less``, ``less_equal``, ``greater``, ``greater_equal``.

The DNDarray operators ``==``, ``!=``, ``<``, ... call these. Operands are promoted to a common
type first (NumPy 2 rules, Python scalars are weak) and broadcast; differently distributed
operands are aligned by :func:`heat.core._operations.binary_op`. Results are boolean.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import types
from ._operations import local_op
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


def _complex_order(real_op, strict_op, tie_op):
    """``real_op`` for real tensors; lexicographic order for complex ones, as NumPy's."""

    def ordered(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if not a.is_complex():
            return real_op(a, b)
        return strict_op(a.real, b.real) | (torch.eq(a.real, b.real) & tie_op(a.imag, b.imag))

    return ordered


_less = _complex_order(torch.lt, torch.lt, torch.lt)
_less_equal = _complex_order(torch.le, torch.lt, torch.le)
_greater = _complex_order(torch.gt, torch.gt, torch.gt)
_greater_equal = _complex_order(torch.ge, torch.gt, torch.ge)


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
    return local_op(lambda t: torch.full(t.shape, value, dtype=torch.bool, device=t.device), x,
                    no_cast=True)


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
    return _compare(torch.eq, x, y, out, where, "eq")


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
    return _compare(torch.ne, x, y, out, where, "ne")


not_equal = ne


def lt(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x < y`` (complex values are ordered lexicographically, as NumPy).

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
        Boolean array.

    Raises
    ------
    TypeError
        If an operand is not numeric.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.lt(ht.array([1, 2, 3]), 2)
    DNDarray([ True, False, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _compare(_less, x, y, out, where, "lt")


less = lt


def le(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x <= y`` (complex values are ordered lexicographically, as NumPy).

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
        Boolean array.

    Raises
    ------
    TypeError
        If an operand is not numeric.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.le(ht.array([1, 2, 3]), 2)
    DNDarray([ True,  True, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _compare(_less_equal, x, y, out, where, "le")


less_equal = le


def gt(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x > y`` (complex values are ordered lexicographically, as NumPy).

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
        Boolean array.

    Raises
    ------
    TypeError
        If an operand is not numeric.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.gt(ht.array([1, 2, 3]), 2)
    DNDarray([False, False,  True], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _compare(_greater, x, y, out, where, "gt")


greater = gt


def ge(x, y, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``x >= y`` (complex values are ordered lexicographically, as NumPy).

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
        Boolean array.

    Raises
    ------
    TypeError
        If an operand is not numeric.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.ge(ht.array([1, 2, 3]), 2)
    DNDarray([False,  True,  True], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _compare(_greater_equal, x, y, out, where, "ge")


greater_equal = ge
