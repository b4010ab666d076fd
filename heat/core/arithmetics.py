"""
Elementwise arithmetic (``add``, ``subtract``, ..., bitwise operations, ``gcd``, ``hypot``),
differences (``diff``), sums and products (``sum``, ``prod``, their NaN-ignoring and cumulative
variants) and ``nan_to_num``.

Every elementwise function is one call to an engine of :mod:`heat.core._operations`: binary
operations broadcast and align their operands there (NumPy's type promotion, operands split along
different axes, scalars and array-likes on either side), reductions are one partial reduction plus
at most one Allreduce, cumulative operations one local scan plus one exclusive scan.

The DNDarray operators (``+``, ``-=``, ``&``, ``~``, ...) call the functions of this module; the
in-place ones pass ``out=self``.
"""

from __future__ import annotations

import builtins
import math
from typing import Optional, Tuple, Union

import numpy as np
import torch

from . import _docstrings, types
from ._operations import (
    _PYTHON_SCALARS,
    _UNSIGNED_COMPUTE,
    binary_op,
    compute_tensor,
    cum_op,
    local_op,
    reduce_op,
    register_unsigned,
    storage_tensor,
    uint64_floor_divide,
    uint64_remainder,
)
from .communication import MPI
from .dndarray import DNDarray
from .manipulations import flatten, pad
from .sanitation import sanitize_axis, sanitize_in

__all__ = [
    "add",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "copysign",
    "cumprod",
    "cumproduct",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "div",
    "divide",
    "divmod",
    "float_power",
    "floor_divide",
    "floordiv",
    "fmod",
    "gcd",
    "hypot",
    "invert",
    "lcm",
    "left_shift",
    "mod",
    "mul",
    "multiply",
    "nan_to_num",
    "nanprod",
    "nansum",
    "neg",
    "negative",
    "nextafter",
    "pos",
    "positive",
    "pow",
    "power",
    "prod",
    "reciprocal",
    "remainder",
    "right_shift",
    "sub",
    "subtract",
    "sum",
    "true_divide",
]

_ScalarOrArray = Union[DNDarray, int, float, complex, bool, "np.ndarray", list, tuple]


# ---------------------------------------------------------------------------------------------
# helpers shared by the elementwise families (exponential, trigonometrics, rounding, ...)
# ---------------------------------------------------------------------------------------------
def _unwrap_out(out, name: str = "out"):
    """NumPy accepts ``out=(array,)`` for single-output functions."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"{name} must be a DNDarray or a 1-tuple, but had {len(out)} elements")
        out = out[0]
    if out is not None and not isinstance(out, DNDarray):
        raise TypeError(f"{name} must be a DNDarray, but was {type(out).__name__}")
    return out


def _check_out_cast(result_type, out: Optional[DNDarray], name: str = "out") -> None:
    """NumPy's default ``casting='same_kind'`` for ``out=`` (e.g. an int array += a float)."""
    if out is not None and out._dtype is not result_type:
        if not types.can_cast(result_type, out._dtype, casting="same_kind"):
            raise TypeError(
                f"Cannot cast the result of type {result_type.__name__} to {name} of type "
                f"{out._dtype.__name__} with casting rule 'same_kind'"
            )


def _operand_result_type(t1, t2, name: str):
    """The promoted type of two operands, NumPy 2 rules (Python scalars are weak)."""
    if type(t1) is DNDarray and type(t2) is DNDarray and t1._dtype is t2._dtype:
        return t1._dtype
    for operand in (t1, t2):
        # result_type would read strings and classes as type specifiers, not as data
        if operand is None or isinstance(operand, (str, bytes, type)):
            raise TypeError(
                f"{name}: unsupported operand types {type(t1).__name__} and {type(t2).__name__}"
            )
    try:
        return types.result_type(t1, t2)
    except (TypeError, ValueError, KeyError) as error:
        raise TypeError(
            f"{name}: unsupported operand types {type(t1).__name__} and {type(t2).__name__}"
        ) from error


def _is_exact(heat_type) -> bool:
    return heat_type is types.bool or issubclass(heat_type, types.integer)


def _is_complex(heat_type) -> bool:
    return issubclass(heat_type, types.complexfloating)


def _binary(
    operation,
    t1,
    t2,
    out,
    where,
    name: str,
    operand_type=None,
    result_type=None,
    promote_to_float: bool = False,
    fn_kwargs: Optional[dict] = None,
) -> DNDarray:
    """One call to :func:`binary_op` after the ``out`` checks every ufunc-like function shares."""
    if out is None and where is None:
        # the common case, kept short: it is on every operator's path
        return binary_op(
            operation,
            t1,
            t2,
            fn_kwargs=fn_kwargs,
            promote_to_float=promote_to_float,
            operand_type=operand_type,
        )
    out = _unwrap_out(out)
    if where is True:
        where = None
    if out is not None:
        if result_type is None:
            result_type = operand_type
            if result_type is None:
                result_type = _operand_result_type(t1, t2, name)
                if promote_to_float:
                    result_type = types.float_type_for(result_type)
        _check_out_cast(result_type, out)
    return binary_op(
        operation,
        t1,
        t2,
        out=out,
        where=where,
        fn_kwargs=fn_kwargs,
        promote_to_float=promote_to_float,
        operand_type=operand_type,
    )


def _unary(operation, x, out, where, name: str, no_cast: bool, result_type=None, **kwargs):
    """One call to :func:`local_op` after the argument and ``out`` checks."""
    if out is None and where is None and type(x) is DNDarray:
        return local_op(operation, x, no_cast=no_cast, **kwargs)
    sanitize_in(x)
    out = _unwrap_out(out)
    if where is True:
        where = None
    if out is not None:
        if result_type is None:
            result_type = x._dtype if no_cast else types.float_type_for(x._dtype)
        _check_out_cast(result_type, out)
    return local_op(operation, x, out=out, no_cast=no_cast, where=where, **kwargs)


def _int8_for_bool(rt):
    """NumPy has no bool loop for some arithmetic ufuncs: bools are computed as int8."""
    return types.int8 if rt is types.bool else None


def _zero_division_safe(operation):
    """
    Wrap an integer division ``operation`` so that division by zero gives 0, as NumPy does
    (torch raises for integer division by zero).
    """

    def safe(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.is_floating_point() or a.is_complex():
            return operation(a, b)
        zero = b == 0
        if not bool(zero.any()):
            return operation(a, b)
        result = operation(a, b.masked_fill(zero, 1))
        return result.masked_fill(zero, 0)

    safe.__name__ = getattr(operation, "__name__", "safe")
    return safe


_safe_floor_divide = _zero_division_safe(torch.floor_divide)


def _float_remainder(a, b):
    """torch.remainder, with NumPy's and the array API standard's sign of a zero result: the
    divisor's (``remainder(-1.0, 1.0)`` is +0.0, ``remainder(1.0, -1.0)`` is -0.0)."""
    result = torch.remainder(a, b)
    if result.is_floating_point():
        result = torch.where(result == 0, torch.copysign(result, b), result)
    return result


_safe_remainder = _zero_division_safe(_float_remainder)
_safe_fmod = _zero_division_safe(torch.fmod)
register_unsigned(_safe_floor_divide, uint64_floor_divide)
register_unsigned(_safe_remainder, uint64_remainder)
register_unsigned(_safe_fmod, uint64_remainder)


# ---------------------------------------------------------------------------------------------
# basic arithmetic
# ---------------------------------------------------------------------------------------------
def add(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise sum ``t1 + t2``, with broadcasting and NumPy's type promotion.

    Parameters
    ----------
    t1, t2 : DNDarray, scalar or array-like
        The operands. Operands distributed along different axes are aligned (one collective).
    out : DNDarray, optional
        Where to store the result; it must have the broadcast shape, and the result must be
        castable to its dtype under ``'same_kind'`` casting. Its layout may differ from the
        operands'.
    where : DNDarray or array-like of bool, optional
        Compute only where True; elsewhere ``out`` keeps its value (zeros without ``out``).

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If the shapes cannot be broadcast together, or ``out`` has the wrong shape.
    TypeError
        If an operand has no numeric type, or the result cannot be cast to ``out``'s dtype.

    Examples
    --------
    >>> ht.add(ht.array([1, 2], split=0), 3)
    DNDarray([4, 5], dtype=ht.int64, device=cpu:0, split=0)
    """
    return _binary(torch.add, t1, t2, out, where, "add")


def subtract(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise difference ``t1 - t2``, with broadcasting and NumPy's type promotion.

    Parameters
    ----------
    t1, t2 : DNDarray, scalar or array-like
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If both operands are boolean (as NumPy: use ``bitwise_xor`` or ``logical_xor``).
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.subtract(ht.array([4, 5]), ht.array([1, 1]))
    DNDarray([3, 4], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _operand_result_type(t1, t2, "subtract")
    if rt is types.bool:
        raise TypeError(
            "subtract of boolean operands (the - operator) is not supported, use bitwise_xor "
            "or logical_xor instead"
        )
    return _binary(torch.sub, t1, t2, out, where, "subtract", result_type=rt)


sub = subtract  # HeAT's name


@_docstrings.sections(_docstrings.PRODUCT_QUOTIENT)
def multiply(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise product ``t1 * t2``, with broadcasting and NumPy's type promotion.

    {parameters}

    Examples
    --------
    >>> ht.multiply(ht.array([1.0, 2.0]), 2)
    DNDarray([2., 4.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _binary(torch.mul, t1, t2, out, where, "multiply")


mul = multiply  # HeAT's name


@_docstrings.sections(_docstrings.PRODUCT_QUOTIENT)
def divide(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise true division ``t1 / t2``.

    As in NumPy, integer and boolean operands give float64; division by zero gives ``inf``
    or ``nan``.

    {parameters}

    Examples
    --------
    >>> ht.divide(ht.array([1, 2]), 2)
    DNDarray([0.5, 1. ], dtype=ht.float64, device=cpu:0, split=None)
    """
    rt = _operand_result_type(t1, t2, "divide")
    operand_type = types.float64 if _is_exact(rt) else None
    return _binary(
        torch.div,
        t1,
        t2,
        out,
        where,
        "divide",
        operand_type=operand_type,
        result_type=operand_type or rt,
    )


true_divide = divide
div = divide  # HeAT's name


@_docstrings.sections(_docstrings.INTEGER_DIVISION)
def floor_divide(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise floor division ``t1 // t2`` (rounded towards minus infinity, Python's rule).

    Integer division by zero gives 0, as in NumPy (which also warns); float division by zero
    gives ``inf``, ``-inf`` or ``nan``. Boolean operands are computed as int8, as in NumPy.

    {parameters}

    Examples
    --------
    >>> ht.floor_divide(ht.array([-7, 7]), 2)
    DNDarray([-4,  3], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _operand_result_type(t1, t2, "floor_divide")
    if _is_complex(rt):
        raise TypeError("floor_divide is not supported for complex operands")
    operand_type = _int8_for_bool(rt)
    return _binary(
        _safe_floor_divide,
        t1,
        t2,
        out,
        where,
        "floor_divide",
        operand_type=operand_type,
        result_type=operand_type or rt,
    )


floordiv = floor_divide  # HeAT's name


@_docstrings.sections(_docstrings.INTEGER_DIVISION)
def remainder(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise remainder of floor division, ``t1 % t2``; the result has the sign of the
    divisor (Python's and NumPy's rule; see :func:`fmod` for C's rule).

    Integer division by zero gives 0, as in NumPy; float division by zero gives ``nan``.

    {parameters}

    Examples
    --------
    >>> ht.remainder(ht.array([-7, 7]), 3)
    DNDarray([2, 1], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _operand_result_type(t1, t2, "remainder")
    if _is_complex(rt):
        raise TypeError("remainder is not supported for complex operands")
    operand_type = _int8_for_bool(rt)
    return _binary(
        _safe_remainder,
        t1,
        t2,
        out,
        where,
        "remainder",
        operand_type=operand_type,
        result_type=operand_type or rt,
    )


mod = remainder


def divmod(
    t1: _ScalarOrArray,
    t2: _ScalarOrArray,
    out1: Optional[DNDarray] = None,
    out2: Optional[DNDarray] = None,
    /,
    out: Tuple[Optional[DNDarray], Optional[DNDarray]] = (None, None),
    *,
    where=None,
) -> Tuple[DNDarray, DNDarray]:
    """
    Elementwise quotient and remainder at once: ``(floor_divide(t1, t2), remainder(t1, t2))``,
    as :func:`numpy.divmod` (and Python's builtin ``divmod(x, y)`` on a DNDarray).

    Parameters
    ----------
    t1, t2 : DNDarray, scalar or array-like
        Dividend and divisor; see :func:`floor_divide` for the type rules.
    out1, out2 : DNDarray, optional
        Where to store the quotient and the remainder (positional, as in NumPy's ufuncs).
    out : tuple of two DNDarray or None, optional
        The same as a keyword pair; give either ``out1``/``out2`` or ``out``.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    tuple of DNDarray
        The quotient and the remainder.

    Raises
    ------
    TypeError
        If an operand is complex, or ``out`` is not a pair.
    ValueError
        If the shapes cannot be broadcast together, or the outputs are given twice.

    Examples
    --------
    >>> q, r = ht.divmod(ht.array([-7, 7], split=0), 2)
    >>> q, r
    (DNDarray([-4,  3], dtype=ht.int64, device=cpu:0, split=0), DNDarray([1, 1], dtype=ht.int64, device=cpu:0, split=0))
    """
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(f"out must be a tuple of two arrays or None, but was {out!r}")
    if (out1 is not None or out2 is not None) and out != (None, None):
        raise ValueError("give the outputs either as out1, out2 or as out=, not both")
    if out1 is None and out2 is None:
        out1, out2 = out
    return (
        floor_divide(t1, t2, out=out1, where=where),
        remainder(t1, t2, out=out2, where=where),
    )


@_docstrings.sections(_docstrings.INTEGER_DIVISION)
def fmod(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise remainder of truncated division (C's ``fmod``): the result has the sign of the
    dividend ``t1``.

    Integer division by zero gives 0, as in NumPy; float division by zero gives ``nan``.

    {parameters}

    Examples
    --------
    >>> ht.fmod(ht.array([-7, 7]), 3)
    DNDarray([-1,  1], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _operand_result_type(t1, t2, "fmod")
    if _is_complex(rt):
        raise TypeError("fmod is not supported for complex operands")
    operand_type = _int8_for_bool(rt)
    return _binary(
        _safe_fmod,
        t1,
        t2,
        out,
        where,
        "fmod",
        operand_type=operand_type,
        result_type=operand_type or rt,
    )


def _has_negative(value) -> bool:
    """Whether an integer exponent holds a negative value; collective for split arrays."""
    if isinstance(value, DNDarray):
        if issubclass(value.dtype, types.unsignedinteger):
            return False
        local = bool((value.larray < 0).any()) if value.larray.numel() else False
        if value.split is not None and value.comm.size > 1:
            return bool(value.comm.allreduce(local, op=MPI.LOR))
        return local
    if isinstance(value, (bool, int, float)):
        return value < 0
    try:
        return bool((np.asarray(value) < 0).any())
    except TypeError:
        return False


def pow(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise power ``t1 ** t2``.

    Parameters
    ----------
    t1 : DNDarray, scalar or array-like
        The bases.
    t2 : DNDarray, scalar or array-like
        The exponents.
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If both operands are integers and an exponent is negative (as NumPy), or the shapes
        cannot be broadcast together. (For a split exponent array this check is one small
        Allreduce.)

    Examples
    --------
    >>> ht.pow(ht.array([1, 2, 3]), 2)
    DNDarray([1, 4, 9], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _operand_result_type(t1, t2, "pow")
    operand_type = _int8_for_bool(rt)
    if _is_exact(rt) and _has_negative(t2):
        raise ValueError("Integers to negative integer powers are not allowed.")
    return _binary(
        torch.pow,
        t1,
        t2,
        out,
        where,
        "pow",
        operand_type=operand_type,
        result_type=operand_type or rt,
    )


power = pow


def float_power(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise power ``t1 ** t2`` computed in float64 (complex128 for complex operands),
    as NumPy's ``float_power``.

    Parameters
    ----------
    t1, t2 : DNDarray, scalar or array-like
        Bases and exponents.
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.float_power(ht.array([2, 3]), -1)
    DNDarray([0.5       , 0.33333333], dtype=ht.float64, device=cpu:0, split=None)
    """
    rt = _operand_result_type(t1, t2, "float_power")
    operand_type = types.complex128 if _is_complex(rt) else types.float64
    return _binary(
        torch.pow,
        t1,
        t2,
        out,
        where,
        "float_power",
        operand_type=operand_type,
        result_type=operand_type,
    )


def neg(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise negation ``-x``.

    Parameters
    ----------
    x : DNDarray
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, or is boolean (as NumPy: use ``~`` or ``logical_not``).

    Examples
    --------
    >>> -ht.array([1, -2])
    DNDarray([-1,  2], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if x.dtype is types.bool:
        raise TypeError(
            "negative of a boolean array (the - operator) is not supported, use ~ or "
            "logical_not instead"
        )
    return _unary(_neg_tensor, x, out, where, "negative", no_cast=True)


def _neg_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.is_complex():
        # torch's vectorized complex kernel turns -(0+0j) into +0+0j; negate the components
        return torch.view_as_complex(torch.view_as_real(tensor).neg())
    return torch.neg(tensor)


negative = neg
register_unsigned(_neg_tensor, "wrap")


def _reciprocal_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.is_floating_point() or tensor.is_complex():
        return torch.reciprocal(tensor)
    # integer 1 / x truncated, as NumPy: x for x = 1 or -1, else 0 (also for x = 0)
    return torch.where(tensor.abs() == 1, tensor, torch.zeros_like(tensor))


# 1 for 1, else 0 (through int64 bits: CUDA has no where or bool cast for uint64)
register_unsigned(
    _reciprocal_tensor, lambda tensor: (tensor == 1).to(torch.int64).view(torch.uint64)
)


def reciprocal(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``1 / x``, as :func:`numpy.reciprocal` and the array API standard's
    ``reciprocal``.

    Floating point and complex arrays keep their type. Integer arrays give integers, as NumPy:
    ``1 / x`` truncated (1 and -1 stay, every other value becomes 0; NumPy's result for 0 is
    undefined, heat's is 0).

    Parameters
    ----------
    x : DNDarray
        A numeric array.
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is boolean.

    Examples
    --------
    >>> ht.reciprocal(ht.array([1.0, 2.0, 4.0], split=0))
    DNDarray([1.  , 0.5 , 0.25], dtype=ht.float32, device=cpu:0, split=0)
    """
    sanitize_in(x)
    if x.dtype is types.bool:
        raise TypeError("reciprocal is not supported for boolean arrays")
    return _unary(_reciprocal_tensor, x, out, where, "reciprocal", no_cast=True)


def _copy_tensor(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.clone()


def pos(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise ``+x`` (a copy).

    Parameters
    ----------
    x : DNDarray
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is boolean (as NumPy).

    Examples
    --------
    >>> +ht.array([1, -2])
    DNDarray([ 1, -2], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if x.dtype is types.bool:
        raise TypeError("positive of a boolean array (the + operator) is not supported")
    return _unary(_copy_tensor, x, out, where, "positive", no_cast=True)


positive = pos


# ---------------------------------------------------------------------------------------------
# bitwise operations
# ---------------------------------------------------------------------------------------------
def _bitwise_type(t1, t2, name: str, shift: bool = False):
    rt = _operand_result_type(t1, t2, name)
    if not _is_exact(rt):
        raise TypeError(
            f"{name} is only supported for integer and boolean operands, not {rt.__name__}"
        )
    return types.int8 if shift and rt is types.bool else rt


@_docstrings.sections(_docstrings.BITWISE)
def bitwise_and(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise bitwise AND ``t1 & t2`` of integer or boolean operands (logical AND for bools).

    {parameters}

    Examples
    --------
    >>> ht.bitwise_and(ht.array([12, 10]), 6)
    DNDarray([4, 2], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _bitwise_type(t1, t2, "bitwise_and")
    return _binary(torch.bitwise_and, t1, t2, out, where, "bitwise_and", result_type=rt)


@_docstrings.sections(_docstrings.BITWISE)
def bitwise_or(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise bitwise OR ``t1 | t2`` of integer or boolean operands.

    {parameters}

    Examples
    --------
    >>> ht.bitwise_or(ht.array([12, 10]), 6)
    DNDarray([14, 14], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _bitwise_type(t1, t2, "bitwise_or")
    return _binary(torch.bitwise_or, t1, t2, out, where, "bitwise_or", result_type=rt)


@_docstrings.sections(_docstrings.BITWISE)
def bitwise_xor(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise bitwise XOR ``t1 ^ t2`` of integer or boolean operands.

    {parameters}

    Examples
    --------
    >>> ht.bitwise_xor(ht.array([12, 10]), 6)
    DNDarray([10, 12], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _bitwise_type(t1, t2, "bitwise_xor")
    return _binary(torch.bitwise_xor, t1, t2, out, where, "bitwise_xor", result_type=rt)


def bitwise_not(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise bitwise NOT ``~x`` (two's complement; logical NOT for bools).

    Parameters
    ----------
    x : DNDarray
        Integer or boolean array.
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or has a floating point or complex type.

    Examples
    --------
    >>> ~ht.array([0, 5])
    DNDarray([-1, -6], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if not _is_exact(x.dtype):
        raise TypeError(
            f"bitwise_not is only supported for integer and boolean arrays, not {x.dtype.__name__}"
        )
    return _unary(torch.bitwise_not, x, out, where, "bitwise_not", no_cast=True)


invert = bitwise_not
bitwise_invert = bitwise_not  # the array API standard's name


@_docstrings.sections(_docstrings.BITWISE)
def left_shift(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Shift the bits of ``t1`` to the left by ``t2`` (``t1 << t2``).

    Boolean operands are computed as int8, as in NumPy.

    {parameters}

    Examples
    --------
    >>> ht.left_shift(ht.array([1, 3]), 2)
    DNDarray([ 4, 12], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _bitwise_type(t1, t2, "left_shift", shift=True)
    operand_type = rt if rt is types.int8 else None
    return _binary(
        torch.bitwise_left_shift,
        t1,
        t2,
        out,
        where,
        "left_shift",
        operand_type=operand_type,
        result_type=rt,
    )


@_docstrings.sections(_docstrings.BITWISE)
def right_shift(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Shift the bits of ``t1`` to the right by ``t2`` (``t1 >> t2``, arithmetic shift).

    {parameters}

    Examples
    --------
    >>> ht.right_shift(ht.array([4, -12]), 2)
    DNDarray([ 1, -3], dtype=ht.int64, device=cpu:0, split=None)
    """
    rt = _bitwise_type(t1, t2, "right_shift", shift=True)
    operand_type = rt if rt is types.int8 else None
    return _binary(
        torch.bitwise_right_shift,
        t1,
        t2,
        out,
        where,
        "right_shift",
        operand_type=operand_type,
        result_type=rt,
    )


# the array API standard's (and NumPy 2's) names of the shifts
bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


# ---------------------------------------------------------------------------------------------
# other binary functions
# ---------------------------------------------------------------------------------------------
def nextafter(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    The next representable floating point value after ``t1`` in the direction of ``t2``,
    elementwise, as :func:`numpy.nextafter` and the array API standard's ``nextafter``.

    Parameters
    ----------
    t1, t2 : DNDarray, scalar or array-like
        Real operands; integers are computed in floating point as NumPy does.
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray
        Of the floating point type of the operands.

    Raises
    ------
    TypeError
        If an operand is complex.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.nextafter(ht.array([1.0], dtype=ht.float64), 2.0) - 1
    DNDarray([2.22044605e-16], dtype=ht.float64, device=cpu:0, split=None)
    """
    return _real_float_binary(torch.nextafter, t1, t2, out, where, "nextafter")


def _real_float_binary(operation, t1, t2, out, where, name: str) -> DNDarray:
    """
    A binary function defined for real operands and computed in floating point (``hypot``,
    ``copysign``, ``arctan2``, ``logaddexp``, ...), typed as NumPy's loops for it: the first of
    float16, float32, float64 that both operands cast to safely. For two integer arrays that is
    the promotion of each one's float type, not the float type of their promotion: uint8 with
    int8 computes in float16, though the two integers promote to int16 (float32).
    """
    rt = _operand_result_type(t1, t2, name)
    if _is_complex(rt):
        raise TypeError(f"{name} is not supported for complex operands")
    float_type = types.float_type_for(rt)
    operand_type = None
    scalar_operand = isinstance(t1, _PYTHON_SCALARS) or isinstance(t2, _PYTHON_SCALARS)
    if _is_exact(rt) and not scalar_operand:
        # (a weak Python scalar takes the other operand's type, so float_type is right then)
        loop_type = types.promote_types(
            types.float_type_for(_operand_type(t1)), types.float_type_for(_operand_type(t2))
        )
        if loop_type is not float_type:
            operand_type = float_type = loop_type
    return _binary(
        operation,
        t1,
        t2,
        out,
        where,
        name,
        operand_type=operand_type,
        promote_to_float=True,
        result_type=float_type,
    )


def _operand_type(operand):
    """The heat type of one (non-Python-scalar) operand."""
    return operand._dtype if isinstance(operand, DNDarray) else types.result_type(operand)


def hypot(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise hypotenuse ``sqrt(t1**2 + t2**2)``, computed without intermediate overflow.

    Integer operands give floats as in NumPy (int32/int64 -> float64, int16 -> float32,
    int8/uint8/bool -> float16).

    Parameters
    ----------
    t1, t2 : DNDarray, scalar or array-like
        The legs of the right triangle.
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If an operand is complex.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.hypot(ht.array([3.0, 5.0]), ht.array([4.0, 12.0]))
    DNDarray([ 5., 13.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _real_float_binary(torch.hypot, t1, t2, out, where, "hypot")


def copysign(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    The magnitude of ``t1`` with the sign of ``t2``, elementwise (floating point result).

    Parameters
    ----------
    t1 : DNDarray, scalar or array-like
        The magnitudes.
    t2 : DNDarray, scalar or array-like
        The signs (``-0.0`` counts as negative).
    out : DNDarray, optional
        See :func:`add`.
    where : DNDarray or array-like of bool, optional
        See :func:`add`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If an operand is complex.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.copysign(ht.array([1.0, -2.0]), -1.0)
    DNDarray([-1., -2.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _real_float_binary(torch.copysign, t1, t2, out, where, "copysign")


def _integer_binary(operation, t1, t2, out, where, name: str) -> DNDarray:
    rt = _operand_result_type(t1, t2, name)
    if not issubclass(rt, types.integer):
        raise TypeError(f"{name} is only supported for integer operands, not {rt.__name__}")
    return _binary(operation, t1, t2, out, where, name, result_type=rt)


@_docstrings.sections(_docstrings.GCD_LCM)
def gcd(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise greatest common divisor of ``|t1|`` and ``|t2|`` (``gcd(0, 0) = 0``).

    {parameters}

    Examples
    --------
    >>> ht.gcd(ht.array([12, -20]), 8)
    DNDarray([4, 4], dtype=ht.int64, device=cpu:0, split=None)
    """
    return _integer_binary(torch.gcd, t1, t2, out, where, "gcd")


@_docstrings.sections(_docstrings.GCD_LCM)
def lcm(
    t1: _ScalarOrArray, t2: _ScalarOrArray, out: Optional[DNDarray] = None, where=None
) -> DNDarray:
    """
    Elementwise least common multiple of ``|t1|`` and ``|t2|`` (0 if either is 0).

    {parameters}

    Examples
    --------
    >>> ht.lcm(ht.array([4, -6]), 6)
    DNDarray([12,  6], dtype=ht.int64, device=cpu:0, split=None)
    """
    return _integer_binary(torch.lcm, t1, t2, out, where, "lcm")


# ---------------------------------------------------------------------------------------------
# differences
# ---------------------------------------------------------------------------------------------
def _diff_operand(value, a: DNDarray, axis: int, name: str):
    """``prepend``/``append`` as a DNDarray (0-d) or a DNDarray of a's shape but along ``axis``."""
    from .factories import array

    if not isinstance(value, DNDarray):
        try:
            value = array(
                value if isinstance(value, torch.Tensor) else np.asarray(value),
                device=a.device,
                comm=a.comm,
            )
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"{name} must be a scalar or array-like, but was {type(value).__name__}"
            ) from error
    if value.ndim == 0:
        return value
    if value.ndim != a.ndim or any(
        value.gshape[i] != a.gshape[i] for i in range(a.ndim) if i != axis
    ):
        raise ValueError(
            f"{name} of shape {value.gshape} does not match the input of shape {a.gshape} "
            f"in every dimension but axis {axis}"
        )
    return value


def _diff_local_extra(value: DNDarray, a: DNDarray, axis: int, torch_type, replicated: bool):
    """The local tensor of a prepend/append operand, laid out like ``a``'s block."""
    from ._operations import align_local

    if value.ndim == 0:
        shape = list(a.gshape if replicated else a.lshape)
        shape[axis] = 1
        return value.larray.to(torch_type).expand(shape)
    if replicated or a.split is None:
        local = align_local(value, value.gshape, None, None)
    else:
        local = align_local(value, value.gshape, a.split, a)
    return local.to(torch_type)


def _diff_tensor(tensor: torch.Tensor, n: int, axis: int) -> torch.Tensor:
    """The n-th discrete difference of a local tensor (not-equal for bools, as NumPy)."""
    if tensor.dtype in _UNSIGNED_COMPUTE:  # differences wrap, as NumPy's
        return storage_tensor(_diff_tensor(compute_tensor(tensor), n, axis), tensor.dtype)
    for _ in range(n):
        length = tensor.shape[axis]
        if length == 0:
            break
        upper = tensor.narrow(axis, 1, length - 1)
        lower = tensor.narrow(axis, 0, length - 1)
        tensor = torch.ne(upper, lower) if tensor.dtype is torch.bool else upper - lower
    return tensor


def diff(
    a: DNDarray,
    n: int = 1,
    axis: int = -1,
    prepend=None,
    append=None,
) -> DNDarray:
    """
    The ``n``-th discrete difference along ``axis``: ``out[i] = a[i+1] - a[i]``, applied
    ``n`` times (boolean arrays use ``!=``, as NumPy).

    Along the split axis each process receives, in one all-to-all, only the rows its balanced
    share of the result needs from other processes (the ``n`` rows after its block, plus the
    few that the shorter result shifts between neighbours); nothing is gathered.

    Parameters
    ----------
    a : DNDarray
        Input array, at least one-dimensional.
    n : int, optional
        How many times to take the difference (0 returns ``a``).
    axis : int, optional
        The axis along which to take the difference (default: the last).
    prepend, append : scalar or array-like, optional
        Values joined to ``a`` along ``axis`` before differencing. Scalars are expanded to
        length 1 along ``axis``; arrays must match ``a``'s shape in every other dimension.

    Returns
    -------
    DNDarray
        Same shape as ``a`` except along ``axis``, whose length is reduced by ``n`` (to no
        less than 0). The dtype is the promotion of ``a``, ``prepend`` and ``append``.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``n`` is not an integer.
    ValueError
        If ``n`` is negative, ``a`` is 0-d, ``axis`` is out of range, or ``prepend``/``append``
        do not fit.

    Examples
    --------
    >>> ht.diff(ht.array([1, 2, 4, 7, 0], split=0))
    DNDarray([ 1,  2,  3, -7], dtype=ht.int64, device=cpu:0, split=0)
    >>> ht.diff(ht.array([1, 2, 4]), n=2)
    DNDarray([1], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(a, "a")
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"n must be an integer, but was {type(n).__name__}")
    n = n.__index__()
    if n < 0:
        raise ValueError(f"order must be non-negative, but n was {n}")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = sanitize_axis(a.gshape, axis)
    if not isinstance(axis, int):
        raise TypeError(f"axis must be an integer, but was {axis!r}")
    if n == 0:
        return a
    extras = []
    for name, value in (("prepend", prepend), ("append", append)):
        extras.append(None if value is None else _diff_operand(value, a, axis, name))
    dtype = types.result_type(a, *[e for e in extras if e is not None])
    torch_type = dtype.torch_type()
    lengths = [0 if e is None else (1 if e.ndim == 0 else e.gshape[axis]) for e in extras]
    total = lengths[0] + a.gshape[axis] + lengths[1]
    out_len = builtins.max(total - n, 0)
    gshape = list(a.gshape)
    gshape[axis] = out_len
    gshape = tuple(gshape)

    distributed = a.split is not None and a.split == axis and a.comm.size > 1
    local_a = a.larray.to(torch_type)
    if not distributed:
        # at one process the split axis may be the diff axis: prepend/append are then whole
        replicated = a.split is None or a.split == axis
        pieces = [
            _diff_local_extra(e, a, axis, torch_type, replicated) if e is not None else None
            for e in extras
        ]
        joined = [p for p in (pieces[0], local_a, pieces[1]) if p is not None]
        tensor = torch.cat(joined, dim=axis) if len(joined) > 1 else local_a
        result = _diff_tensor(tensor, n, axis)
        return DNDarray(result, gshape, dtype, a.split, a.device, a.comm, a._balanced)

    # along the split axis: the "virtual" input is prepend | a | append; prepend and append are
    # replicated, a's rows are spread. Process r computes the balanced output rows
    # [ostart_r, ostart_r + ocount_r) and needs virtual rows [ostart_r, ostart_r + ocount_r + n).
    comm = a.comm
    rank, size = comm.rank, comm.size
    pieces = [
        _diff_local_extra(e, a, axis, torch_type, replicated=True) if e is not None else None
        for e in extras
    ]
    counts = a.counts_displs()[0]
    starts = [lengths[0] + builtins.sum(counts[:r]) for r in range(size)]
    out_counts = comm.counts_displs_shape(gshape, axis)[0]
    needs = []
    ostart = 0
    for r in range(size):
        needs.append((ostart, ostart + out_counts[r] + n) if out_counts[r] > 0 else (0, 0))
        ostart += out_counts[r]

    def overlap(lo, hi, r):
        """Rows of process r's block (virtual rows) inside [lo, hi), as (local offset, length)."""
        first = builtins.max(lo, starts[r])
        last = builtins.min(hi, starts[r] + counts[r])
        return (first - starts[r], last - first) if last > first else (0, 0)

    transfers_needed = builtins.any(
        overlap(*needs[r], s)[1] > 0 for r in range(size) for s in range(size) if s != r
    )
    received = None
    if transfers_needed:
        blocks = []
        for r in range(size):
            offset, length = overlap(*needs[r], rank) if r != rank else (0, 0)
            blocks.append(local_a.narrow(axis, offset, length).contiguous())
        received = comm.alltoallv_tensors(blocks, axis=axis)
    lo, hi = needs[rank]
    segments = []
    if pieces[0] is not None and lo < lengths[0]:
        segments.append(pieces[0].narrow(axis, lo, builtins.min(hi, lengths[0]) - lo))
    for s in range(size):
        if s == rank:
            offset, length = overlap(lo, hi, s)
            if length:
                segments.append(local_a.narrow(axis, offset, length))
        elif received is not None and received[s].shape[axis] > 0:
            segments.append(received[s].to(torch_type))
    append_start = lengths[0] + a.gshape[axis]
    if pieces[1] is not None and hi > append_start:
        first = builtins.max(lo, append_start)
        segments.append(pieces[1].narrow(axis, first - append_start, hi - first))
    if segments:
        tensor = torch.cat(segments, dim=axis) if len(segments) > 1 else segments[0]
        result = _diff_tensor(tensor, n, axis)
    else:
        shape = list(local_a.shape)
        shape[axis] = 0
        result = torch.empty(shape, dtype=torch_type, device=local_a.device)
    return DNDarray(result.contiguous(), gshape, dtype, axis, a.device, comm, True)


# ---------------------------------------------------------------------------------------------
# sums and products
# ---------------------------------------------------------------------------------------------
def _accumulation_type(x: DNDarray, dtype):
    """NumPy's accumulator: bool and signed integers sum in int64, unsigned ones in uint64."""
    if dtype is not None:
        return types.canonical_heat_type(dtype)
    if issubclass(x.dtype, types.unsignedinteger):
        return types.uint64
    if _is_exact(x.dtype):
        return types.int64
    return x.dtype


def _sum_partial(tensor: torch.Tensor, dims, keepdim: bool = True) -> torch.Tensor:
    if len(dims) == tensor.ndim:
        # torch's all-dimensions kernel: ~20% faster on large blocks than naming every dimension
        total = tensor.sum()
        return total.reshape((1,) * tensor.ndim) if keepdim else total
    return torch.sum(tensor, dim=dims, keepdim=keepdim)


def _prod_partial(tensor: torch.Tensor, dims, keepdim: bool = True) -> torch.Tensor:
    # torch.prod reduces one dimension at a time
    if tensor.ndim == 0:
        return tensor.clone()
    for d in sorted(dims, reverse=True):
        tensor = torch.prod(tensor, dim=d, keepdim=True)
    if not keepdim:
        tensor = tensor.squeeze(tuple(dims)) if dims else tensor
    return tensor


def _nan_to_neutral(tensor: torch.Tensor, neutral) -> torch.Tensor:
    if tensor.is_floating_point() or tensor.is_complex():
        return torch.where(torch.isnan(tensor), torch.tensor(neutral, dtype=tensor.dtype), tensor)
    return tensor


def _nansum_partial(tensor: torch.Tensor, dims, keepdim: bool = True) -> torch.Tensor:
    return torch.sum(_nan_to_neutral(tensor, 0), dim=dims, keepdim=keepdim)


def _nanprod_partial(tensor: torch.Tensor, dims, keepdim: bool = True) -> torch.Tensor:
    return _prod_partial(_nan_to_neutral(tensor, 1), dims, keepdim)


def _reduction(x, partial, op, axis, dtype, out, keepdims, neutral, name):
    if axis is None and out is None and keepdims is False and type(x) is DNDarray:
        # the common x.sum(): nothing to check but the accumulation type
        return reduce_op(x, partial, op, neutral=neutral, dtype=_accumulation_type(x, dtype))
    sanitize_in(x, "a")
    out = _unwrap_out(out)
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError(f"keepdims must be a bool, but was {type(keepdims).__name__}")
    return reduce_op(
        x,
        partial,
        op,
        axis=axis,
        out=out,
        keepdims=builtins.bool(keepdims),
        neutral=neutral,
        dtype=_accumulation_type(x, dtype),
    )


def sum(
    a: DNDarray,
    axis: Union[None, int, Tuple[int, ...]] = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    keepdims: bool = False,
) -> DNDarray:
    """
    Sum of array elements over the given axes.

    A local sum, then one Allreduce when the split axis is summed over (processes without
    rows contribute 0). As in NumPy, bool and integer arrays are summed in int64.

    Parameters
    ----------
    a : DNDarray
    axis : None, int or tuple of int, optional
        Axes to sum over; None sums all elements.
    dtype : heat type, optional
        The type to accumulate in (and of the result).
    out : DNDarray, optional
        Where to store the result (its layout may differ; values are cast to its dtype).
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Returns
    -------
    DNDarray
        The sums; split along the remaining split axis, or not split if it was reduced.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis`` is not an integer or tuple of integers.
    ValueError
        If an axis is out of range or repeated, or ``out`` has the wrong shape.

    Examples
    --------
    >>> ht.sum(ht.ones((2, 3), split=0))
    DNDarray(6., dtype=ht.float32, device=cpu:0, split=None)
    >>> ht.sum(ht.ones((2, 3), split=0), axis=1)
    DNDarray([3., 3.], dtype=ht.float32, device=cpu:0, split=0)
    """
    return _reduction(a, _sum_partial, MPI.SUM, axis, dtype, out, keepdims, 0, "sum")


def prod(
    a: DNDarray,
    axis: Union[None, int, Tuple[int, ...]] = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    keepdims: bool = False,
) -> DNDarray:
    """
    Product of array elements over the given axes.

    A local product, then one Allreduce when the split axis is reduced (processes without
    rows contribute 1). As in NumPy, bool and integer arrays are multiplied in int64.

    Parameters
    ----------
    a : DNDarray
    axis : None, int or tuple of int, optional
        Axes to multiply over; None reduces all elements.
    dtype : heat type, optional
        The type to accumulate in (and of the result).
    out : DNDarray, optional
        Where to store the result.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis`` is not an integer or tuple of integers.
    ValueError
        If an axis is out of range or repeated, or ``out`` has the wrong shape.

    Examples
    --------
    >>> ht.prod(ht.array([[1.0, 2.0], [3.0, 4.0]], split=0), axis=0)
    DNDarray([3., 8.], dtype=ht.float32, device=cpu:0, split=None)
    """
    return _reduction(a, _prod_partial, MPI.PROD, axis, dtype, out, keepdims, 1, "prod")


def nansum(
    a: DNDarray,
    axis: Union[None, int, Tuple[int, ...]] = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    keepdims: bool = False,
) -> DNDarray:
    """
    Sum of array elements over the given axes, treating NaNs as zero (see :func:`sum`).

    Parameters
    ----------
    a : DNDarray
    axis : None, int or tuple of int, optional
    dtype : heat type, optional
    out : DNDarray, optional
    keepdims : bool, optional

    Returns
    -------
    DNDarray
        All-NaN slices sum to 0.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis`` has the wrong type.
    ValueError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> ht.nansum(ht.array([1.0, float("nan"), 2.0], split=0))
    DNDarray(3., dtype=ht.float32, device=cpu:0, split=None)
    """
    return _reduction(a, _nansum_partial, MPI.SUM, axis, dtype, out, keepdims, 0, "nansum")


def nanprod(
    a: DNDarray,
    axis: Union[None, int, Tuple[int, ...]] = None,
    dtype=None,
    out: Optional[DNDarray] = None,
    keepdims: bool = False,
) -> DNDarray:
    """
    Product of array elements over the given axes, treating NaNs as one (see :func:`prod`).

    Parameters
    ----------
    a : DNDarray
    axis : None, int or tuple of int, optional
    dtype : heat type, optional
    out : DNDarray, optional
    keepdims : bool, optional

    Returns
    -------
    DNDarray
        All-NaN slices give 1.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis`` has the wrong type.
    ValueError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> ht.nanprod(ht.array([2.0, float("nan"), 3.0], split=0))
    DNDarray(6., dtype=ht.float32, device=cpu:0, split=None)
    """
    return _reduction(a, _nanprod_partial, MPI.PROD, axis, dtype, out, keepdims, 1, "nanprod")


_ROW_SCAN_TYPES = frozenset(
    (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float32, torch.float64)
)
_ROW_SCAN_MIN_ROW = 1024  # elements per row below which the per-row call costs more than it saves


def _row_scan(torch_scan, numpy_ufunc):
    """
    ``torch_scan(tensor, dim=dim)`` (cumsum, cumprod). On CPU, along an axis that is not the last
    one, torch's kernel walks each column with a large stride (~2.5x slower than memory speed);
    this adds row ``i - 1`` of the result to row ``i`` of the input instead, row by row, with
    NumPy's kernel on contiguous rows (one thread: the rows are short, so several threads would
    mostly wait for each other's turn at the interpreter). These are NumPy's own
    additions in NumPy's order (float32 accumulates in float32), so the result equals
    ``np.cumsum``'s bit for bit.
    """

    def scan(tensor: torch.Tensor, dim: int) -> torch.Tensor:
        shape = tensor.shape
        rows = shape[dim] if tensor.ndim else 0
        row = math.prod(shape[dim + 1 :])
        if (
            tensor.device.type != "cpu"
            or tensor.dtype not in _ROW_SCAN_TYPES
            or row < _ROW_SCAN_MIN_ROW
            or rows < 2
        ):
            return torch_scan(tensor, dim=dim)
        source = tensor.contiguous().numpy().reshape(math.prod(shape[:dim]), rows, row)
        result = np.empty_like(source)
        result[:, 0] = source[:, 0]
        for i in range(1, rows):
            numpy_ufunc(result[:, i - 1], source[:, i], out=result[:, i])
        return torch.from_numpy(result).reshape(shape)

    scan.__name__ = torch_scan.__name__
    return scan


_cumsum_partial = _row_scan(torch.cumsum, np.add)
_cumprod_partial = _row_scan(torch.cumprod, np.multiply)


def _cumulative(a, axis, dtype, out, partial, exscan_op, final_op, neutral):
    sanitize_in(a, "a")
    out = _unwrap_out(out)
    if axis is not None:
        axis = sanitize_axis(a.gshape, axis)
        if not isinstance(axis, int):
            raise TypeError(f"axis must be an integer or None, but was {axis!r}")
    if dtype is not None:
        dtype = types.canonical_heat_type(dtype)
    if axis is None:
        # NumPy scans the flattened array
        a, axis = flatten(a), 0
    return cum_op(a, partial, exscan_op, final_op, neutral, axis, dtype=dtype, out=out)


def _cumulative_standard(x, axis, dtype, include_initial, scan, neutral, name: str) -> DNDarray:
    """The array API standard's cumulative_sum / cumulative_prod through ``scan`` (cumsum, ...)."""
    sanitize_in(x, "x")
    if not isinstance(include_initial, (builtins.bool, np.bool_)):
        raise TypeError(f"include_initial must be a bool, but was {type(include_initial).__name__}")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for an array of {x.ndim} dimensions")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{name} needs an array of at least one dimension")
    result = scan(x, axis=axis, dtype=dtype)
    if include_initial:
        axis = sanitize_axis(x.gshape, axis)
        widths = [(0, 0)] * x.ndim
        widths[axis] = (1, 0)
        result = pad(result, widths, constant_values=neutral)
    return result


def cumulative_sum(
    x: DNDarray, /, *, axis: Optional[int] = None, dtype=None, include_initial: bool = False
) -> DNDarray:
    """
    Cumulative sum along ``axis``, the array API standard's ``cumulative_sum`` (NumPy 2's
    :func:`numpy.cumulative_sum`); :func:`cumsum` with a leading zero if ``include_initial``.

    Parameters
    ----------
    x : DNDarray
    axis : int, optional
        The axis of the scan; may be None only for a 1-D ``x``.
    dtype : heat type, optional
        Accumulator and result type; default as :func:`cumsum`.
    include_initial : bool
        Start the result with the sum of nothing, 0 (the axis grows by one).

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``include_initial`` not a bool.
    ValueError
        If ``axis`` is None for an array of more than one dimension, or out of range.

    Examples
    --------
    >>> ht.cumulative_sum(ht.array([1, 2, 3], split=0), include_initial=True)
    DNDarray([0, 1, 3, 6], dtype=ht.int64, device=cpu:0, split=0)
    """
    return _cumulative_standard(x, axis, dtype, include_initial, cumsum, 0, "cumulative_sum")


def cumulative_prod(
    x: DNDarray, /, *, axis: Optional[int] = None, dtype=None, include_initial: bool = False
) -> DNDarray:
    """
    Cumulative product along ``axis``, the array API standard's ``cumulative_prod`` (NumPy 2's
    :func:`numpy.cumulative_prod`): :func:`cumprod` with a leading one (the product of nothing)
    if ``include_initial``. Parameters, result and errors as :func:`cumulative_sum`.

    Examples
    --------
    >>> ht.cumulative_prod(ht.array([1, 2, 3], split=0))
    DNDarray([1, 2, 6], dtype=ht.int64, device=cpu:0, split=0)
    """
    return _cumulative_standard(x, axis, dtype, include_initial, cumprod, 1, "cumulative_prod")


def cumsum(
    a: DNDarray, axis: Optional[int] = None, dtype=None, out: Optional[DNDarray] = None
) -> DNDarray:
    """
    Cumulative sum along ``axis``.

    A local scan, then one exclusive scan of the block totals when ``axis`` is the split axis.
    As in NumPy, bool and integer types smaller than int64 accumulate in int64.

    Parameters
    ----------
    a : DNDarray
    axis : int, optional
        The axis of the scan; None scans the flattened array.
    dtype : heat type, optional
        Accumulator and result type.
    out : DNDarray, optional
        Where to store the result.

    Returns
    -------
    DNDarray
        Same shape (flattened if ``axis`` is None) and layout as the input.

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis`` is not an integer.
    ValueError
        If ``axis`` is out of range.

    Examples
    --------
    >>> ht.cumsum(ht.array([1, 2, 3, 4], split=0))
    DNDarray([ 1,  3,  6, 10], dtype=ht.int64, device=cpu:0, split=0)
    """
    return _cumulative(a, axis, dtype, out, _cumsum_partial, MPI.SUM, torch.add, 0)


def cumprod(
    a: DNDarray, axis: Optional[int] = None, dtype=None, out: Optional[DNDarray] = None
) -> DNDarray:
    """
    Cumulative product along ``axis``.

    A local scan, then one exclusive scan (product) of the block totals when ``axis`` is the
    split axis. As in NumPy, bool and integer types smaller than int64 accumulate in int64.

    Parameters
    ----------
    a : DNDarray
    axis : int, optional
        The axis of the scan; None scans the flattened array.
    dtype : heat type, optional
        Accumulator and result type.
    out : DNDarray, optional
        Where to store the result.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``a`` is not a DNDarray or ``axis`` is not an integer.
    ValueError
        If ``axis`` is out of range.

    Examples
    --------
    >>> ht.cumprod(ht.array([1, 2, 3, 4], split=0))
    DNDarray([ 1,  2,  6, 24], dtype=ht.int64, device=cpu:0, split=0)
    """
    return _cumulative(a, axis, dtype, out, _cumprod_partial, MPI.PROD, torch.mul, 1)


cumproduct = cumprod  # HeAT's (and NumPy 1's) name


# ---------------------------------------------------------------------------------------------
# nan_to_num
# ---------------------------------------------------------------------------------------------
def nan_to_num(
    x: DNDarray,
    copy: bool = True,
    nan: float = 0.0,
    posinf: Optional[float] = None,
    neginf: Optional[float] = None,
) -> DNDarray:
    """
    Replace NaN by ``nan``, positive infinity by ``posinf`` and negative infinity by ``neginf``
    (by default the largest and smallest finite value of the dtype). Complex values are treated
    part by part; integer and boolean arrays are returned unchanged (copied).

    Parameters
    ----------
    x : DNDarray
    copy : bool, optional
        If False, replace in place and return ``x``.
    nan : float, optional
    posinf, neginf : float, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or a replacement value is not a real number.

    Examples
    --------
    >>> ht.nan_to_num(ht.array([float("nan"), float("inf"), -1.0]), posinf=9.0)
    DNDarray([ 0.,  9., -1.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(x)
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a real number or None, but was {type(value).__name__}")
    if _is_exact(x.dtype):
        return x.astype(x.dtype, copy=True) if copy else x
    kwargs = dict(
        nan=float(nan),
        posinf=None if posinf is None else float(posinf),
        neginf=None if neginf is None else float(neginf),
    )
    return local_op(torch.nan_to_num, x, out=None if copy else x, no_cast=True, **kwargs)
