"""
Exponential, logarithmic and power functions: ``exp``, ``expm1``, ``exp2``, ``log``, ``log2``,
``log10``, ``log1p``, ``logaddexp``, ``logaddexp2``, ``sqrt`` and ``square``.

Each is one call to an engine of :mod:`heat.core._operations` and needs no communication unless
two operands (``logaddexp``) are distributed differently.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import _docstrings, types
from .arithmetics import _real_float_binary, _unary
from .dndarray import DNDarray
from .sanitation import sanitize_in

__all__ = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logaddexp2",
    "sqrt",
    "square",
]


@_docstrings.sections(_docstrings.UNARY)
def exp(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise exponential ``e**x``.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.exp(ht.array([0.0, 1.0]))
    DNDarray([1.       , 2.7182817], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.exp, x, out, where, "exp", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def expm1(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``exp(x) - 1``, accurate for small ``x``.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.expm1(ht.array([0.0, 1e-5]))
    DNDarray([0.000000e+00, 1.000005e-05], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.expm1, x, out, where, "expm1", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def exp2(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``2**x``.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.exp2(ht.array([0.0, 3.0]))
    DNDarray([1., 8.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.exp2, x, out, where, "exp2", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def log(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise natural logarithm (``-inf`` at 0, ``nan`` for negative reals).

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.log(ht.array([1.0, 2.718282]))
    DNDarray([0., 1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.log, x, out, where, "log", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def log2(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise base-2 logarithm.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.log2(ht.array([1.0, 8.0]))
    DNDarray([0., 3.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.log2, x, out, where, "log2", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def log10(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise base-10 logarithm.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.log10(ht.array([1.0, 1000.0]))
    DNDarray([0., 3.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.log10, x, out, where, "log10", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def log1p(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``log(1 + x)``, accurate for small ``x``.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.log1p(ht.array([0.0, 1e-5]))
    DNDarray([0.00000e+00, 9.99995e-06], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(_log1p_tensor, x, out, where, "log1p", no_cast=False)


def _log1p_tensor(tensor: torch.Tensor) -> torch.Tensor:
    result = torch.log1p(tensor)
    if tensor.is_complex():
        # the standard's (and NumPy's) special cases torch misses: an infinite component with a
        # NaN other one gives +inf + NaN j (torch: NaN + NaN j)
        real, imag = tensor.real, tensor.imag
        infinite = (real.isinf() & imag.isnan()) | (real.isnan() & imag.isinf())
        if bool(infinite.any()):
            special = torch.complex(
                torch.full_like(real, torch.inf), torch.full_like(real, torch.nan)
            )
            result = torch.where(infinite, special, result)
    return result


@_docstrings.sections(_docstrings.UNARY)
def sqrt(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise non-negative square root (``nan`` for negative reals).

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.sqrt(ht.array([4.0, 9.0]))
    DNDarray([2., 3.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.sqrt, x, out, where, "sqrt", no_cast=False)


@_docstrings.sections(_docstrings.LOG_ADD_EXP)
def logaddexp(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``log(exp(x1) + exp(x2))``, computed without overflow.

    Integer and boolean operands give floats as in NumPy.

    {parameters}

    Examples
    --------
    >>> ht.logaddexp(ht.array([0.0, 1.0]), 0.0)
    DNDarray([0.6931472, 1.3132617], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _real_float_binary(torch.logaddexp, x1, x2, out, where, "logaddexp")


@_docstrings.sections(_docstrings.LOG_ADD_EXP)
def logaddexp2(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``log2(2**x1 + 2**x2)``, computed without overflow.

    Integer and boolean operands give floats as in NumPy.

    {parameters}

    Examples
    --------
    >>> ht.logaddexp2(ht.array([1.0, 3.0]), 1.0)
    DNDarray([2.      , 3.321928], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _real_float_binary(torch.logaddexp2, x1, x2, out, where, "logaddexp2")


def square(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise square ``x * x``. Integer arrays stay integers (and may overflow, as in NumPy);
    booleans give int8, as in NumPy.

    Parameters
    ----------
    x : DNDarray
        Input array.
    out : DNDarray, optional
        Where to store the result.
    where : DNDarray or array-like of bool, optional
        Compute only where True; elsewhere ``out`` keeps its value (zeros without ``out``).

    Returns
    -------
    DNDarray
        Same shape, layout and dtype as ``x`` (int8 for bool).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, or the result cannot be cast to ``out``'s dtype.

    Examples
    --------
    >>> ht.square(ht.array([-2, 3]))
    DNDarray([4, 9], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if x.dtype is types.bool:
        return _unary(_square_bool, x, out, where, "square", no_cast=True, result_type=types.int8)
    return _unary(torch.square, x, out, where, "square", no_cast=True)


def _square_bool(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to(torch.int8)
