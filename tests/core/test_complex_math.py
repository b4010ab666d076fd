"""
Tests of heat/core/complex_math.py against NumPy: real, imag (also as DNDarray properties),
conj/conjugate and angle on every split, complex and real dtypes.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_arrays_equal,
    assert_raises_then_collective_works,
    combinations,
    random_array,
)


@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float32", "int32", "bool"])
def test_real_imag_conj(dtype):
    checks = []
    for shape, split in combinations():
        a = random_array(shape, dtype, seed=1)
        x = ht.array(a, split=split)
        checks += [
            (ht.real(x), np.real(a)),
            (ht.imag(x), np.imag(a)),
            (x.real, a.real),
            (x.imag, a.imag),
            (ht.conj(x), np.conj(a)),
            (ht.conjugate(x), np.conjugate(a)),
            (x.conj(), np.conj(a)),  # the method is ht.conj (a.conj() keeps bool)
        ]
        if np.dtype(dtype).kind != "c":
            assert ht.real(x) is x
    assert_arrays_equal(checks)


def test_real_imag_are_views_and_conj_out():
    z = random_array((4, 5), np.complex64, seed=2)
    x = ht.array(z, split=0)
    real = x.real
    real.larray.fill_(0)
    expected = z.copy()
    expected.real = 0
    checks = [(x, expected)]
    mask = random_array((4, 5), np.bool_, seed=3)
    out = ht.zeros((4, 5), dtype=ht.complex128, split=1)
    result = ht.conj(x, out=out, where=ht.array(mask, split=1))
    assert result is out
    expected_out = np.zeros((4, 5), dtype=np.complex128)
    np.conj(expected, out=expected_out, where=mask)
    checks.append((out, expected_out))
    assert_arrays_equal(checks)
    assert_raises_then_collective_works(TypeError, ht.conj, x, out=ht.zeros((4, 5), split=0))
    assert_raises_then_collective_works(TypeError, ht.real, z)
    assert_raises_then_collective_works(TypeError, ht.angle, z)


@pytest.mark.parametrize(
    "dtype", ["complex64", "complex128", "float32", "float64", "int8", "int64", "bool"]
)
def test_angle(dtype):
    checks = []
    for shape, split in combinations(((7,), (5, 6), (2, 3, 4), (0, 3))):
        a = random_array(shape, dtype, seed=4)
        x = ht.array(a, split=split)
        tol = (
            {"rtol": 1e-3, "atol": 1e-3}
            if np.angle(a).dtype == np.float16
            else {"rtol": 1e-5, "atol": 1e-6}
        )
        checks.append((ht.angle(x), np.angle(a), tol))
        checks.append((ht.angle(x, deg=True), np.angle(a, deg=True), tol))
        checks.append((x.angle(), np.angle(a), tol))
    special = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf])
    if dtype.startswith("complex"):
        grid = np.zeros((special.size, special.size), dtype=dtype)
        grid.real, grid.imag = special[:, None], special[None, :]
        special = grid
    elif dtype.startswith("float"):
        special = special.astype(dtype)
    else:
        special = None
    if special is not None:
        checks.append((ht.angle(ht.array(special, split=0)), np.angle(special)))
    assert_arrays_equal(checks)
