"""
k-means clustering (Lloyd's algorithm) of distributed samples.
"""

from __future__ import annotations

from typing import Tuple

import torch

from . import _kernels
from ._kcluster import _KCluster, _labels_array, _new_centres

__all__ = ["KMeans"]


class KMeans(_KCluster):
    """
    k-means clustering: ``n_clusters`` centres that minimize the sum of squared euclidean
    distances of the samples to their nearest centre (the inertia), found by Lloyd's
    iterations, as :class:`sklearn.cluster.KMeans` with ``algorithm="lloyd"``.

    Every iteration is one pass over the local rows, fusing the distances (one matrix product
    with the centres), the nearest centre and the per-cluster sums and counts, followed by ONE
    allreduce of the sums and counts; the centres are replicated. From the same initial centres
    it computes the same centres as scikit-learn.

    Parameters
    ----------
    n_clusters : int
        The number of clusters, at most the number of samples.
    init : {"k-means++", "random", "k-means||"} or array of shape (n_clusters, n_features)
        The initial centres: "k-means++" (alias "kmeans++", "probability_based"; greedy
        k-means++ as scikit-learn's, one round of collectives per centre), "random" (distinct
        samples drawn uniformly), "k-means||" (alias "batchparallel"; the parallel seeding of
        Bahmani et al.: a few rounds of independent sampling on every process, then a weighted
        k-means++ of the gathered candidates; few collectives for any k), or the centres
        themselves (DNDarray of any split, NumPy array or tensor).
    max_iter : int
        Maximum number of iterations.
    tol : float
        Convergence threshold on the squared movement of the centres in one iteration, relative
        to the mean variance of the features (as scikit-learn). The iterations also stop when
        the centres no longer change at all. A negative ``tol`` runs exactly ``max_iter``
        iterations.
    random_state : int, optional
        Seed of the initialization; None draws one (the same on every process).
    n_init : int or "auto"
        Number of initializations, as in scikit-learn: the fit runs from each and keeps the
        one of the lowest inertia. The first run is the fit of ``n_init=1``, so more
        initializations never end with a higher inertia. "auto": 10 for ``init="random"``,
        else 1.
        Given centres are one initialization only (a RuntimeWarning says so for n_init > 1).
        Default 1 (scikit-learn's default is "auto").
    verbose : int
        With 1 or more, rank 0 prints the progress of the fit: each initialization and each
        iteration (the squared movement of the centres, and the seconds so far).

    Attributes
    ----------
    cluster_centers_ : DNDarray
        ``(n_clusters, n_features)`` centres, replicated on every process.
    labels_ : DNDarray
        int64 index of the nearest centre of every sample, split along the rows like the data.
    inertia_ : float
        Sum of squared distances of the samples to their nearest centre.
    n_iter_ : int
        Iterations run.
    n_features_in_ : int
        Number of features.

    Notes
    -----
    An empty cluster keeps its centre (scikit-learn moves it to a far-away sample).

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[1.0, 2.0], [1.0, 4.0], [1.0, 0.0], [10.0, 2.0], [10.0, 4.0], [10.0, 0.0]],
    ...              split=0)
    >>> kmeans = ht.cluster.KMeans(n_clusters=2, random_state=0).fit(x)
    >>> kmeans.cluster_centers_
    DNDarray([[10.,  2.],
              [ 1.,  2.]], dtype=ht.float32, device=cpu:0, split=None)
    >>> kmeans.predict(ht.array([[0.0, 0.0], [12.0, 3.0]]))
    DNDarray([1, 0], dtype=ht.int64, device=cpu:0, split=None)
    """

    _threaded_kernels = True

    def _cost(self, rows: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
        return _kernels.squared_distances(rows, centres)

    def _local_data(self, x, for_fit: bool) -> torch.Tensor:
        # the points as columns: the kernels' matrix products then read memory contiguously.
        # fit passes over them many times and copies them once, with a row of ones that
        # counts the points in the product that sums them (scikit-learn copies its data once
        # too, to center it); predict passes over them once, as a view
        return _kernels.with_ones(x.larray) if for_fit else x.larray.T

    def _iterate(
        self, x, columns: torch.Tensor, centres: torch.Tensor, shift: torch.Tensor
    ) -> Tuple[torch.Tensor, int]:
        comm = x.comm
        distributed = x.split == 0 and comm.size > 1
        k, features = centres.shape
        for iteration in range(1, self.max_iter + 1):
            sums, counts = _kernels.sums_and_counts(columns, centres, shift)
            if distributed:  # the one collective of the iteration
                packed = comm.allreduce_tensor(torch.cat([sums.flatten(), counts]))
                sums, counts = packed[: k * features].view(k, features), packed[k * features :]
            updated = _new_centres(sums, counts, centres)
            if self._converged(updated, centres):
                return updated, iteration
            centres = updated
        return centres, self.max_iter

    def _labels_inertia(self, x, columns: torch.Tensor, centres: torch.Tensor, shift: torch.Tensor):
        labels, inertia = _kernels.labels_and_inertia(columns, centres, shift)
        if x.split == 0 and x.comm.size > 1:
            inertia = x.comm.allreduce(inertia)
        return _labels_array(x, labels), inertia
