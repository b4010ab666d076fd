"""
Discrete Fourier transforms of distributed arrays, as :mod:`numpy.fft`.

>>> x = ht.random.randn(64, 32, split=0)
>>> y = ht.fft.fft2(x)              # complex64, still split along axis 0

Functions
---------
- complex: :func:`fft`, :func:`ifft`, :func:`fft2`, :func:`ifft2`, :func:`fftn`, :func:`ifftn`
- real input / real output: :func:`rfft`, :func:`irfft`, :func:`rfft2`, :func:`irfft2`,
  :func:`rfftn`, :func:`irfftn`
- Hermitian: :func:`hfft`, :func:`ihfft`, :func:`hfft2`, :func:`ihfft2`, :func:`hfftn`,
  :func:`ihfftn` (the n-D ones as :mod:`scipy.fft`; NumPy has only the 1-D ones)
- helpers: :func:`fftfreq`, :func:`rfftfreq`, :func:`fftshift`, :func:`ifftshift`

Signatures, lengths (``n``/``s`` cut or zero-pad the input; ``-1`` in ``s`` keeps a length),
axes, normalizations (``norm`` in None, "backward", "ortho", "forward") and result types follow
NumPy 2: float32 input gives complex64 (and complex-to-real transforms float32), float64,
integer and bool input complex128 (float64); real-input transforms reject complex input.

How the work is distributed
---------------------------
An n-D transform is a chain of 1-D transforms along its axes. Each process holds a block of the
array, split along one axis ``s``:

- Transforms along axes other than ``s`` run on every process's local block (NumPy's pocketfft
  on the memory of CPU tensors, ``torch.fft`` on GPU),
  without communication; so does everything for ``split=None`` or on one process.
- When a transform is along ``s``, the array is resplit to another axis ``t`` (one
  all-to-all; ``t`` is preferably an axis that is not transformed at all, else the longest
  other axis), the transforms that are local in that layout are done, and the array is resplit
  back to ``s`` (a second all-to-all), where any transforms along ``t`` that are left are done.
  Transforms along different axes commute, so this never needs more than the two
  all-to-alls; the real-to-complex step of ``rfftn`` stays first and the complex-to-real step of
  ``irfftn`` last. The data is never collected on one process.
- A split 1-D array has no other axis to move the split to. Its complex transform of length
  ``N = N1 * N2`` (``N1`` the largest factor up to ``sqrt(N)``) is Bailey's "four-step"
  algorithm: the vector is read as an ``N1 x N2`` matrix split along its columns (one
  all-to-all), the columns are transformed locally and multiplied by twiddle factors, the
  matrix is resplit along its rows (one all-to-all), the rows are transformed locally, and the
  transposed matrix is read back as a split vector (one all-to-all). Every process holds about
  ``N / p`` points throughout (fewer balanced when ``N1`` is small, e.g. ``N = 2 * prime``).
  ``rfft`` is this complex transform of the real input, cut to ``N // 2 + 1`` terms, and
  ``irfft`` the real part of the inverse transform of the Hermitian extension.
  A prime length ``N`` has no such factorization: its transform is Bluestein's circular
  convolution with a chirp, done with three four-step transforms of a power-of-two length
  ``M >= 2N - 1`` (about ``M / p`` points per process, four to six times the work of a
  composite length). Only lengths below 4 are transformed whole on every process (a few
  numbers, one all-gather).

The result has the split of the input. When the split axis was transformed it is in the
balanced layout; otherwise the input's layout (per-process lengths) is kept.

:func:`fftshift` and :func:`ifftshift` along the split axis use :func:`heat.roll`, which sends
only the rows that change process.
"""

from . import _helpers, _transforms
from ._helpers import *
from ._transforms import *

__all__ = list(_transforms.__all__) + list(_helpers.__all__)
