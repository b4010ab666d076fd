"""
Mathematical constants and ``newaxis``, with NumPy's names (plain Python floats, so they combine
with arrays as weak scalars and keep the arrays' dtypes).

>>> ht.pi
3.141592653589793
>>> ht.zeros((3,))[ht.newaxis].shape
(1, 3)
"""

import math

__all__ = [
    "E",
    "Euler",
    "INF",
    "Inf",
    "Infinity",
    "Infty",
    "NAN",
    "NaN",
    "PI",
    "e",
    "euler_gamma",
    "inf",
    "nan",
    "newaxis",
    "pi",
]

#: Archimedes' constant, ratio of a circle's circumference to its diameter.
pi: float = math.pi
#: Euler's number, the base of the natural logarithm.
e: float = math.e
#: Euler-Mascheroni constant (NumPy's ``euler_gamma``).
euler_gamma: float = 0.577215664901532860606512090082402431
#: IEEE 754 positive infinity.
inf: float = float("inf")
#: IEEE 754 "not a number".
nan: float = float("nan")
#: Alias for None, to insert a new axis when indexing (``x[ht.newaxis]``).
newaxis = None

# the spellings heat has always offered
PI: float = pi
E: float = e
Euler: float = euler_gamma
INF: float = inf
Inf: float = inf
Infinity: float = inf
Infty: float = inf
NAN: float = nan
NaN: float = nan
