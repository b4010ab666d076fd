"""
Tests of heat/core/linalg/iterative.py: cg and lanczos on every layout of the matrix and the
vectors, against NumPy's solution and eigenvalues.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_array_equal, assert_raises_then_collective_works, collective_assert


def spd(n, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


@pytest.mark.parametrize("n", [13, 2], ids=str)
def test_cg(n):
    a = spd(n)
    b = np.random.default_rng(1).standard_normal(n)
    expected = np.linalg.solve(a, b)
    for sa in (None, 0, 1):
        for sb in (None, 0):
            x0 = ht.zeros(n, dtype=ht.float64, split=sb)
            result = ht.linalg.cg(ht.array(a, split=sa), ht.array(b, split=sb), x0)
            assert_array_equal(result, expected, rtol=1e-8, atol=1e-10)
    # float32, no start vector, out=
    out = ht.zeros(n, dtype=ht.float32, split=0)
    ht.linalg.cg(ht.array(a.astype(np.float32), split=0), ht.array(b.astype(np.float32)), out=out)
    assert_array_equal(out, expected.astype(np.float32), rtol=1e-3, atol=1e-4)


def test_cg_errors():
    a = ht.array(spd(4), split=0)
    assert_raises_then_collective_works(
        ValueError, ht.linalg.cg, ht.ones((3, 4), split=0), ht.ones(3), ht.ones(4)
    )
    assert_raises_then_collective_works(ValueError, ht.linalg.cg, a, ht.ones(5), ht.ones(4))
    assert_raises_then_collective_works(ValueError, ht.linalg.cg, a, ht.ones(4), ht.ones(3))
    assert_raises_then_collective_works(TypeError, ht.linalg.cg, a, np.ones(4), ht.ones(4))
    assert_raises_then_collective_works(
        ValueError, ht.linalg.cg, a, ht.ones(4), ht.ones(4), maxiter=-1
    )


@pytest.mark.parametrize("m", [12, 5], ids=str)
def test_lanczos(m):
    n = 12
    a = spd(n, seed=2)
    failures = []
    for split in (None, 0, 1):
        V, T = ht.linalg.lanczos(ht.array(a, split=split), m)
        v, t = V.numpy(), T.numpy()
        if V.gshape != (n, m) or T.gshape != (m, m) or T.split is not None:
            failures.append(f"split {split}: shapes {V.gshape}, {T.gshape}, T split {T.split}")
            continue
        if not np.allclose(v.T @ v, np.eye(m), atol=1e-10):
            failures.append(f"split {split}: V not orthonormal")
        if not np.allclose(v.T @ a @ v, t, atol=1e-8):
            failures.append(f"split {split}: T != V^T A V")
        if not np.allclose(np.triu(t, 2), 0) or not np.allclose(np.tril(t, -2), 0):
            failures.append(f"split {split}: T not tridiagonal")
        if m == n and not np.allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a), rtol=1e-8):
            failures.append(f"split {split}: eigenvalues of T differ from A's")
    # a given start vector and output arrays
    v0 = ht.ones(n, dtype=ht.float64, split=0)
    V_out = ht.zeros((n, m), dtype=ht.float64, split=0)
    T_out = ht.zeros((m, m), dtype=ht.float64)
    V, T = ht.linalg.lanczos(ht.array(a, split=0), m, v0=v0, V_out=V_out, T_out=T_out)
    if V is not V_out or T is not T_out:
        failures.append("V_out / T_out were not returned")
    elif not np.allclose(V_out.numpy()[:, 0], np.ones(n) / np.sqrt(n)):
        failures.append("the first Lanczos vector is not the normalized v0")
    collective_assert(not failures, "\n".join(failures))
    assert_raises_then_collective_works(ValueError, ht.linalg.lanczos, ht.array(a), 0)
    assert_raises_then_collective_works(TypeError, ht.linalg.lanczos, ht.array(a), 2.5)
