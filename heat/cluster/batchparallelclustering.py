"""
Batch-parallel k-clustering: every process clusters its own samples, without communication,
and the local centres of all processes (weighted by their cluster sizes) are clustered once
more into the final centres. Two collectives in all, so it scales to many processes where the
per-iteration allreduce of :class:`~heat.cluster.KMeans` would dominate; the result
approximates the global clustering (it is exact in the limit of well-separated clusters).
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import torch

import heat as ht
from heat.core.sanitation import check_int

from . import _kernels
from ._kcluster import _column_moments, _local_lloyd, _local_plus_plus
from .kmeans import KMeans
from .kmedians import KMedians

__all__ = ["BatchParallelKMeans", "BatchParallelKMedians"]


class _BatchParallel:
    """``fit`` of the batch-parallel estimators; the rest comes from KMeans / KMedians."""

    def __init__(
        self,
        n_clusters: int = 8,
        init="k-means++",
        max_iter: int = 300,
        tol: float = 1e-4,
        random_state: Optional[int] = None,
        n_init=1,
        verbose: int = 0,
        n_procs_to_merge: Optional[int] = None,
    ):
        super().__init__(
            n_clusters=n_clusters,
            init=init,
            max_iter=max_iter,
            tol=tol,
            random_state=random_state,
            n_init=n_init,
            verbose=verbose,
        )
        self.n_procs_to_merge = n_procs_to_merge

    def _check_params(self) -> None:
        super()._check_params()
        check_int(self.n_procs_to_merge, "n_procs_to_merge", 2, allow_none=True)

    def fit(self, x, y=None):
        """
        Cluster every process's samples locally, then the local centres. Collective.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``, split along the rows (split along the
            features is redistributed first; not split: every process holds all samples and
            the local clustering is the whole clustering).
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        TypeError, ValueError
            As :meth:`heat.cluster.KMeans.fit`.
        """
        x = self._check_fit_data(x)
        with self._threads():
            return self._fit_runs(x)

    # the local iterations are each process's own: verbose reports each initialization only
    _global_iterations = False

    def _fit(self, x, seed: int):
        comm = x.comm
        distributed = x.split == 0 and comm.size > 1
        shift, mean_variance = _column_moments(x)  # raises for NaN or infinity
        self._tolerance = self.tol * mean_variance
        block = x.larray
        local_rng = np.random.default_rng([seed, comm.rank if distributed else 0])
        local_k = min(self.n_clusters, block.shape[0])
        if local_k:
            centres = self._local_initial(block, local_k, local_rng)
            centres, weights, n_iter = self._local_fit(block, centres, None, shift)
        else:
            centres = block.new_empty((0, x.shape[1]))
            weights, n_iter = block.new_empty(0, dtype=torch.float64), 0
        per_process = [len(centres)]
        if distributed:  # the local centres and their sizes to every process
            if self.n_procs_to_merge is not None and self.n_procs_to_merge < comm.size:
                per_process = comm.allgather(len(centres))
            centres = comm.allgather_tensors(centres, axis=0)
            weights = comm.allgather_tensors(weights, axis=0)
            n_iter = comm.allreduce(n_iter, op=ht.MPI.MAX)
        # the merge: identical on every process (same candidates, same random stream)
        rng = np.random.default_rng(seed)
        weights = weights.to(block.dtype)
        if len(per_process) > 1:
            centres, weights = self._merge_levels(x, centres, weights, per_process, rng, shift)
        keep = weights > 0
        centres, weights = centres[keep], weights[keep]
        merged = self._merge_start(x, centres, weights, rng, shift)
        merged, _, _ = self._local_fit(centres, merged, weights, shift)
        local = self._local_data(x, for_fit=False)
        labels, inertia = self._labels_inertia(x, local, merged, shift)
        self._shift = shift
        self.cluster_centers_ = ht.array(merged, comm=comm, device=x.device)
        self.labels_ = labels
        self.inertia_ = inertia
        self.n_iter_ = n_iter
        self.n_features_in_ = x.shape[1]
        return self

    def _merge_start(self, x, centres, weights, rng, shift) -> torch.Tensor:
        """The first centres of a merge: weighted k-means++ of ``centres``, or the given ones."""
        if isinstance(self.init, str):
            return _local_plus_plus(centres, weights, self.n_clusters, rng, self._cost)
        return self._initial_centres(x, rng, shift)

    def _merge_levels(self, x, centres, weights, per_process, rng, shift):
        """
        HeAT's hierarchical merge (``n_procs_to_merge`` processes at a time): the local centres
        of every group of ``n_procs_to_merge`` consecutive processes are clustered into at most
        ``n_clusters`` centres (weighted by the cluster sizes, which the merged centres carry
        on), level by level, until one group is left, which the final merge then clusters.
        Every process computes every level on the gathered centres, so the levels cost no
        communication; the result is that of HeAT's tree of gathers.
        """
        group = self.n_procs_to_merge
        sets = list(zip(torch.split(centres, per_process), torch.split(weights, per_process)))
        while len(sets) > group:
            merged_sets = []
            for start in range(0, len(sets), group):
                points = torch.cat([points for points, _ in sets[start : start + group]])
                sizes = torch.cat([sizes for _, sizes in sets[start : start + group]])
                keep = sizes > 0
                points, sizes = points[keep], sizes[keep]
                if len(points) > self.n_clusters:
                    first = self._merge_start(x, points, sizes, rng, shift)
                    points, sizes, _ = self._local_fit(points, first, sizes, shift)
                    sizes = sizes.to(weights.dtype)
                merged_sets.append((points, sizes))
            sets = merged_sets
        return torch.cat([points for points, _ in sets]), torch.cat([sizes for _, sizes in sets])

    def _local_initial(self, block: torch.Tensor, k: int, rng: np.random.Generator) -> torch.Tensor:
        """Initial centres of one process's own samples."""
        if not isinstance(self.init, str) and k == self.n_clusters:
            given = self.init
            given = given.larray if hasattr(given, "larray") else torch.as_tensor(np.asarray(given))
            return given.to(device=block.device, dtype=block.dtype).clone()
        if not isinstance(self.init, str) or self.init == "random":
            return block[torch.as_tensor(rng.choice(block.shape[0], size=k, replace=False))].clone()
        ones = block.new_ones(block.shape[0])
        return _local_plus_plus(block, ones, k, rng, self._cost)


class BatchParallelKMeans(_BatchParallel, KMeans):
    """
    Batch-parallel k-means: k-means on every process's samples, then a weighted k-means of all
    local centres (weighted by their cluster sizes). Two collectives in all.

    Parameters
    ----------
    n_clusters : int
        The number of clusters, at most the number of samples.
    init : {"k-means++", "random", "k-means||"} or array of shape (n_clusters, n_features)
        The local initialization on every process ("k-means||" is k-means++ locally; given
        centres start every local clustering and the merge). The merge starts from a weighted
        k-means++ of the local centres.
    max_iter : int
        Maximum number of iterations, locally and in the merge.
    tol : float
        As in :class:`KMeans`.
    random_state : int, optional
        Seed; every process derives its own local stream from it.
    n_init : int or "auto"
        Number of initializations of the whole fit (local clusterings and merge); the one of
        the lowest inertia stays. As in :class:`KMeans`.
    verbose : int
        With 1 or more, rank 0 prints each initialization (iterations, inertia, seconds).
    n_procs_to_merge : int, optional
        HeAT's hierarchical merge: the local centres of every ``n_procs_to_merge`` (>= 2)
        consecutive processes are clustered into ``n_clusters`` weighted centres, level by
        level, until the centres of at most ``n_procs_to_merge`` groups are left for the final
        merge. None (default): all processes' centres are merged at once. Every process
        computes the levels on the gathered centres (no extra communication), e.g.
        ``BatchParallelKMeans(n_clusters=3, n_procs_to_merge=2)``.

    Attributes
    ----------
    cluster_centers_ : DNDarray
        ``(n_clusters, n_features)`` centres, replicated.
    labels_ : DNDarray
        int64 index of the nearest centre of every sample, split along the rows like the data.
    inertia_ : float
        Sum of squared distances of the samples to their nearest centre.
    n_iter_ : int
        The largest number of local iterations of any process.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[1.0, 2.0], [1.0, 4.0], [1.0, 0.0], [10.0, 2.0], [10.0, 4.0], [10.0, 0.0]],
    ...              split=0)
    >>> ht.cluster.BatchParallelKMeans(n_clusters=2, random_state=0).fit(x).cluster_centers_
    DNDarray([[ 1.,  2.],
              [10.,  2.]], dtype=ht.float32, device=cpu:0, split=None)
    """

    def _local_fit(
        self, points: torch.Tensor, centres: torch.Tensor, weights, shift: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor, int]:
        """Local (weighted) Lloyd iterations; the centres, their cluster sizes, iterations."""
        tolerance = self._tolerance if self.tol >= 0 else -1.0
        centres, n_iter = _local_lloyd(points, centres, weights, shift, self.max_iter, tolerance)
        _, sizes = _kernels.sums_and_counts(_kernels.with_ones(points), centres, shift, weights)
        return centres, sizes, n_iter


def _weighted_medians(points: torch.Tensor, weights: Optional[torch.Tensor]) -> torch.Tensor:
    """Per-feature median of ``points`` (NumPy's for no weights; the lower weighted median)."""
    if weights is None:
        return torch.from_numpy(np.median(points.cpu().numpy(), axis=0)).to(points)
    values, order = torch.sort(points, dim=0)
    cumulative = torch.cumsum(weights.double()[order], dim=0)
    half = cumulative[-1] / 2
    position = torch.searchsorted(cumulative.T.contiguous(), half.unsqueeze(1)).squeeze(1)
    position = position.clamp_(max=points.shape[0] - 1)
    return values.gather(0, position.unsqueeze(0)).squeeze(0)


class BatchParallelKMedians(_BatchParallel, KMedians):
    """
    Batch-parallel k-medians: k-medians on every process's samples, then a weighted k-medians of
    all local centres (weighted by their cluster sizes). Two collectives in all.

    Parameters
    ----------
    n_clusters : int
        The number of clusters, at most the number of samples.
    init : {"k-means++", "random", "k-means||"} or array of shape (n_clusters, n_features)
        As in :class:`BatchParallelKMeans`, with L1 costs.
    max_iter : int
        Maximum number of iterations, locally and in the merge.
    tol : float
        As in :class:`KMeans`.
    random_state : int, optional
        Seed; every process derives its own local stream from it.
    n_init : int or "auto"
        Number of initializations of the whole fit (local clusterings and merge); the one of
        the lowest inertia stays. As in :class:`KMeans`.
    verbose : int
        With 1 or more, rank 0 prints each initialization (iterations, inertia, seconds).
    n_procs_to_merge : int, optional
        HeAT's hierarchical merge: the local centres of every ``n_procs_to_merge`` (>= 2)
        consecutive processes are clustered into ``n_clusters`` weighted centres, level by
        level, until the centres of at most ``n_procs_to_merge`` groups are left for the final
        merge. None (default): all processes' centres are merged at once. Every process
        computes the levels on the gathered centres (no extra communication), e.g.
        ``BatchParallelKMeans(n_clusters=3, n_procs_to_merge=2)``.

    Attributes
    ----------
    cluster_centers_ : DNDarray
        ``(n_clusters, n_features)`` centres, replicated.
    labels_ : DNDarray
        int64 index of the nearest centre (L1) of every sample, split along the rows like the data.
    inertia_ : float
        Sum of the L1 distances of the samples to their nearest centre.
    n_iter_ : int
        The largest number of local iterations of any process.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[1.0, 2.0], [1.0, 4.0], [1.0, 0.0], [10.0, 2.0], [10.0, 4.0], [10.0, 0.0]],
    ...              split=0)
    >>> ht.cluster.BatchParallelKMedians(n_clusters=2, random_state=0).fit(x).cluster_centers_
    DNDarray([[ 1.,  2.],
              [10.,  2.]], dtype=ht.float32, device=cpu:0, split=None)
    """

    def _local_fit(
        self, points: torch.Tensor, centres: torch.Tensor, weights, shift: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor, int]:
        """Local (weighted) k-medians iterations; the centres, their cluster sizes, iterations."""
        weights_or_ones = weights if weights is not None else points.new_ones(points.shape[0])
        n_iter = self.max_iter
        for iteration in range(1, self.max_iter + 1):
            labels, _ = _kernels.nearest_manhattan(points, centres)
            updated = centres.clone()
            for cluster in range(centres.shape[0]):
                members = labels == cluster
                if members.any():
                    member_weights = None if weights is None else weights[members]
                    updated[cluster] = _weighted_medians(points[members], member_weights)
            if self._converged(updated, centres):
                centres, n_iter = updated, iteration
                break
            centres = updated
        labels, _ = _kernels.nearest_manhattan(points, centres)
        sizes = torch.zeros(centres.shape[0], dtype=torch.float64, device=points.device)
        sizes.index_add_(0, labels, weights_or_ones.double())
        return centres, sizes, n_iter
