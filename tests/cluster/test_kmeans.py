"""
Tests of heat/cluster/kmeans.py (and the shared parts in _kcluster.py); the oracle is
scikit-learn's KMeans: from the same initial centres, the same centres, labels, inertia and
number of iterations. Every split, float32 and float64, uneven sizes, fewer rows than processes.
"""

import numpy as np
import pytest

import heat as ht
from tests.cluster.conftest import make_blobs
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
)

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


# ---------------------------------------------------------------------------------------------
# scikit-learn's n_init and verbose (issue 18, item 26)


def eight_blobs():
    data, _, _ = make_blobs(320, 2, 8, spread=1.0, separation=20.0, seed=0)
    return data


@pytest.mark.parametrize("split", [None, 0, 1])
def test_n_init_keeps_the_best_of_several_initializations(split):
    data = eight_blobs()
    x = ht.array(data, split=split)
    KMeans = ht.cluster.KMeans
    single = KMeans(8, init="random", n_init=1, random_state=3).fit(x)
    several = KMeans(8, init="random", n_init=8, random_state=3).fit(x)
    # random seeding from one seed falls into a poor local minimum; 8 seedings find the blobs
    assert several.inertia_ < 0.5 * single.inertia_
    # the attributes belong to the kept run: its inertia is that of its centres and labels
    centres, labels = several.cluster_centers_.numpy(), several.labels_.numpy()
    assert np.isclose(((data - centres[labels]) ** 2).sum(), several.inertia_, rtol=1e-6)
    assert_array_equal(several.predict(x), labels)
    # "auto" is 10 runs for random seeding, 1 for k-means++ (scikit-learn's rule)
    auto = KMeans(8, init="random", n_init="auto", random_state=3).fit(x)
    assert auto.inertia_ <= several.inertia_ * (1 + 1e-9)
    plus = KMeans(8, init="k-means++", random_state=3)
    assert plus.fit(x).inertia_ == KMeans(8, n_init="auto", random_state=3).fit(x).inertia_
    # the first run is the n_init=1 fit: never worse with more runs, reproducible
    for seed in range(3):
        one = KMeans(8, init="random", random_state=seed).fit(x).inertia_
        assert KMeans(8, init="random", n_init=3, random_state=seed).fit(x).inertia_ <= one
    again = KMeans(8, init="random", n_init=8, random_state=3).fit(x)
    assert np.array_equal(again.cluster_centers_.numpy(), centres)


def test_n_init_of_the_other_estimators():
    x = ht.array(eight_blobs(), split=0)
    for Estimator in (
        ht.cluster.KMedians,
        ht.cluster.KMedoids,
        ht.cluster.BatchParallelKMeans,
        ht.cluster.BatchParallelKMedians,
    ):
        one = Estimator(8, init="random", random_state=1).fit(x).inertia_
        best = Estimator(8, init="random", n_init=4, random_state=1).fit(x).inertia_
        assert best <= one, Estimator.__name__


def test_given_centres_are_one_initialization():
    data = eight_blobs()
    x = ht.array(data, split=0)
    model = ht.cluster.KMeans(8, init=data[:8], n_init=3)
    if ht.MPI_WORLD.rank == 0:
        with pytest.warns(RuntimeWarning, match="only one initialization"):
            model.fit(x)
    else:
        model.fit(x)
    reference = ht.cluster.KMeans(8, init=data[:8]).fit(x)
    assert np.array_equal(model.cluster_centers_.numpy(), reference.cluster_centers_.numpy())


def test_verbose_prints_progress_on_rank_0_only(capsys):
    x = ht.array(eight_blobs(), split=0)
    capsys.readouterr()
    model = ht.cluster.KMeans(8, init="random", n_init=2, max_iter=50, random_state=3, verbose=1)
    model.fit(x)
    lines = capsys.readouterr().out.splitlines()
    if ht.MPI_WORLD.rank == 0:
        assert lines[0] == "KMeans: initialization 1 of 2"
        iterations = [line for line in lines if line.startswith("KMeans: iteration ")]
        assert len(iterations) > model.n_iter_ and "centre shift" in iterations[0]
        done = [line for line in lines if " done: " in line]
        assert len(done) == 2 and f"inertia {model.inertia_:.6g}" in "".join(done)
    else:
        assert lines == []
    # silent by default
    ht.cluster.KMeans(8, n_init=2, random_state=3).fit(x)
    assert capsys.readouterr().out == ""


def test_wrong_arguments_name_the_public_class(blobs):
    data, _, _ = blobs(6, 2, 2, seed=8)
    x = ht.array(data, split=0)
    for Estimator in (
        ht.cluster.KMeans,
        ht.cluster.KMedians,
        ht.cluster.KMedoids,
        ht.cluster.BatchParallelKMeans,
        ht.cluster.BatchParallelKMedians,
    ):
        name = Estimator.__name__
        with pytest.raises(TypeError, match=rf"^{name}\.__init__\(\) got an unexpected keyword"):
            Estimator(2, n_jobs=4)
        # the parameters stay those of the signature (scikit-learn's get_params / clone)
        params = Estimator(2, n_init=3, verbose=1).get_params()
        assert params["n_init"] == 3 and params["verbose"] == 1 and "n_jobs" not in params
    KMeans = ht.cluster.KMeans
    assert_raises_then_collective_works(ValueError, KMeans(2, n_init=0).fit, x)
    assert_raises_then_collective_works(ValueError, KMeans(2, n_init="many").fit, x)
    assert_raises_then_collective_works(TypeError, KMeans(2, n_init=2.0).fit, x)
    assert_raises_then_collective_works(TypeError, KMeans(2, n_init=True).fit, x)
    assert_raises_then_collective_works(TypeError, KMeans(2, verbose="yes").fit, x)
    assert_raises_then_collective_works(ValueError, KMeans(2, verbose=-1).fit, x)


@pytest.mark.parametrize("split", SPLITS)
def test_fit_oversampling_and_iter_multiplier(blobs, split, monkeypatch):
    from heat.cluster import _kcluster

    data, truth, _ = blobs(150, 2, 3, spread=0.5, separation=10.0, seed=31)
    x = ht.array(data, split=split)
    # HeAT's rounds: ceil(iter_multiplier * log(initial cost)), the cost of the first centre
    seen = []
    rounds = _kcluster._parallel_rounds
    monkeypatch.setattr(
        _kcluster, "_parallel_rounds", lambda c, m: seen.append((c, m, rounds(c, m))) or seen[-1][2]
    )
    model = ht.cluster.KMeans(3, init="k-means||", random_state=5)
    model.fit(x, oversampling=4, iter_multiplier=0.5)
    cost, multiplier, count = seen[-1]
    assert multiplier == 0.5 and cost > 0 and count == max(1, int(np.ceil(0.5 * np.log(cost))))
    collective_assert(adjusted_rand_score(truth, model.labels_.numpy()) > 0.99)
    # an oversampling so large that every point is a candidate after the first round
    candidates = []
    local_plus_plus = _kcluster._local_plus_plus
    monkeypatch.setattr(
        _kcluster,
        "_local_plus_plus",
        lambda points, *a: candidates.append(len(points)) or local_plus_plus(points, *a),
    )
    ht.cluster.KMeans(3, init="k-means||", random_state=5).fit(x, oversampling=1e12)
    assert candidates[-1] == len(data)
    ht.cluster.KMeans(3, init="k-means||", random_state=5).fit(x)
    assert candidates[-1] < len(data)  # the default: 2k per round, 5 rounds
    # HeAT's probability-based names seed by k-means|| once a parameter is given
    for name in ("probability_based", "kmeans++"):
        heat_name = ht.cluster.KMeans(3, init=name, random_state=6)
        heat_name.fit(x, oversampling=4, iter_multiplier=1)
        parallel = ht.cluster.KMeans(3, init="k-means||", random_state=6)
        parallel.fit(x, oversampling=4, iter_multiplier=1)
        assert np.array_equal(heat_name.cluster_centers_.numpy(), parallel.cluster_centers_.numpy())
    medians = ht.cluster.KMedians(3, init="kmedians++", random_state=6)
    medians.fit(x, oversampling=1e12)
    assert candidates[-1] == len(data)


def test_fit_seeding_parameters_warn_or_raise(blobs):
    data, _, _ = blobs(30, 2, 2, seed=32)
    x = ht.array(data, split=0)
    for init in ("random", "k-means++", data[:2]):
        with pytest.warns(UserWarning, match="oversampling=3 has no effect"):
            ht.cluster.KMeans(2, init=init, random_state=0).fit(x, oversampling=3)
        with pytest.warns(UserWarning, match="iter_multiplier=2 has no effect"):
            ht.cluster.KMeans(2, init=init, random_state=0).fit(x, iter_multiplier=2)
    KMeans = ht.cluster.KMeans
    assert_raises_then_collective_works(ValueError, KMeans(2).fit, x, oversampling=0)
    assert_raises_then_collective_works(ValueError, KMeans(2).fit, x, iter_multiplier=-1.0)
    assert_raises_then_collective_works(ValueError, KMeans(2).fit, x, oversampling=float("inf"))
    assert_raises_then_collective_works(TypeError, KMeans(2).fit, x, oversampling="many")
    assert_raises_then_collective_works(TypeError, KMeans(2).fit, x, iter_multiplier=True)
