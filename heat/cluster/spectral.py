"""
Spectral clustering of distributed samples.
"""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np
import torch

import heat as ht
from heat.core.base import BaseEstimator, ClusteringMixin
from heat.core.sanitation import check_choice, check_int, warn_ignored
from heat.graph import Laplacian
from heat.utils.validation import validate_samples

from .kmeans import KMeans

__all__ = ["Spectral"]

_METRICS = ("rbf", "euclidean")
_LAPLACIANS = ("fully_connected", "eNeighbour")
_BOUNDARIES = ("upper", "lower")
_EIGEN_SOLVERS = ("lanczos", "randomized")
# HeAT's defaults of the randomized solver's parameters (warned about when set but unused)
_REIGH_DEFAULTS = {"reigh_rank": 100, "reigh_n_oversamples": 10, "reigh_power_iter": 0}
_LANCZOS_N_ITER = 300
# eigenvalues the eigengap heuristic looks at when n_clusters is None
_EIGENGAP_WINDOW = 20


class Spectral(ClusteringMixin, BaseEstimator):
    """
    Spectral clustering (Ng, Jordan and Weiss): the samples are the nodes of a similarity
    graph; the eigenvectors of its normalized Laplacian ``L = I - D^-1/2 W D^-1/2`` that belong
    to the ``n_clusters`` smallest eigenvalues embed the samples in ``n_clusters`` dimensions,
    where :class:`KMeans` clusters them. Finds clusters of any shape that are separated by
    gaps, where k-means alone needs convex clusters.

    The similarity matrix is computed distributed (:func:`heat.spatial.rbf` or
    :func:`heat.spatial.cdist`, split along the rows like the samples). Its eigenvectors come
    from one of two solvers (``eigen_solver``, HeAT's names and meanings):

    - "lanczos" (heat's default): for up to ``lanczos_n_iter`` samples exactly, from a dense
      symmetric eigensolver (``torch.linalg.eigh``, float64) on process 0, to which the matrix
      is gathered -- what ``n`` Lanczos iterations would give, for less work; for more samples
      from ``lanczos_n_iter`` steps of the Lanczos method on the distributed matrix
      (:func:`heat.linalg.lanczos`), then a dense eigensolver on the small tridiagonal matrix.
    - "randomized": the randomized eigendecomposition :func:`heat.linalg.reigh` of
      ``I - L`` (whose largest eigenvalues are ``L``'s smallest): ``reigh_rank`` eigenpairs
      from as many random samples plus ``reigh_n_oversamples``, with ``reigh_power_iter``
      power iterations; the ``n_clusters`` largest of them are used.

    HeAT 1.8's default solver is "randomized"; heat keeps "lanczos" (exact for small data, at
    least as accurate otherwise), so pass ``eigen_solver="randomized"`` for HeAT's choice. A
    ``reigh_*`` parameter set with the Lanczos solver has no effect and says so in a warning.

    Parameters
    ----------
    n_clusters : int, optional
        The number of clusters; None picks it from the largest gap among the smallest 20
        eigenvalues of the Laplacian (the eigengap heuristic), with ``eigen_solver=
        "randomized"`` among at most ``reigh_rank`` of them, which bounds the number found.
    gamma : float
        Width of the RBF similarity ``exp(-gamma ||x - y||^2)``, > 0.
    metric : {"rbf", "euclidean"}
        The pairwise measure the graph is built from: the RBF similarity, or the euclidean
        distance (only with ``laplacian="eNeighbour"``).
    laplacian : {"fully_connected", "eNeighbour"}
        "fully_connected": every pair is connected with its RBF similarity as the weight.
        "eNeighbour": pairs are connected with weight 1 where the metric is below
        ``threshold`` (``boundary="upper"``) or above it (``boundary="lower"``), else not.
    threshold : float
        The threshold of "eNeighbour".
    boundary : {"upper", "lower"}
        Whether ``threshold`` bounds the metric from above or from below.
    eigen_solver : {"lanczos", "randomized"}
        How the eigenvectors are computed (above).
    reigh_rank : int
        "randomized": the number of eigenpairs computed, >= ``n_clusters`` (default 100).
    reigh_n_oversamples : int
        "randomized": extra random samples for accuracy, >= 0 (default 10).
    reigh_power_iter : int
        "randomized": power iterations, >= 0, for accuracy where the spectrum decays slowly
        (default 0).
    lanczos_n_iter : int
        "lanczos": the number of Lanczos iterations, >= 1 (default 300); up to this many samples
        the eigenvectors are computed exactly.
    assign_labels : {"kmeans"}
        How the embedded samples are clustered.
    random_state : int, optional
        Seed of the k-means initialization.
    n_lanczos : int, optional
        heat's earlier name of ``lanczos_n_iter``, still accepted (a ValueError where both are
        given with different values).

    Attributes
    ----------
    labels_ : DNDarray
        int64 cluster of every sample, split along the rows like the data.
    n_clusters_ : int
        The number of clusters used.
    eigenvalues_ : DNDarray
        The smallest eigenvalues of the Laplacian, ascending (at least ``n_clusters_``).
    embedding_ : DNDarray
        ``(n_samples, n_clusters_)`` spectral embedding (rows of unit length), split like the
        data's rows.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> angles = ht.linspace(0, 6.283, 40)
    >>> inner = ht.stack([ht.cos(angles), ht.sin(angles)], axis=1)
    >>> x = ht.concatenate([inner, 4 * inner]).resplit_(0)  # two rings, not convex
    >>> labels = ht.cluster.Spectral(n_clusters=2, gamma=2.0, random_state=0).fit_predict(x)
    >>> labels[:40].min().item() == labels[:40].max().item() != labels[40:].min().item()
    True

    HeAT's randomized solver, with 30 eigenpairs from 40 random samples:

    >>> model = ht.cluster.Spectral(n_clusters=2, gamma=2.0, eigen_solver="randomized",
    ...                             reigh_rank=30, random_state=0)
    >>> labels = model.fit_predict(x)
    >>> labels[:40].min().item() == labels[:40].max().item() != labels[40:].min().item()
    True
    """

    def __init__(
        self,
        n_clusters: Optional[int] = None,
        gamma: float = 1.0,
        metric: str = "rbf",
        laplacian: str = "fully_connected",
        threshold: float = 1.0,
        boundary: str = "upper",
        eigen_solver: str = "lanczos",
        reigh_rank: int = 100,
        reigh_n_oversamples: int = 10,
        reigh_power_iter: int = 0,
        lanczos_n_iter: int = _LANCZOS_N_ITER,
        assign_labels: str = "kmeans",
        random_state: Optional[int] = None,
        n_lanczos: Optional[int] = None,
    ):
        self.n_clusters = n_clusters
        self.gamma = gamma
        self.metric = metric
        self.laplacian = laplacian
        self.threshold = threshold
        self.boundary = boundary
        self.eigen_solver = eigen_solver
        self.reigh_rank = reigh_rank
        self.reigh_n_oversamples = reigh_n_oversamples
        self.reigh_power_iter = reigh_power_iter
        self.lanczos_n_iter = lanczos_n_iter
        self.assign_labels = assign_labels
        self.random_state = random_state
        self.n_lanczos = n_lanczos

    def _check_params(self) -> None:
        k = self.n_clusters
        if k is not None and (isinstance(k, bool) or not isinstance(k, numbers.Integral)):
            raise TypeError(f"n_clusters must be None or an integer, but was {type(k).__name__}")
        if k is not None and k < 1:
            raise ValueError(f"n_clusters must be >= 1, but was {k}")
        for name in ("gamma", "threshold"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{name} must be a real number, but was {type(value).__name__}")
        if not self.gamma > 0:
            raise ValueError(f"gamma must be > 0, but was {self.gamma}")
        for name, allowed in (
            ("metric", _METRICS),
            ("laplacian", _LAPLACIANS),
            ("boundary", _BOUNDARIES),
            ("assign_labels", ("kmeans",)),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(
                    f"{name} must be one of {allowed}, but was {getattr(self, name)!r}"
                )
        if self.metric == "euclidean" and self.laplacian == "fully_connected":
            raise ValueError(
                'metric="euclidean" needs laplacian="eNeighbour" (distances are no similarities)'
            )
        if isinstance(self.eigen_solver, numbers.Integral):
            # heat's earlier positional n_lanczos sits where HeAT puts eigen_solver
            raise TypeError(
                f"eigen_solver must be one of {_EIGEN_SOLVERS}, got an int "
                f"({self.eigen_solver}); pass the Lanczos iterations as lanczos_n_iter=..."
            )
        check_choice(self.eigen_solver, "eigen_solver", _EIGEN_SOLVERS)
        reigh_rank = check_int(self.reigh_rank, "reigh_rank", 1)
        check_int(self.reigh_n_oversamples, "reigh_n_oversamples", 0)
        check_int(self.reigh_power_iter, "reigh_power_iter", 0)
        self._lanczos_steps()
        if self.eigen_solver == "randomized":
            if k is not None and reigh_rank < k:
                raise ValueError(
                    f"reigh_rank must be >= n_clusters = {k} with eigen_solver='randomized', "
                    f"got {reigh_rank}"
                )
        else:
            for name, default in _REIGH_DEFAULTS.items():
                warn_ignored(
                    getattr(self, name), name, default, "eigen_solver is 'lanczos'", stacklevel=4
                )

    def _lanczos_steps(self) -> int:
        """``lanczos_n_iter``, or heat's earlier ``n_lanczos`` where that was given."""
        steps = check_int(self.lanczos_n_iter, "lanczos_n_iter", 1)
        if self.n_lanczos is None:
            return steps
        old = check_int(self.n_lanczos, "n_lanczos", 1)
        if steps != _LANCZOS_N_ITER and steps != old:
            raise ValueError(
                f"n_lanczos ({old}) is the earlier name of lanczos_n_iter ({steps}); give one"
            )
        return old

    def fit(self, x, y=None) -> "Spectral":
        """
        Cluster the samples ``x``. Collective.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        TypeError, ValueError
            For bad parameters, data that is not 2-D or holds NaN or infinity, or
            ``n_clusters`` larger than the number of samples; on every process alike.
        """
        self._check_params()
        x = validate_samples(x, name="x", ensure_finite=False)
        n = x.shape[0]
        if self.n_clusters is not None and n < self.n_clusters:
            raise ValueError(f"n_samples={n} should be >= n_clusters={self.n_clusters}")
        if n == 0:
            raise ValueError("x has no samples")
        x = validate_samples(x, name="x")
        if x.split == 1:
            x = ht.resplit(x, 0)
        comm = x.comm
        # L = I - D^-1/2 W D^-1/2 (n x n, split along the rows like x); its smallest
        # eigenvalues are the largest of M = I - L, which the eigensolvers below work on
        laplacian = self._laplacian().construct(x)
        block = laplacian.larray.double().neg()
        first = _first_row(x)
        rows = torch.arange(block.shape[0], device=block.device)
        block[rows, rows + first] += 1.0
        normalized = ht.DNDarray(
            block,
            (n, n),
            ht.float64,
            laplacian.split,
            laplacian.device,
            comm,
            laplacian.balanced if laplacian.split is not None else True,
        )
        if self.eigen_solver == "randomized":
            eigenvalues, vectors, rows = self._randomized(normalized, n)
        elif n > self._lanczos_steps():
            eigenvalues, vectors, rows = self._lanczos(normalized, n)
        else:
            eigenvalues, vectors, rows = self._dense(normalized, n)
        k = vectors.shape[1]
        norms = vectors.norm(dim=1, keepdim=True)
        vectors = vectors / torch.where(norms > 0, norms, torch.ones_like(norms))
        embedded = ht.DNDarray(
            vectors.to(x.larray.dtype).contiguous(),
            (n, k),
            x.dtype,
            rows.split,
            x.device,
            comm,
            rows.balanced if rows.split is not None else True,
        )
        kmeans = KMeans(n_clusters=k, init="k-means++", random_state=self.random_state)
        self.labels_ = kmeans.fit(embedded).labels_
        self.n_clusters_ = k
        self.eigenvalues_ = ht.array(eigenvalues, comm=comm, device=x.device)
        self.embedding_ = embedded
        self.n_features_in_ = x.shape[1]
        return self

    def _laplacian(self) -> Laplacian:
        """The normalized Laplacian of the similarity graph, as the parameters define it."""
        if self.metric == "rbf":
            sigma = float(np.sqrt(1.0 / (2.0 * self.gamma)))

            def similarity(x):
                return ht.spatial.rbf(x, sigma=sigma, quadratic_expansion=True)

        else:

            def similarity(x):
                return ht.spatial.cdist(x, quadratic_expansion=True)

        # eNeighbour connects with weight 1, the fully connected graph with the RBF weights
        return Laplacian(
            similarity,
            weighted=self.laplacian == "fully_connected",
            definition="norm_sym",
            mode=self.laplacian,
            threshold_key=self.boundary,
            threshold_value=self.threshold,
        )

    def _choose_k(self, laplacian_values: torch.Tensor, n: int) -> int:
        """``n_clusters``, or the eigengap heuristic's choice."""
        if self.n_clusters is not None:
            return self.n_clusters
        window = laplacian_values[: min(n, _EIGENGAP_WINDOW)]
        return int(torch.argmax(torch.diff(window))) + 1 if len(window) > 1 else 1

    def _dense(self, normalized, n: int):
        """
        Exact eigenpairs: the matrix gathered on process 0, ``torch.linalg.eigh`` there, the
        chosen eigenvectors broadcast (every process then takes its rows).
        """
        comm = normalized.comm
        distributed = normalized.split == 0 and comm.size > 1
        block = normalized.larray
        whole = comm.gather_tensors(block, root=0, axis=0) if distributed else block
        result = None
        if not distributed or comm.rank == 0:
            values, vectors = torch.linalg.eigh(whole)
            laplacian_values = (1.0 - values).flip(0)  # L = I - M, ascending
            k = self._choose_k(laplacian_values, n)
            shown = laplacian_values[: max(k, min(n, _EIGENGAP_WINDOW))].clone()
            result = (shown, vectors.flip(1)[:, :k].contiguous())
        if distributed:
            result = (
                comm.bcast_tensor(result and result[0]),
                comm.bcast_tensor(result and result[1]),
            )
            first = _first_row(normalized)
            return result[0], result[1][first : first + block.shape[0]], normalized
        return result[0], result[1], normalized

    def _randomized(self, normalized, n: int):
        """
        Approximate eigenpairs from :func:`heat.linalg.reigh` (HeAT's randomized solver) of
        ``M = I - L``. reigh finds the eigenvalues of largest magnitude; ``M``'s lie in
        ``[-1, 1]``, those of the clusters near 1 and the bulk of a similarity graph's near 0,
        which the randomized range finder separates well (``I + M`` would put the bulk at 1,
        half the clusters' value, and blur them). Of the pairs found, the largest by value
        (``L``'s smallest) are kept, so eigenvalues near -1 cannot take their place. Every
        process holds the eigenvalues and its rows of the eigenvectors, in the matrix's rows.
        """
        values, vectors = ht.linalg.reigh(
            normalized,
            self.reigh_rank,
            n_oversamples=self.reigh_n_oversamples,
            power_iter=self.reigh_power_iter,
        )
        order = torch.argsort(values.larray.double(), descending=True)
        laplacian_values = 1.0 - values.larray.double()[order]
        k = self._choose_k(laplacian_values, n)
        shown = laplacian_values[: max(k, min(len(laplacian_values), _EIGENGAP_WINDOW))].clone()
        return shown, vectors.larray.double()[:, order[:k]], vectors

    def _lanczos(self, normalized, n: int):
        """
        Approximate eigenpairs from ``lanczos_n_iter`` Lanczos vectors (:func:`heat.linalg.lanczos`,
        distributed matrix-vector products): the Ritz pairs of the small tridiagonal matrix,
        computed on process 0 and broadcast; every process forms its rows of the Ritz vectors.
        """
        comm = normalized.comm
        basis, tridiagonal = ht.linalg.lanczos(normalized, self._lanczos_steps())
        if tridiagonal.split is not None:
            tridiagonal = ht.resplit(tridiagonal, None)
        result = None
        if comm.rank == 0:
            values, vectors = torch.linalg.eigh(tridiagonal.larray.double())
            laplacian_values = (1.0 - values).flip(0)
            k = self._choose_k(laplacian_values, n)
            shown = laplacian_values[: max(k, min(len(values), _EIGENGAP_WINDOW))].clone()
            result = (shown, vectors.flip(1)[:, :k].contiguous())
        shown = comm.bcast_tensor(result and result[0])
        ritz = comm.bcast_tensor(result and result[1])
        return shown, basis.larray.double() @ ritz, basis


def _first_row(x) -> int:
    """The global index of the first local row."""
    if x.split != 0 or x.comm.size == 1:
        return 0
    _, displs = x.counts_displs()
    return displs[x.comm.rank]
