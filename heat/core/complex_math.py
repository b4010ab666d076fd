"""
Complex number functions: ``real``, ``imag``, ``conj``/``conjugate`` and ``angle``.

All are local (no communication). ``DNDarray.real`` and ``DNDarray.imag`` call these.
"""

from __future__ import annotations

import math
from typing import Optional

import torch

from . import _docstrings, types
from ._operations import local_op
from .arithmetics import _unary
from .dndarray import DNDarray
from .sanitation import sanitize_in

__all__ = ["angle", "conj", "conjugate", "imag", "iscomplex", "isreal", "real"]


def _is_complex(x: DNDarray) -> bool:
    return issubclass(x.dtype, types.complexfloating)


@_docstrings.sections(_docstrings.COMPLEX_PART)
def real(x: DNDarray) -> DNDarray:
    """
    The real part of ``x``.

    For a complex array this is a view sharing memory with ``x`` (as in NumPy), of the
    corresponding real type; a real array is returned itself.

    {parameters}

    Examples
    --------
    >>> ht.real(ht.array([1 + 2j, 3 - 4j]))
    DNDarray([1., 3.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if not _is_complex(x):
        return x
    return local_op(torch.real, x, no_cast=True)


@_docstrings.sections(_docstrings.COMPLEX_PART)
def imag(x: DNDarray) -> DNDarray:
    """
    The imaginary part of ``x``.

    For a complex array this is a view sharing memory with ``x`` (as in NumPy), of the
    corresponding real type; for a real array it is an array of zeros of ``x``'s dtype.

    {parameters}

    Examples
    --------
    >>> ht.imag(ht.array([1 + 2j, 3 - 4j]))
    DNDarray([ 2., -4.], dtype=ht.float32, device=cpu:0, split=None)
    >>> ht.imag(ht.array([1.0, 2.0]))
    DNDarray([0., 0.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if not _is_complex(x):
        return local_op(torch.zeros_like, x, no_cast=True)
    return local_op(torch.imag, x, no_cast=True)


def _conj_tensor(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.is_complex():
        return torch.conj_physical(tensor)
    if tensor.dtype is torch.bool:
        return tensor.to(torch.int8)  # NumPy has no boolean conjugate loop
    return tensor.clone()


def conj(x: DNDarray, out: Optional[DNDarray] = None, where=None) -> DNDarray:
    """
    The elementwise complex conjugate (a copy of ``x`` for real arrays).

    Parameters
    ----------
    x : DNDarray
    out : DNDarray, optional
        Where to store the result (same shape, any layout).
    where : DNDarray or array-like of bool, optional
        Compute only where True; elsewhere ``out`` keeps its value (zeros without ``out``).

    Returns
    -------
    DNDarray
        Same shape, layout and dtype as ``x`` (int8 for bool, as NumPy).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, or the result cannot be cast to ``out``'s dtype.

    Examples
    --------
    >>> ht.conj(ht.array([1 + 2j, 3 - 4j]))
    DNDarray([1.-2.j, 3.+4.j], dtype=ht.complex64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    result_type = types.int8 if x.dtype is types.bool else x.dtype
    return _unary(_conj_tensor, x, out, where, "conj", no_cast=True, result_type=result_type)


conjugate = conj


def _angle_tensor(tensor: torch.Tensor, deg: bool) -> torch.Tensor:
    if tensor.is_complex():
        result = torch.angle(tensor)
    else:
        # arctan2(0, x): pi for -0.0 as in NumPy (torch.angle gives 0 there)
        result = torch.atan2(torch.zeros((), dtype=tensor.dtype, device=tensor.device), tensor)
    if deg:
        result = result * (180.0 / math.pi)
    return result


def angle(z: DNDarray, deg: bool = False) -> DNDarray:
    """
    The counterclockwise angle from the positive real axis, ``arctan2(imag(z), real(z))``.

    Real inputs give 0 or pi (NaN stays NaN); integer inputs give floats as in NumPy
    (int8 -> float16, int16 -> float32, int32/int64 and bool -> float64).

    Parameters
    ----------
    z : DNDarray
    deg : bool, optional
        Return degrees instead of radians.

    Returns
    -------
    DNDarray
        Real floating point array, same shape and layout as ``z``.

    Raises
    ------
    TypeError
        If ``z`` is not a DNDarray.

    Examples
    --------
    >>> ht.angle(ht.array([1j, -1.0, 1 + 1j]), deg=True)
    DNDarray([ 90., 180.,  45.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(z, "z")
    if z.dtype is types.bool:
        # NumPy computes arctan2(0, z) with a weak integer 0: bool -> int64 -> float64
        z = z.astype(types.float64)
    return local_op(_angle_tensor, z, no_cast=False, deg=bool(deg))


def _nonzero_imag(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.imag != 0


def _zero_imag(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.imag == 0


@_docstrings.sections(_docstrings.COMPLEX_PREDICATE)
def iscomplex(x: DNDarray) -> DNDarray:
    """
    Elementwise: whether each element has a non-zero imaginary part, as :func:`numpy.iscomplex`
    (a complex array's ``1+0j`` is not complex; a real array is False everywhere).
    No communication.

    {parameters}

    Examples
    --------
    >>> ht.iscomplex(ht.array([1 + 1j, 1 + 0j, 4.5, 3, 2, 2j]))
    DNDarray([ True, False, False, False, False,  True], dtype=ht.bool, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if not _is_complex(x):
        return local_op(torch.zeros_like, x, no_cast=True, dtype=torch.bool)
    return local_op(_nonzero_imag, x, no_cast=True)


@_docstrings.sections(_docstrings.COMPLEX_PREDICATE)
def isreal(x: DNDarray) -> DNDarray:
    """
    Elementwise: whether each element has a zero imaginary part, as :func:`numpy.isreal`
    (a real array is True everywhere). No communication.

    {parameters}

    Examples
    --------
    >>> ht.isreal(ht.array([1 + 1j, 1 + 0j, 4.5, 3, 2, 2j]))
    DNDarray([False,  True,  True,  True,  True, False], dtype=ht.bool, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if not _is_complex(x):
        return local_op(torch.ones_like, x, no_cast=True, dtype=torch.bool)
    return local_op(_zero_imag, x, no_cast=True)
