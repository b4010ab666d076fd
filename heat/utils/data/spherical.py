"""
Clustered test data with known centres: points in balls around fixed centres (for clustering
tests and examples). The data are generated from ``random_state`` alone, so they are the same
whatever the number of processes; each process keeps only its block.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

import heat as ht

__all__ = ["create_spherical_dataset", "create_clusters", "spherical_centres"]


def _count(value: Any, name: str, low: int = 1) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def _real(value: Any, name: str, positive: bool = False) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    if positive and not value > 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return float(value)


def spherical_centres(offset: float = 4.0) -> np.ndarray:
    """
    The four cluster centres of :func:`create_spherical_dataset`, in the order of the clusters.

    Examples
    --------
    >>> ht.utils.data.spherical.spherical_centres(1.0)[0]
    array([1., 1., 1.])
    """
    o = _real(offset, "offset")
    return np.array([[o, o, o], [-o, -o, -o], [o, -o, o], [-o, o, -o]])


def create_spherical_dataset(
    num_samples_cluster: int,
    radius: float = 1.0,
    offset: float = 4.0,
    dtype=ht.float32,
    random_state: int = 1,
    split: Optional[int] = 0,
    device=None,
    comm=None,
) -> ht.DNDarray:
    """
    Four clusters of ``num_samples_cluster`` points each in 3-D, uniformly distributed in balls of
    ``radius`` around the centres :func:`spherical_centres` ``(offset)`` (cluster k is rows
    ``k*n .. (k+1)*n-1``). With ``offset > radius`` the clusters are disjoint, so the mean of each
    block is close to its centre and a clustering finds them exactly.

    Parameters
    ----------
    num_samples_cluster : int
        Points per cluster.
    radius : float
        Radius of the balls (> 0).
    offset : float
        Coordinates of the centres are ``+-offset``.
    dtype : heat type
    random_state : int
        Seed; the data do not depend on the number of processes.
    split : int or None
    device, comm
        As for heat's factories.

    Returns
    -------
    DNDarray
        Shape ``(4 * num_samples_cluster, 3)``.

    Examples
    --------
    >>> x = ht.utils.data.spherical.create_spherical_dataset(100, radius=1.0, offset=4.0)
    >>> x.shape
    (400, 3)
    """
    n = _count(num_samples_cluster, "num_samples_cluster")
    r = _real(radius, "radius", positive=True)
    centres = spherical_centres(offset)
    _count(random_state, "random_state", 0)
    rng = np.random.default_rng(random_state)
    # uniform in a ball: a uniform direction, and a radius with density ~ t^2 (the cube root)
    directions = rng.standard_normal((4 * n, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    lengths = r * np.cbrt(rng.random((4 * n, 1)))
    data = np.repeat(centres, n, axis=0) + directions * lengths
    return ht.array(data, dtype=dtype, split=split, device=device, comm=comm)


def create_clusters(
    n_samples: int,
    n_features: int,
    n_clusters: int,
    cluster_mean: Any,
    cluster_std: Any,
    cluster_weight: Any = None,
    device=None,
    random_state: Optional[int] = None,
    split: Optional[int] = 0,
    comm=None,
) -> ht.DNDarray:
    """
    Gaussian clusters: ``n_samples`` points, cluster k with mean ``cluster_mean[k]`` and standard
    deviation ``cluster_std`` (a number, or one per cluster), sizes in proportion to
    ``cluster_weight`` (default equal), in cluster order.

    Examples
    --------
    >>> x = ht.utils.data.spherical.create_clusters(100, 2, 2, [[0, 0], [9, 9]], 0.5, random_state=0)
    >>> x.shape
    (100, 2)
    """
    n = _count(n_samples, "n_samples")
    f = _count(n_features, "n_features")
    k = _count(n_clusters, "n_clusters")
    means = np.asarray(cluster_mean, dtype=np.float64)
    if means.shape != (k, f):
        raise ValueError(f"cluster_mean must have shape ({k}, {f}), got {means.shape}")
    stds = np.asarray(cluster_std, dtype=np.float64)
    if stds.ndim == 0:
        stds = np.full((k, 1), float(stds))
    elif stds.shape == (k,):
        stds = stds.reshape(k, 1)
    else:
        raise ValueError(f"cluster_std must be a number or hold {k} values, got shape {stds.shape}")
    if (stds < 0).any():
        raise ValueError("cluster_std must be >= 0")
    weights = np.ones(k) if cluster_weight is None else np.asarray(cluster_weight, dtype=np.float64)
    if weights.shape != (k,) or (weights < 0).any() or weights.sum() <= 0:
        raise ValueError(f"cluster_weight must hold {k} non-negative weights, not all zero")
    sizes = np.floor(weights / weights.sum() * n).astype(np.int64)
    sizes[: n - sizes.sum()] += 1  # the rest, one each to the first clusters
    rng = np.random.default_rng(random_state)
    labels = np.repeat(np.arange(k), sizes)
    data = means[labels] + stds[labels] * rng.standard_normal((n, f))
    return ht.array(data, dtype=ht.float32, split=split, device=device, comm=comm)
