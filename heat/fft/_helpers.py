"""
Sample frequencies and the shifts that centre the zero frequency (:mod:`heat.fft` helpers).
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import torch

from ..core import types
from ..core.communication import sanitize_comm
from ..core.devices import sanitize_device
from ..core.dndarray import DNDarray
from ..core.manipulations import roll
from ..core.sanitation import sanitize_axis, sanitize_in, sanitize_split

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _frequencies(n, d, dtype, split, device, comm, half: bool) -> DNDarray:
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"n must be an integer, but was {type(n).__name__}")
    n = n.__index__()
    if n < 1:
        raise ValueError(f"n must be at least 1, but is {n}")
    if isinstance(d, bool) or not isinstance(d, (int, float)) and not hasattr(d, "__float__"):
        raise TypeError(f"d must be a real number, but was {type(d).__name__}")
    if isinstance(d, complex):
        raise TypeError("d must be a real number, but was complex")
    d = float(d)
    if d == 0:
        raise ValueError("d (the sample spacing) must not be zero")
    # the namespace's default real floating type (the array API standard 2025.12), as for
    # every other floating result heat creates (NumPy, whose default is float64, differs)
    dtype = types.float32 if dtype is None else types.canonical_heat_type(dtype)
    if not types.heat_type_is_realfloating(dtype):
        raise TypeError(f"dtype must be a floating point type, but was {dtype.__name__}")
    length = n // 2 + 1 if half else n
    gshape = (length,)
    split = sanitize_split(gshape, split)
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    offset, lshape, _ = comm.chunk(gshape, split)
    index = torch.arange(
        offset, offset + lshape[0], dtype=torch.float64, device=device.torch_device
    )
    if not half:
        # 0, 1, ..., (n - 1) // 2, then -(n // 2), ..., -1
        index = torch.where(index < (n + 1) // 2, index, index - n)
    local = (index / (n * d)).to(dtype.torch_type())
    return DNDarray(local, gshape, dtype, split, device, comm, True)


def fftfreq(
    n: int,
    d: float = 1.0,
    dtype=None,
    split: Optional[int] = None,
    device=None,
    comm=None,
) -> DNDarray:
    """
    The sample frequencies of :func:`fft`, as :func:`numpy.fft.fftfreq`: for window length
    ``n`` and sample spacing ``d``, ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``.

    Every process computes its own block; nothing is communicated.

    Parameters
    ----------
    n : int
        Window length, at least 1.
    d : float, optional
        Sample spacing (the inverse of the sampling rate), not zero. Default 1.
    dtype : heat floating type, optional
        Default float32, heat's default floating type (the array API standard's default;
        NumPy's is float64).
    split : int or None, optional
        0 to distribute the result, None (default) for a copy on every process.
    device, comm : optional
        Device and communicator of the result.

    Returns
    -------
    DNDarray
        Of length ``n``.

    Raises
    ------
    TypeError
        If ``n`` is not an integer, ``d`` not a real number or ``dtype`` not floating.
    ValueError
        If ``n < 1`` or ``d == 0``.

    Examples
    --------
    >>> ht.fft.fftfreq(5, d=0.1).numpy()
    array([ 0.,  2.,  4., -4., -2.], dtype=float32)
    """
    return _frequencies(n, d, dtype, split, device, comm, half=False)


def rfftfreq(
    n: int,
    d: float = 1.0,
    dtype=None,
    split: Optional[int] = None,
    device=None,
    comm=None,
) -> DNDarray:
    """
    The sample frequencies of :func:`rfft`, as :func:`numpy.fft.rfftfreq`:
    ``[0, 1, ..., n // 2] / (d * n)``.

    Parameters
    ----------
    n : int
        Window length, at least 1.
    d : float, optional
        Sample spacing, not zero. Default 1.
    dtype : heat floating type, optional
        Default float32, as :func:`fftfreq`.
    split : int or None, optional
    device, comm : optional

    Returns
    -------
    DNDarray
        Of length ``n // 2 + 1``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fftfreq`.

    Examples
    --------
    >>> ht.fft.rfftfreq(5, d=0.1).numpy()
    array([0., 2., 4.], dtype=float32)
    """
    return _frequencies(n, d, dtype, split, device, comm, half=True)


def _shift(x, axes, sign: int) -> DNDarray:
    sanitize_in(x, "x")
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (tuple, list)):
        # one by one: as NumPy, an axis listed twice is shifted twice
        axes = tuple(sanitize_axis(x.gshape, a, "axes") for a in axes)
    else:
        axes = (sanitize_axis(x.gshape, axes, "axes"),)
    if not axes:
        return roll(x, 0, 0) if x.ndim else roll(x, 0)
    shifts = tuple(sign * (x.gshape[a] // 2) for a in axes)
    return roll(x, shifts, axes)


def fftshift(x: DNDarray, axes: Union[None, int, Sequence[int]] = None) -> DNDarray:
    """
    Move the zero-frequency term to the centre of the spectrum, as :func:`numpy.fft.fftshift`:
    a roll by ``n // 2`` along each of ``axes``.

    Along the split axis this is :func:`heat.roll`'s exchange of the rows that change process
    (one all-to-all); the layout of ``x`` is kept.

    Parameters
    ----------
    x : DNDarray
    axes : int or sequence of int, optional
        Default: all axes.

    Returns
    -------
    DNDarray
        Same shape, dtype and split as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``axes`` does not contain integers.
    ValueError
        If an axis is out of range (an axis listed twice is shifted twice, as in NumPy).

    Examples
    --------
    >>> ht.fft.fftshift(ht.fft.fftfreq(5, split=0)).numpy()
    array([-0.4, -0.2,  0. ,  0.2,  0.4], dtype=float32)
    """
    return _shift(x, axes, 1)


def ifftshift(x: DNDarray, axes: Union[None, int, Sequence[int]] = None) -> DNDarray:
    """
    The inverse of :func:`fftshift`, as :func:`numpy.fft.ifftshift` (the two differ for odd
    lengths): a roll by ``-(n // 2)`` along each of ``axes``.

    Parameters
    ----------
    x : DNDarray
    axes : int or sequence of int, optional
        Default: all axes.

    Returns
    -------
    DNDarray
        Same shape, dtype and split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fftshift`.

    Examples
    --------
    >>> x = ht.fft.fftfreq(5, split=0)
    >>> bool((ht.fft.ifftshift(ht.fft.fftshift(x)) == x).all())
    True
    """
    return _shift(x, axes, -1)
