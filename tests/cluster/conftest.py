"""Synthetic clustered data for the tests of heat/cluster (identical on every process)."""

import numpy as np
import pytest


def make_blobs(
    n_samples, n_features, n_clusters, spread=1.0, separation=10.0, seed=0, dtype=np.float64
):
    """
    Gaussian blobs around centres drawn uniformly from ``[-separation, separation]^f``: the
    samples, their true cluster and the centres. The same on every process (a fixed seed).
    """
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-separation, separation, size=(n_clusters, n_features))
    truth = np.arange(n_samples) % n_clusters
    rng.shuffle(truth)
    samples = centres[truth] + rng.normal(scale=spread, size=(n_samples, n_features))
    return samples.astype(dtype), truth, centres


@pytest.fixture
def blobs():
    return make_blobs
