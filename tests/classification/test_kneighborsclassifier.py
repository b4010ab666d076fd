"""
Tests of heat/classification/kneighborsclassifier.py; the oracle is scikit-learn's
KNeighborsClassifier (brute force): the same neighbours, distances, probabilities and labels for
every layout of training samples and queries, float32 and float64, both weightings and metrics,
uneven sizes and fewer rows than processes; equal distances ordered by training index.
"""

import functools

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_raises_then_collective_works, collective_assert

neighbors = pytest.importorskip("sklearn.neighbors")


def make_data(n, q, f=3, n_classes=3, seed=0, dtype=np.float64):
    """Continuous random data: no two distances are equal."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, f)).astype(dtype)
    labels = rng.integers(0, n_classes, size=n) * 2 + 1
    queries = rng.normal(size=(q, f)).astype(dtype)
    return x, labels, queries


def close(actual, expected, rtol, what):
    values = actual.numpy()
    ok = values.shape == np.shape(expected) and np.allclose(values, expected, rtol=rtol, atol=rtol)
    collective_assert(ok, f"{what}: {values} != {expected}")


SPLITS = [None, 0, 1]


@functools.lru_cache(maxsize=None)
def sklearn_results(dtype, weights, metric, k):
    """scikit-learn's answers for test_same_as_sklearn, computed once for all layouts."""
    x, labels, queries = make_data(37, 11, seed=1, dtype=dtype)
    reference = neighbors.KNeighborsClassifier(k, weights=weights, metric=metric, algorithm="brute")
    reference.fit(x, labels)
    distances, indices = reference.kneighbors(queries)
    return (
        distances,
        indices,
        reference.predict_proba(queries),
        reference.predict(queries),
        reference.classes_,
    )


@pytest.mark.parametrize("train_split", SPLITS)
@pytest.mark.parametrize("query_split", SPLITS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_same_as_sklearn(train_split, query_split, dtype):
    x, labels, queries = make_data(37, 11, seed=1, dtype=dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    hx, hq = ht.array(x, split=train_split), ht.array(queries, split=query_split)
    hy = ht.array(labels, split=0)
    for weights, metric, k in (
        ("uniform", "euclidean", 5),
        ("distance", "manhattan", 4),
        ("distance", "euclidean", 1),
    ):
        expected_distances, expected_indices, expected_proba, expected_labels, classes = (
            sklearn_results(dtype, weights, metric, k)
        )
        model = ht.classification.KNeighborsClassifier(k, weights=weights, metric=metric)
        assert model.fit(hx, hy) is model
        assert model.effective_metric_ == metric and model.n_samples_fit_ == 37
        distances, indices = model.kneighbors(hq)
        assert distances.split == indices.split == (None if query_split is None else 0)
        assert distances.dtype is ht.canonical_heat_type(dtype) and indices.dtype is ht.int64
        close(indices, expected_indices, 0, "indices")
        close(distances, expected_distances, rtol, "distances")
        proba = model.predict_proba(hq)
        assert proba.dtype is ht.float64 and proba.shape == (11, 3)
        close(proba, expected_proba, rtol, "predict_proba")
        predicted = model.predict(hq)
        assert predicted.dtype is ht.int64
        close(predicted, expected_labels, 0, "predict")
        close(model.classes_, classes, 0, "classes_")
        assert model.score(hq, ht.array(expected_labels)) == 1.0


@pytest.mark.parametrize("train_split", [None, 0])
@pytest.mark.parametrize("query_split", [None, 0])
def test_ties_by_training_index_and_few_rows(train_split, query_split):
    # integer points: many equal distances; the nearer of equally distant samples is the one
    # of smaller index, whatever the number of processes
    x = np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1], [1, 1], [2, 0]], dtype=np.float64)
    labels = np.array([0, 1, 1, 2, 2, 0, 1])
    queries = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 0.5]])[: 2 if query_split == 0 else 3]
    model = ht.classification.KNeighborsClassifier(n_neighbors=4)
    model.fit(ht.array(x, split=train_split), ht.array(labels, split=train_split))
    distances, indices = model.kneighbors(ht.array(queries, split=query_split))
    d = np.sqrt(((queries[:, None, :] - x[None, :, :]) ** 2).sum(2))
    expected = np.array([np.lexsort((np.arange(len(x)), row))[:4] for row in d])
    close(indices, expected, 0, "indices")
    close(distances, np.take_along_axis(d, expected, 1), 1e-12, "distances")
    # fewer training rows than processes, k = n_samples
    few = ht.classification.KNeighborsClassifier(n_neighbors=3).fit(
        ht.array(x[:3], split=0), ht.array(labels[:3], split=0)
    )
    close(
        few.kneighbors(ht.array(queries, split=query_split), return_distance=False),
        np.array([np.lexsort((np.arange(3), row))[:3] for row in d[:, :3]]),
        0,
        "few",
    )


def test_distance_weights_with_exact_matches_and_float_labels():
    x, labels, _ = make_data(20, 0, seed=2)
    labels = labels.astype(np.float32) * 3
    queries = x[[3, 7]]  # at distance 0 from a training sample
    reference = neighbors.KNeighborsClassifier(3, weights="distance", algorithm="brute").fit(
        x, labels
    )
    model = ht.classification.KNeighborsClassifier(3, weights="distance").fit(
        ht.array(x, split=0), ht.array(labels)
    )
    assert model.classes_.dtype is ht.float32
    close(
        model.predict_proba(ht.array(queries, split=0)),
        reference.predict_proba(queries),
        1e-12,
        "proba",
    )
    close(model.predict(ht.array(queries, split=0)), reference.predict(queries), 0, "predict")
    assert repr(model) == "KNeighborsClassifier(n_neighbors=3, weights='distance')"
    assert ht.is_classifier(model)


def test_bad_input_raises_on_every_rank():
    x, labels, queries = make_data(6, 4, seed=3)
    hx, hy = ht.array(x, split=0), ht.array(labels, split=0)
    KNN = ht.classification.KNeighborsClassifier
    assert_raises_then_collective_works(
        ht.NotFittedError, KNN().predict, ht.array(queries, split=0)
    )
    assert_raises_then_collective_works(ValueError, KNN(n_neighbors=7).fit, hx, hy)
    assert_raises_then_collective_works(ValueError, KNN(n_neighbors=0).fit, hx, hy)
    assert_raises_then_collective_works(TypeError, KNN(n_neighbors=2.0).fit, hx, hy)
    assert_raises_then_collective_works(ValueError, KNN(weights="inverse").fit, hx, hy)
    assert_raises_then_collective_works(ValueError, KNN(metric="cosine").fit, hx, hy)
    assert_raises_then_collective_works(ValueError, KNN(2).fit, hx, ht.array(labels[:5], split=0))
    assert_raises_then_collective_works(ValueError, KNN(2).fit, ht.array(x[:, 0], split=0), hy)
    bad = x.copy()
    bad[5, 2] = np.nan
    assert_raises_then_collective_works(ValueError, KNN(2).fit, ht.array(bad, split=0), hy)
    model = KNN(2).fit(hx, hy)
    assert_raises_then_collective_works(
        ValueError, model.predict, ht.array(queries[:, :2], split=0)
    )
    assert_raises_then_collective_works(ValueError, model.predict, ht.array(bad, split=0))
    assert_raises_then_collective_works(ValueError, model.kneighbors, hx, n_neighbors=7)


def test_k_smallest_orders_ties_by_index():
    # the local selection: topk plus a full stable sort only where ties straddle the k-th place
    import torch

    from heat.classification.kneighborsclassifier import _k_smallest

    generator = torch.Generator().manual_seed(0)
    for _ in range(200):
        m = int(torch.randint(1, 30, (1,), generator=generator))
        k = int(torch.randint(1, m + 1, (1,), generator=generator))
        distances = torch.randint(0, 5, (7, m), generator=generator).double()
        values, index = _k_smallest(distances, k)
        expected = torch.sort(distances, dim=1, stable=True)
        assert torch.equal(index, expected.indices[:, :k])
        assert torch.equal(values, expected.values[:, :k])
    # transposed views (the layout of the distributed case) and no rows
    values, index = _k_smallest(distances.T.contiguous().T, 2)
    assert torch.equal(index, torch.sort(distances, dim=1, stable=True).indices[:, :2])
    assert _k_smallest(torch.empty((0, 4)), 3)[1].shape == (0, 3)


@pytest.mark.parametrize("split", SPLITS)
def test_one_hot_labels(split):
    # HeAT's KNN took one-hot labels; the predictions come back in the same form
    x, labels, queries = make_data(29, 9, seed=4)
    codes = (labels - 1) // 2  # 0, 1, 2; a fourth column without samples
    one_hot = np.eye(4, dtype=np.float32)[codes]
    reference = neighbors.KNeighborsClassifier(3, algorithm="brute").fit(x, codes)
    expected = np.eye(4, dtype=np.float32)[reference.predict(queries)]
    for y_split in (None, 0, 1):
        model = ht.classification.KNeighborsClassifier(3)
        model.fit(ht.array(x, split=split), ht.array(one_hot, split=y_split))
        close(model.classes_, np.arange(4), 0, "classes_")
        predicted = model.predict(ht.array(queries, split=split))
        assert predicted.dtype is ht.float32 and predicted.shape == (9, 4)
        close(predicted, expected, 0, "one-hot predict")
        proba = reference.predict_proba(queries)
        close(model.predict_proba(ht.array(queries, split=split))[:, :3], proba, 1e-10, "proba")
    integer = ht.classification.KNeighborsClassifier(3).fit(x, one_hot.astype(np.int64))
    assert integer.predict(ht.array(queries)).dtype is ht.int64
    knn = ht.classification.KNeighborsClassifier(3)
    bad = one_hot.copy()
    bad[-1] = [1, 1, 0, 0]  # two classes in the last row (on the last process)
    assert_raises_then_collective_works(
        ValueError, knn.fit, ht.array(x, split=0), ht.array(bad, split=0)
    )
    bad[-1] = [0.5, 0.5, 0, 0]
    assert_raises_then_collective_works(
        ValueError, knn.fit, ht.array(x, split=0), ht.array(bad, split=0)
    )
    assert_raises_then_collective_works(ValueError, knn.fit, x, one_hot[:-1])
