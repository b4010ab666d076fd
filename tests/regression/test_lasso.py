"""
Tests of heat/regression/lasso.py; the oracle is scikit-learn's Lasso with ``alpha=lam``, run to
tight convergence: the same coefficients and intercept on every split, float32 and float64, both
descent variants, uneven sizes and fewer rows than processes.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_raises_then_collective_works, collective_assert

linear_model = pytest.importorskip("sklearn.linear_model")


def make_regression(n, f, seed=0, dtype=np.float64, informative=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(loc=2.0, scale=3.0, size=(n, f))
    w = np.zeros(f)
    w[:informative] = rng.uniform(1.0, 4.0, size=min(f, informative)) * rng.choice(
        [-1, 1], size=min(f, informative)
    )
    y = x @ w + 5.0 + 0.5 * rng.normal(size=n)
    return x.astype(dtype), y.astype(dtype)


def reference(x, y, lam, fit_intercept=True):
    model = linear_model.Lasso(alpha=lam, fit_intercept=fit_intercept, tol=1e-14, max_iter=100000)
    return model.fit(x.astype(np.float64), y.astype(np.float64))


def check_against_sklearn(split, dtype, precompute, lams):
    x, y = make_regression(61, 7, seed=1, dtype=dtype)
    tol = 1e-4 if dtype == np.float32 else 1e-9
    for lam in lams:
        expected = reference(x, y, lam)
        # float32 sweeps end in rounding-level oscillation: a tolerance float32 can reach
        model = ht.regression.Lasso(
            lam=lam,
            max_iter=5000,
            tol=1e-6 if dtype == np.float32 else 1e-12,
            precompute=precompute,
        )
        assert (
            model.fit(ht.array(x, split=split), ht.array(y, split=0 if split is not None else None))
            is model
        )
        coef = model.coef_
        assert coef.split is None and coef.dtype is ht.canonical_heat_type(dtype)
        assert coef.shape == (7,)
        collective_assert(
            np.allclose(coef.numpy(), expected.coef_, rtol=tol, atol=tol),
            f"{coef.numpy()} != {expected.coef_}",
        )
        assert np.isclose(model.intercept_, expected.intercept_, rtol=tol, atol=tol * 10)
        assert 1 <= model.n_iter_ < 5000 and model.n_iter == model.n_iter_
        # zeros where scikit-learn has zeros
        assert np.array_equal(coef.numpy() == 0, expected.coef_ == 0)
        theta = model.theta
        assert theta.shape == (8, 1)
        assert np.isclose(theta.numpy()[0, 0], model.intercept_, rtol=1e-6)
        assert np.allclose(theta.numpy()[1:, 0], coef.numpy())
        predicted = model.predict(ht.array(x, split=split))
        assert predicted.split == (None if split is None else 0)
        assert predicted.dtype is ht.canonical_heat_type(dtype)
        collective_assert(
            np.allclose(predicted.numpy(), expected.predict(x), rtol=tol * 10, atol=tol * 100)
        )
        assert np.isclose(
            model.score(ht.array(x, split=split), ht.array(y)), expected.score(x, y), rtol=tol * 10
        )


@pytest.mark.parametrize("split", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gram_descent_same_coefficients_as_sklearn(split, dtype):
    check_against_sklearn(split, dtype, True, (0.05, 0.5, 3.0))


@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_residual_descent_same_coefficients_as_sklearn(split, dtype):
    # one scalar allreduce per coordinate update: fewer cases keep the test fast
    check_against_sklearn(split, dtype, False, (0.5,))


@pytest.mark.parametrize("y_split", [None, 0])
@pytest.mark.parametrize("precompute", [True, False])
def test_no_intercept_unbalanced_targets_and_few_rows(y_split, precompute):
    x, y = make_regression(3, 4, seed=2)  # fewer rows than processes at 4
    expected = reference(x, y, 0.2, fit_intercept=False)
    hy = ht.array(y, split=y_split)
    if y_split == 0 and hy.comm.size > 1:  # targets laid out differently from the samples
        counts = [0] * hy.comm.size
        counts[-1] = 3
        hy = ht.redistribute(hy, counts)
    model = ht.regression.Lasso(
        lam=0.2, fit_intercept=False, max_iter=20000, tol=1e-13, precompute=precompute
    )
    model.fit(ht.array(x, split=0), hy)
    assert model.intercept_ == 0.0
    collective_assert(np.allclose(model.coef_.numpy(), expected.coef_, atol=1e-8))


def test_large_penalty_gives_zero_and_integers_are_promoted():
    x, y = make_regression(40, 5, seed=3)
    model = ht.regression.Lasso(lam=1e6).fit(ht.array(x, split=0), ht.array(y, split=0))
    assert np.all(model.coef_.numpy() == 0) and model.n_iter_ == 1
    assert np.isclose(model.intercept_, y.mean())
    xi = np.arange(24).reshape(12, 2) % 5
    yi = np.arange(12)
    model = ht.regression.Lasso(lam=0.1, max_iter=1000, tol=1e-12).fit(
        ht.array(xi, split=0), ht.array(yi, split=0)
    )
    assert model.coef_.dtype is ht.float64
    assert np.allclose(
        model.coef_.numpy(), reference(xi.astype(float), yi.astype(float), 0.1).coef_, atol=1e-6
    )


def test_max_iter_limits_the_sweeps_and_params():
    x, y = make_regression(30, 6, seed=4)
    model = ht.regression.Lasso(lam=0.01, max_iter=2, tol=0.0).fit(
        ht.array(x, split=0), ht.array(y)
    )
    assert model.n_iter_ == 2
    assert ht.is_regressor(model)
    assert model.get_params() == {
        "lam": 0.01,
        "max_iter": 2,
        "tol": 0.0,
        "fit_intercept": True,
        "precompute": "auto",
    }
    assert repr(ht.regression.Lasso(lam=0.5)) == "Lasso(lam=0.5)"


def test_bad_input_raises_on_every_rank():
    x, y = make_regression(10, 3, seed=5)
    hx, hy = ht.array(x, split=0), ht.array(y, split=0)
    Lasso = ht.regression.Lasso
    assert_raises_then_collective_works(ht.NotFittedError, Lasso().predict, hx)
    assert_raises_then_collective_works(ValueError, Lasso().fit, hx, ht.array(y[:-1], split=0))
    assert_raises_then_collective_works(ValueError, Lasso().fit, ht.array(x[0]), hy)
    assert_raises_then_collective_works(ValueError, Lasso().fit, hx, ht.array(x, split=0))
    assert_raises_then_collective_works(TypeError, Lasso().fit, hx, "y")
    bad = x.copy()
    bad[7, 1] = np.nan
    assert_raises_then_collective_works(ValueError, Lasso().fit, ht.array(bad, split=0), hy)
    bad_y = y.copy()
    bad_y[9] = np.inf
    assert_raises_then_collective_works(ValueError, Lasso().fit, hx, ht.array(bad_y, split=0))
    assert_raises_then_collective_works(ValueError, Lasso(lam=-1.0).fit, hx, hy)
    assert_raises_then_collective_works(TypeError, Lasso(lam="1").fit, hx, hy)
    assert_raises_then_collective_works(ValueError, Lasso(max_iter=0).fit, hx, hy)
    assert_raises_then_collective_works(TypeError, Lasso(max_iter=1.5).fit, hx, hy)
    assert_raises_then_collective_works(ValueError, Lasso(tol=-1.0).fit, hx, hy)
    assert_raises_then_collective_works(ValueError, Lasso(precompute="yes").fit, hx, hy)
    fitted = Lasso().fit(hx, hy)
    assert_raises_then_collective_works(ValueError, fitted.predict, ht.array(x[:, :2], split=0))
    assert_raises_then_collective_works(ValueError, fitted.predict, ht.array(bad, split=0))


@pytest.mark.parametrize("split", [None, 0])
def test_gram_from_row_blocks_and_auto_choice(split, monkeypatch):
    from heat.regression import lasso as module

    x, y = make_regression(45, 5, seed=6)
    expected = reference(x, y, 0.3)
    monkeypatch.setattr(module, "_BLOCK_ENTRIES", 7)  # blocks of one row: many blocks
    model = ht.regression.Lasso(lam=0.3, max_iter=5000, tol=1e-12)
    model.fit(ht.array(x, split=split), ht.array(y, split=split))
    collective_assert(np.allclose(model.coef_.numpy(), expected.coef_, atol=1e-9))
    # "auto" above the feature limit takes the residual variant: the same coefficients
    monkeypatch.setattr(module, "_GRAM_MAX_FEATURES", 2)
    model.fit(ht.array(x, split=split), ht.array(y, split=split))
    collective_assert(np.allclose(model.coef_.numpy(), expected.coef_, atol=1e-9))
    assert np.isclose(model.intercept_, expected.intercept_, atol=1e-8)


@pytest.mark.parametrize("split", [None, 0, 1])
def test_theta_is_heats_model(split):
    # HeAT's theta: (n_features + 1, 1), the intercept first; HeAT predicts [1, x] @ theta, and
    # without an intercept its first entry is 0
    rng = np.random.default_rng(3)
    x = rng.normal(size=(25, 4))
    y = x @ np.array([1.5, 0.0, -2.0, 0.5]) + 0.7 + 0.01 * rng.normal(size=25)
    hx = ht.array(x, split=split)
    for fit_intercept in (True, False):
        model = ht.regression.Lasso(lam=0.05, max_iter=500, fit_intercept=fit_intercept)
        model.fit(hx, ht.array(y, split=0 if split is not None else None))
        theta = model.theta.numpy()
        assert theta.shape == (5, 1) and model.theta.split is None
        with_ones = np.hstack([np.ones((25, 1)), x])
        assert np.allclose((with_ones @ theta)[:, 0], model.predict(hx).numpy(), atol=1e-10)
        if not fit_intercept:
            assert theta[0, 0] == 0.0
