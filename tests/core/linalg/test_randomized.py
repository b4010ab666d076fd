"""
Tests of heat/core/linalg/randomized.py: rsvd and reigh on low-rank matrices (exact up to
rounding) and on noisy ones (close to NumPy's leading singular values), every layout.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_raises_then_collective_works, collective_assert


def low_rank(m, n, rank, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n))


@pytest.mark.parametrize("shape", [(60, 12), (12, 60), (9, 9)], ids=str)
def test_rsvd(shape):
    a = low_rank(*shape, rank=3)
    s_expected = np.linalg.svd(a, compute_uv=False)[:3]
    failures = []
    for split in (None, 0, 1):
        for power_iter in (0, 1):
            U, S, Vt = ht.linalg.rsvd(
                ht.array(a, split=split), 3, n_oversamples=2, power_iter=power_iter
            )
            u, s, vt = U.numpy(), S.numpy(), Vt.numpy()
            label = f"split {split} power {power_iter}"
            if u.shape != (shape[0], 3) or s.shape != (3,) or vt.shape != (3, shape[1]):
                failures.append(f"{label}: shapes {u.shape} {s.shape} {vt.shape}")
                continue
            if not np.allclose(s, s_expected, rtol=1e-8):
                failures.append(f"{label}: S {s} != {s_expected}")
            if not np.allclose((u * s) @ vt, a, atol=1e-8):
                failures.append(f"{label}: U S Vt != A")
            if not np.allclose(u.T @ u, np.eye(3), atol=1e-10):
                failures.append(f"{label}: U not orthonormal")
    collective_assert(not failures, "\n".join(failures))


def test_rsvd_noisy_and_errors():
    rng = np.random.default_rng(1)
    a = low_rank(80, 20, 4, seed=2) * 10 + 0.01 * rng.standard_normal((80, 20))
    s_expected = np.linalg.svd(a, compute_uv=False)[:4]
    U, S, Vt = ht.linalg.rsvd(ht.array(a, split=0), 4, power_iter=2)
    collective_assert(
        np.allclose(S.numpy(), s_expected, rtol=1e-4), f"S {S.numpy()} != {s_expected}"
    )
    x = ht.ones((5, 4), split=0)
    assert_raises_then_collective_works(ValueError, ht.linalg.rsvd, x, 0)
    assert_raises_then_collective_works(TypeError, ht.linalg.rsvd, x, 2.0)
    assert_raises_then_collective_works(ValueError, ht.linalg.rsvd, x, 2, n_oversamples=-1)
    assert_raises_then_collective_works(ValueError, ht.linalg.rsvd, ht.ones(5), 2)


def test_reigh():
    rng = np.random.default_rng(3)
    basis, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    values = np.zeros(30)
    values[:4] = [9.0, -7.0, 5.0, 3.0]
    a = (basis * values) @ basis.T
    failures = []
    for split in (None, 0, 1):
        w, V = ht.linalg.reigh(ht.array(a, split=split), 3, n_oversamples=2)
        v = V.numpy()
        if not np.allclose(w.numpy(), [9.0, -7.0, 5.0], atol=1e-8):
            failures.append(f"split {split}: eigenvalues {w.numpy()}")
        if not np.allclose(a @ v, v * w.numpy(), atol=1e-8):
            failures.append(f"split {split}: A V != V diag(w)")
    collective_assert(not failures, "\n".join(failures))
    assert_raises_then_collective_works(ValueError, ht.linalg.reigh, ht.ones((4, 5), split=0), 2)
