"""
Tests of heat/cluster/kmeans.py (and the shared parts in _kcluster.py); the oracle is
scikit-learn's KMeans: from the same initial centres, the same centres, labels, inertia and
number of iterations. Every split, float32 and float64, uneven sizes, fewer rows than processes.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_array_equal, assert_raises_then_collective_works, collective_assert

sklearn_cluster = pytest.importorskip("sklearn.cluster")
from sklearn.metrics import adjusted_rand_score  # noqa: E402

SPLITS = [None, 0, 1]


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_result_as_sklearn_from_the_same_centres(blobs, split, dtype):
    # overlapping blobs and poor initial centres: many iterations, many label changes
    data, _, _ = blobs(601, 3, 5, spread=3.0, separation=6.0, seed=1, dtype=dtype)
    init = data[[0, 1, 2, 3, 4]].copy()
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    for tol in (1e-4, 0.0):
        reference = sklearn_cluster.KMeans(5, init=init, n_init=1, max_iter=300, tol=tol).fit(data)
        ours = ht.cluster.KMeans(5, init=ht.array(init), max_iter=300, tol=tol)
        ours.fit(ht.array(data, split=split))
        assert ours.n_iter_ == reference.n_iter_ > 5
        centres = ours.cluster_centers_
        assert centres.split is None and centres.dtype is ht.canonical_heat_type(dtype)
        assert np.allclose(centres.numpy(), reference.cluster_centers_, rtol=rtol, atol=rtol)
        assert np.isclose(ours.inertia_, reference.inertia_, rtol=rtol)
        expected_labels = reference.labels_.astype(np.int64)
        assert_array_equal(ours.labels_, expected_labels)
        assert ours.labels_.split == (None if split is None else 0)
        assert_array_equal(ours.predict(ht.array(data, split=split)), expected_labels)


@pytest.mark.parametrize("split", [None, 0])
def test_negative_tol_runs_max_iter_and_few_rows(blobs, split):
    data, _, _ = blobs(3, 2, 2, seed=2)  # fewer rows than processes at 4
    reference = sklearn_cluster.KMeans(2, init=data[:2], n_init=1, max_iter=7, tol=0).fit(data)
    ours = ht.cluster.KMeans(2, init=data[:2], max_iter=7, tol=-1).fit(ht.array(data, split=split))
    assert ours.n_iter_ == 7
    assert np.allclose(ours.cluster_centers_.numpy(), reference.cluster_centers_)
    assert_array_equal(ours.labels_, reference.labels_.astype(np.int64))
    # k == n: every sample its own cluster
    single = ht.cluster.KMeans(3, init="k-means++", random_state=0).fit(ht.array(data, split=split))
    assert np.isclose(single.inertia_, 0.0)


@pytest.mark.parametrize(
    "init", ["random", "k-means++", "kmeans++", "probability_based", "k-means||", "batchparallel"]
)
@pytest.mark.parametrize("split", [None, 0])
def test_initializations_find_the_clusters(blobs, init, split):
    data, truth, _ = blobs(400, 4, 4, spread=0.5, separation=10.0, seed=3, dtype=np.float32)
    model = ht.cluster.KMeans(4, init=init, random_state=5).fit(ht.array(data, split=split))
    labels = model.labels_.numpy()
    collective_assert(adjusted_rand_score(truth, labels) > 0.99, f"{init} missed clusters")
    # reproducible with the same random_state
    again = ht.cluster.KMeans(4, init=init, random_state=5).fit(ht.array(data, split=split))
    assert np.array_equal(again.cluster_centers_.numpy(), model.cluster_centers_.numpy())


def test_random_init_independent_of_process_count(blobs):
    # the seeding draws global indices from one shared stream: the same centres at any count
    data, _, _ = blobs(50, 3, 3, seed=4)
    model = ht.cluster.KMeans(3, init="random", max_iter=1, tol=-1, random_state=11)
    model.fit(ht.array(data, split=0))
    indices = np.random.default_rng(11).choice(50, size=3, replace=False)
    reference = sklearn_cluster.KMeans(3, init=data[indices], n_init=1, max_iter=1).fit(data)
    assert np.allclose(model.cluster_centers_.numpy(), reference.cluster_centers_)


def test_data_far_from_the_origin_float32(blobs):
    # the distances are computed from centres shifted by the data mean: float32 stays accurate
    # (unshifted, ||c||^2 ~ 2e8 would carry rounding errors ~10, above the squared gaps ~1)
    data, truth, _ = blobs(300, 2, 3, spread=0.05, separation=1.0, seed=6)
    data = (data + 1e4).astype(np.float32)
    model = ht.cluster.KMeans(3, init="k-means++", random_state=0).fit(ht.array(data, split=0))
    collective_assert(adjusted_rand_score(truth, model.labels_.numpy()) > 0.99, "lost precision")


def test_ties_go_to_the_lowest_index():
    data = np.array([[0.0], [1.0], [2.0], [2.0]])
    # the sample at 1.0 is equally far from both centres: it goes to the first, as argmin
    model = ht.cluster.KMeans(2, init=np.array([[0.0], [2.0]]), max_iter=1, tol=-1)
    labels = model.fit(ht.array(data, split=0)).labels_
    assert_array_equal(labels, np.array([0, 0, 1, 1]))


def test_predict_inputs(blobs):
    data, _, _ = blobs(40, 2, 2, seed=7)
    model = ht.cluster.KMeans(2, random_state=1).fit(ht.array(data, split=0))
    expected = model.labels_.numpy()
    assert_array_equal(model.predict(data), expected)  # NumPy: replicated
    assert model.predict(ht.array(data, split=1)).split == 0
    assert_array_equal(model.fit_predict(ht.array(data, split=0)), expected)
    assert model.n_features_in_ == 2
    assert model.get_params()["n_clusters"] == 2


def test_bad_input_raises_on_every_process(blobs):
    data, _, _ = blobs(6, 2, 2, seed=8)
    x = ht.array(data, split=0)
    KMeans = ht.cluster.KMeans
    assert_raises_then_collective_works(ValueError, KMeans(7).fit, x)  # k > n_samples
    assert_raises_then_collective_works(ht.NotFittedError, KMeans(2).predict, x)
    bad = data.copy()
    bad[-1, 0] = np.nan  # on the last process only
    assert_raises_then_collective_works(ValueError, KMeans(2).fit, ht.array(bad, split=0))
    bad[-1, 0] = np.inf
    assert_raises_then_collective_works(ValueError, KMeans(2).fit, ht.array(bad, split=0))
    fitted = KMeans(2, random_state=0).fit(x)
    assert_raises_then_collective_works(ValueError, fitted.predict, ht.ones((3, 3), split=0))
    assert_raises_then_collective_works(ValueError, fitted.predict, ht.array(bad, split=0))
    assert_raises_then_collective_works(ValueError, KMeans(2, init="nope").fit, x)
    assert_raises_then_collective_works(ValueError, KMeans(2, init=np.zeros((3, 2))).fit, x)
    assert_raises_then_collective_works(TypeError, KMeans(2, init=3).fit, x)
    assert_raises_then_collective_works(TypeError, KMeans(2.5).fit, x)
    assert_raises_then_collective_works(ValueError, KMeans(0).fit, x)
    assert_raises_then_collective_works(ValueError, KMeans(2, max_iter=0).fit, x)
    assert_raises_then_collective_works(TypeError, KMeans(2, random_state="a").fit, x)
    assert_raises_then_collective_works(ValueError, KMeans(2).fit, ht.ones(6, split=0))
