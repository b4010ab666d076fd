"""
Trigonometric and hyperbolic functions and their inverses, ``arctan2`` and angle conversions,
with NumPy's names and aliases (``asin`` for ``arcsin``, ...). ``hypot`` lives in arithmetics.

Each is one call to an engine of :mod:`heat.core._operations`; the unary ones need no
communication.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import _docstrings, types
from .arithmetics import _real_float_binary, _unary
from .dndarray import DNDarray
from .sanitation import sanitize_in

__all__ = [
    "acos",
    "acosh",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cos",
    "cosh",
    "deg2rad",
    "degrees",
    "rad2deg",
    "radians",
    "sin",
    "sinh",
    "tan",
    "tanh",
]


def _arccos(t: torch.Tensor) -> torch.Tensor:
    """
    torch.arccos, with C99's (NumPy's, the array API standard's) sign of the imaginary part on
    the real segment ``[-1, 1]``: ``acos(x + 0j) = acos(x) - 0j`` and ``acos(x - 0j) =
    acos(x) + 0j`` (torch's complex128 kernel gives ``+0j`` for both; complex64 is right).
    """
    result = torch.arccos(t)
    if result.is_complex():
        imag = t.imag
        on_segment = (imag == 0) & (t.real.abs() <= 1)
        if bool(on_segment.any()):
            result = torch.where(on_segment, torch.complex(result.real, -imag), result)
    return result


def _reject_complex(x: DNDarray, name: str) -> None:
    sanitize_in(x)
    if issubclass(x.dtype, types.complexfloating):
        raise TypeError(f"{name} is not supported for complex arrays")


@_docstrings.sections(_docstrings.UNARY)
def sin(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise sine (argument in radians).

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.sin(ht.array([0.0, 1.5707964]))
    DNDarray([0., 1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.sin, x, out, where, "sin", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def cos(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise cosine (argument in radians).

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.cos(ht.array([0.0, 3.1415927]))
    DNDarray([ 1., -1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.cos, x, out, where, "cos", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def tan(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise tangent (argument in radians).

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.tan(ht.array([0.0, 0.7853982]))
    DNDarray([0., 1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.tan, x, out, where, "tan", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def arcsin(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise inverse sine, in radians in ``[-pi/2, pi/2]`` (``nan`` outside ``[-1, 1]`` for reals).

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.arcsin(ht.array([0.0, 1.0]))
    DNDarray([0.       , 1.5707964], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.arcsin, x, out, where, "arcsin", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def arccos(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise inverse cosine, in radians in ``[0, pi]`` (``nan`` outside ``[-1, 1]`` for reals).

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16). Complex values follow C99's ``cacos`` (as
    NumPy and the array API standard), signed zeros included: ``acos(-0 + 0j)`` is
    ``pi/2 - 0j``.

    {parameters}

    Examples
    --------
    >>> ht.arccos(ht.array([1.0, -1.0]))
    DNDarray([0.       , 3.1415927], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(_arccos, x, out, where, "arccos", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def arctan(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise inverse tangent, in radians in ``(-pi/2, pi/2)``.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.arctan(ht.array([0.0, 1.0]))
    DNDarray([0.       , 0.7853982], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.arctan, x, out, where, "arctan", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def sinh(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise hyperbolic sine.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.sinh(ht.array([0.0, 1.0]))
    DNDarray([0.       , 1.1752012], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.sinh, x, out, where, "sinh", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def cosh(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise hyperbolic cosine.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.cosh(ht.array([0.0, 1.0]))
    DNDarray([1.       , 1.5430806], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.cosh, x, out, where, "cosh", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def tanh(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise hyperbolic tangent.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.tanh(ht.array([0.0, 1.0]))
    DNDarray([0.       , 0.7615942], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.tanh, x, out, where, "tanh", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def arcsinh(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise inverse hyperbolic sine.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.arcsinh(ht.array([0.0, 1.0]))
    DNDarray([0.       , 0.8813736], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.arcsinh, x, out, where, "arcsinh", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def arccosh(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise inverse hyperbolic cosine (``nan`` below 1 for reals).

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.arccosh(ht.array([1.0, 2.0]))
    DNDarray([0.      , 1.316958], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.arccosh, x, out, where, "arccosh", no_cast=False)


@_docstrings.sections(_docstrings.UNARY)
def arctanh(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise inverse hyperbolic tangent (``+-inf`` at ``+-1``, ``nan`` beyond for reals).

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.arctanh(ht.array([0.0, 0.5]))
    DNDarray([0.        , 0.54930615], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _unary(torch.arctanh, x, out, where, "arctanh", no_cast=False)


@_docstrings.sections(_docstrings.ANGLE_CONVERSION)
def deg2rad(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Convert angles from degrees to radians, elementwise.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.deg2rad(ht.array([90.0, 180.0]))
    DNDarray([1.5707964, 3.1415927], dtype=ht.float32, device=cpu:0, split=None)
    """
    _reject_complex(x, "deg2rad")
    return _unary(torch.deg2rad, x, out, where, "deg2rad", no_cast=False)


@_docstrings.sections(_docstrings.ANGLE_CONVERSION)
def rad2deg(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Convert angles from radians to degrees, elementwise.

    Integer and boolean inputs give floats as in NumPy (int32/int64 -> float64,
    int16 -> float32, int8/uint8/bool -> float16).

    {parameters}

    Examples
    --------
    >>> ht.rad2deg(ht.array([1.5707964, 3.1415927]))
    DNDarray([ 90., 180.], dtype=ht.float32, device=cpu:0, split=None)
    """
    _reject_complex(x, "rad2deg")
    return _unary(torch.rad2deg, x, out, where, "rad2deg", no_cast=False)


asin = arcsin
acos = arccos
atan = arctan
asinh = arcsinh
acosh = arccosh
atanh = arctanh
radians = deg2rad
degrees = rad2deg


def arctan2(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise arc tangent of ``x1 / x2``, choosing the quadrant from the signs of both
    (result in radians in ``[-pi, pi]``).

    Integer and boolean operands give floats as in NumPy.

    Parameters
    ----------
    x1 : DNDarray, scalar or array-like
        y-coordinates.
    x2 : DNDarray, scalar or array-like
        x-coordinates; broadcast against ``x1``, distributed layouts are aligned.
    out : DNDarray, optional
        Where to store the result.
    where : DNDarray or array-like of bool, optional
        Compute only where True; elsewhere ``out`` keeps its value (zeros without ``out``).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If an operand is complex or not numeric.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.arctan2(ht.array([1.0, -1.0]), ht.array([-1.0, -1.0]))
    DNDarray([ 2.3561945, -2.3561945], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _real_float_binary(torch.atan2, x1, x2, out, where, "arctan2")


atan2 = arctan2
