"""
k-nearest-neighbours classification of distributed samples.
"""

from __future__ import annotations

import numbers
from typing import Tuple

import numpy as np
import torch

import heat as ht
from heat.core.base import BaseEstimator, ClassificationMixin, check_is_fitted
from heat.utils.validation import (
    aligned_rows,
    check_n_features,
    encode_labels,
    is_finite,
    rows_like,
    rows_of,
    unique_labels,
    validate_samples,
    validate_targets,
)

from ..core.communication import MPI

__all__ = ["KNeighborsClassifier"]

_METRICS = ("euclidean", "manhattan")
_WEIGHTS = ("uniform", "distance")


class KNeighborsClassifier(ClassificationMixin, BaseEstimator):
    """
    Classification by the vote of the ``n_neighbors`` nearest training samples, as
    :class:`sklearn.neighbors.KNeighborsClassifier` with the brute-force algorithm.

    ``fit`` keeps the training samples where they are (split along the rows, or replicated).
    ``predict`` then proceeds in two steps:

    1. distances: :func:`heat.spatial.cdist` (or :func:`heat.spatial.manhattan`) of the local
       training rows and all queries; where both are split along the rows, the queries travel
       around a ring of processes, so that no process ever holds more than its share of either
       or of the distance matrix;
    2. a distributed top-k: every process picks, for every query, the ``n_neighbors`` nearest of
       its own training rows (with their distances, global indices and labels), and one
       all-to-all (an allgather for replicated queries) brings the candidates of a query to the
       process that owns it, which merges them.

    Equal distances are ordered by the training samples' global index, the smaller first, so
    the result does not depend on the number of processes.

    Parameters
    ----------
    n_neighbors : int
        Number of neighbours that vote, at most the number of training samples.
    weights : {"uniform", "distance"}
        "uniform": every neighbour has one vote; "distance": the vote of a neighbour weighs
        the inverse of its distance (neighbours at distance 0, if any, share all the weight).
    metric : {"euclidean", "manhattan"}
        The distance.

    Attributes
    ----------
    classes_ : DNDarray
        The sorted class labels, replicated.
    effective_metric_ : str
        The distance used.
    n_features_in_ : int
        Number of features.
    n_samples_fit_ : int
        Number of training samples.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[0.0], [1.0], [2.0], [3.0]], split=0)
    >>> y = ht.array([0, 0, 1, 1], split=0)
    >>> knn = ht.classification.KNeighborsClassifier(n_neighbors=3).fit(x, y)
    >>> knn.predict(ht.array([[1.1]]))
    DNDarray([0], dtype=ht.int64, device=cpu:0, split=None)
    >>> knn.predict_proba(ht.array([[0.9]]))
    DNDarray([[0.66666667, 0.33333333]], dtype=ht.float64, device=cpu:0, split=None)
    """

    def __init__(self, n_neighbors: int = 5, weights: str = "uniform", metric: str = "euclidean"):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric

    # ---------------------------------------------------------------------------------- checks
    def _check_params(self) -> None:
        """Raise TypeError/ValueError for bad parameters (no communication)."""
        _check_neighbors(self.n_neighbors, "n_neighbors")
        if self.weights not in _WEIGHTS:
            raise ValueError(f"weights must be one of {_WEIGHTS}, but was {self.weights!r}")
        if self.metric not in _METRICS:
            raise ValueError(f"metric must be one of {_METRICS}, but was {self.metric!r}")

    # ------------------------------------------------------------------------------------- fit
    def fit(self, x, y) -> "KNeighborsClassifier":
        """
        Keep the training samples and their labels. Collective (the agreement on finiteness and
        on the classes).

        Parameters
        ----------
        x : DNDarray
            Training samples, shape ``(n_samples, n_features)``, split along either axis (along
            the features it is redistributed along the rows) or not at all.
        y : DNDarray
            Class labels, shape ``(n_samples,)``, in any layout (redistributed to the rows of
            ``x`` if needed); or, as HeAT's KNN took them, one-hot encoded labels of shape
            ``(n_samples, n_classes)`` (one 1 per row, 0 elsewhere): the classes are then the
            column indices, and :meth:`predict` answers one-hot rows of ``y``'s type, e.g.
            ``knn.fit(x, ht.array([[1, 0], [0, 1]])).predict(x)``.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            For parameters or data of the wrong type.
        ValueError
            For bad parameters, ``x`` not 2-D, ``y`` of another length, ``n_neighbors`` larger
            than the number of samples, NaN or infinity in ``x`` or ``y``, or a 2-D ``y``
            whose rows are not one-hot. Every process
            raises alike, before any communication except the agreement on finiteness.
        """
        self._check_params()
        x = validate_samples(x, name="x", ensure_finite=False, min_samples=1)
        y, one_hot = _one_hot_codes(y, x)
        y = validate_targets(y, x)
        if self.n_neighbors > x.shape[0]:
            raise ValueError(f"n_neighbors={self.n_neighbors} must be <= n_samples={x.shape[0]}")
        x = rows_of(x)
        labels = aligned_rows(y, x)
        flags = torch.tensor(
            [
                is_finite(x.larray),
                is_finite(labels),
            ],
            dtype=torch.int32,
        )
        distributed = x.split == 0 and x.comm.size > 1
        if distributed:
            flags = x.comm.allreduce_tensor(flags, MPI.MIN)
        for flag, name in zip(flags.tolist(), ("x", "y")):
            if not flag:
                raise ValueError(f"{name} contains NaN or infinity")
        if one_hot is None:
            classes = unique_labels(labels, distributed, x.comm)
        else:  # every column is a class, also one without samples
            classes = torch.arange(one_hot.shape[1], dtype=labels.dtype, device=labels.device)
        self._fit_x = x
        self._fit_codes = encode_labels(labels, classes)[0]
        self.classes_ = ht.array(classes, comm=x.comm, device=x.device)
        self.effective_metric_ = self.metric
        self.n_features_in_ = x.shape[1]
        self.n_samples_fit_ = x.shape[0]
        self._one_hot_dtype = None if one_hot is None else one_hot.dtype
        return self

    # -------------------------------------------------------------------------------- queries
    def _check_queries(self, x, n_neighbors) -> Tuple["ht.DNDarray", int]:
        check_is_fitted(self, ["classes_"])
        n_neighbors = self.n_neighbors if n_neighbors is None else n_neighbors
        _check_neighbors(n_neighbors, "n_neighbors")
        if n_neighbors > self.n_samples_fit_:
            raise ValueError(
                f"n_neighbors={n_neighbors} must be <= n_samples_fit={self.n_samples_fit_}"
            )
        x = validate_samples(x, name="x", ensure_finite=False)
        check_n_features(self, x)
        x = rows_of(validate_samples(x, name="x"))
        if x.dtype is not self._fit_x.dtype:
            x = x.astype(ht.promote_types(x.dtype, self._fit_x.dtype))
        return x, n_neighbors

    def _neighbours(self, queries, k: int) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """
        Distances, global training indices and label codes of the ``k`` nearest training
        samples of the local queries (the rows of ``queries`` this process holds, or all of
        them where the queries are not split), each ``(local queries, k)``.
        """
        train = self._fit_x
        distance = ht.spatial.cdist if self.metric == "euclidean" else ht.spatial.manhattan
        comm = train.comm
        if train.split is None or comm.size == 1:
            # all training rows are here: the queries' rows of the distances are complete
            block = distance(queries, train).larray
            distances, order = _k_smallest(block, k)
            return distances, order, self._fit_codes[order]

        # training rows split: each process's candidates among its own training rows
        block = distance(train, queries).larray  # (local training rows, all queries)
        offset = train.counts_displs()[1][comm.rank]
        local_k = min(k, block.shape[0])
        distances, order = _k_smallest(block.T, local_k)
        candidates = torch.stack(
            [
                distances.to(torch.float64),
                (order + offset).to(torch.float64),  # exact: indices < 2^53
                self._fit_codes[order].to(torch.float64),
            ],
            dim=2,
        )  # (queries, local_k, 3)
        if local_k < k:  # too few local rows: pad with candidates that always lose
            padding = candidates.new_empty((candidates.shape[0], k - local_k, 3))
            padding[..., 0] = float("inf")
            padding[..., 1] = float(self.n_samples_fit_)
            padding[..., 2] = 0.0
            candidates = torch.cat([candidates, padding], dim=1)
        if queries.split is None:
            merged = comm.allgather_tensors(candidates.contiguous(), axis=1)
        else:
            counts, displs = queries.counts_displs()
            blocks = [candidates[d : d + c] for c, d in zip(counts, displs)]
            merged = torch.cat(comm.alltoallv_tensors(blocks, axis=0), dim=1)
        # candidates are in rank order, each rank's by (distance, index): a stable sort by
        # distance orders them by (distance, global index)
        best = torch.sort(merged[..., 0], dim=1, stable=True).indices[:, :k]
        chosen = merged.gather(1, best.unsqueeze(2).expand(-1, -1, 3))
        distances = chosen[..., 0].to(block.dtype)
        return distances, chosen[..., 1].to(torch.int64), chosen[..., 2].to(torch.int64)

    def kneighbors(self, x, n_neighbors=None, return_distance: bool = True):
        """
        The nearest training samples of every query. Collective.

        Parameters
        ----------
        x : DNDarray
            Queries, shape ``(n_queries, n_features)``.
        n_neighbors : int, optional
            How many neighbours; ``self.n_neighbors`` by default.
        return_distance : bool
            Whether to return the distances too.

        Returns
        -------
        distances : DNDarray
            ``(n_queries, n_neighbors)`` distances, nearest first (only with
            ``return_distance``).
        indices : DNDarray
            int64 ``(n_queries, n_neighbors)`` indices of the neighbours among the training
            samples. Both are split along the rows like ``x`` (or not split).

        Raises
        ------
        NotFittedError
            If the estimator has not been fitted.
        ValueError
            If ``n_neighbors`` exceeds the number of training samples, or ``x`` has another
            number of features or NaN or infinity.
        """
        x, k = self._check_queries(x, n_neighbors)
        distances, indices, _ = self._neighbours(x, k)
        indices = rows_like(x, indices, ht.int64)
        if not return_distance:
            return indices
        return rows_like(x, distances, x.dtype), indices

    def predict_proba(self, x) -> "ht.DNDarray":
        """
        The share of the (weighted) votes of the neighbours for every class. Collective.

        Parameters
        ----------
        x : DNDarray
            Queries, shape ``(n_queries, n_features)``.

        Returns
        -------
        DNDarray
            float64, shape ``(n_queries, n_classes)``, columns in the order of ``classes_``,
            split along the rows like ``x`` (or not split).

        Raises
        ------
        NotFittedError, ValueError
            As :meth:`kneighbors`.
        """
        x, proba = self._proba(x)
        return rows_like(x, proba, ht.float64)

    def _proba(self, x) -> Tuple["ht.DNDarray", torch.Tensor]:
        x, k = self._check_queries(x, None)
        distances, _, codes = self._neighbours(x, k)
        distances = distances.to(torch.float64)
        if self.weights == "uniform":
            votes = torch.ones_like(distances)
        else:
            # as scikit-learn: where a neighbour is at distance 0, those at 0 share the vote
            zero = distances == 0
            votes = torch.where(
                zero.any(1, keepdim=True), zero.to(distances.dtype), 1.0 / distances
            )
        proba = torch.zeros(
            (codes.shape[0], self.classes_.shape[0]), dtype=torch.float64, device=codes.device
        ).scatter_add_(1, codes, votes)
        total = proba.sum(1, keepdim=True)
        proba /= torch.where(total == 0, torch.ones_like(total), total)
        return x, proba

    def predict(self, x) -> "ht.DNDarray":
        """
        The class with the most (weighted) votes of the neighbours of every query; of equal
        votes the smallest class. Collective.

        Parameters
        ----------
        x : DNDarray
            Queries, shape ``(n_queries, n_features)``.

        Returns
        -------
        DNDarray
            Labels of the type of ``classes_``, shape ``(n_queries,)``, split along the rows
            like ``x`` (or not split); after a fit with one-hot labels, one-hot rows
            ``(n_queries, n_classes)`` of their type.

        Raises
        ------
        NotFittedError, ValueError
            As :meth:`kneighbors`.
        """
        x, proba = self._proba(x)
        winners = proba.argmax(1)
        dtype = getattr(self, "_one_hot_dtype", None)
        if dtype is not None:
            rows = torch.zeros(proba.shape, dtype=dtype.torch_type(), device=proba.device)
            rows[torch.arange(len(winners), device=proba.device), winners] = 1
            return rows_like(x, rows, dtype)
        labels = self.classes_.larray[winners]
        return rows_like(x, labels, self.classes_.dtype)


def _one_hot_codes(y, x):
    """
    ``(y, None)`` for 1-D labels; for 2-D one-hot labels (HeAT's form) ``(codes, y)``: the
    column of every row's 1. Collective for the 2-D check, whose answer every process shares.
    """
    if not isinstance(y, ht.DNDarray):
        if not isinstance(y, (np.ndarray, torch.Tensor, list, tuple)):
            return y, None  # validate_targets names the type
        y = ht.array(y, comm=x.comm, device=x.device)
    if y.ndim != 2:
        return y, None
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"y has {y.shape[0]} rows, but x has {x.shape[0]} samples; they must match"
        )
    if y.shape[1] < 1:
        raise ValueError("one-hot y must have at least one column (class)")
    if ht.types.heat_type_is_complexfloating(y.dtype):
        raise TypeError(f"y must be real-valued, but has type {y.dtype.__name__}")
    valid = ht.all((y == 0) | (y == 1)).item() and ht.all(ht.sum(y, axis=1) == 1).item()
    if not valid:
        raise ValueError("a 2-D y must be one-hot: one 1 per row and 0 elsewhere")
    return ht.argmax(y, axis=1), y


def _k_smallest(distances: torch.Tensor, k: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    The ``k`` smallest entries of every row of ``distances`` and their column indices, ordered
    by (value, index): of equal values the smaller index comes first, also where equal values
    straddle the k-th place. ``torch.topk`` does the selection (a full stable sort of the rows
    is ~50x slower); only rows where equal values straddle the k-th place are sorted in full.
    """
    if k == 0 or distances.shape[0] == 0:
        empty = distances.new_empty((distances.shape[0], k))
        return empty, empty.to(torch.int64)
    # one more than needed: if the (k+1)-th value equals the k-th, equal values straddle the
    # k-th place and topk's choice among them is arbitrary
    chosen = min(k + 1, distances.shape[1])
    values, index = torch.topk(distances, chosen, dim=1, largest=False, sorted=False)
    index, order = torch.sort(index, dim=1)  # by index, then stably by value
    values, order = torch.sort(values.gather(1, order), dim=1, stable=True)
    index = index.gather(1, order)
    if chosen > k:
        ambiguous = (values[:, k] == values[:, k - 1]).nonzero().flatten()
        values, index = values[:, :k].contiguous(), index[:, :k].contiguous()
        if ambiguous.numel():
            rows = distances[ambiguous]
            order = torch.sort(rows, dim=1, stable=True).indices[:, :k]
            index[ambiguous] = order
            values[ambiguous] = rows.gather(1, order)
    return values, index


def _check_neighbors(value, name: str) -> None:
    """Raise unless ``value`` is a positive integer."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, but was {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, but was {value}")
