"""
Tests of heat/core/base.py: the estimator interface (parameters, repr, mixins, is_*) and the
NotFittedError (the input checks the estimators share: tests/utils/test_validation.py). scikit-learn is the oracle for
the scores and the exception hierarchy.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_array_equal, assert_raises_then_collective_works


class Shift(ht.TransformMixin, ht.BaseEstimator):
    def __init__(self, offset=0.0, scale=1.0, inner=None):
        self.offset = offset
        self.scale = scale
        self.inner = inner

    def fit(self, x, y=None):
        self.n_features_in_ = x.shape[1]
        return self

    def transform(self, x):
        ht.check_is_fitted(self)
        return x * self.scale + self.offset


class MeanRegressor(ht.RegressionMixin, ht.BaseEstimator):
    def __init__(self, bias=0.0):
        self.bias = bias

    def fit(self, x, y):
        self.mean_ = y.mean().item()
        return self

    def predict(self, x):
        return ht.zeros(x.shape[0], dtype=ht.float64, split=x.split) + (self.mean_ + self.bias)


class ThresholdClassifier(ht.ClassificationMixin, ht.BaseEstimator):
    def __init__(self, threshold=0.0):
        self.threshold = threshold

    def fit(self, x, y):
        self.fitted_ = True
        return self

    def predict(self, x):
        return (x[:, 0] > self.threshold).astype(ht.int64)


class Clusters(ht.ClusteringMixin, ht.BaseEstimator):
    def fit(self, x, y=None):
        self.labels_ = ht.zeros(x.shape[0], dtype=ht.int64, split=x.split)
        return self


def test_get_params_set_params_repr():
    inner = Shift(offset=1.0)
    outer = Shift(scale=2.0, inner=inner)
    assert Shift().get_params() == {"offset": 0.0, "scale": 1.0, "inner": None}
    params = outer.get_params()
    assert params["inner__offset"] == 1.0 and params["scale"] == 2.0 and params["inner"] is inner
    assert set(outer.get_params(deep=False)) == {"offset", "scale", "inner"}
    assert outer.set_params(offset=3.0, inner__scale=5.0) is outer
    assert outer.offset == 3.0 and inner.scale == 5.0
    assert repr(Shift(offset=2.0)) == "Shift(offset=2.0)"
    assert repr(Shift()) == "Shift()"
    assert repr(ht.cluster.KMeans(n_clusters=3)) == "KMeans(n_clusters=3)"
    # large values (arrays) are abbreviated, not printed
    assert repr(Shift(offset=np.zeros(100))) == "Shift(offset=<ndarray>)"
    with pytest.raises(ValueError, match="invalid parameter 'shift'"):
        Shift().set_params(shift=1.0)
    with pytest.raises(ValueError, match="invalid parameter 'bogus'"):
        outer.set_params(bogus__offset=1.0)


def test_parameters_must_be_explicit():
    class Loose(ht.BaseEstimator):
        def __init__(self, **kwargs):
            pass

    with pytest.raises(RuntimeError, match="explicitly"):
        Loose().get_params()


def test_sklearn_conventions_of_heat_estimators():
    from sklearn.base import clone

    for estimator in (
        ht.cluster.KMeans(n_clusters=3, random_state=1),
        ht.preprocessing.MinMaxScaler(feature_range=(-1, 1)),
    ):
        # scikit-learn's clone rebuilds an estimator from get_params: the contract holds
        copy = clone(estimator)
        assert type(copy) is type(estimator) and copy.get_params() == estimator.get_params()


def test_not_fitted_error():
    from sklearn.exceptions import NotFittedError as SklearnNotFittedError

    assert issubclass(ht.NotFittedError, ValueError)
    assert issubclass(ht.NotFittedError, AttributeError)
    assert set(SklearnNotFittedError.__mro__[1:3]) == set(ht.NotFittedError.__mro__[1:3])
    x = ht.ones((5, 2), split=0)
    assert_raises_then_collective_works(ht.NotFittedError, Shift().transform, x)
    with pytest.raises(ht.NotFittedError, match="This Shift instance is not fitted yet"):
        ht.check_is_fitted(Shift())
    ht.check_is_fitted(Shift().fit(x))
    with pytest.raises(ht.NotFittedError):
        ht.check_is_fitted(Shift().fit(x), ["missing_"])


def test_mixins_and_predicates():
    x = ht.array(np.arange(12.0).reshape(6, 2) - 5, split=0)
    assert_array_equal(Shift(offset=1.0).fit_transform(x), np.arange(12.0).reshape(6, 2) - 4)
    assert_array_equal(Clusters().fit_predict(x), np.zeros(6, dtype=np.int64))
    estimators = (Shift(), MeanRegressor(), ThresholdClassifier(), Clusters())
    predicates = (ht.is_transformer, ht.is_regressor, ht.is_classifier, ht.is_clusterer)
    for i, estimator in enumerate(estimators):
        assert ht.is_estimator(estimator)
        for j, predicate in enumerate(predicates):
            assert predicate(estimator) == (i == j)
    for thing in (ht.zeros(3), object(), Shift):
        assert not ht.is_estimator(thing)
        assert not any(predicate(thing) for predicate in predicates)
    assert ht.is_clusterer(ht.cluster.KMeans()) and ht.is_transformer(ht.preprocessing.Normalizer())


@pytest.mark.parametrize("split", [None, 0])
def test_scores_match_sklearn(split):
    from sklearn.metrics import accuracy_score, r2_score

    rng = np.random.default_rng(3)
    data = rng.normal(size=(7, 2))
    target = rng.normal(size=7)
    x, y = ht.array(data, split=split), ht.array(target, split=split)
    regressor = MeanRegressor(bias=0.3).fit(x, y)
    expected = r2_score(target, np.full(7, target.mean() + 0.3))
    assert np.isclose(regressor.score(x, y), expected)
    assert_array_equal(regressor.fit_predict(x, y), np.full(7, target.mean() + 0.3))
    labels = (target > 0).astype(np.int64)
    classifier = ThresholdClassifier(threshold=0.1).fit(x, ht.array(labels, split=split))
    expected = accuracy_score(labels, (data[:, 0] > 0.1).astype(np.int64))
    assert np.isclose(classifier.score(x, ht.array(labels, split=split)), expected)
