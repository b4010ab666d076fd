"""
k-medians clustering of distributed samples: Manhattan distances, per-cluster medians.
"""

from __future__ import annotations

from typing import Tuple

import torch

import heat as ht

from . import _kernels
from ._kcluster import _INIT_NAMES, _MEDIANS_NAMES, _KCluster, _labels_array

__all__ = ["KMedians"]


def _cluster_medians(x, labels: torch.Tensor, counts: torch.Tensor, centres: torch.Tensor):
    """
    The per-feature median of every cluster's samples (NumPy's median: the mean of the two
    middle values for even counts), replicated; an empty cluster keeps its centre. Collective
    per cluster when the rows are split (:func:`heat.median` of the cluster's rows).
    """
    block = x.larray
    distributed = x.split == 0 and x.comm.size > 1
    medians = centres.clone()
    for cluster in range(centres.shape[0]):
        if counts[cluster] == 0:  # the same on every process
            continue
        members = ht.array(
            block[labels == cluster],
            is_split=0 if distributed else None,
            comm=x.comm,
            copy=None,
            device=x.device,
        )
        median = ht.median(members, axis=0)
        if median.split is not None:
            median = ht.resplit(median, None)
        medians[cluster] = median.larray.to(centres.dtype)
    return medians


def _cluster_counts(x, labels: torch.Tensor, k: int) -> torch.Tensor:
    """Samples per cluster (int64, global): one allreduce if the rows are split."""
    counts = torch.bincount(labels, minlength=k)
    if x.split == 0 and x.comm.size > 1:
        counts = x.comm.allreduce_tensor(counts)
    return counts


class KMedians(_KCluster):
    """
    k-medians clustering: ``n_clusters`` centres that minimize the sum of Manhattan (L1)
    distances of the samples to their nearest centre. Every iteration assigns each sample to
    its nearest centre in L1 distance, then moves every centre to the per-feature median of its
    samples. Less sensitive to outliers than :class:`KMeans`.

    Parameters
    ----------
    n_clusters : int
        The number of clusters, at most the number of samples.
    init : {"k-means++", "random", "k-means||"} or array of shape (n_clusters, n_features)
        As in :class:`KMeans`, with the L1 distance as the cost that the seeding samples by.
        "k-medians++" and HeAT's "kmedians++" are names of the same ++ seeding (for HeAT's
        k-means|| meaning of "kmedians++" see ``oversampling`` in :meth:`fit`).
    max_iter : int
        Maximum number of iterations.
    tol : float
        As in :class:`KMeans`: the squared movement of the centres relative to the mean
        feature variance; negative: exactly ``max_iter`` iterations.
    random_state : int, optional
        Seed of the initialization.
    n_init : int or "auto"
        Number of initializations; the fit of the lowest inertia stays. As in :class:`KMeans`.
    verbose : int
        Progress printed by rank 0, as in :class:`KMeans`.

    Attributes
    ----------
    cluster_centers_ : DNDarray
        ``(n_clusters, n_features)`` centres (medians), replicated.
    labels_ : DNDarray
        int64 index of the nearest centre of every sample, split along the rows like the data.
    inertia_ : float
        Sum of the L1 distances of the samples to their nearest centre.
    n_iter_ : int
        Iterations run.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[1.0, 2.0], [1.0, 4.0], [1.0, 0.0], [10.0, 2.0], [10.0, 4.0], [10.0, 0.0]],
    ...              split=0)
    >>> ht.cluster.KMedians(n_clusters=2, random_state=0).fit(x).cluster_centers_
    DNDarray([[10.,  2.],
              [ 1.,  2.]], dtype=ht.float32, device=cpu:0, split=None)
    """

    _init_names = _INIT_NAMES + _MEDIANS_NAMES

    def _cost(self, rows: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
        return torch.cdist(rows, centres, p=1.0)

    def _update(self, x, labels: torch.Tensor, counts: torch.Tensor, centres: torch.Tensor):
        return _cluster_medians(x, labels, counts, centres)

    def _iterate(
        self, x, block: torch.Tensor, centres: torch.Tensor, shift: torch.Tensor
    ) -> Tuple[torch.Tensor, int]:
        for iteration in range(1, self.max_iter + 1):
            labels, _ = _kernels.nearest_manhattan(block, centres)
            counts = _cluster_counts(x, labels, self.n_clusters)
            updated = self._update(x, labels, counts, centres)
            if self._converged(updated, centres):
                return updated, iteration
            centres = updated
        return centres, self.max_iter

    def _labels_inertia(self, x, block: torch.Tensor, centres: torch.Tensor, shift: torch.Tensor):
        labels, distances = _kernels.nearest_manhattan(block, centres)
        inertia = float(distances.sum())
        if x.split == 0 and x.comm.size > 1:
            inertia = x.comm.allreduce(inertia)
        return _labels_array(x, labels), inertia
