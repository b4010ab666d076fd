"""
Tests of heat/cluster/spectral.py: two concentric rings (not separable by k-means) are found,
as by scikit-learn's SpectralClustering, with the exact and the Lanczos eigenvectors.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import assert_raises_then_collective_works, collective_assert

sklearn_cluster = pytest.importorskip("sklearn.cluster")
from sklearn.metrics import adjusted_rand_score  # noqa: E402


def rings(points=60):
    angles = np.linspace(0, 2 * np.pi, points, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return np.concatenate([ring, 4 * ring]), np.repeat([0, 1], points)


@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("n_lanczos", [300, 40], ids=["exact", "lanczos"])
def test_two_rings(split, n_lanczos):
    data, truth = rings()
    reference = sklearn_cluster.SpectralClustering(2, gamma=2.0, random_state=0).fit(data)
    assert adjusted_rand_score(truth, reference.labels_) == 1.0
    model = ht.cluster.Spectral(n_clusters=2, gamma=2.0, n_lanczos=n_lanczos, random_state=0)
    labels = model.fit_predict(ht.array(data, split=split))
    collective_assert(adjusted_rand_score(truth, labels.numpy()) == 1.0, "rings not separated")
    assert model.n_clusters_ == 2 and model.embedding_.shape == (120, 2)
    values = model.eigenvalues_.numpy()
    # the normalized Laplacian of a graph with two (nearly) separate parts: two ~0 eigenvalues
    assert values[0] < 1e-8 and values[1] < 1e-6 and values[2] > 1e-3
    assert np.all(np.diff(values) >= -1e-10)
    # k-means alone cannot separate them
    kmeans = ht.cluster.KMeans(2, random_state=0).fit(ht.array(data, split=split))
    collective_assert(
        adjusted_rand_score(truth, kmeans.labels_.numpy()) < 0.5, "k-means found rings"
    )


def test_epsilon_neighbourhood_graph():
    data, truth = rings(40)
    for metric, threshold, boundary in (("euclidean", 1.0, "upper"), ("rbf", 0.3, "lower")):
        model = ht.cluster.Spectral(
            n_clusters=2,
            metric=metric,
            laplacian="eNeighbour",
            threshold=threshold,
            boundary=boundary,
            gamma=1.0,
            random_state=0,
        )
        labels = model.fit_predict(ht.array(data, split=0)).numpy()
        collective_assert(adjusted_rand_score(truth, labels) == 1.0, f"{metric} graph failed")


def test_eigengap_chooses_the_number_of_clusters(blobs):
    # three well-separated blobs: three eigenvalues ~0, then a gap
    data, truth, _ = blobs(90, 2, 3, spread=0.2, separation=10.0, seed=31)
    model = ht.cluster.Spectral(gamma=0.5, random_state=0).fit(ht.array(data, split=0))
    assert model.n_clusters_ == 3
    collective_assert(adjusted_rand_score(truth, model.labels_.numpy()) == 1.0, "blobs missed")


def test_bad_input_raises_on_every_process():
    x = ht.array(rings(10)[0], split=0)
    Spectral = ht.cluster.Spectral
    assert_raises_then_collective_works(ValueError, Spectral(n_clusters=21).fit, x)
    assert_raises_then_collective_works(ValueError, Spectral(gamma=0.0).fit, x)
    assert_raises_then_collective_works(ValueError, Spectral(metric="cosine").fit, x)
    assert_raises_then_collective_works(ValueError, Spectral(laplacian="knn").fit, x)
    assert_raises_then_collective_works(ValueError, Spectral(metric="euclidean").fit, x)
    assert_raises_then_collective_works(TypeError, Spectral(n_clusters=1.5).fit, x)
    assert_raises_then_collective_works(ValueError, Spectral(n_lanczos=0).fit, x)
    bad = rings(10)[0]
    bad[-1, 0] = np.nan
    assert_raises_then_collective_works(ValueError, Spectral(2).fit, ht.array(bad, split=0))


@pytest.mark.parametrize("split", [None, 0])
@pytest.mark.parametrize(
    "solver",
    [
        {"eigen_solver": "lanczos"},
        {"eigen_solver": "lanczos", "lanczos_n_iter": 40},
        {"eigen_solver": "randomized"},
        {"eigen_solver": "randomized", "reigh_rank": 8, "reigh_power_iter": 1},
    ],
    ids=["exact", "lanczos", "randomized", "randomized-small"],
)
def test_eigen_solvers_find_blobs(blobs, split, solver):
    # HeAT's eigen_solver keywords: both solvers separate well-separated blobs (labels compared
    # up to a permutation by the adjusted Rand index)
    data, truth, _ = blobs(120, 2, 4, spread=0.3, separation=10.0, seed=5)
    model = ht.cluster.Spectral(n_clusters=4, gamma=0.5, random_state=0, **solver)
    labels = model.fit_predict(ht.array(data, split=split)).numpy()
    collective_assert(adjusted_rand_score(truth, labels) == 1.0, f"{solver} missed the blobs")
    values = model.eigenvalues_.numpy()
    assert model.n_clusters_ == 4 and np.all(np.diff(values) >= -1e-10)
    # four clusters, four small eigenvalues of the Laplacian before the gap
    assert values[3] < 0.05 < 0.5 < values[4]


def test_randomized_rank_bounds_the_eigengap_choice(blobs):
    data, truth, _ = blobs(90, 2, 3, spread=0.2, separation=10.0, seed=31)
    x = ht.array(data, split=0)
    model = ht.cluster.Spectral(gamma=0.5, eigen_solver="randomized", reigh_rank=6).fit(x)
    assert model.n_clusters_ == 3 and len(model.eigenvalues_) == 6
    collective_assert(adjusted_rand_score(truth, model.labels_.numpy()) == 1.0, "blobs missed")


def test_n_lanczos_is_lanczos_n_iter():
    Spectral = ht.cluster.Spectral
    assert Spectral(n_lanczos=40)._lanczos_steps() == 40
    assert Spectral(lanczos_n_iter=40)._lanczos_steps() == 40
    assert Spectral(n_lanczos=40, lanczos_n_iter=40)._lanczos_steps() == 40
    with pytest.raises(ValueError, match="n_lanczos"):
        Spectral(n_lanczos=40, lanczos_n_iter=50)._lanczos_steps()
    assert "lanczos_n_iter" in Spectral().get_params() and "n_lanczos" in Spectral().get_params()


def test_reigh_parameters_unused_by_lanczos_warn():
    with pytest.warns(UserWarning, match="reigh_rank=20 has no effect"):
        ht.cluster.Spectral(n_clusters=2, reigh_rank=20)._check_params()


def test_bad_eigen_solver_parameters_raise_on_every_process():
    x = ht.array(rings(10)[0], split=0)
    Spectral = ht.cluster.Spectral
    randomized = {"eigen_solver": "randomized"}
    # the rank must hold n_clusters eigenpairs
    assert_raises_then_collective_works(
        ValueError, Spectral(n_clusters=5, reigh_rank=4, **randomized).fit, x
    )
    with pytest.raises(ValueError, match="reigh_rank must be >= n_clusters = 5"):
        Spectral(n_clusters=5, reigh_rank=4, **randomized).fit(x)
    for exception, params, name in (
        (ValueError, {"eigen_solver": "arpack"}, "eigen_solver"),
        (TypeError, {"eigen_solver": 40}, "eigen_solver"),  # heat's old positional n_lanczos
        (ValueError, {"reigh_rank": 0, **randomized}, "reigh_rank"),
        (TypeError, {"reigh_rank": 2.5, **randomized}, "reigh_rank"),
        (ValueError, {"reigh_n_oversamples": -1, **randomized}, "reigh_n_oversamples"),
        (TypeError, {"reigh_power_iter": "1", **randomized}, "reigh_power_iter"),
        (ValueError, {"lanczos_n_iter": 0}, "lanczos_n_iter"),
        (TypeError, {"lanczos_n_iter": 1.0}, "lanczos_n_iter"),
    ):
        with pytest.raises(exception, match=name):
            Spectral(n_clusters=2, **params).fit(x)
    assert_raises_then_collective_works(ValueError, Spectral(lanczos_n_iter=0).fit, x)
