"""
Tests of heat/cluster/kmedians.py and kmedoids.py; the oracle is a NumPy implementation of the
same iterations (L1 assignment, NumPy's median; for k-medoids the member nearest to the median).
"""

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score  # noqa: E402

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
)


def numpy_kmedians(data, centres, iterations, medoids=False):
    for _ in range(iterations):
        labels = np.abs(data[:, None] - centres[None]).sum(2).argmin(1)
        updated = centres.copy()
        for j in range(len(centres)):
            members = data[labels == j]
            if len(members):
                median = np.median(members, axis=0)
                if medoids:
                    median = members[np.abs(members - median).sum(1).argmin()]
                updated[j] = median
        centres = updated
    labels = np.abs(data[:, None] - centres[None]).sum(2).argmin(1)
    return centres, labels, np.abs(data - centres[labels]).sum()


@pytest.mark.parametrize("medoids", [False, True], ids=["KMedians", "KMedoids"])
@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_iterations_as_numpy(blobs, medoids, split, dtype):
    data, _, _ = blobs(203, 3, 4, spread=3.0, separation=6.0, seed=11, dtype=dtype)
    init = data[[0, 1, 2, 3]].copy()
    estimator = ht.cluster.KMedoids if medoids else ht.cluster.KMedians
    model = estimator(4, init=ht.array(init, split=0), max_iter=6, tol=-1)
    model.fit(ht.array(data, split=split))
    centres, labels, inertia = numpy_kmedians(data, init, 6, medoids)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert model.n_iter_ == 6
    assert np.allclose(model.cluster_centers_.numpy(), centres, rtol=rtol, atol=rtol)
    assert_array_equal(model.labels_, labels.astype(np.int64))
    assert np.isclose(model.inertia_, inertia, rtol=rtol)
    if medoids:  # the centres are samples
        for centre in model.cluster_centers_.numpy():
            assert (data == centre).all(1).any()


@pytest.mark.parametrize("estimator", [ht.cluster.KMedians, ht.cluster.KMedoids])
@pytest.mark.parametrize("init", ["random", "k-means++", "k-means||"])
def test_initializations_find_the_clusters(blobs, estimator, init):
    data, truth, _ = blobs(300, 3, 3, spread=0.5, separation=10.0, seed=12, dtype=np.float32)
    model = estimator(3, init=init, random_state=2).fit(ht.array(data, split=0))
    collective_assert(adjusted_rand_score(truth, model.labels_.numpy()) > 0.99, f"{init} failed")
    assert_array_equal(model.predict(ht.array(data, split=0)), model.labels_.numpy())


def test_few_rows_and_empty_processes(blobs):
    data, _, _ = blobs(3, 2, 2, seed=13)
    for estimator in (ht.cluster.KMedians, ht.cluster.KMedoids):
        model = estimator(2, init=data[:2], max_iter=5).fit(ht.array(data, split=0))
        centres, labels, _ = numpy_kmedians(
            data, data[:2].copy(), model.n_iter_, estimator is ht.cluster.KMedoids
        )
        assert np.allclose(model.cluster_centers_.numpy(), centres)


@pytest.mark.parametrize("estimator", [ht.cluster.KMedians, ht.cluster.KMedoids])
def test_bad_input_raises_on_every_process(blobs, estimator):
    data, _, _ = blobs(5, 2, 2, seed=14)
    x = ht.array(data, split=0)
    assert_raises_then_collective_works(ValueError, estimator(6).fit, x)
    assert_raises_then_collective_works(ht.NotFittedError, estimator(2).predict, x)
    bad = data.copy()
    bad[-1, -1] = np.nan
    assert_raises_then_collective_works(ValueError, estimator(2).fit, ht.array(bad, split=0))
    fitted = estimator(2, random_state=0).fit(x)
    assert_raises_then_collective_works(ValueError, fitted.predict, ht.ones((2, 3), split=0))


@pytest.mark.parametrize("split", [None, 0, 1])
def test_heat_plus_plus_names(blobs, split):
    # HeAT's "kmedians++" / "kmedoids++" (and the hyphenated names) are the ++ seeding with the
    # estimator's L1 cost: the same fit as init="k-means++" from the same seed
    data, truth, _ = blobs(120, 3, 3, spread=0.5, separation=10.0, seed=21)
    x = ht.array(data, split=split)
    for estimator, names in (
        (ht.cluster.KMedians, ("kmedians++", "k-medians++")),
        (ht.cluster.KMedoids, ("kmedoids++", "k-medoids++", "kmedians++")),
    ):
        reference = estimator(3, init="k-means++", random_state=4).fit(x)
        for name in names:
            model = estimator(3, init=name, random_state=4).fit(x)
            assert np.array_equal(
                model.cluster_centers_.numpy(), reference.cluster_centers_.numpy()
            )
            collective_assert(adjusted_rand_score(truth, model.labels_.numpy()) > 0.99, name)
    # the names belong to their estimators
    assert_raises_then_collective_works(ValueError, ht.cluster.KMeans(3, init="kmedians++").fit, x)
    assert_raises_then_collective_works(
        ValueError, ht.cluster.KMedians(3, init="kmedoids++").fit, x
    )
