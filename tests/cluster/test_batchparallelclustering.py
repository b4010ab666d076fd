"""
Tests of heat/cluster/batchparallelclustering.py: on well-separated clusters the local-then-merge
clustering finds scikit-learn's centres; on any data it is deterministic and consistent.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
)

sklearn_cluster = pytest.importorskip("sklearn.cluster")
from sklearn.metrics import adjusted_rand_score  # noqa: E402

ESTIMATORS = [ht.cluster.BatchParallelKMeans, ht.cluster.BatchParallelKMedians]


def _sorted_rows(centres):
    return centres[np.lexsort(centres.T[::-1])]


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_finds_the_clusters(blobs, estimator, split, dtype):
    data, truth, _ = blobs(403, 3, 4, spread=0.3, separation=10.0, seed=21, dtype=dtype)
    model = estimator(4, random_state=3).fit(ht.array(data, split=split))
    labels = model.labels_.numpy()
    collective_assert(adjusted_rand_score(truth, labels) > 0.99, "clusters missed")
    assert model.labels_.split == (None if split is None else 0)
    assert model.cluster_centers_.dtype is ht.canonical_heat_type(dtype)
    if estimator is ht.cluster.BatchParallelKMeans:
        reference = sklearn_cluster.KMeans(4, n_init=5, random_state=0).fit(data)
        assert np.allclose(
            _sorted_rows(model.cluster_centers_.numpy()),
            _sorted_rows(reference.cluster_centers_),
            atol=1e-3,
        )
        assert np.isclose(model.inertia_, reference.inertia_, rtol=1e-4)
    else:
        # medians of the true clusters (up to the weighted merge of local medians)
        medians = np.array([np.median(data[truth == j], axis=0) for j in range(4)])
        assert np.allclose(
            _sorted_rows(model.cluster_centers_.numpy()), _sorted_rows(medians), atol=0.2
        )
        assert np.isclose(
            model.inertia_, np.abs(data - model.cluster_centers_.numpy()[labels]).sum(), rtol=1e-5
        )
    assert_array_equal(model.predict(ht.array(data, split=split)), labels)
    again = estimator(4, random_state=3).fit(ht.array(data, split=split))
    assert np.array_equal(again.cluster_centers_.numpy(), model.cluster_centers_.numpy())


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_fewer_rows_than_processes_and_given_init(blobs, estimator):
    data, _, _ = blobs(3, 2, 2, seed=22)
    model = estimator(2, init=data[:2], random_state=0).fit(ht.array(data, split=0))
    assert model.cluster_centers_.shape == (2, 2)
    for init in ("random", "k-means++", "k-means||"):
        estimator(3, init=init, random_state=1).fit(ht.array(data, split=0))


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_bad_input_raises_on_every_process(blobs, estimator):
    data, _, _ = blobs(5, 2, 2, seed=23)
    x = ht.array(data, split=0)
    assert_raises_then_collective_works(ValueError, estimator(6).fit, x)
    assert_raises_then_collective_works(ht.NotFittedError, estimator(2).predict, x)
    bad = data.copy()
    bad[-1, -1] = np.inf
    assert_raises_then_collective_works(ValueError, estimator(2).fit, ht.array(bad, split=0))
    fitted = estimator(2, random_state=0).fit(x)
    assert_raises_then_collective_works(ValueError, fitted.predict, ht.ones((2, 3), split=0))


def _tree_merge_sizes(processes, k, group):
    """Points each ++ seeding of HeAT's merge tree sees, every process holding k centres."""
    sets, sizes = [k] * processes, []
    while len(sets) > group:
        merged = []
        for start in range(0, len(sets), group):
            total = sum(sets[start : start + group])
            if total > k:
                sizes.append(total)
            merged.append(min(total, k))
        sets = merged
    return sizes + [sum(sets)]


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("split", [None, 0])
def test_n_procs_to_merge(blobs, estimator, split, monkeypatch):
    data, truth, _ = blobs(301, 2, 3, spread=0.3, separation=10.0, seed=25)
    x = ht.array(data, split=split)
    seen = []
    merge_start = estimator._merge_start

    def spy(self, x, centres, *args):
        seen.append(len(centres))
        return merge_start(self, x, centres, *args)

    monkeypatch.setattr(estimator, "_merge_start", spy)
    processes = x.comm.size if split == 0 else 1
    merged_at_once = estimator(3, random_state=4).fit(x)
    assert seen == [3 * processes]
    for group in (2, 3, 8):
        seen.clear()
        model = estimator(3, random_state=4, n_procs_to_merge=group).fit(x)
        assert seen == _tree_merge_sizes(processes, 3, group), group
        collective_assert(adjusted_rand_score(truth, model.labels_.numpy()) > 0.99, "missed")
        if group >= processes:  # one level: the same as merging all at once
            assert np.array_equal(
                model.cluster_centers_.numpy(), merged_at_once.cluster_centers_.numpy()
            )
    assert estimator(3, n_procs_to_merge=2).get_params()["n_procs_to_merge"] == 2
    assert_raises_then_collective_works(ValueError, estimator(3, n_procs_to_merge=1).fit, x)
    assert_raises_then_collective_works(TypeError, estimator(3, n_procs_to_merge=2.0).fit, x)
