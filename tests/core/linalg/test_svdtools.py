"""
Tests of heat/core/linalg/svdtools.py: hsvd_rank, hsvd_rtol (the factors, the error estimate as
an upper bound of the true error) and isvd (the SVD of the extended matrix), every layout.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_raises_then_collective_works, collective_assert


def data(m, n, seed=0):
    rng = np.random.default_rng(seed)
    # decaying spectrum: a few strong directions plus small noise
    return (rng.standard_normal((m, 5)) * [20, 10, 5, 2, 1]) @ rng.standard_normal(
        (5, n)
    ) + 0.01 * rng.standard_normal((m, n))


@pytest.mark.parametrize("shape", [(12, 60), (60, 12)], ids=str)
def test_hsvd_rank(shape):
    a = data(*shape)
    s_expected = np.linalg.svd(a, compute_uv=False)
    failures = []
    for split in (None, 0, 1):
        U, S, Vt, error = ht.linalg.hsvd_rank(ht.array(a, split=split), 3, compute_sv=True)
        u, s, vt = U.numpy(), S.numpy(), Vt.numpy()
        label = f"split {split}"
        if u.shape != (shape[0], 3) or vt.shape != (3, shape[1]):
            failures.append(f"{label}: shapes {u.shape} {vt.shape}")
            continue
        if not np.allclose(s, s_expected[:3], rtol=1e-3):
            failures.append(f"{label}: S {s} != {s_expected[:3]}")
        if not np.allclose(u.T @ u, np.eye(3), atol=1e-8):
            failures.append(f"{label}: U not orthonormal")
        true_error = np.linalg.norm(a - (u * s) @ vt) / np.linalg.norm(a)
        if not true_error <= error * (1 + 1e-6) + 1e-12:
            failures.append(f"{label}: error estimate {error} below the true error {true_error}")
        U_only, error_only = ht.linalg.hsvd_rank(ht.array(a, split=split), 3)
        if (
            not np.allclose(np.abs(U_only.numpy()), np.abs(u), atol=1e-6)
            or abs(error_only - error) > 1e-10
        ):
            failures.append(f"{label}: compute_sv=False differs")
    collective_assert(not failures, "\n".join(failures))


def test_hsvd_rtol():
    a = data(20, 50, seed=1)
    failures = []
    for split in (None, 0, 1):
        for rtol in (0.2, 0.05, 1e-3):
            U, S, Vt, error = ht.linalg.hsvd_rtol(ht.array(a, split=split), rtol, compute_sv=True)
            approx = (U.numpy() * S.numpy()) @ Vt.numpy()
            true_error = np.linalg.norm(a - approx) / np.linalg.norm(a)
            if true_error > rtol or error > rtol:
                failures.append(f"split {split} rtol {rtol}: error {true_error} (estimate {error})")
    collective_assert(not failures, "\n".join(failures))
    assert_raises_then_collective_works(
        ValueError, ht.linalg.hsvd_rtol, ht.ones((4, 5), split=1), 1.5
    )
    assert_raises_then_collective_works(
        ValueError, ht.linalg.hsvd_rank, ht.ones((4, 5), split=1), 0
    )
    assert_raises_then_collective_works(
        TypeError, ht.linalg.hsvd_rank, ht.ones((4, 5), split=1), 2.0
    )


def test_hsvd_low_level():
    # HeAT 1.8's ht.hsvd (issue 18, item 18): both criteria, HeAT's defaults and return shapes
    a = data(30, 40, seed=2)
    s_expected = np.linalg.svd(a, compute_uv=False)
    failures = []
    for split in (None, 0, 1):
        x = ht.array(a, split=split)
        U, S, Vt, error = ht.hsvd(x, maxrank=3, compute_sv=True, safetyshift=2)
        if (U.shape, S.shape, Vt.shape) != ((30, 3), (3,), (3, 40)):
            failures.append(f"split {split}: shapes {U.shape} {S.shape} {Vt.shape}")
            continue
        if not np.allclose(S.numpy(), s_expected[:3], rtol=1e-3):
            failures.append(f"split {split}: S {S.numpy()} != {s_expected[:3]}")
        true_error = np.linalg.norm(a - (U.numpy() * S.numpy()) @ Vt.numpy()) / np.linalg.norm(a)
        if not true_error <= error * (1 + 1e-6) + 1e-12:
            failures.append(f"split {split}: estimate {error} below the true error {true_error}")
        U_only, error_only = ht.linalg.hsvd(x, rtol=0.05)
        true_rank = int(
            np.argmax(np.sqrt(np.cumsum(s_expected[::-1] ** 2))[::-1] <= 0.05 * np.linalg.norm(a))
        )
        if error_only > 0.05 or U_only.shape[1] < true_rank:
            failures.append(
                f"split {split}: rtol 0.05 gave rank {U_only.shape[1]}, error {error_only}"
            )
        # HeAT's default safetyshift=0: no extra local columns, the estimate still bounds
        U0, S0, Vt0, error0 = ht.hsvd(x, maxrank=3, compute_sv=True)
        true_error0 = np.linalg.norm(a - (U0.numpy() * S0.numpy()) @ Vt0.numpy()) / np.linalg.norm(
            a
        )
        if not true_error0 <= error0 * (1 + 1e-6) + 1e-12:
            failures.append(f"split {split}: safetyshift 0: estimate {error0} < {true_error0}")
        _, both_error = ht.hsvd(x, maxrank=1, rtol=0.05)
        if both_error <= 0.05:  # rank 1 cannot reach 5 %: maxrank wins
            failures.append(f"split {split}: maxrank=1 ignored ({both_error})")
    collective_assert(not failures, "\n".join(failures))
    x = ht.array(a, split=1)
    with pytest.warns(UserWarning, match="maxmergedim=10 has no effect"):
        ht.hsvd(x, maxrank=2, maxmergedim=10)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ht.hsvd(x, maxrank=2, maxmergedim=10, no_of_merges=4, warnings_off=True)
    assert_raises_then_collective_works(ValueError, ht.hsvd, x)
    assert_raises_then_collective_works(ValueError, ht.hsvd, x, maxrank=0)
    assert_raises_then_collective_works(ValueError, ht.hsvd, x, rtol=1.0)
    assert_raises_then_collective_works(TypeError, ht.hsvd, x, maxrank=2.0)
    assert_raises_then_collective_works(TypeError, ht.hsvd, x, maxrank=2, compute_sv="yes")


def test_isvd():
    a = data(30, 12, seed=2)
    new = np.random.default_rng(5).standard_normal((30, 4))
    full = np.hstack([a, new])
    s_expected = np.linalg.svd(full, compute_uv=False)
    failures = []
    for split in (None, 0):
        U, S, Vt = ht.linalg.svd(ht.array(a, split=split), full_matrices=False)
        U2, S2, Vt2 = ht.linalg.isvd(ht.array(new, split=split), U, S, Vt)
        u, s, vt = U2.numpy(), S2.numpy(), Vt2.numpy()
        if not np.allclose(s, s_expected, rtol=1e-8):
            failures.append(f"split {split}: S {s} != {s_expected}")
        if not np.allclose((u * s) @ vt, full, atol=1e-8):
            failures.append(f"split {split}: U S Vt != [A | N]")
        U3, S3, Vt3 = ht.linalg.isvd(ht.array(new, split=split), U, S, Vt, maxrank=5)
        if S3.gshape != (5,) or not np.allclose(S3.numpy(), s_expected[:5], rtol=1e-8):
            failures.append(f"split {split}: maxrank=5 gives {S3.numpy()}")
    collective_assert(not failures, "\n".join(failures))
    U, S, Vt = ht.linalg.svd(ht.array(a), full_matrices=False)
    assert_raises_then_collective_works(ValueError, ht.linalg.isvd, ht.ones((29, 2)), U, S, Vt)
    assert_raises_then_collective_works(ValueError, ht.linalg.isvd, ht.ones((30, 2)), U, S[:3], Vt)
