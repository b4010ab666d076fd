"""Tests of heat/core/constants.py: values agree with NumPy and combine with arrays as scalars."""

import math

import numpy as np

import heat as ht
from tests.helpers import assert_arrays_equal


def test_values():
    assert ht.pi == np.pi and ht.e == np.e and ht.euler_gamma == np.euler_gamma
    assert ht.inf == np.inf and -ht.inf == -np.inf and math.isnan(ht.nan)
    assert ht.newaxis is None and np.newaxis is None
    assert ht.PI == ht.pi and ht.E == ht.e and ht.Euler == ht.euler_gamma
    for name in ("INF", "Inf", "Infinity", "Infty"):
        assert getattr(ht, name) == math.inf
    for name in ("NAN", "NaN"):
        assert math.isnan(getattr(ht, name))
    from heat.core import constants

    for name in constants.__all__:
        assert hasattr(ht, name), name


def test_in_expressions():
    a = np.linspace(0, 1, 7, dtype=np.float32)
    x = ht.array(a, split=0)
    # Python floats are weak scalars: float32 stays float32, as in NumPy
    assert_arrays_equal(
        [
            (x * ht.pi, a * np.pi),
            (ht.e**x, np.e**a),
            (x + ht.inf, a + np.inf),
            (ht.isnan(x * ht.nan), np.isnan(a * np.nan)),
            (ht.sin(x * ht.pi), np.sin(a * np.pi), {"atol": 1e-6}),
        ]
    )
