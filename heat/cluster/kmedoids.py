"""
k-medoids clustering of distributed samples: centres that are samples themselves.
"""

from __future__ import annotations

import math

import torch

from ._kcluster import _INIT_NAMES, _MEDIANS_NAMES, _MEDOIDS_NAMES
from .kmedians import KMedians, _cluster_medians

__all__ = ["KMedoids"]


class KMedoids(KMedians):
    """
    k-medoids clustering: ``n_clusters`` centres that are samples of the data (medoids), with
    Manhattan (L1) distances. Every iteration assigns each sample to its nearest medoid, computes
    the per-feature median of every cluster and moves the cluster's medoid to the sample of the
    cluster nearest to that median (the median-based update of heat's KMedoids, one pass over
    the data per iteration, instead of the quadratic search of PAM).

    Parameters
    ----------
    n_clusters : int
        The number of clusters, at most the number of samples.
    init : {"k-means++", "random", "k-means||"} or array of shape (n_clusters, n_features)
        As in :class:`KMedians`. Given centres need not be samples; after the first iteration
        they are. "k-medoids++" and HeAT's "kmedoids++" are names of the ++ seeding with the
        L1 distance (as "k-medians++").
    max_iter : int
        Maximum number of iterations.
    tol : float
        As in :class:`KMeans`; negative: exactly ``max_iter`` iterations.
    random_state : int, optional
        Seed of the initialization.
    n_init : int or "auto"
        Number of initializations; the fit of the lowest inertia stays. As in :class:`KMeans`.
    verbose : int
        Progress printed by rank 0, as in :class:`KMeans`.

    Attributes
    ----------
    cluster_centers_ : DNDarray
        ``(n_clusters, n_features)`` medoids, replicated.
    labels_ : DNDarray
        int64 index of the nearest medoid of every sample, split along the rows like the data.
    inertia_ : float
        Sum of the L1 distances of the samples to their nearest medoid.
    n_iter_ : int
        Iterations run.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[1.0, 2.0], [1.0, 4.0], [1.0, 0.0], [10.0, 2.0], [10.0, 4.0], [10.0, 0.0]],
    ...              split=0)
    >>> ht.cluster.KMedoids(n_clusters=2, random_state=0).fit(x).cluster_centers_
    DNDarray([[10.,  2.],
              [ 1.,  2.]], dtype=ht.float32, device=cpu:0, split=None)
    """

    _init_names = _INIT_NAMES + _MEDIANS_NAMES + _MEDOIDS_NAMES

    def _update(self, x, labels: torch.Tensor, counts: torch.Tensor, centres: torch.Tensor):
        medians = _cluster_medians(x, labels, counts, centres)
        block = x.larray
        # every process proposes its sample nearest to each cluster's median: (distance, row)
        proposals = torch.full(
            (centres.shape[0], 1 + centres.shape[1]),
            math.inf,
            dtype=torch.float64,
            device=block.device,
        )
        for cluster in range(centres.shape[0]):
            members = block[labels == cluster]
            if len(members):
                distances = (members - medians[cluster]).abs().sum(1, dtype=torch.float64)
                nearest = int(torch.argmin(distances))
                proposals[cluster, 0] = distances[nearest]
                proposals[cluster, 1:] = members[nearest].double()
        if x.split == 0 and x.comm.size > 1:
            proposals = x.comm.allgather_tensors(proposals.unsqueeze(0), axis=0)
        else:
            proposals = proposals.unsqueeze(0)
        winners = torch.argmin(proposals[:, :, 0], dim=0)  # the first process on ties
        medoids = proposals[winners, torch.arange(centres.shape[0]), 1:].to(centres.dtype)
        empty = counts == 0
        medoids[empty] = centres[empty]
        return medoids
