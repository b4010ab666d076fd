"""
Tests of heat/core/linalg/decompositions.py: qr (TSQR, block Gram-Schmidt, gathered fallback,
stacks) and svd (tall-skinny, short-fat, general, stacks) on every split, float32/float64,
uneven sizes and fewer rows than processes. The factors reconstruct their input, are
orthonormal and triangular to float tolerance, and match NumPy's up to signs.
"""

import warnings

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    random_array,
    skewed,
)

TOL = {np.float32: 2e-5, np.float64: 1e-12}


def splits(ndim):
    return (None,) + tuple(range(ndim))


def gathered(x):
    return None if x is None else x.numpy()


def qr_failures(A_np, Q, R, dtype, label):
    """The properties a QR factorization must have, as failure messages."""
    failures = []
    q, r = gathered(Q), gathered(R)
    tol = TOL[dtype] * max(1, np.abs(A_np).max()) * 10
    m, n = A_np.shape[-2:]
    k = min(m, n)
    if r.shape != A_np.shape[:-2] + (k, n):
        return [f"{label}: R shape {r.shape}"]
    if not np.allclose(np.tril(r, -1), 0, atol=tol):
        failures.append(f"{label}: R not upper triangular")
    expected_r = np.linalg.qr(A_np.astype(np.float64), mode="r")
    if not np.allclose(
        np.abs(np.diagonal(r, axis1=-2, axis2=-1)),
        np.abs(np.diagonal(expected_r, axis1=-2, axis2=-1)),
        atol=tol,
        rtol=1e-4,
    ):
        failures.append(f"{label}: |diag R| differs from NumPy's")
    if Q is not None:
        if q.shape != A_np.shape[:-2] + (m, k):
            return failures + [f"{label}: Q shape {q.shape}"]
        if not np.allclose(q @ r, A_np, atol=tol):
            failures.append(f"{label}: Q R != A (max diff {np.abs(q @ r - A_np).max():.3g})")
        gram = np.swapaxes(q, -1, -2).conj() @ q
        if not np.allclose(gram, np.eye(k), atol=100 * TOL[dtype]):
            failures.append(
                f"{label}: Q not orthonormal (max diff {np.abs(gram - np.eye(k)).max():.3g})"
            )
    return failures


QR_SHAPES = [(40, 3), (13, 4), (7, 5), (5, 7), (2, 2), (3, 6, 4), (2, 4, 6)]


@pytest.mark.parametrize("shape", QR_SHAPES, ids=str)
def test_qr(shape):
    failures = []
    for dtype in (np.float32, np.float64):
        a = random_array(shape, dtype=dtype, seed=2)
        for split in splits(len(shape)):
            for x in (ht.array(a, split=split), skewed(ht.array(a, split=split))):
                Q, R = ht.linalg.qr(x)
                label = f"{dtype.__name__} split {split} counts {x.lshape}"
                failures += qr_failures(a, Q, R, dtype, label)
                if Q.split != x.split:
                    failures.append(f"{label}: Q split {Q.split} != {x.split}")
                Q_none, R_only = ht.linalg.qr(x, mode="r")
                if Q_none is not None:
                    failures.append(f"{label}: mode 'r' returned Q")
                failures += qr_failures(a, None, R_only, dtype, label + " mode r")
    collective_assert(not failures, "\n".join(failures[:10]))


def test_qr_layouts():
    p = ht.MPI_WORLD.size
    tall = ht.random.randn(20 * max(p, 1), 3, split=0)
    Q, R = ht.linalg.qr(tall)
    wrong = []
    if p > 1 and (Q.split != 0 or R.split is not None):
        wrong.append(f"TSQR: Q split {Q.split}, R split {R.split}")
    Q, R = ht.linalg.qr(ht.random.randn(12, 8, split=1))
    if Q.split != 1 or R.split != 1:
        wrong.append(f"block Gram-Schmidt: Q split {Q.split}, R split {R.split}")
    collective_assert(not wrong, "\n".join(wrong))
    # an integer matrix is factored in float64
    Q, R = ht.linalg.qr(ht.arange(12, split=0).reshape((4, 3)))
    collective_assert(Q.dtype is ht.float64 and R.dtype is ht.float64, "integer qr is not float64")


def test_qr_ill_conditioned_columns_stay_orthonormal():
    # nearly dependent columns: block Gram-Schmidt with re-orthogonalization keeps Q orthonormal
    rng = np.random.default_rng(3)
    base = rng.standard_normal((30, 1))
    a = np.hstack([base + 1e-7 * rng.standard_normal((30, 1)) for _ in range(8)])
    failures = []
    for split in (0, 1):
        Q, R = ht.linalg.qr(ht.array(a, split=split))
        q = Q.numpy()
        if not np.allclose(q.T @ q, np.eye(8), atol=1e-8):
            failures.append(f"split {split}: Q^T Q off by {np.abs(q.T @ q - np.eye(8)).max():.3g}")
    collective_assert(not failures, "\n".join(failures))


def test_qr_errors():
    assert_raises_then_collective_works(ValueError, ht.linalg.qr, ht.ones(4, split=0))
    assert_raises_then_collective_works(ValueError, ht.linalg.qr, ht.ones((4, 3)), mode="full")
    assert_raises_then_collective_works(TypeError, ht.linalg.qr, ht.ones((4, 3)), mode=1)
    assert_raises_then_collective_works(TypeError, ht.linalg.qr, np.ones((4, 3)))
    assert_raises_then_collective_works(TypeError, ht.linalg.qr, ht.ones((4, 3), dtype=ht.float16))


SVD_SHAPES = [(60, 4), (4, 60), (9, 7), (7, 9), (3, 8, 5), (1, 6)]


@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
def test_svd(shape):
    failures = []
    for dtype in (np.float32, np.float64):
        a = random_array(shape, dtype=dtype, seed=4)
        s_expected = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        tol = TOL[dtype] * 1000
        k = min(shape[-2:])
        for split in splits(len(shape)):
            x = skewed(ht.array(a, split=split))
            label = f"{dtype.__name__} split {split}"
            U, S, Vh = ht.linalg.svd(x, full_matrices=False)
            u, s, vh = U.numpy(), S.numpy(), Vh.numpy()
            if not np.allclose(s, s_expected, rtol=tol, atol=tol):
                failures.append(f"{label}: S {s} != {s_expected}")
            if not np.allclose((u * s[..., None, :]) @ vh, a, atol=tol * max(1, np.abs(a).max())):
                failures.append(f"{label}: U S Vh != A")
            if not np.allclose(np.swapaxes(u, -1, -2) @ u, np.eye(k), atol=tol):
                failures.append(f"{label}: U not orthonormal")
            if not np.allclose(vh @ np.swapaxes(vh, -1, -2), np.eye(k), atol=tol):
                failures.append(f"{label}: Vh not orthonormal")
            S_only = ht.linalg.svd(x, compute_uv=False)
            if not np.allclose(S_only.numpy(), s_expected, rtol=tol, atol=tol):
                failures.append(f"{label}: compute_uv=False gives {S_only.numpy()}")
    collective_assert(not failures, "\n".join(failures[:10]))


def test_svd_layouts_and_errors():
    p = ht.MPI_WORLD.size
    U, S, Vh = ht.linalg.svd(ht.random.randn(10 * max(p, 1), 3, split=0), full_matrices=False)
    wrong = []
    if p > 1 and (U.split != 0 or S.split is not None or Vh.split is not None):
        wrong.append(f"tall-skinny: U {U.split}, S {S.split}, Vh {Vh.split}")
    U, S, Vh = ht.linalg.svd(ht.random.randn(3, 10 * max(p, 1), split=1), full_matrices=False)
    if p > 1 and (U.split is not None or Vh.split != 1):
        wrong.append(f"short-fat: U {U.split}, Vh {Vh.split}")
    collective_assert(not wrong, "\n".join(wrong))
    assert_raises_then_collective_works(
        TypeError, ht.linalg.svd, ht.ones((4, 3)), full_matrices="yes"
    )
    assert_raises_then_collective_works(TypeError, ht.linalg.svd, ht.ones((4, 3)), compute_uv=None)
    assert_raises_then_collective_works(ValueError, ht.linalg.svd, ht.ones(3, split=0))


def svd_failures(a, U, S, Vh, tol, label, full):
    """U S Vh reconstructs a, U and Vh are orthonormal (square if full), S is NumPy's."""
    u, s, vh = U.numpy(), S.numpy(), Vh.numpy()
    m, n = a.shape[-2:]
    k = min(m, n)
    shapes = (
        a.shape[:-2] + ((m, m) if full else (m, k)),
        a.shape[:-2] + ((n, n) if full else (k, n)),
    )
    if (u.shape, vh.shape) != shapes:
        return [f"{label}: U, Vh shapes {u.shape}, {vh.shape} != {shapes}"]
    failures = []
    scale = max(1, np.abs(a).max())
    if not np.allclose(s, np.linalg.svd(a, compute_uv=False), rtol=tol, atol=tol * scale):
        failures.append(f"{label}: S differs from NumPy's")
    if not np.allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=tol * scale):
        failures.append(f"{label}: U S Vh != A")
    for name, f, size in (
        ("U", np.swapaxes(u, -1, -2).conj() @ u, u.shape[-1]),
        ("Vh", vh @ np.swapaxes(vh, -1, -2).conj(), vh.shape[-2]),
    ):
        if not np.allclose(f, np.eye(size), atol=tol):
            failures.append(
                f"{label}: {name} not orthonormal (max diff {np.abs(f - np.eye(size)).max():.3g})"
            )
    return failures


# tall, wide, fewer rows (columns) than processes, square, stacks
@pytest.mark.parametrize("shape", [(11, 3), (3, 11), (2, 5), (5, 2), (4, 4), (2, 5, 3)], ids=str)
def test_svd_full_matrices(shape):
    failures = []
    p = ht.MPI_WORLD.size
    for dtype in (np.float32, np.float64):
        a = random_array(shape, dtype=dtype, seed=8)
        tol = TOL[dtype] * 100
        for split in splits(len(shape)) + (-1,):
            for x in (ht.array(a, split=split), skewed(ht.array(a, split=split))):
                label = f"{dtype.__name__} split {split} lshape {x.lshape}"
                U, S, Vh = ht.linalg.svd(x, full_matrices=True)
                failures += svd_failures(a, U, S, Vh, tol, label, True)
                m, n = shape[-2:]
                if len(shape) == 2 and p > 1 and split is not None:
                    # the large complete factor stays distributed, the small one is replicated
                    expected = (0, None) if m >= n else (None, 1)
                    if (U.split, Vh.split) != expected:
                        failures.append(
                            f"{label}: U, Vh splits {U.split}, {Vh.split} != {expected}"
                        )
    collective_assert(not failures, "\n".join(failures[:10]))


@pytest.mark.parametrize("shape", [(7, 7), (2, 2), (3, 5, 5)], ids=str)
def test_eigh(shape):
    failures = []
    for dtype in (np.float32, np.float64):
        m = random_array(shape, dtype=dtype, seed=5)
        a = (m + np.swapaxes(m, -1, -2)) / 2
        w_expected = np.linalg.eigvalsh(a.astype(np.float64))
        tol = TOL[dtype] * 100
        for split in splits(len(shape)):
            x = ht.array(a, split=split)
            w, V = ht.linalg.eigh(x)
            v = V.numpy()
            label = f"{dtype.__name__} split {split}"
            if V.split != x.split:
                failures.append(f"{label}: eigenvectors split {V.split}")
            if not np.allclose(w.numpy(), w_expected, atol=tol * 10):
                failures.append(f"{label}: eigenvalues {w.numpy()} != {w_expected}")
            recon = (v * w.numpy()[..., None, :]) @ np.swapaxes(v, -1, -2)
            if not np.allclose(recon, a, atol=tol * 10):
                failures.append(f"{label}: V diag(w) V^T != A")
    collective_assert(not failures, "\n".join(failures[:10]))
    assert_raises_then_collective_works(ValueError, ht.linalg.eigh, ht.ones((3, 4), split=0))
    assert_raises_then_collective_works(ValueError, ht.linalg.eigh, ht.ones((3, 3)), UPLO="X")


def _sorted_values(w):
    """Eigenvalues in a canonical order (LAPACK's order is not specified)."""
    w = np.asarray(w)
    order = np.lexsort((np.round(w.imag, 4), np.round(w.real, 4)), axis=-1)
    return np.take_along_axis(w, order, axis=-1)


@pytest.mark.parametrize("shape", [(7, 7), (2, 2), (1, 1), (3, 5, 5)], ids=str)
def test_eig_and_eigvals(shape):
    """
    The general eigenproblem, distributed as eigh: NumPy's eigenvalues (as a multiset), x V =
    V diag(w) with unit columns, always complex of x's precision (the array API standard),
    the eigenvectors in x's split and the eigenvalues replicated for a single matrix.
    """
    failures = []
    complex_of = {
        np.float32: np.complex64,
        np.float64: np.complex128,
        np.complex64: np.complex64,
        np.int64: np.complex128,
    }
    for dtype in (np.float32, np.float64, np.complex64, np.int64):
        a = random_array(shape, dtype=dtype, seed=7, low=-5, high=5)
        w_expected = _sorted_values(np.linalg.eigvals(a.astype(np.complex128)))
        tol = 2e-3 if dtype in (np.float32, np.complex64) else 1e-9
        expected_type = ht.types.canonical_heat_type(complex_of[dtype])
        for split in splits(len(shape)) + ((-1,) if len(shape) > 1 else ()):
            x = ht.array(a, split=split)
            w, V = ht.linalg.eig(x)
            values = ht.linalg.eigvals(x)
            label = f"{dtype.__name__} split {split}"
            if (w.dtype, V.dtype, values.dtype) != (expected_type,) * 3:
                failures.append(f"{label}: types {w.dtype}, {V.dtype}, {values.dtype}")
                continue
            if V.split != x.split:
                failures.append(f"{label}: eigenvectors split {V.split}")
            if len(shape) == 2 and (w.split is not None or values.split is not None):
                failures.append(f"{label}: eigenvalues split {w.split}, {values.split}")
            wn, v = w.numpy(), V.numpy()
            for name, got in (("eig", wn), ("eigvals", values.numpy())):
                if not np.allclose(_sorted_values(got), w_expected, atol=tol, rtol=tol):
                    failures.append(f"{label}: {name} eigenvalues {got} != {w_expected}")
            if not np.allclose(a @ v, v * wn[..., None, :], atol=tol * 10):
                failures.append(f"{label}: x V != V diag(w)")
            if not np.allclose(np.linalg.norm(v, axis=-2), 1, atol=tol):
                failures.append(f"{label}: eigenvectors not of unit norm")
    collective_assert(not failures, "\n".join(failures[:10]))


def test_eig_bad_input():
    for function in (ht.linalg.eig, ht.linalg.eigvals):
        assert_raises_then_collective_works(ValueError, function, ht.ones((3, 4), split=0))
        assert_raises_then_collective_works(ValueError, function, ht.ones(3, split=0))
        assert_raises_then_collective_works(TypeError, function, ht.ones((3, 3), dtype=ht.float16))
        assert_raises_then_collective_works(TypeError, function, np.ones((3, 3)))
    assert ht.eig is ht.linalg.eig and ht.eigvals is ht.linalg.eigvals


@pytest.mark.parametrize("shape", [(40, 4), (6, 6), (9, 3)], ids=str)
def test_polar(shape):
    failures = []
    a = random_array(shape, seed=6)
    for split in splits(2):
        U, H = ht.linalg.polar(ht.array(a, split=split))
        u, h = U.numpy(), H.numpy()
        n = shape[1]
        if not np.allclose(u @ h, a, atol=1e-10):
            failures.append(f"split {split}: U H != A")
        if not np.allclose(u.T @ u, np.eye(n), atol=1e-10):
            failures.append(f"split {split}: U not orthonormal")
        if not np.allclose(h, h.T, atol=1e-10) or np.linalg.eigvalsh(h).min() < -1e-10:
            failures.append(f"split {split}: H not symmetric positive semi-definite")
        only_u = ht.linalg.polar(ht.array(a, split=split), calcH=False)
        if not np.allclose(only_u.numpy(), u, atol=1e-10):
            failures.append(f"split {split}: calcH=False gives another U")
    collective_assert(not failures, "\n".join(failures))
    assert_raises_then_collective_works(ValueError, ht.linalg.polar, ht.ones((3, 5), split=1))


def test_cache_blocked_local_qr(monkeypatch):
    """The row-blocked local QR (blocks of 4 n rows here) gives the same factorization."""
    from heat.core.linalg import decompositions

    monkeypatch.setattr(decompositions, "_QR_BLOCK_BYTES", 1)
    failures = []
    # (98, 4): blocks of 16 rows leave 2 rows, fewer than the columns (merged into the last block)
    for shape in ((203, 3), (64, 5), (98, 4)):
        a = random_array(shape, seed=7)
        for split in splits(2):
            x = ht.array(a, split=split)
            Q, R = ht.linalg.qr(x)
            failures += qr_failures(a, Q, R, np.float64, f"{shape} split {split}")
            failures += qr_failures(
                a, None, ht.linalg.qr(x, mode="r").R, np.float64, f"{shape} split {split} mode r"
            )
            U, S, Vh = ht.linalg.svd(x, full_matrices=False)
            if not np.allclose((U.numpy() * S.numpy()) @ Vh.numpy(), a, atol=1e-10):
                failures.append(f"{shape} split {split}: U S Vh != A")
            S_wide = ht.linalg.svd(ht.array(a.T.copy(), split=split)).S
            if not np.allclose(S_wide.numpy(), np.linalg.svd(a, compute_uv=False)):
                failures.append(f"{shape} split {split}: singular values of A^T differ")
    collective_assert(not failures, "\n".join(failures[:10]))


@pytest.mark.parametrize("shape", [(13, 3), (4, 2), (5, 7), (6, 6), (2, 7, 3)], ids=str)
def test_qr_complete(shape):
    # NumPy's mode="complete": the square Q (m x m) and R of A's shape
    failures = []
    m, n = shape[-2:]
    for dtype in (np.float32, np.float64):
        a = random_array(shape, dtype=dtype, seed=8)
        tol = TOL[dtype] * 100
        for split in splits(len(shape)):
            for x in (ht.array(a, split=split), skewed(ht.array(a, split=split))):
                Q, R = ht.linalg.qr(x, mode="complete")
                q, r = Q.numpy(), R.numpy()
                label = f"{shape} {dtype.__name__} split {split}"
                if q.shape != shape[:-2] + (m, m) or r.shape != shape:
                    failures.append(f"{label}: shapes {q.shape} {r.shape}")
                    continue
                if Q.split != x.split or R.split != x.split:
                    failures.append(f"{label}: splits {Q.split} {R.split} != {x.split}")
                if not np.allclose(np.tril(r, -1), 0, atol=tol):
                    failures.append(f"{label}: R not upper triangular")
                if not np.allclose(q @ r, a, atol=tol):
                    failures.append(f"{label}: Q R != A")
                if not np.allclose(np.swapaxes(q, -1, -2) @ q, np.eye(m), atol=tol):
                    failures.append(f"{label}: Q not orthogonal")
                expected_r = np.linalg.qr(a.astype(np.float64), mode="complete")[1]
                if not np.allclose(np.abs(r), np.abs(expected_r), atol=tol * 10, rtol=1e-3):
                    failures.append(f"{label}: |R| differs from NumPy's")
    collective_assert(not failures, "\n".join(failures))


def test_eigh_and_polar_warn_about_zolotarev_parameters():
    # HeAT's Zolotarev parameters have no effect here: a non-default value warns, the result is
    # the same; eigh's r_max_zolopd is validated as HeAT's (1..8)
    a = random_array((6, 6), seed=3)
    sym = a + a.T
    x = ht.array(sym, split=0)
    with pytest.warns(UserWarning, match="r_max_zolopd=3 has no effect: heat's eigh"):
        w, _ = ht.linalg.eigh(x, r_max_zolopd=3)
    assert_array_equal(w, np.linalg.eigvalsh(sym), rtol=1e-10)
    assert_raises_then_collective_works(ValueError, ht.linalg.eigh, x, r_max_zolopd=9)
    for keyword, value in (("r", 4), ("condition_estimate", 1e8), ("r_max", 6)):
        with pytest.warns(UserWarning, match=f"{keyword}={value!r} has no effect: heat's polar"):
            U = ht.linalg.polar(x, calcH=False, **{keyword: value})
        assert_array_equal(U, ht.linalg.polar(x, calcH=False).numpy(), rtol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ht.linalg.polar(x, r=None, condition_estimate=1.0e16, r_max=8)
        ht.linalg.eigh(x, r_max_zolopd=8)


def test_svd_r_max_zolopd():
    # HeAT's Zolotarev parameter: validated as HeAT's (1..8), without effect on heat's algorithms
    a = random_array((12, 4), seed=9)
    x = ht.array(a, split=0)
    with pytest.warns(UserWarning, match="r_max_zolopd=2 has no effect"):
        U, S, Vh = ht.linalg.svd(x, full_matrices=False, r_max_zolopd=2)
    assert_array_equal(S, np.linalg.svd(a, compute_uv=False), rtol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ht.linalg.svd(x, compute_uv=False, r_max_zolopd=8)
    assert_raises_then_collective_works(ValueError, ht.linalg.svd, x, r_max_zolopd=0)
    assert_raises_then_collective_works(ValueError, ht.linalg.svd, x, r_max_zolopd=9)
    assert_raises_then_collective_works(TypeError, ht.linalg.svd, x, r_max_zolopd=2.5)
