"""
The discrete Fourier transforms of :mod:`heat.fft` (see the package docstring for how they are
distributed).
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..core.dndarray import DNDarray
from ._plan import (
    check_axis,
    check_input,
    check_n,
    check_norm,
    cook_nd,
    execute,
    real_output_dtype,
    swap_norm,
)

__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "hfft2",
    "ihfft2",
    "hfftn",
    "ihfftn",
]

Axes = Optional[Sequence[int]]
Shape = Optional[Sequence[int]]


# ---------------------------------------------------------------------------------------------
# the shared bodies
# ---------------------------------------------------------------------------------------------
def _c2c_1d(x, n, axis, norm, kind: str) -> DNDarray:
    check_input(x)
    check_norm(norm)
    axis = check_axis(x, axis)
    n = check_n(n, x.gshape[axis])
    return execute(x, [(kind, [(axis, n)])], norm)


def _c2c_nd(x, s, axes, norm, kind: str) -> DNDarray:
    check_input(x)
    check_norm(norm)
    s, axes = cook_nd(x, s, axes)
    # NumPy transforms the last listed axis first (this matters only for repeated axes)
    ops = list(zip(axes, s))[::-1]
    return execute(x, [(kind, ops)], norm)


def _r2c_nd(x, s, axes, norm, conjugate_output: bool = False) -> DNDarray:
    check_input(x, real=True)
    check_norm(norm)
    s, axes = cook_nd(x, s, axes)
    groups = [("rfft", [(axes[-1], s[-1])])]
    if len(axes) > 1:
        groups.append(("fft", list(zip(axes[:-1], s[:-1]))[::-1]))
    return execute(x, groups, norm, conjugate_output=conjugate_output)


def _c2r_nd(x, s, axes, norm, conjugate_input: bool = False) -> DNDarray:
    check_input(x)
    check_norm(norm)
    s, axes = cook_nd(x, s, axes, inverse_real=True)
    groups = []
    if len(axes) > 1:
        groups.append(("ifft", list(zip(axes[:-1], s[:-1]))))
    groups.append(("irfft", [(axes[-1], s[-1])]))
    return execute(
        x, groups, norm, output_dtype=real_output_dtype(x.dtype), conjugate_input=conjugate_input
    )


def _one_axis(x, n, axis, name: str = "n"):
    """``(s, axes)`` of a 1-D transform expressed as an n-D one, validated like NumPy's 1-D."""
    check_input(x)
    axis = check_axis(x, axis)
    if n is not None:
        check_n(n, 0, name)
    return (None if n is None else [n]), [axis]


# ---------------------------------------------------------------------------------------------
# complex transforms
# ---------------------------------------------------------------------------------------------
def fft(
    x: DNDarray, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None
) -> DNDarray:
    """
    The one-dimensional discrete Fourier transform along ``axis``, as :func:`numpy.fft.fft`.

    Along a non-split axis every process transforms its local block. Along the split axis the
    array is resplit to another axis (one all-to-all), transformed and resplit back; a split 1-D
    array is transformed with the distributed four-step algorithm (Bluestein's for a prime
    length); it is never collected on one process (see :mod:`heat.fft`).

    Parameters
    ----------
    x : DNDarray
        Input, real or complex.
    n : int, optional
        Length of the transformed axis of the output: the input is cut, or padded with zeros,
        to ``n`` points. Default: the input's length along ``axis``.
    axis : int, optional
        Axis to transform. Default: the last one.
    norm : {None, "backward", "ortho", "forward"}, optional
        Normalization mode: "backward" (the default, as None) scales nothing in the forward
        transform, "ortho" scales by ``1/sqrt(n)``, "forward" by ``1/n``.

    Returns
    -------
    DNDarray
        Complex, with the split of ``x``: complex64 for float32/complex64 (and float16) input,
        complex128 otherwise (integers and bool included).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, or ``n`` or ``axis`` is not an integer.
    ValueError
        If ``x`` is 0-dimensional, ``axis`` is out of range, ``n < 1`` or ``norm`` is unknown.

    See Also
    --------
    ifft, fftn, rfft

    Examples
    --------
    >>> x = ht.array([1.0, 2.0, 3.0, 4.0], split=0)
    >>> ht.fft.fft(x).numpy()
    array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex64)
    >>> ht.fft.fft(x, n=2).shape
    (2,)
    """
    return _c2c_1d(x, n, axis, norm, "fft")


def ifft(
    x: DNDarray, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None
) -> DNDarray:
    """
    The one-dimensional inverse discrete Fourier transform, as :func:`numpy.fft.ifft`:
    ``ifft(fft(x)) == x`` up to rounding.

    Parameters
    ----------
    x : DNDarray
        Input, real or complex.
    n : int, optional
        Length of the transformed axis of the output (input cut or zero-padded).
    axis : int, optional
        Axis to transform. Default: the last one.
    norm : {None, "backward", "ortho", "forward"}, optional
        "backward" (default) scales this inverse transform by ``1/n``, "ortho" by
        ``1/sqrt(n)``, "forward" not at all.

    Returns
    -------
    DNDarray
        Complex (as :func:`fft`), with the split of ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fft`.

    Examples
    --------
    >>> x = ht.array([10.0, -2 + 2j, -2.0, -2 - 2j], split=0)
    >>> ht.fft.ifft(x).real.numpy()
    array([1., 2., 3., 4.], dtype=float32)
    """
    return _c2c_1d(x, n, axis, norm, "ifft")


def fftn(x: DNDarray, s: Shape = None, axes: Axes = None, norm: Optional[str] = None) -> DNDarray:
    """
    The n-dimensional discrete Fourier transform over ``axes``, as :func:`numpy.fft.fftn`.

    Transforms along non-split axes run on the local blocks. If the split axis is among
    ``axes``, the array is resplit to another axis (preferably one not transformed), the
    transforms that are then local are done, and the array is resplit back: two all-to-alls.

    Parameters
    ----------
    x : DNDarray
        Input, real or complex.
    s : sequence of int, optional
        Output length along each of ``axes`` (input cut or zero-padded); ``-1`` keeps the
        input length. Default: the input's lengths.
    axes : sequence of int, optional
        Axes to transform (an axis may repeat, transforming twice). Default: all axes, or the
        last ``len(s)`` ones if ``s`` is given.
    norm : {None, "backward", "ortho", "forward"}, optional
        Normalization mode (see :func:`fft`), applied over the product of the lengths.

    Returns
    -------
    DNDarray
        Complex, with the split of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, or ``s`` or ``axes`` do not contain integers.
    ValueError
        If an axis is out of range, ``s`` and ``axes`` differ in length, a length is below 1
        (other than -1), or ``norm`` is unknown.

    Examples
    --------
    >>> x = ht.ones((2, 3), split=0)
    >>> ht.fft.fftn(x).numpy().real
    array([[6., 0., 0.],
           [0., 0., 0.]], dtype=float32)
    """
    return _c2c_nd(x, s, axes, norm, "fft")


def ifftn(x: DNDarray, s: Shape = None, axes: Axes = None, norm: Optional[str] = None) -> DNDarray:
    """
    The n-dimensional inverse discrete Fourier transform, as :func:`numpy.fft.ifftn`.

    Parameters
    ----------
    x : DNDarray
    s : sequence of int, optional
        Output length along each of ``axes`` (see :func:`fftn`).
    axes : sequence of int, optional
        Axes to transform. Default: all, or the last ``len(s)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Complex, with the split of ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fftn`.

    Examples
    --------
    >>> x = ht.random.randn(4, 5, split=1)
    >>> bool(ht.allclose(ht.fft.ifftn(ht.fft.fftn(x)).real, x, atol=1e-5))
    True
    """
    return _c2c_nd(x, s, axes, norm, "ifft")


def fft2(
    x: DNDarray, s: Shape = None, axes: Sequence[int] = (-2, -1), norm: Optional[str] = None
) -> DNDarray:
    """
    The two-dimensional discrete Fourier transform, as :func:`numpy.fft.fft2`: :func:`fftn`
    over ``axes``, by default the last two.

    Parameters
    ----------
    x : DNDarray
    s : sequence of int, optional
    axes : sequence of int, optional
        Default ``(-2, -1)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Complex, with the split of ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fftn`.

    Examples
    --------
    >>> x = ht.zeros((3, 4), split=1)
    >>> ht.fft.fft2(x, s=(4, 6)).shape
    (4, 6)
    """
    return _c2c_nd(x, s, axes, norm, "fft")


def ifft2(
    x: DNDarray, s: Shape = None, axes: Sequence[int] = (-2, -1), norm: Optional[str] = None
) -> DNDarray:
    """
    The two-dimensional inverse discrete Fourier transform, as :func:`numpy.fft.ifft2`.

    Parameters
    ----------
    x : DNDarray
    s : sequence of int, optional
    axes : sequence of int, optional
        Default ``(-2, -1)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Complex, with the split of ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fftn`.

    Examples
    --------
    >>> x = ht.ones((2, 2), split=0)
    >>> ht.fft.ifft2(x).numpy().real
    array([[1., 0.],
           [0., 0.]], dtype=float32)
    """
    return _c2c_nd(x, s, axes, norm, "ifft")


# ---------------------------------------------------------------------------------------------
# real transforms
# ---------------------------------------------------------------------------------------------
def rfft(
    x: DNDarray, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None
) -> DNDarray:
    """
    The one-dimensional discrete Fourier transform of real input, as :func:`numpy.fft.rfft`:
    the ``n // 2 + 1`` non-negative frequency terms.

    Parameters
    ----------
    x : DNDarray
        Real input (integers and bool are transformed in double precision).
    n : int, optional
        Number of input points used along ``axis`` (cut or zero-padded).
    axis : int, optional
        Default: the last one.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        complex64 for float32 (and float16) input, complex128 otherwise; split as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or is complex, or ``n`` or ``axis`` is not an integer.
    ValueError
        If ``axis`` is out of range, ``n < 1`` or ``norm`` is unknown.

    Examples
    --------
    >>> x = ht.array([1.0, 2.0, 3.0, 4.0], split=0)
    >>> ht.fft.rfft(x).numpy()
    array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
    """
    check_input(x, real=True)
    s, axes = _one_axis(x, n, axis)
    return _r2c_nd(x, s, axes, norm)


def irfft(
    x: DNDarray, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None
) -> DNDarray:
    """
    The inverse of :func:`rfft`, as :func:`numpy.fft.irfft`: real output of length ``n`` from
    the non-negative frequency terms of a Hermitian-symmetric spectrum.

    Parameters
    ----------
    x : DNDarray
        The non-negative frequency terms.
    n : int, optional
        Length of the output along ``axis``; ``n // 2 + 1`` input points are used (cut or
        zero-padded). Default ``2 * (m - 1)`` for ``m`` input points.
    axis : int, optional
        Default: the last one.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Real: float32 for complex64/float32 input, float64 for complex128, integers and bool;
        split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fft` (also when the default ``n`` is 0, for one input point).

    Examples
    --------
    >>> x = ht.array([10.0, -2 + 2j, -2.0], split=0)
    >>> ht.fft.irfft(x).numpy()
    array([1., 2., 3., 4.], dtype=float32)
    """
    s, axes = _one_axis(x, n, axis)
    return _c2r_nd(x, s, axes, norm)


def rfftn(x: DNDarray, s: Shape = None, axes: Axes = None, norm: Optional[str] = None) -> DNDarray:
    """
    The n-dimensional discrete Fourier transform of real input, as :func:`numpy.fft.rfftn`:
    a real transform along the last of ``axes`` (which keeps ``s[-1] // 2 + 1`` terms), then
    complex transforms along the others.

    Parameters
    ----------
    x : DNDarray
        Real input.
    s : sequence of int, optional
        Number of input points used along each of ``axes``; ``-1`` keeps the input length.
    axes : sequence of int, optional
        Default: all axes, or the last ``len(s)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Complex, split as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is complex or not a DNDarray, or ``s``/``axes`` do not contain integers.
    ValueError
        As :func:`fftn`.

    Examples
    --------
    >>> x = ht.ones((2, 4), split=1)
    >>> ht.fft.rfftn(x).shape
    (2, 3)
    """
    return _r2c_nd(x, s, axes, norm)


def irfftn(x: DNDarray, s: Shape = None, axes: Axes = None, norm: Optional[str] = None) -> DNDarray:
    """
    The inverse of :func:`rfftn`, as :func:`numpy.fft.irfftn`: inverse complex transforms
    along all but the last of ``axes``, then an inverse real transform along the last.

    Parameters
    ----------
    x : DNDarray
    s : sequence of int, optional
        Output lengths along ``axes``. Default: the input lengths, but ``2 * (m - 1)`` along
        the last axis.
    axes : sequence of int, optional
        Default: all axes, or the last ``len(s)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Real (as :func:`irfft`), split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fftn`.

    Examples
    --------
    >>> x = ht.random.randn(4, 6, split=0)
    >>> bool(ht.allclose(ht.fft.irfftn(ht.fft.rfftn(x), s=x.shape), x, atol=1e-5))
    True
    """
    return _c2r_nd(x, s, axes, norm)


def rfft2(
    x: DNDarray, s: Shape = None, axes: Sequence[int] = (-2, -1), norm: Optional[str] = None
) -> DNDarray:
    """
    The two-dimensional discrete Fourier transform of real input, as :func:`numpy.fft.rfft2`
    (:func:`rfftn` over the last two axes by default).

    Parameters
    ----------
    x : DNDarray
        Real input.
    s : sequence of int, optional
    axes : sequence of int, optional
        Default ``(-2, -1)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Complex, split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`rfftn`.

    Examples
    --------
    >>> ht.fft.rfft2(ht.ones((3, 5, 8), split=2)).shape
    (3, 5, 5)
    """
    return _r2c_nd(x, s, axes, norm)


def irfft2(
    x: DNDarray, s: Shape = None, axes: Sequence[int] = (-2, -1), norm: Optional[str] = None
) -> DNDarray:
    """
    The inverse of :func:`rfft2`, as :func:`numpy.fft.irfft2`.

    Parameters
    ----------
    x : DNDarray
    s : sequence of int, optional
        Output lengths (default: the input's, but ``2 * (m - 1)`` along the last axis).
    axes : sequence of int, optional
        Default ``(-2, -1)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Real, split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fftn`.

    Examples
    --------
    >>> ht.fft.irfft2(ht.ones((4, 3), dtype=ht.complex64, split=0)).shape
    (4, 4)
    """
    return _c2r_nd(x, s, axes, norm)


# ---------------------------------------------------------------------------------------------
# Hermitian transforms: hfft = irfft of the conjugate with the opposite norm, ihfft = the
# conjugate of rfft with the opposite norm (NumPy's and SciPy's definitions)
# ---------------------------------------------------------------------------------------------
def hfft(
    x: DNDarray, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None
) -> DNDarray:
    """
    The discrete Fourier transform of a signal with Hermitian symmetry (a real spectrum), as
    :func:`numpy.fft.hfft`: ``x`` holds the first half of the signal.

    Parameters
    ----------
    x : DNDarray
        The first ``n // 2 + 1`` points of the signal.
    n : int, optional
        Length of the output. Default ``2 * (m - 1)`` for ``m`` input points.
    axis : int, optional
        Default: the last one.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Real (as :func:`irfft`), split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`irfft`.

    Examples
    --------
    >>> x = ht.array([1.0, 2.0, 3.0], split=0)
    >>> ht.fft.hfft(x).numpy()
    array([ 8., -2.,  0., -2.], dtype=float32)
    """
    s, axes = _one_axis(x, n, axis)
    return _c2r_nd(x, s, axes, _swapped(norm), conjugate_input=True)


def ihfft(
    x: DNDarray, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None
) -> DNDarray:
    """
    The inverse of :func:`hfft`, as :func:`numpy.fft.ihfft`: the first ``n // 2 + 1`` points
    of the (Hermitian) inverse transform of real input.

    Parameters
    ----------
    x : DNDarray
        Real input.
    n : int, optional
        Number of input points used (cut or zero-padded).
    axis : int, optional
        Default: the last one.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Complex (as :func:`rfft`), split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`rfft`.

    Examples
    --------
    >>> x = ht.array([8.0, -2.0, 0.0, -2.0], split=0)
    >>> ht.fft.ihfft(x).numpy()
    array([1.-0.j, 2.-0.j, 3.-0.j], dtype=complex64)
    """
    check_input(x, real=True)
    s, axes = _one_axis(x, n, axis)
    return _r2c_nd(x, s, axes, _swapped(norm), conjugate_output=True)


def hfftn(x: DNDarray, s: Shape = None, axes: Axes = None, norm: Optional[str] = None) -> DNDarray:
    """
    The n-dimensional discrete Fourier transform of a Hermitian-symmetric signal, as
    :func:`scipy.fft.hfftn` (NumPy has only the 1-D :func:`numpy.fft.hfft`): the signal is
    given by its first half along the last of ``axes``. Equals ``irfftn`` of the conjugate
    with the opposite normalization.

    Parameters
    ----------
    x : DNDarray
    s : sequence of int, optional
        Output lengths along ``axes`` (default: the input's, but ``2 * (m - 1)`` along the
        last axis).
    axes : sequence of int, optional
        Default: all axes, or the last ``len(s)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Real, split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fftn`.

    Examples
    --------
    >>> ht.fft.hfftn(ht.ones((2, 3), split=0)).shape
    (2, 4)
    """
    return _c2r_nd(x, s, axes, _swapped(norm), conjugate_input=True)


def ihfftn(x: DNDarray, s: Shape = None, axes: Axes = None, norm: Optional[str] = None) -> DNDarray:
    """
    The inverse of :func:`hfftn`, as :func:`scipy.fft.ihfftn`: the conjugate of
    :func:`rfftn` with the opposite normalization.

    Parameters
    ----------
    x : DNDarray
        Real input.
    s : sequence of int, optional
    axes : sequence of int, optional
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Complex, split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`rfftn`.

    Examples
    --------
    >>> ht.fft.ihfftn(ht.ones((2, 4), split=1)).shape
    (2, 3)
    """
    return _r2c_nd(x, s, axes, _swapped(norm), conjugate_output=True)


def hfft2(
    x: DNDarray, s: Shape = None, axes: Sequence[int] = (-2, -1), norm: Optional[str] = None
) -> DNDarray:
    """
    The two-dimensional :func:`hfftn` (over the last two axes by default), as
    :func:`scipy.fft.hfft2`.

    Parameters
    ----------
    x : DNDarray
    s : sequence of int, optional
    axes : sequence of int, optional
        Default ``(-2, -1)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Real, split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`fftn`.

    Examples
    --------
    >>> ht.fft.hfft2(ht.ones((3, 3), split=1)).shape
    (3, 4)
    """
    return _c2r_nd(x, s, axes, _swapped(norm), conjugate_input=True)


def ihfft2(
    x: DNDarray, s: Shape = None, axes: Sequence[int] = (-2, -1), norm: Optional[str] = None
) -> DNDarray:
    """
    The two-dimensional :func:`ihfftn` (over the last two axes by default), as
    :func:`scipy.fft.ihfft2`.

    Parameters
    ----------
    x : DNDarray
        Real input.
    s : sequence of int, optional
    axes : sequence of int, optional
        Default ``(-2, -1)``.
    norm : {None, "backward", "ortho", "forward"}, optional

    Returns
    -------
    DNDarray
        Complex, split as ``x``.

    Raises
    ------
    TypeError, ValueError
        As :func:`rfftn`.

    Examples
    --------
    >>> ht.fft.ihfft2(ht.ones((3, 4), split=0)).shape
    (3, 3)
    """
    return _r2c_nd(x, s, axes, _swapped(norm), conjugate_output=True)


def _swapped(norm):
    """The opposite norm; an unknown value passes through to be rejected by the transform."""
    check_norm(norm)
    return swap_norm(norm)
