"""
Complex inputs (complex64, complex128) of ht.linalg against NumPy on every split, balanced and
skewed layouts: products (matmul, tensordot, vecdot, which conjugates its first argument, vdot),
solvers (det, slogdet, inv, solve, matrix_power, cholesky of Hermitian matrices), norms, and the
decompositions (qr, svd, svdvals, matrix_rank, pinv, eigvalsh). The shapes reach every
distributed path at 1-4 processes: TSQR (20 x 3 split along rows), block Gram-Schmidt (split
along columns), the transposed TSQR of a short-fat matrix, the gathered fallback, and fewer
rows than processes (2 x 5).
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import collective_assert, random_array, skewed

DTYPES = (np.complex64, np.complex128)
TOL = {np.complex64: 2e-3, np.complex128: 1e-9}
SPLITS_2D = (None, 0, 1, -1)


def layouts(a, split_choices=SPLITS_2D, skew=True):
    """``a`` on every split, balanced and (``skew``) skewed (a third of the rows on rank 0)."""
    for split in split_choices:
        x = ht.array(a, split=split)
        yield f"split {split}", x
        if skew and split is not None and ht.MPI_WORLD.size > 1:
            yield f"split {split} skewed", skewed(x)


def hermitian_positive_definite(n, dtype, seed):
    m = random_array((n, n), dtype=dtype, seed=seed, low=-1, high=1)
    return (m @ m.conj().T + n * np.eye(n)).astype(dtype)


def mismatch(name, label, actual, expected, tol):
    """A failure message if the DNDarray ``actual`` differs from NumPy's ``expected``."""
    got = actual.numpy() if isinstance(actual, ht.DNDarray) else np.asarray(actual)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return [f"{name} {label}: shape {got.shape} != {expected.shape}"]
    if np.iscomplexobj(expected) and not np.iscomplexobj(got):
        return [f"{name} {label}: result is real, NumPy's is complex"]
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    if not np.allclose(got, expected, rtol=tol, atol=tol * scale):
        return [f"{name} {label}: max difference {np.abs(got - expected).max():.3g}"]
    return []


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_complex_products(dtype):
    tol = TOL[dtype]
    a = random_array((7, 5), dtype=dtype, seed=1, low=-1, high=1)
    b = random_array((5, 3), dtype=dtype, seed=2, low=-1, high=1)
    v = random_array((7,), dtype=dtype, seed=3, low=-1, high=1)
    w = random_array((7,), dtype=dtype, seed=4, low=-1, high=1)
    c = random_array((7, 5), dtype=dtype, seed=5, low=-1, high=1)
    failures = []
    for la, x in layouts(a):
        for lb, y in layouts(b, (None, 0, 1), skew=False):
            label = f"{la} @ {lb}"
            failures += mismatch("matmul", label, x @ y, a @ b, tol)
            failures += mismatch(
                "tensordot",
                label,
                ht.linalg.tensordot(x, y, axes=1),
                np.tensordot(a, b, axes=1),
                tol,
            )
        for lc, z in layouts(c, (None, 0, 1), skew=False):
            # vecdot conjugates its first argument (the array API standard, np.vecdot)
            for axis in (-1, 0):
                failures += mismatch(
                    "vecdot",
                    f"{la}, {lc}, axis {axis}",
                    ht.linalg.vecdot(x, z, axis=axis),
                    np.vecdot(a, c, axis=axis),
                    tol,
                )
        failures += mismatch("matmul vector", la, x @ ht.array(a[0], split=0), a @ a[0], tol)
    for lv, x in layouts(v, (None, 0)):
        y = ht.array(w, split=0)
        failures += mismatch("vecdot 1-D", lv, ht.linalg.vecdot(x, y), np.vecdot(v, w), tol)
        failures += mismatch("vdot", lv, ht.vdot(x, y), np.vdot(v, w), tol)
    collective_assert(not failures, "\n".join(failures[:10]))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_complex_solvers(dtype):
    tol = TOL[dtype] * 10
    n = 6
    a = (random_array((n, n), dtype=dtype, seed=6, low=-1, high=1) + 2 * np.eye(n)).astype(dtype)
    b = random_array((n, 2), dtype=dtype, seed=7, low=-1, high=1)
    h = hermitian_positive_definite(n, dtype, seed=8)
    failures = []
    for label, x in layouts(a):
        failures += mismatch("det", label, ht.linalg.det(x), np.linalg.det(a), tol)
        sign, logabs = ht.linalg.slogdet(x)
        expected_sign, expected_log = np.linalg.slogdet(a)
        failures += mismatch("slogdet sign", label, sign, expected_sign, tol)
        failures += mismatch("slogdet logabsdet", label, logabs, expected_log, tol)
        failures += mismatch("inv", label, ht.linalg.inv(x), np.linalg.inv(a), tol)
        if "skewed" not in label:
            for power in (3, -2, 0):
                failures += mismatch(
                    f"matrix_power {power}",
                    label,
                    ht.linalg.matrix_power(x, power),
                    np.linalg.matrix_power(a, power),
                    tol,
                )
        for lb, y in layouts(b, (None, 0), skew=False):
            failures += mismatch(
                "solve", f"{label}, b {lb}", ht.linalg.solve(x, y), np.linalg.solve(a, b), tol
            )
    for label, x in layouts(h):
        lower = np.linalg.cholesky(h)
        failures += mismatch("cholesky", label, ht.linalg.cholesky(x), lower, tol)
        failures += mismatch(
            "cholesky upper", label, ht.linalg.cholesky(x, upper=True), lower.conj().T, tol
        )
        failures += mismatch("eigvalsh", label, ht.linalg.eigvalsh(x), np.linalg.eigvalsh(h), tol)
    # eigvalsh reads the lower triangle only, as NumPy's
    garbage = np.triu(random_array((n, n), dtype=dtype, seed=9), 1)
    for label, x in layouts(np.tril(h) + garbage, skew=False):
        failures += mismatch(
            "eigvalsh lower", label, ht.linalg.eigvalsh(x), np.linalg.eigvalsh(h), tol
        )
    collective_assert(not failures, "\n".join(failures[:10]))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_complex_norms(dtype):
    tol = TOL[dtype]
    a = random_array((9, 4), dtype=dtype, seed=10, low=-1, high=1)
    failures = []
    for label, x in layouts(a):
        failures += mismatch("norm", label, ht.linalg.norm(x), np.linalg.norm(a), tol)
        for order in (2, 1, 0, 3, np.inf, -np.inf):
            failures += mismatch(
                f"vector_norm {order}",
                label,
                ht.linalg.vector_norm(x, ord=order),
                np.linalg.norm(a.ravel(), ord=order),
                tol,
            )
        failures += mismatch(
            "vector_norm axis 0",
            label,
            ht.linalg.vector_norm(x, axis=0),
            np.linalg.norm(a, axis=0),
            tol,
        )
        for order in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
            failures += mismatch(
                f"matrix_norm {order}",
                label,
                ht.linalg.matrix_norm(x, ord=order),
                np.linalg.norm(a, ord=order),
                tol,
            )
    collective_assert(not failures, "\n".join(failures[:10]))


def factor_failures(name, label, a, U, S, Vh, tol):
    """``U diag(S) Vh`` reconstructs ``a``; U and Vh have orthonormal columns / rows."""
    u, s, vh = U.numpy(), S.numpy(), Vh.numpy()
    k = s.shape[-1]
    failures = mismatch(f"{name} S", label, S, np.linalg.svd(a, compute_uv=False), tol)
    failures += mismatch(f"{name} U S Vh", label, (u[:, :k] * s) @ vh[:k], a, tol)
    failures += mismatch(f"{name} U^H U", label, u.conj().T @ u, np.eye(u.shape[1]), tol)
    failures += mismatch(f"{name} Vh Vh^H", label, vh @ vh.conj().T, np.eye(vh.shape[0]), tol)
    return failures


# tall enough for TSQR at 4 processes, its transpose, and fewer rows than processes
@pytest.mark.parametrize("shape", [(20, 3), (3, 20), (2, 5), (6, 6)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_complex_decompositions(shape, dtype):
    tol = TOL[dtype]
    a = random_array(shape, dtype=dtype, seed=11, low=-1, high=1)
    failures = []
    for label, x in layouts(a):
        Q, R = ht.linalg.qr(x)
        q = Q.numpy()
        # R is NumPy's up to a unit complex number per row
        failures += mismatch("qr |R|", label, abs(R), np.abs(np.linalg.qr(a, mode="r")), tol)
        failures += mismatch("qr Q R", label, Q @ R, a, tol)
        failures += mismatch("qr Q^H Q", label, q.conj().T @ q, np.eye(q.shape[1]), tol)
        failures += mismatch(
            "qr mode r",
            label,
            abs(ht.linalg.qr(x, mode="r").R),
            np.abs(np.linalg.qr(a, mode="r")),
            tol,
        )
        failures += factor_failures("svd", label, a, *ht.linalg.svd(x, full_matrices=False), tol)
        failures += factor_failures("svd full", label, a, *ht.linalg.svd(x), tol)  # the default
        failures += mismatch(
            "svdvals", label, ht.linalg.svdvals(x), np.linalg.svd(a, compute_uv=False), tol
        )
        failures += mismatch(
            "matrix_rank", label, ht.linalg.matrix_rank(x), np.linalg.matrix_rank(a), 0
        )
        failures += mismatch("pinv", label, ht.linalg.pinv(x), np.linalg.pinv(a), tol * 10)
    collective_assert(not failures, "\n".join(failures[:10]))


def test_complex_rank_deficient():
    # a complex rank-2 matrix: matrix_rank and pinv see the rank NumPy sees
    left = random_array((8, 2), dtype=np.complex128, seed=12)
    a = left @ random_array((2, 5), dtype=np.complex128, seed=13)
    failures = []
    for label, x in layouts(a):
        failures += mismatch("matrix_rank", label, ht.linalg.matrix_rank(x), 2, 0)
        failures += mismatch("pinv", label, ht.linalg.pinv(x), np.linalg.pinv(a), 1e-8)
    collective_assert(not failures, "\n".join(failures[:10]))
