"""
Tests of heat/naive_bayes/gaussian.py; the oracle is scikit-learn's GaussianNB: the same class
statistics, priors and probabilities after fit and after several partial_fit calls, with and
without sample weights, on every split, float32 and float64, uneven sizes and fewer rows than
processes.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_raises_then_collective_works, collective_assert

naive_bayes = pytest.importorskip("sklearn.naive_bayes")

# scikit-learn takes log(0) of the prior of a class not seen yet
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero encountered in log:RuntimeWarning")


def make_classes(n, f, n_classes=3, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % n_classes
    rng.shuffle(labels)
    centres = rng.uniform(-3, 3, size=(n_classes, f))
    scales = rng.uniform(0.5, 2.0, size=(n_classes, f))
    x = centres[labels] + scales[labels] * rng.normal(size=(n, f))
    return x.astype(dtype), labels


def close(actual, expected, rtol, atol=0.0, what=""):
    values = actual.numpy() if isinstance(actual, ht.DNDarray) else np.asarray(actual)
    ok = values.shape == np.shape(expected) and np.allclose(values, expected, rtol=rtol, atol=atol)
    collective_assert(ok, f"{what}: {values} != {expected}")


def compare(model, reference, x, split, rtol):
    close(model.classes_, reference.classes_, 0, what="classes_")
    close(model.class_count_, reference.class_count_, rtol, what="class_count_")
    close(model.class_prior_, reference.class_prior_, rtol, what="class_prior_")
    close(model.theta_, reference.theta_, rtol, rtol, what="theta_")
    # unseen classes: scikit-learn keeps the first batch's epsilon_, heat the current one
    close(model.var_, reference.var_, rtol, 1e-8, what="var_")
    assert np.isclose(model.epsilon_, reference.epsilon_, rtol=rtol)
    dtype = ht.canonical_heat_type(reference.theta_.dtype)
    assert model.theta_.dtype is dtype and model.theta_.split is None
    assert model.class_prior_.dtype is dtype and model.var_.dtype is dtype
    hx = ht.array(x, split=split)
    proba = model.predict_proba(hx)
    assert proba.dtype is dtype
    close(proba, reference.predict_proba(x), rtol, 1e-6, what="predict_proba")
    log_proba = model.predict_log_proba(hx)
    assert log_proba.split == (None if split is None else 0)
    close(log_proba, reference.predict_log_proba(x), rtol * 10, 1e-5, what="predict_log_proba")
    predicted = model.predict(hx)
    assert predicted.dtype is model.classes_.dtype
    close(predicted, reference.predict(x), 0, what="predict")


@pytest.mark.parametrize("split", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_fit_same_as_sklearn(split, dtype, weighted):
    x, labels = make_classes(53, 4, seed=1, dtype=dtype)
    weights = np.random.default_rng(2).uniform(0.1, 3.0, size=53) if weighted else None
    reference = naive_bayes.GaussianNB().fit(x, labels, sample_weight=weights)
    model = ht.naive_bayes.GaussianNB()
    hw = None if weights is None else ht.array(weights, split=0)
    assert model.fit(ht.array(x, split=split), ht.array(labels, split=0), sample_weight=hw) is model
    compare(model, reference, x, split, 1e-5 if dtype == np.float32 else 1e-10)
    assert model.score(ht.array(x, split=split), ht.array(labels, split=0)) == reference.score(
        x, labels
    )


@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("weighted", [False, True])
def test_partial_fit_batches_same_as_sklearn(split, weighted):
    x, labels = make_classes(60, 3, n_classes=4, seed=3)
    labels = labels * 10 - 5  # labels that are not 0..k-1
    weights = np.random.default_rng(4).uniform(0.5, 2.0, size=60) if weighted else None
    reference = naive_bayes.GaussianNB()
    model = ht.naive_bayes.GaussianNB()
    # batches of several sizes: one with 2 rows (fewer than processes), one missing classes
    order = np.argsort(labels, kind="stable")
    batches = [order[:2], order[2:20], np.arange(60)[::3], order[20:]]
    for number, rows in enumerate(batches):
        w = None if weights is None else weights[rows]
        reference.partial_fit(x[rows], labels[rows], classes=np.unique(labels), sample_weight=w)
        model.partial_fit(
            ht.array(x[rows], split=split),
            ht.array(labels[rows], split=None if split is None else 0),
            classes=np.unique(labels) if number == 0 else None,
            sample_weight=None if w is None else ht.array(w, split=0),
        )
        # variances differ from scikit-learn's by var_smoothing times a difference of variances
        compare(model, reference, x, split, 1e-7)
    # fit starts afresh
    model.fit(ht.array(x[:30], split=split), ht.array(labels[:30]))
    compare(model, naive_bayes.GaussianNB().fit(x[:30], labels[:30]), x, split, 1e-10)


def test_priors_float_labels_and_few_rows():
    x, labels = make_classes(3, 2, n_classes=2, seed=5)  # fewer rows than processes at 4
    labels = labels.astype(np.float32) + 1.0
    reference = naive_bayes.GaussianNB(priors=[0.3, 0.7], var_smoothing=1e-3).fit(x, labels)
    model = ht.naive_bayes.GaussianNB(priors=[0.3, 0.7], var_smoothing=1e-3)
    model.fit(ht.array(x, split=0), ht.array(labels, split=0))
    assert model.classes_.dtype is ht.float32
    compare(model, reference, x, 0, 1e-10)
    assert repr(model) == "GaussianNB(priors=[0.3, 0.7], var_smoothing=0.001)"
    assert ht.is_classifier(model)


def test_bad_input_raises_on_every_rank():
    x, labels = make_classes(12, 3, seed=6)
    hx, hy = ht.array(x, split=0), ht.array(labels, split=0)
    NB = ht.naive_bayes.GaussianNB
    assert_raises_then_collective_works(ht.NotFittedError, NB().predict, hx)
    assert_raises_then_collective_works(ht.NotFittedError, NB().predict_proba, hx)
    assert_raises_then_collective_works(ValueError, NB().fit, hx, ht.array(labels[:-1], split=0))
    assert_raises_then_collective_works(
        ValueError, NB().fit, hx, hy, sample_weight=ht.ones(11, split=0)
    )
    assert_raises_then_collective_works(ValueError, NB().fit, ht.array(x[0]), hy)
    bad = x.copy()
    bad[11, 0] = np.nan
    assert_raises_then_collective_works(ValueError, NB().fit, ht.array(bad, split=0), hy)
    assert_raises_then_collective_works(
        ValueError, NB().fit, hx, ht.array(np.where(labels == 1, np.nan, labels), split=0)
    )
    assert_raises_then_collective_works(ValueError, NB(priors=[0.5, 0.5]).fit, hx, hy)
    assert_raises_then_collective_works(ValueError, NB(priors=[0.5, 0.4, 0.3]).fit, hx, hy)
    assert_raises_then_collective_works(ValueError, NB(priors=[1.2, -0.1, -0.1]).fit, hx, hy)
    assert_raises_then_collective_works(ValueError, NB(var_smoothing=-1.0).fit, hx, hy)
    assert_raises_then_collective_works(TypeError, NB(var_smoothing="a").fit, hx, hy)
    assert_raises_then_collective_works(ValueError, NB().partial_fit, hx, hy)
    # a label outside classes, on one process only
    assert_raises_then_collective_works(ValueError, NB().partial_fit, hx, hy, classes=[0, 1])
    model = NB().partial_fit(hx, hy, classes=[0, 1, 2])
    assert_raises_then_collective_works(ValueError, model.partial_fit, hx, hy, classes=[0, 1, 3])
    assert_raises_then_collective_works(
        ValueError, model.partial_fit, ht.array(x[:, :2], split=0), hy
    )
    assert_raises_then_collective_works(ValueError, model.predict, ht.array(x[:, :2], split=0))
    assert_raises_then_collective_works(ValueError, model.predict, ht.array(bad, split=0))
