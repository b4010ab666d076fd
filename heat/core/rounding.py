"""
Rounding and related elementwise functions: ``abs``/``absolute``, ``fabs``, ``ceil``, ``floor``,
``trunc``, ``round``/``around``, ``clip``, ``sign``, ``sgn`` and ``modf``.

All are local (no communication), except ``clip`` with array bounds distributed differently
from the input, which aligns them as any binary operation does.
"""

from __future__ import annotations

import builtins
from typing import Optional, Tuple

import torch

from . import _docstrings, types
from ._operations import _UNSIGNED_TYPES, binary_op, local_op, register_unsigned
from .arithmetics import _check_out_cast, _is_complex, _is_exact, _unary, _unwrap_out
from .dndarray import DNDarray
from .sanitation import sanitize_in

__all__ = [
    "abs",
    "absolute",
    "around",
    "ceil",
    "clip",
    "fabs",
    "floor",
    "modf",
    "round",
    "sgn",
    "sign",
    "trunc",
]

_PY_SCALARS = (builtins.bool, int, float)


def _reject_complex(x: DNDarray, name: str) -> None:
    if _is_complex(x.dtype):
        raise TypeError(f"{name} is not supported for complex arrays")


def _abs_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.dtype is torch.bool:
        return tensor.clone()
    return torch.abs(tensor)


def abs(x: DNDarray, out: Optional[DNDarray] = None, where=None, dtype=None) -> DNDarray:
    """
    Elementwise absolute value ``|x|``. Integer and boolean arrays keep their dtype; complex
    arrays give their real type (the modulus). Python's builtin ``abs(x)`` calls this.

    Parameters
    ----------
    x : DNDarray
        Input array.
    out : DNDarray, optional
        Where to store the result (same shape, any layout; the result must cast to its dtype
        under ``'same_kind'`` casting).
    where : DNDarray or array-like of bool, optional
        Compute only where True; elsewhere ``out`` keeps its value (zeros without ``out``).
    dtype : heat type, optional
        Cast ``x`` to this type before taking the absolute value.

    Returns
    -------
    DNDarray
        Same shape and layout as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, or the result cannot be cast to ``out``'s dtype.

    Examples
    --------
    >>> ht.abs(ht.array([-1, 2]))
    DNDarray([1, 2], dtype=ht.int64, device=cpu:0, split=None)
    >>> abs(ht.array([3 + 4j]))
    DNDarray([5.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if dtype is not None:
        x = x.astype(types.canonical_heat_type(dtype), copy=False)
    result_type = types.real_type_of(x.dtype) if out is not None else None
    return _unary(_abs_tensor, x, out, where, "abs", no_cast=True, result_type=result_type)


absolute = abs


def fabs(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise absolute value as a float (integers and bools give floats as in NumPy:
    int32/int64 -> float64, int16 -> float32, int8/uint8/bool -> float16).

    Parameters
    ----------
    x : DNDarray
        Real input array.
    out : DNDarray, optional
        See :func:`abs`.
    where : DNDarray or array-like of bool, optional
        See :func:`abs`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is complex (use :func:`abs`).

    Examples
    --------
    >>> ht.fabs(ht.array([-1, 2]))
    DNDarray([1., 2.], dtype=ht.float64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    _reject_complex(x, "fabs")
    return _unary(torch.abs, x, out, where, "fabs", no_cast=False)


def _integral(operation, x, out, where, name: str) -> DNDarray:
    """ceil/floor/trunc: integer and boolean arrays are already integral and keep their dtype."""
    sanitize_in(x)
    _reject_complex(x, name)
    if _is_exact(x.dtype):
        return _unary(torch.clone, x, out, where, name, no_cast=True)
    return _unary(operation, x, out, where, name, no_cast=True)


@_docstrings.sections(_docstrings.ROUNDING)
def ceil(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ceiling: the smallest integral value ``>= x``. Integer and boolean arrays keep
    their dtype (NumPy 2).

    {parameters}

    Examples
    --------
    >>> ht.ceil(ht.array([-1.5, 1.2]))
    DNDarray([-1.,  2.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _integral(torch.ceil, x, out, where, "ceil")


@_docstrings.sections(_docstrings.ROUNDING)
def floor(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise floor: the largest integral value ``<= x``. Integer and boolean arrays keep
    their dtype (NumPy 2).

    {parameters}

    Examples
    --------
    >>> ht.floor(ht.array([-1.5, 1.2]))
    DNDarray([-2.,  1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _integral(torch.floor, x, out, where, "floor")


@_docstrings.sections(_docstrings.ROUNDING)
def trunc(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise truncation towards zero. Integer and boolean arrays keep their dtype (NumPy 2).

    {parameters}

    Examples
    --------
    >>> ht.trunc(ht.array([-1.5, 1.7]))
    DNDarray([-1.,  1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _integral(torch.trunc, x, out, where, "trunc")


def _round_integer(tensor: torch.Tensor, decimals: int) -> torch.Tensor:
    """Round integers to a multiple of 10**-decimals, ties to even (as NumPy)."""
    factor = 10 ** (-decimals)
    if factor > torch.iinfo(torch.int64).max:
        return torch.zeros_like(tensor)
    # int64 arithmetic: the intermediate multiples may not fit a small integer type
    wide = tensor.to(torch.int64)
    quotient = torch.floor_divide(wide, factor)
    rest = wide - quotient * factor  # in [0, factor)
    up = (rest > factor - rest) | ((rest == factor - rest) & (quotient % 2 == 1))
    return ((quotient + up.to(torch.int64)) * factor).to(tensor.dtype)


def _round_tensor(tensor: torch.Tensor, decimals: int) -> torch.Tensor:
    if tensor.is_complex():
        return torch.complex(
            _round_tensor(tensor.real, decimals), _round_tensor(tensor.imag, decimals)
        )
    if tensor.dtype in (torch.float16, torch.bfloat16):
        # scaling by 10**decimals in half precision loses digits; NumPy's results need float32
        return torch.round(tensor.float(), decimals=decimals).to(tensor.dtype)
    if tensor.is_floating_point():
        return torch.round(tensor, decimals=decimals)
    if decimals >= 0:
        return tensor.clone()
    return _round_integer(tensor, decimals)


def round(x: DNDarray, decimals: int = 0, out: Optional[DNDarray] = None) -> DNDarray:
    """
    Round elementwise to ``decimals`` decimal places, halves to even (NumPy's rule:
    ``round(2.5) == 2``). Complex values are rounded part by part.

    Integer arrays keep their dtype (negative ``decimals`` round to tens, hundreds, ...);
    boolean arrays give float16, as in NumPy. float16 and bfloat16 values are scaled and
    rounded in float32, so they can differ from NumPy's float16 result in the last digit where
    NumPy's half precision scaling by ``10**decimals`` loses digits.

    Parameters
    ----------
    x : DNDarray
        Input array.
    decimals : int, optional
        Number of decimal places; negative values round to the left of the decimal point.
    out : DNDarray, optional
        Where to store the result (same shape, any layout).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``decimals`` is not an integer.

    Examples
    --------
    >>> ht.round(ht.array([0.5, 1.5, 2.675]), decimals=0)
    DNDarray([0., 2., 3.], dtype=ht.float32, device=cpu:0, split=None)
    >>> ht.round(ht.array([15, 25, -15]), decimals=-1)
    DNDarray([ 20,  20, -20], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if isinstance(decimals, builtins.bool) or not hasattr(decimals, "__index__"):
        raise TypeError(f"decimals must be an integer, but was {type(decimals).__name__}")
    decimals = decimals.__index__()
    if x.dtype is types.bool:
        x = x.astype(types.float16)
    return _unary(_round_tensor, x, out, None, "round", no_cast=True, decimals=decimals)


around = round


def _check_bound(bound, name: str):
    if bound is None or isinstance(bound, (_PY_SCALARS, DNDarray)):
        return bound
    from .factories import array

    try:
        return array(bound)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{name} must be None, a scalar or array-like, but was {type(bound).__name__}"
        ) from error


def clip(
    x: DNDarray,
    /,
    min=None,
    max=None,
    out: Optional[DNDarray] = None,
    where=None,
    *,
    a_min=None,
    a_max=None,
) -> DNDarray:
    """
    Limit the values of ``x`` to ``[min, max]``: ``minimum(maximum(x, min), max)``.

    NaNs stay NaN; where ``min > max`` the result is ``max`` (as NumPy). The dtype is the
    promotion of ``x`` and the bounds (Python scalars are weak).

    Parameters
    ----------
    x : DNDarray
        Real input array.
    min, max : scalar, DNDarray, array-like or None
        Lower and upper bounds, broadcast against ``x``; None leaves that side open.
        Distributed bounds are aligned to ``x``'s layout. (The array API standard's names.)
    a_min, a_max : optional
        HeAT's and NumPy 1's names of ``min`` and ``max``, as keywords; give one name of each
        bound only.
    out : DNDarray, optional
        Where to store the result (same shape, any layout).
    where : DNDarray or array-like of bool, optional
        Compute only where True; elsewhere ``out`` keeps its value (zeros without ``out``).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, is complex, or a bound is not numeric.
    ValueError
        If a bound does not broadcast to ``x``'s shape.

    Examples
    --------
    >>> ht.clip(ht.arange(6, split=0), 1, 4)
    DNDarray([1, 1, 2, 3, 4, 4], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(x)
    _reject_complex(x, "clip")
    if a_min is not None:
        if min is not None:
            raise TypeError("clip takes one lower bound: give min or a_min, not both")
        min = a_min
    if a_max is not None:
        if max is not None:
            raise TypeError("clip takes one upper bound: give max or a_max, not both")
        max = a_max
    out = _unwrap_out(out)
    if where is True:
        where = None
    a_min = _check_bound(min, "min")
    a_max = _check_bound(max, "max")
    bounds = [b for b in (a_min, a_max) if b is not None]
    result_type = types.result_type(x, *bounds)
    if _is_complex(result_type):
        raise TypeError("clip is not supported for complex bounds")
    for b in bounds:
        if isinstance(b, DNDarray):
            # the broadcast shape must be x's shape: bounds never enlarge the result
            from .sanitation import broadcast_shapes

            if broadcast_shapes(x.gshape, b.gshape) != x.gshape:
                raise ValueError(
                    f"bound of shape {b.gshape} does not broadcast to x's shape {x.gshape}"
                )
    _check_out_cast(result_type, out)
    if result_type not in _UNSIGNED_TYPES and all(
        b is None or isinstance(b, _PY_SCALARS) for b in (a_min, a_max)
    ):
        torch_type = result_type.torch_type()
        return local_op(
            _clamp,
            x,
            out=out,
            no_cast=True,
            where=where,
            torch_type=torch_type,
            a_min=a_min,
            a_max=a_max,
        )
    if a_min is None:
        return binary_op(torch.minimum, x, a_max, out=out, where=where, operand_type=result_type)
    if a_max is None:
        return binary_op(torch.maximum, x, a_min, out=out, where=where, operand_type=result_type)
    lower = binary_op(torch.maximum, x, a_min, operand_type=result_type)
    return binary_op(torch.minimum, lower, a_max, out=out, where=where, operand_type=result_type)


def _clamp(tensor: torch.Tensor, torch_type, a_min, a_max) -> torch.Tensor:
    tensor = tensor.to(torch_type)
    if a_min is None and a_max is None:
        return tensor.clone()
    if torch_type is torch.bool:
        if a_min is not None:
            tensor = tensor | builtins.bool(a_min)
        if a_max is not None:
            tensor = tensor & builtins.bool(a_max)
        return tensor
    return torch.clamp(tensor, min=a_min, max=a_max)


register_unsigned(_abs_tensor, torch.clone)  # unsigned values are their own absolute value


def _sign_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.is_complex():
        return torch.sgn(tensor)
    result = torch.sign(tensor)
    if tensor.is_floating_point():
        # torch.sign(nan) is 0, NumPy's is nan
        result = torch.where(torch.isnan(tensor), tensor, result)
    return result


def sign(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise sign: -1, 0 or 1 for reals (NaN for NaN), ``x / |x|`` for complex values
    (0 for 0), as NumPy 2. The dtype is kept.

    Parameters
    ----------
    x : DNDarray
        Input array.
    out : DNDarray, optional
        See :func:`abs`.
    where : DNDarray or array-like of bool, optional
        See :func:`abs`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is boolean (as NumPy).

    Examples
    --------
    >>> ht.sign(ht.array([-3.0, 0.0, 2.0]))
    DNDarray([-1.,  0.,  1.], dtype=ht.float32, device=cpu:0, split=None)
    >>> ht.sign(ht.array([3 + 4j]))
    DNDarray([0.6+0.8j], dtype=ht.complex64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if x.dtype is types.bool:
        raise TypeError("sign is not supported for boolean arrays")
    return _unary(_sign_tensor, x, out, where, "sign", no_cast=True)


register_unsigned(_sign_tensor, lambda tensor: (tensor != 0).to(torch.int64).view(torch.uint64))


def sgn(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise sign extended to complex numbers: ``x / |x|`` (0 for 0); for real arrays the
    same as :func:`sign`.

    Parameters
    ----------
    x : DNDarray
        Input array.
    out : DNDarray, optional
        See :func:`abs`.
    where : DNDarray or array-like of bool, optional
        See :func:`abs`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is boolean.

    Examples
    --------
    >>> ht.sgn(ht.array([-2.0, 1j]))
    DNDarray([-1.+0.j,  0.+1.j], dtype=ht.complex64, device=cpu:0, split=None)
    """
    return sign(x, out=out, where=where)


def _fraction_tensor(tensor: torch.Tensor) -> torch.Tensor:
    # modf(+-inf) = (+-0, +-inf), and the fraction keeps the sign of x even when it is zero
    fraction = torch.where(
        torch.isinf(tensor), torch.zeros_like(tensor), tensor - torch.trunc(tensor)
    )
    return torch.copysign(fraction, tensor)


def modf(
    x: DNDarray, out: Optional[Tuple[DNDarray, DNDarray]] = None, where=None
) -> Tuple[DNDarray, DNDarray]:
    """
    The fractional and integral parts of ``x``, elementwise; both have the sign of ``x``.
    Integer and boolean inputs give floats as in NumPy.

    Parameters
    ----------
    x : DNDarray
        Real input array.
    out : tuple of two DNDarrays, optional
        Where to store the fractional and the integral parts.
    where : DNDarray or array-like of bool, optional
        Compute only where True; elsewhere the outputs keep their values.

    Returns
    -------
    (DNDarray, DNDarray)
        Fractional part, integral part.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is complex, or ``out`` is not a pair of DNDarrays.

    Examples
    --------
    >>> ht.modf(ht.array([-1.5, 2.25]))
    (DNDarray([-0.5 ,  0.25], dtype=ht.float32, device=cpu:0, split=None), DNDarray([-1.,  2.], dtype=ht.float32, device=cpu:0, split=None))
    """
    sanitize_in(x)
    _reject_complex(x, "modf")
    if out is None:
        out = (None, None)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("out must be a tuple of two DNDarrays (fractional and integral parts)")
    fraction = _unary(_fraction_tensor, x, out[0], where, "modf", no_cast=False)
    integral = _unary(torch.trunc, x, out[1], where, "modf", no_cast=False)
    return fraction, integral
