"""
Logical functions: the reductions ``all`` and ``any``, the closeness tests ``isclose`` and
``allclose``, the floating point classification ``isnan``, ``isinf``, ``isfinite``,
``isneginf``, ``isposinf``, ``signbit``, and ``logical_and``/``or``/``xor``/``not``.

Reductions are one local reduction plus at most one Allreduce (MPI.LAND / MPI.LOR); the
elementwise functions are local, except that binary ones align differently distributed operands.
"""

from __future__ import annotations

import builtins
from typing import Optional, Tuple, Union

import numpy as np
import torch

from . import _docstrings, types
from ._operations import binary_op, reduce_op
from .arithmetics import _binary, _is_complex, _operand_result_type, _unary, _unwrap_out
from .communication import MPI
from .dndarray import DNDarray
from .sanitation import broadcast_shapes, sanitize_in

__all__ = [
    "all",
    "allclose",
    "any",
    "array_equal",
    "array_equiv",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "isneginf",
    "isposinf",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "signbit",
]


# ---------------------------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------------------------
def _all_partial(tensor: torch.Tensor, dims, keepdim: bool = True) -> torch.Tensor:
    return torch.all(tensor, dim=dims, keepdim=keepdim)


def _any_partial(tensor: torch.Tensor, dims, keepdim: bool = True) -> torch.Tensor:
    return torch.any(tensor, dim=dims, keepdim=keepdim)


def _logical_reduction(x, partial, op, axis, out, keepdims, neutral) -> DNDarray:
    sanitize_in(x)
    out = _unwrap_out(out)
    if not isinstance(keepdims, (builtins.bool, np.bool_)):
        raise TypeError(f"keepdims must be a bool, but was {type(keepdims).__name__}")
    return reduce_op(
        x,
        partial,
        op,
        axis=axis,
        out=out,
        keepdims=builtins.bool(keepdims),
        neutral=neutral,
        dtype=types.bool,
    )


@_docstrings.sections(_docstrings.TRUTH_REDUCTION)
def all(
    x: DNDarray,
    axis: Union[None, int, Tuple[int, ...]] = None,
    out: Optional[DNDarray] = None,
    keepdims: bool = False,
) -> DNDarray:
    """
    Whether all elements along the given axes are True (non-zero; NaN counts as True).

    A local test, then one Allreduce (logical AND) if the split axis is reduced; processes
    without rows contribute True, and an empty reduction is True.

    {parameters}

    Examples
    --------
    >>> ht.all(ht.array([[1, 0], [1, 1]], split=0), axis=0)
    DNDarray([ True, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _logical_reduction(x, _all_partial, MPI.LAND, axis, out, keepdims, True)


@_docstrings.sections(_docstrings.TRUTH_REDUCTION)
def any(
    x: DNDarray,
    axis: Union[None, int, Tuple[int, ...]] = None,
    out: Optional[DNDarray] = None,
    keepdims: bool = False,
) -> DNDarray:
    """
    Whether any element along the given axes is True (non-zero; NaN counts as True).

    A local test, then one Allreduce (logical OR) if the split axis is reduced; processes
    without rows contribute False, and an empty reduction is False.

    {parameters}

    Examples
    --------
    >>> ht.any(ht.array([[1, 0], [0, 0]], split=0), axis=1)
    DNDarray([ True, False], dtype=ht.bool, device=cpu:0, split=0)
    """
    return _logical_reduction(x, _any_partial, MPI.LOR, axis, out, keepdims, False)


# ---------------------------------------------------------------------------------------------
# closeness
# ---------------------------------------------------------------------------------------------
def _check_tolerance(value, name: str) -> float:
    if isinstance(value, builtins.bool) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"{name} must be a real number, but was {type(value).__name__}")
    return float(value)


def _isclose_tensor(a: torch.Tensor, b: torch.Tensor, rtol: float, atol: float, equal_nan: bool):
    if a.dtype is torch.bool:
        # torch has no boolean isclose; NumPy compares bools as numbers too
        a, b = a.to(torch.float16), b.to(torch.float16)
    return torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> DNDarray:
    """
    Elementwise ``|a - b| <= atol + rtol * |b|`` (not symmetric, as NumPy); infinities are close
    only to themselves.

    Parameters
    ----------
    a, b : DNDarray, scalar or array-like
        Operands; promoted to a common type and broadcast together. Differently distributed
        operands are aligned (one collective).
    rtol : float, optional
        Relative tolerance.
    atol : float, optional
        Absolute tolerance.
    equal_nan : bool, optional
        Whether NaN compares close to NaN.

    Returns
    -------
    DNDarray
        Boolean array of the broadcast shape.

    Raises
    ------
    TypeError
        If an operand is not numeric or a tolerance is not a real number.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.isclose(ht.array([1.0, 1.1], split=0), 1.0)
    DNDarray([ True, False], dtype=ht.bool, device=cpu:0, split=0)
    """
    rtol = _check_tolerance(rtol, "rtol")
    atol = _check_tolerance(atol, "atol")
    _operand_result_type(a, b, "isclose")
    return binary_op(
        _isclose_tensor,
        a,
        b,
        fn_kwargs={"rtol": rtol, "atol": atol, "equal_nan": builtins.bool(equal_nan)},
    )


def allclose(
    a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> builtins.bool:
    """
    Whether all elements of ``a`` and ``b`` are close (see :func:`isclose`).

    One :func:`isclose` plus one Allreduce when the result is distributed.

    Parameters
    ----------
    a, b : DNDarray, scalar or array-like
    rtol : float, optional
    atol : float, optional
    equal_nan : bool, optional

    Returns
    -------
    bool
        The same Python bool on every process.

    Raises
    ------
    TypeError
        If an operand is not numeric or a tolerance is not a real number.
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> ht.allclose(ht.array([1.0, 2.0], split=0), ht.array([1.0, 2.0 + 1e-9]))
    True
    """
    close = isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return builtins.bool(all(close).item())


def _equal_tensor(t1: torch.Tensor, t2: torch.Tensor, equal_nan: builtins.bool) -> torch.Tensor:
    equal = t1 == t2
    if equal_nan and (t1.is_floating_point() or t1.is_complex()):
        equal = equal | (torch.isnan(t1) & torch.isnan(t2))
    return equal


def _global_shape(value) -> Tuple[int, ...]:
    return value.gshape if isinstance(value, DNDarray) else np.shape(value)


def _all_equal(a1, a2, equal_nan: builtins.bool) -> builtins.bool:
    equal = binary_op(_equal_tensor, a1, a2, fn_kwargs={"equal_nan": equal_nan})
    return builtins.bool(all(equal).item())


def array_equal(a1, a2, equal_nan: builtins.bool = False) -> builtins.bool:
    """
    Whether two arrays have the same shape and the same elements, as :func:`numpy.array_equal`:
    one Python bool, where :func:`heat.equal` (as the array API standard's ``equal``) compares
    element by element. One elementwise comparison and one Allreduce when distributed.

    Parameters
    ----------
    a1, a2 : DNDarray, scalar or array-like
    equal_nan : bool
        Count NaNs (of floating point or complex values) as equal to each other.

    Returns
    -------
    bool
        The same on every process; False for different shapes.

    Raises
    ------
    TypeError
        If ``equal_nan`` is not a bool.

    Examples
    --------
    >>> ht.array_equal(ht.arange(4, split=0), ht.array([0, 1, 2, 3]))
    True
    >>> ht.array_equal(ht.arange(4), ht.arange(3))
    False
    """
    if not isinstance(equal_nan, (builtins.bool, np.bool_)):
        raise TypeError(f"equal_nan must be a bool, but was {type(equal_nan).__name__}")
    if tuple(_global_shape(a1)) != tuple(_global_shape(a2)):
        return False
    return _all_equal(a1, a2, builtins.bool(equal_nan))


def array_equiv(a1, a2) -> builtins.bool:
    """
    Whether two arrays broadcast to one shape and are equal element by element there, as
    :func:`numpy.array_equiv`. One elementwise comparison and one Allreduce when distributed.

    Parameters
    ----------
    a1, a2 : DNDarray, scalar or array-like

    Returns
    -------
    bool
        The same on every process; False for shapes that do not broadcast.

    Examples
    --------
    >>> ht.array_equiv(ht.array([[1, 2], [1, 2]], split=0), ht.array([1, 2]))
    True
    """
    try:
        broadcast_shapes(tuple(_global_shape(a1)), tuple(_global_shape(a2)))
    except ValueError:
        return False
    return _all_equal(a1, a2, False)


# ---------------------------------------------------------------------------------------------
# classification
# ---------------------------------------------------------------------------------------------
def _false_like(tensor: torch.Tensor) -> torch.Tensor:
    return torch.zeros(tensor.shape, dtype=torch.bool, device=tensor.device)


def _isnan_tensor(tensor: torch.Tensor) -> torch.Tensor:
    return (
        torch.isnan(tensor)
        if tensor.is_floating_point() or tensor.is_complex()
        else _false_like(tensor)
    )


def _isinf_tensor(tensor: torch.Tensor) -> torch.Tensor:
    return (
        torch.isinf(tensor)
        if tensor.is_floating_point() or tensor.is_complex()
        else _false_like(tensor)
    )


def _isfinite_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.is_floating_point() or tensor.is_complex():
        return torch.isfinite(tensor)
    return torch.ones(tensor.shape, dtype=torch.bool, device=tensor.device)


@_docstrings.sections(_docstrings.FLOAT_PREDICATE)
def isnan(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise test for NaN (for complex values: either part is NaN).

    {parameters}

    Examples
    --------
    >>> ht.isnan(ht.array([1.0, float("nan")]))
    DNDarray([False,  True], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _unary(_isnan_tensor, x, out, where, "isnan", no_cast=True, result_type=types.bool)


@_docstrings.sections(_docstrings.FLOAT_PREDICATE)
def isinf(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise test for positive or negative infinity (for complex values: either part).

    {parameters}

    Examples
    --------
    >>> ht.isinf(ht.array([1.0, -float("inf")]))
    DNDarray([False,  True], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _unary(_isinf_tensor, x, out, where, "isinf", no_cast=True, result_type=types.bool)


@_docstrings.sections(_docstrings.FLOAT_PREDICATE)
def isfinite(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise test for finiteness (neither infinity nor NaN).

    {parameters}

    Examples
    --------
    >>> ht.isfinite(ht.array([1.0, float("inf"), float("nan")]))
    DNDarray([ True, False, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _unary(_isfinite_tensor, x, out, where, "isfinite", no_cast=True, result_type=types.bool)


def _real_only(x, name: str) -> None:
    sanitize_in(x)
    if _is_complex(x.dtype):
        raise TypeError(f"{name} is not supported for complex arrays")


def _isposinf_tensor(tensor: torch.Tensor) -> torch.Tensor:
    return torch.isposinf(tensor) if tensor.is_floating_point() else _false_like(tensor)


def _isneginf_tensor(tensor: torch.Tensor) -> torch.Tensor:
    return torch.isneginf(tensor) if tensor.is_floating_point() else _false_like(tensor)


@_docstrings.sections(_docstrings.INFINITY_PREDICATE)
def isposinf(x: DNDarray, out: Optional[DNDarray] = None) -> DNDarray:
    """
    Elementwise test for positive infinity.

    {parameters}

    Examples
    --------
    >>> ht.isposinf(ht.array([float("inf"), -float("inf")]))
    DNDarray([ True, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    _real_only(x, "isposinf")
    return _unary(_isposinf_tensor, x, out, None, "isposinf", no_cast=True, result_type=types.bool)


@_docstrings.sections(_docstrings.INFINITY_PREDICATE)
def isneginf(x: DNDarray, out: Optional[DNDarray] = None) -> DNDarray:
    """
    Elementwise test for negative infinity.

    {parameters}

    Examples
    --------
    >>> ht.isneginf(ht.array([float("inf"), -float("inf")]))
    DNDarray([False,  True], dtype=ht.bool, device=cpu:0, split=None)
    """
    _real_only(x, "isneginf")
    return _unary(_isneginf_tensor, x, out, None, "isneginf", no_cast=True, result_type=types.bool)


def _signbit_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.dtype is torch.bool:
        return _false_like(tensor)
    return torch.signbit(tensor)


def signbit(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise test whether the sign bit is set (True for negative values and ``-0.0``).

    Parameters
    ----------
    x : DNDarray
        Real input array.
    out : DNDarray, optional
        Where to store the result.
    where : DNDarray or array-like of bool, optional
        Test only where True; elsewhere ``out`` keeps its value (False without ``out``).

    Returns
    -------
    DNDarray
        Boolean array.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is complex.

    Examples
    --------
    >>> ht.signbit(ht.array([-1.0, -0.0, 2.0]))
    DNDarray([ True,  True, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    _real_only(x, "signbit")
    return _unary(_signbit_tensor, x, out, where, "signbit", no_cast=True, result_type=types.bool)


# ---------------------------------------------------------------------------------------------
# logical operations
# ---------------------------------------------------------------------------------------------
@_docstrings.sections(_docstrings.LOGICAL_BINARY)
def logical_and(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise logical AND of the truth values of ``x1`` and ``x2`` (non-zero is True).

    {parameters}

    Examples
    --------
    >>> ht.logical_and(ht.array([True, False, True]), ht.array([1, 1, 0]))
    DNDarray([ True, False, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    _operand_result_type(x1, x2, "logical_and")
    return _binary(torch.logical_and, x1, x2, out, where, "logical_and", result_type=types.bool)


@_docstrings.sections(_docstrings.LOGICAL_BINARY)
def logical_or(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise logical OR of the truth values of ``x1`` and ``x2`` (non-zero is True).

    {parameters}

    Examples
    --------
    >>> ht.logical_or(ht.array([True, False, False]), ht.array([0, 1, 0]))
    DNDarray([ True,  True, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    _operand_result_type(x1, x2, "logical_or")
    return _binary(torch.logical_or, x1, x2, out, where, "logical_or", result_type=types.bool)


@_docstrings.sections(_docstrings.LOGICAL_BINARY)
def logical_xor(x1, x2, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise logical XOR of the truth values of ``x1`` and ``x2`` (non-zero is True).

    {parameters}

    Examples
    --------
    >>> ht.logical_xor(ht.array([True, False, True]), ht.array([1, 1, 0]))
    DNDarray([False,  True,  True], dtype=ht.bool, device=cpu:0, split=None)
    """
    _operand_result_type(x1, x2, "logical_xor")
    return _binary(torch.logical_xor, x1, x2, out, where, "logical_xor", result_type=types.bool)


def logical_not(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    Elementwise logical NOT of the truth values of ``x`` (non-zero is True).

    Parameters
    ----------
    x : DNDarray
    out : DNDarray, optional
        Where to store the result.
    where : DNDarray or array-like of bool, optional
        Compute only where True; elsewhere ``out`` keeps its value (False without ``out``).

    Returns
    -------
    DNDarray
        Boolean array, same shape and layout as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray.

    Examples
    --------
    >>> ht.logical_not(ht.array([0, 2]))
    DNDarray([ True, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    return _unary(
        torch.logical_not, x, out, where, "logical_not", no_cast=True, result_type=types.bool
    )
