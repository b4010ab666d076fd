"""
Signal processing on distributed arrays: linear convolution through halo exchange.

>>> x = ht.random.randn(1000, split=0)
>>> smooth = ht.signal.convolve(x, ht.ones(5) / 5, mode="same")   # still split along 0

Functions
---------
- :func:`convolve`: 1-D, as :func:`numpy.convolve` (modes ``"full"``, ``"same"``, ``"valid"``),
  with an optional ``stride``; inputs of more than one dimension are batches of 1-D inputs
  along the last axis (as HeAT 1.8), convolved row by row where their rows are;
- :func:`convolve2d`: 2-D with zeros outside the arrays, as :func:`scipy.signal.convolve2d`,
  with an optional ``stride`` per axis.

The signal stays distributed: each process convolves its block together with the rows before it
that it fetches from its neighbours (:meth:`heat.DNDarray.get_halo`), and the result is balanced.
The kernel is gathered on every process. See :mod:`heat.signal._convolution` for the details.
"""

from ._convolution import *  # noqa: F401,F403
from ._convolution import __all__  # noqa: F401
