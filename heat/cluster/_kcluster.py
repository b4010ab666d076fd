"""
What KMeans, KMedians and KMedoids share: parameters and their checks, the initial centres
("random", "k-means++", the parallel "k-means||", or given), the fit skeleton and ``predict``.

The data is used split along the rows (split=0; data split along the features is redistributed
once, data that is not split is used as it is). The centres are small and replicated: every
process holds all of them, and every decision that involves randomness is drawn from one random
stream that all processes seed identically, so that they stay in step without extra messages.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import secrets
import time
import types
import warnings
from typing import Any, Optional, Tuple, Union

import numpy as np
import torch

import heat as ht
from heat.core.base import BaseEstimator, ClusteringMixin, check_is_fitted
from heat.core.sanitation import check_type, warn_ignored
from heat.utils.validation import (
    check_n_features,
    validate_samples,
)

from . import _kernels

__all__ = []

_INIT_NAMES = ("random", "k-means++", "kmeans++", "probability_based", "k-means||", "batchparallel")
# the ++ seeding under the names of the k-medians and k-medoids estimators (HeAT's and the
# hyphenated spelling); the seeding samples by the estimator's own cost (L1 for both)
_MEDIANS_NAMES = ("k-medians++", "kmedians++")
_MEDOIDS_NAMES = ("k-medoids++", "kmedoids++")
_PLUS_PLUS_NAMES = ("k-means++", "kmeans++", "probability_based") + _MEDIANS_NAMES + _MEDOIDS_NAMES
# HeAT's names of its probability-based seeding, which HeAT runs as k-means|| with fit's
# oversampling and iter_multiplier: given either, these names seed that way here too
_HEAT_PARALLEL_NAMES = ("probability_based", "kmeans++", "kmedians++", "kmedoids++")


def _canonical_init(init: Any) -> Any:
    """The init strategy's one name: "random", "k-means++" or "k-means||" (or the array)."""
    if isinstance(init, str):
        if init in _PLUS_PLUS_NAMES:
            return "k-means++"
        if init == "batchparallel":
            return "k-means||"
        return init
    return init


def _check_seeding(oversampling: Any, iter_multiplier: Any) -> None:
    """TypeError/ValueError for fit's k-means|| parameters (None or a positive real number)."""
    for value, name in ((oversampling, "oversampling"), (iter_multiplier, "iter_multiplier")):
        if value is None:
            continue
        check_type(value, name, numbers.Real, "None or a positive real number")
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


def _named_copy(function: types.FunctionType, qualname: str) -> types.FunctionType:
    """``function`` under another qualified name (the name Python's argument errors show)."""
    code = function.__code__
    if hasattr(code, "co_qualname"):  # Python >= 3.11 names the code's qualname in the errors
        code = code.replace(co_qualname=qualname)
    copy = types.FunctionType(
        code, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__doc__, copy.__qualname__ = function.__doc__, qualname
    copy.__module__ = function.__module__
    return copy


class _KCluster(ClusteringMixin, BaseEstimator):
    """
    Base of the k-clustering estimators. Subclasses define ``_cost`` (the cost of a point for
    a centre, which the seeding strategies sample by), ``_iterate`` (the iterations from the
    initial centres) and ``_labels_inertia``.
    """

    def __init__(
        self,
        n_clusters: int = 8,
        init="k-means++",
        max_iter: int = 300,
        tol: float = 1e-4,
        random_state: Optional[int] = None,
        n_init: Union[int, str] = 1,
        verbose: int = 0,
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_init = n_init
        self.verbose = verbose

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # a public estimator that inherits __init__ gets a copy named after it, so that a wrong
        # argument raises "KMeans.__init__() got an unexpected keyword argument", not _KCluster's
        super().__init_subclass__(**kwargs)
        if "__init__" not in cls.__dict__ and not cls.__name__.startswith("_"):
            cls.__init__ = _named_copy(cls.__init__, f"{cls.__qualname__}.__init__")

    # -------------------------------------------------------------------------------- checks
    def _check_params(self) -> None:
        """Raise TypeError/ValueError for bad parameters (no communication)."""
        if isinstance(self.n_clusters, bool) or not isinstance(self.n_clusters, numbers.Integral):
            raise TypeError(
                f"n_clusters must be an integer, but was {type(self.n_clusters).__name__}"
            )
        if self.n_clusters < 1:
            raise ValueError(f"n_clusters must be >= 1, but was {self.n_clusters}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral):
            raise TypeError(f"max_iter must be an integer, but was {type(self.max_iter).__name__}")
        if self.max_iter < 1:
            raise ValueError(f"max_iter must be >= 1, but was {self.max_iter}")
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real):
            raise TypeError(f"tol must be a real number, but was {type(self.tol).__name__}")
        state = self.random_state
        if state is not None and (
            isinstance(state, bool) or not isinstance(state, numbers.Integral)
        ):
            raise TypeError(
                f"random_state must be None or an integer, but was {type(state).__name__}"
            )
        init = self.init
        if isinstance(init, str):
            if init not in self._init_names:
                raise ValueError(
                    f"init must be one of {self._init_names} or an array, but was {init!r}"
                )
        elif not isinstance(init, (ht.DNDarray, np.ndarray, torch.Tensor)):
            raise TypeError(
                f"init must be a string or an array of initial centres, but was "
                f"{type(init).__name__}"
            )
        n_init = self.n_init
        if isinstance(n_init, str):
            if n_init != "auto":
                raise ValueError(f"n_init must be 'auto' or an integer >= 1, but was {n_init!r}")
        elif isinstance(n_init, bool) or not isinstance(n_init, numbers.Integral):
            raise TypeError(f"n_init must be 'auto' or an integer, but was {type(n_init).__name__}")
        elif n_init < 1:
            raise ValueError(f"n_init must be >= 1, but was {n_init}")
        if not isinstance(self.verbose, numbers.Integral):  # bool included, as scikit-learn
            raise TypeError(f"verbose must be an integer, but was {type(self.verbose).__name__}")
        if self.verbose < 0:
            raise ValueError(f"verbose must be >= 0, but was {self.verbose}")

    def _runs(self) -> int:
        """
        The number of initializations (scikit-learn's rules): ``n_init``, where "auto" is 10
        for ``init="random"`` and 1 otherwise; given centres are one initialization only.
        """
        if not isinstance(self.init, str):
            return 1
        if self.n_init == "auto":
            return 10 if self.init == "random" else 1
        return int(self.n_init)

    def _check_fit_data(self, x) -> "ht.DNDarray":
        """Validated samples, split along the rows (or not split)."""
        self._check_params()
        x = validate_samples(x, name="x", ensure_finite=False)
        if x.shape[0] < self.n_clusters:
            raise ValueError(f"n_samples={x.shape[0]} should be >= n_clusters={self.n_clusters}")
        if not isinstance(self.init, str) and tuple(self.init.shape) != (
            self.n_clusters,
            x.shape[1],
        ):
            raise ValueError(
                f"init must have shape (n_clusters, n_features) = "
                f"({self.n_clusters}, {x.shape[1]}), but has shape {tuple(self.init.shape)}"
            )
        return ht.resplit(x, 0) if x.split == 1 else x

    def _check_predict_data(self, x) -> "ht.DNDarray":
        check_is_fitted(self, ["cluster_centers_"])
        x = validate_samples(x, name="x", ensure_finite=False)
        check_n_features(self, x)
        x = validate_samples(x, name="x")
        if x.dtype is not self.cluster_centers_.dtype:
            x = x.astype(self.cluster_centers_.dtype)
        return ht.resplit(x, 0) if x.split == 1 else x

    # ------------------------------------------------------------------------ fit and predict
    def fit(self, x, y=None, oversampling=None, iter_multiplier=None) -> "_KCluster":
        """
        Cluster the samples ``x``. Collective.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``, split along either axis (along the
            features it is redistributed along the rows first). NumPy arrays and tensors are
            taken as the same data on every process.
        y : None
            Ignored.
        oversampling : float, optional
            HeAT's parameter of the k-means|| seeding (Bahmani et al.): in every round each
            sample becomes a candidate with probability ``oversampling * cost / total cost``.
            None: ``2 * n_clusters``. Used with ``init="k-means||"`` (alias "batchparallel")
            and, when it or ``iter_multiplier`` is given, with HeAT's names of its
            probability-based seeding ("probability_based", "kmeans++", "kmedians++",
            "kmedoids++"), which HeAT runs as k-means|| (heat otherwise runs the greedy
            k-means++ for them). With any other ``init`` it has no effect and a UserWarning
            says so.
        iter_multiplier : float, optional
            HeAT's number of k-means|| rounds relative to the initial cost: ``ceil(
            iter_multiplier * log(cost))`` rounds (at least one), where ``cost`` is the total
            cost of the samples for the first, uniformly drawn centre. None: 5 rounds. Used
            with the same ``init`` values as ``oversampling``.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            For parameters or data of the wrong type.
        ValueError
            If ``n_clusters`` exceeds the number of samples, the data is not 2-D or holds NaN
            or infinity, ``init`` has the wrong shape, or ``oversampling`` or
            ``iter_multiplier`` is not > 0. Every process raises alike, before any
            communication except the agreement on finiteness.

        Examples
        --------
        >>> import heat as ht
        >>> x = ht.random.randn(200, 2, split=0)
        >>> model = ht.cluster.KMeans(n_clusters=3, init="probability_based", random_state=1)
        >>> model.fit(x, oversampling=10, iter_multiplier=1).cluster_centers_.shape
        (3, 2)
        """
        _check_seeding(oversampling, iter_multiplier)
        x = self._check_fit_data(x)
        self._seeding = self._seeding_parameters(oversampling, iter_multiplier)
        try:
            with self._threads():
                return self._fit_runs(x)
        finally:
            del self._seeding

    # the init names this estimator accepts (KMedians and KMedoids add their ++ names)
    _init_names = _INIT_NAMES

    def _seeding_parameters(self, oversampling, iter_multiplier) -> Optional[Tuple]:
        """
        ``(oversampling, iter_multiplier)`` for a k-means|| seeding, or None where the seeding
        is another (the parameters then warn that they have no effect).
        """
        given = oversampling is not None or iter_multiplier is not None
        init = self.init
        if isinstance(init, str) and (
            _canonical_init(init) == "k-means||" or (given and init in _HEAT_PARALLEL_NAMES)
        ):
            return (oversampling, iter_multiplier)
        reason = (
            f"init={init!r} draws no candidates in rounds; the k-means|| seeding does "
            "(init='k-means||', or HeAT's 'probability_based')"
            if isinstance(init, str)
            else "the initial centres were given"
        )
        warn_ignored(oversampling, "oversampling", None, reason, stacklevel=4)
        warn_ignored(iter_multiplier, "iter_multiplier", None, reason, stacklevel=4)
        return None

    def _fit_runs(self, x) -> "_KCluster":
        """
        ``_fit`` once per initialization, each from its own seed (the first from the shared
        seed itself, so one run is what it always was); the run of the lowest inertia stays.
        Every process takes the same decisions: the inertia is global.
        """
        runs = self._runs()
        if runs == 1 and self.n_init not in (1, "auto") and x.comm.rank == 0:
            warnings.warn(
                f"{type(self).__name__}: explicit initial centres were given, so n_init="
                f"{self.n_init} runs only one initialization",
                RuntimeWarning,
                stacklevel=3,
            )
        seed = _shared_seed(self.random_state, x.comm)
        self._progress = _Progress(self.verbose, x.comm, type(self).__name__)
        best = None
        for run in range(runs):
            self._progress.start(run, runs)
            self._fit(x, _run_seed(seed, run))
            self._progress.finish(self.n_iter_, self.inertia_)
            if best is None or self.inertia_ < best["inertia_"]:
                best = {name: getattr(self, name) for name in _FITTED}
        for name, value in best.items():
            setattr(self, name, value)
        del self._progress
        return self

    def _fit(self, x, seed: int) -> "_KCluster":
        rng = np.random.default_rng(seed)
        shift, mean_variance = _column_moments(x)  # raises for NaN or infinity
        # scikit-learn's convergence threshold: tol relative to the data's mean feature variance
        self._tolerance = self.tol * mean_variance
        centres = self._initial_centres(x, rng, shift)
        local = self._local_data(x, for_fit=True)
        centres, n_iter = self._iterate(x, local, centres, shift)
        labels, inertia = self._labels_inertia(x, local, centres, shift)
        del local
        self._shift = shift  # predict uses the same shifted distances as fit
        self.cluster_centers_ = ht.array(centres, comm=x.comm, device=x.device)
        self.labels_ = labels
        self.inertia_ = inertia
        self.n_iter_ = n_iter
        self.n_features_in_ = x.shape[1]
        return self

    def predict(self, x) -> "ht.DNDarray":
        """
        The index of the nearest fitted centre of every sample. Collective only for the
        finiteness check: the assignment itself is local.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.

        Returns
        -------
        DNDarray
            int64 labels, shape ``(n_samples,)``, split along the rows like ``x`` (or not).

        Raises
        ------
        NotFittedError
            If the estimator has not been fitted.
        ValueError
            If ``x`` has another number of features than the fitted data, or NaN or infinity.
        """
        x = self._check_predict_data(x)
        with self._threads():
            local = self._local_data(x, for_fit=False)
            labels, _ = self._labels_inertia(x, local, self.cluster_centers_.larray, self._shift)
        return labels

    def _threads(self):
        """The thread section of fit and predict: see ``_kernels.own_threads``."""
        return _kernels.own_threads() if self._threaded_kernels else contextlib.nullcontext()

    # ------------------------------------------------------------------- subclass interface
    # whether the kernels share their passes over threads of their own (see _kernels)
    _threaded_kernels = False
    # whether _converged sees iterations over all processes' data (verbose reports them)
    _global_iterations = True

    def _cost(self, rows: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
        """``(len(rows), len(centres))`` costs that the seeding strategies sample by."""
        raise NotImplementedError

    def _local_data(self, x, for_fit: bool) -> torch.Tensor:
        """The local block in the form the kernels want (by default the block itself)."""
        return x.larray

    def _iterate(
        self, x, local: torch.Tensor, centres: torch.Tensor, shift: torch.Tensor
    ) -> Tuple[torch.Tensor, int]:
        """The centres after the iterations from ``centres``, and the number of iterations."""
        raise NotImplementedError

    def _labels_inertia(self, x, local: torch.Tensor, centres: torch.Tensor, shift: torch.Tensor):
        """The labels (DNDarray laid out as ``x``'s rows) and the inertia (float, global)."""
        raise NotImplementedError

    def _converged(self, updated: torch.Tensor, centres: torch.Tensor) -> bool:
        """
        Whether the iterations stop after ``centres`` became ``updated``: nothing changes any
        more, or the squared movement is within the tolerance (never for a negative ``tol``).
        """
        if torch.equal(updated, centres):
            movement = 0.0
        else:
            movement = (updated.double() - centres.double()).square_().sum().item()
        progress = getattr(self, "_progress", None)
        if progress is not None and self._global_iterations:
            progress.iteration(movement)
        if self.tol < 0:
            return False
        return movement == 0.0 or movement <= self._tolerance

    # ----------------------------------------------------------------------- initial centres
    def _initial_centres(self, x, rng: np.random.Generator, shift: torch.Tensor) -> torch.Tensor:
        init = _canonical_init(self.init)
        k = self.n_clusters
        seeding = getattr(self, "_seeding", None)
        if seeding is not None:  # k-means|| (see _seeding_parameters)
            return _parallel_seeding(x, k, rng, self._cost, shift, *seeding)
        if not isinstance(init, str):
            if isinstance(init, ht.DNDarray):
                centres = ht.resplit(init, None).larray if init.split is not None else init.larray
            else:
                centres = torch.as_tensor(
                    np.asarray(init) if not isinstance(init, torch.Tensor) else init
                )
            return centres.to(device=x.larray.device, dtype=x.larray.dtype).clone()
        if init == "random":
            indices = rng.choice(x.shape[0], size=k, replace=False)
            return _rows_at(x, indices)
        if init == "k-means++":
            return _plus_plus(x, k, rng, self._cost)
        return _parallel_seeding(x, k, rng, self._cost, shift)


# ---------------------------------------------------------------------------------------------
# helpers shared by the estimators
# ---------------------------------------------------------------------------------------------
# what a fit learns (and what the best of several initializations keeps)
_FITTED = ("_shift", "cluster_centers_", "labels_", "inertia_", "n_iter_", "n_features_in_")


class _Progress:
    """
    ``verbose`` output of a fit, printed by rank 0 of the data's communicator: with
    ``verbose >= 1`` one line per initialization (iterations, inertia, seconds) and, for the
    iterations over all processes' data, one line per iteration (the squared movement of the
    centres, which the convergence test compares with ``tol``).
    """

    def __init__(self, verbose: int, comm, name: str):
        self.enabled = bool(verbose) and comm.rank == 0
        self.name = name
        self.run, self.runs, self.iterations, self.began = 0, 1, 0, 0.0

    def _say(self, text: str) -> None:
        if self.enabled:
            print(f"{self.name}: {text}", flush=True)

    def start(self, run: int, runs: int) -> None:
        self.run, self.runs, self.iterations, self.began = run, runs, 0, time.perf_counter()
        self._say(f"initialization {run + 1} of {runs}")

    def iteration(self, movement: float) -> None:
        self.iterations += 1
        seconds = time.perf_counter() - self.began
        self._say(f"iteration {self.iterations}, centre shift {movement:.6g} ({seconds:.2f} s)")

    def finish(self, n_iter: int, inertia: float) -> None:
        seconds = time.perf_counter() - self.began
        self._say(
            f"initialization {self.run + 1} of {self.runs} done: {n_iter} iterations, "
            f"inertia {inertia:.6g} ({seconds:.2f} s)"
        )


def _run_seed(seed: int, run: int) -> int:
    """The seed of initialization ``run``: ``seed`` itself for the first, then derived ones."""
    if run == 0:
        return seed
    return int(np.random.SeedSequence([seed, run]).generate_state(1, np.uint64)[0]) % (1 << 63)


def _shared_seed(random_state: Optional[int], comm) -> int:
    """One seed for every process: ``random_state``, or fresh entropy from process 0."""
    if random_state is not None:
        return int(random_state) % (1 << 63)
    return comm.bcast(secrets.randbits(63) if comm.rank == 0 else None, root=0)


def _column_moments(x) -> Tuple[torch.Tensor, float]:
    """
    The float64 mean of every feature and the mean of the feature variances. One allreduce if
    the rows are split. Raises ValueError (on every process) if the data holds NaN or infinity:
    then the float64 sums are not finite (float64 sums of finite values overflow only for data
    beyond ~1e300, which no distance could handle either), so the check costs no extra pass.
    """
    block = x.larray
    features = x.shape[1]

    def work(start: int, stop: int) -> torch.Tensor:
        part = torch.zeros(2 * features + 1, dtype=torch.float64, device=block.device)
        for begin in range(start, stop, 1 << 14):  # small float64 copies, in the caches
            rows = block[begin : min(begin + (1 << 14), stop)].to(torch.float64, copy=True)
            part[:features] += rows.sum(0)
            part[features:-1] += rows.square_().sum(0)
        return part

    packed = sum(_kernels.in_threads(work, block.shape[0], block.device, features))
    packed[-1] = block.shape[0]
    if x.split == 0 and x.comm.size > 1:
        packed = x.comm.allreduce_tensor(packed)
    if not torch.isfinite(packed[:features]).all():
        raise ValueError("x contains NaN or infinity")
    count = max(packed[-1].item(), 1.0)
    means = packed[:features] / count
    variances = (packed[features : 2 * features] / count - means * means).clamp_(min=0)
    return means, float(variances.mean()) if features else 0.0


def _offsets(x) -> Tuple[int, int]:
    """(first global row, number of rows) of this process's block."""
    if x.split != 0 or x.comm.size == 1:
        return 0, x.shape[0]
    counts, displs = x.counts_displs()
    return displs[x.comm.rank], counts[x.comm.rank]


def _rows_at(x, indices) -> torch.Tensor:
    """The rows at global ``indices`` (same on every process), replicated. Collective if split."""
    indices = torch.as_tensor(np.asarray(indices, dtype=np.int64), device=x.larray.device)
    if x.split != 0 or x.comm.size == 1:
        return x.larray[indices].clone()
    start, count = _offsets(x)
    mine = (indices >= start) & (indices < start + count)
    rows = torch.zeros((len(indices), x.shape[1]), dtype=x.larray.dtype, device=x.larray.device)
    rows[mine] = x.larray[indices[mine] - start]
    # every row has exactly one owner; the others contribute zeros
    return x.comm.allreduce_tensor(rows)


def _sample_by_cost(x, local_cost: torch.Tensor, draws: np.ndarray) -> torch.Tensor:
    """
    The global row indices at which the cumulative costs (in global row order) first exceed
    ``draws`` (values in ``[0, total cost)``, the same on every process): sampling with
    probability proportional to the cost. One all-gather of the per-process totals, then each
    process locates the draws that fall into its block; indices are combined by one allreduce.
    """
    comm = x.comm
    total_here = float(local_cost.sum(dtype=torch.float64))
    distributed = x.split == 0 and comm.size > 1
    totals = np.array(comm.allgather(total_here) if distributed else [total_here])
    ends = np.cumsum(totals)
    owners = np.minimum(np.searchsorted(ends, draws, side="right"), len(totals) - 1)
    rank = comm.rank if distributed else 0
    start, count = _offsets(x) if distributed else (0, x.shape[0])
    indices = np.zeros(len(draws), dtype=np.int64)
    mine = np.nonzero(owners == rank)[0]
    if len(mine) and count:
        cumulative = torch.cumsum(local_cost.double(), 0).cpu().numpy()
        local_draws = draws[mine] - (ends[rank] - totals[rank])
        positions = np.searchsorted(cumulative, local_draws, side="right")
        indices[mine] = start + np.minimum(positions, count - 1)
    if distributed:
        indices = comm.allreduce_tensor(torch.from_numpy(indices)).numpy()
    return indices


def _plus_plus(x, k: int, rng: np.random.Generator, cost) -> torch.Tensor:
    """
    k-means++ seeding (Arthur and Vassilvitskii), greedy as scikit-learn's: each new centre is
    the best of ``2 + log(k)`` candidates sampled with probability proportional to the cost of
    the points for their nearest centre so far. Per centre: one all-gather of per-process
    totals, one allreduce for the candidates' indices, one for their rows and one for their
    potentials.
    """
    block = x.larray
    comm = x.comm
    distributed = x.split == 0 and comm.size > 1
    trials = 2 + int(math.log(k))
    centres = [_rows_at(x, [rng.integers(x.shape[0])])]
    closest = cost(block, centres[0]).squeeze(1) if len(block) else block.new_zeros(0)
    for _ in range(1, k):
        total = float(closest.sum(dtype=torch.float64))
        if distributed:
            total = comm.allreduce(total)
        draws = rng.random(trials) * total
        candidates = _rows_at(x, _sample_by_cost(x, closest, draws))
        if len(block):
            updated = torch.minimum(closest.unsqueeze(1), cost(block, candidates))
            potentials = updated.sum(0, dtype=torch.float64)
        else:
            updated = block.new_zeros((0, trials))
            potentials = torch.zeros(trials, dtype=torch.float64, device=block.device)
        if distributed:
            potentials = comm.allreduce_tensor(potentials)
        best = int(torch.argmin(potentials))
        centres.append(candidates[best : best + 1])
        closest = updated[:, best].contiguous()
    return torch.cat(centres)


def _local_plus_plus(
    points: torch.Tensor, weights: torch.Tensor, k: int, rng: np.random.Generator, cost
) -> torch.Tensor:
    """Weighted greedy k-means++ on replicated ``points`` (no communication)."""
    trials = 2 + int(math.log(k))
    probabilities = weights.double() / weights.double().sum()
    first = rng.choice(len(points), p=probabilities.cpu().numpy())
    centres = [points[first : first + 1]]
    closest = cost(points, centres[0]).squeeze(1) * weights
    for _ in range(1, k):
        cumulative = torch.cumsum(closest.double(), 0).cpu().numpy()
        draws = rng.random(trials) * cumulative[-1]
        picks = np.minimum(np.searchsorted(cumulative, draws, side="right"), len(points) - 1)
        candidates = points[torch.as_tensor(picks, device=points.device)]
        updated = torch.minimum(
            closest.unsqueeze(1), cost(points, candidates) * weights.unsqueeze(1)
        )
        best = int(torch.argmin(updated.sum(0, dtype=torch.float64)))
        centres.append(candidates[best : best + 1])
        closest = updated[:, best].contiguous()
    return torch.cat(centres)


def _parallel_rounds(initial_cost: float, iter_multiplier: float) -> int:
    """
    HeAT's number of k-means|| rounds: ``ceil(iter_multiplier * log(initial_cost))``, at least
    one (the log of a cost below e would give none).
    """
    return max(1, math.ceil(iter_multiplier * math.log(max(initial_cost, math.e))))


def _parallel_seeding(
    x,
    k: int,
    rng: np.random.Generator,
    cost,
    shift: torch.Tensor,
    oversampling: Optional[float] = None,
    iter_multiplier: Optional[float] = None,
) -> torch.Tensor:
    """
    k-means|| seeding (Bahmani et al., "Scalable K-Means++"): in a few rounds, every process
    samples each of its points independently with probability ``l * cost / total cost``
    (oversampling ``l``, by default ``2k``); the sampled points of all processes are gathered
    as candidates. The rounds: 5, or with ``iter_multiplier`` HeAT's ``ceil(iter_multiplier *
    log(initial cost))`` (at least one), the initial cost being that of the first centre.
    The candidates are weighted by the number of points nearest to them and reduced to ``k``
    centres by a weighted k-means++ and Lloyd iterations that every process runs identically on
    the small candidate set. Each round costs one all-gather of the new candidates and one
    allreduce, instead of the ``k`` sequential rounds of k-means++.
    """
    block = x.larray
    comm = x.comm
    distributed = x.split == 0 and comm.size > 1
    # each process samples its own points: its own stream, derived from the shared one
    local_rng = np.random.default_rng([int(rng.integers(1 << 62)), comm.rank if distributed else 0])
    oversampling = 2 * k if oversampling is None else float(oversampling)
    candidates = _rows_at(x, [rng.integers(x.shape[0])])
    closest = cost(block, candidates).squeeze(1) if len(block) else block.new_zeros(0)
    rounds = 5
    if iter_multiplier is not None:
        initial = float(closest.sum(dtype=torch.float64))
        if distributed:
            initial = comm.allreduce(initial)
        rounds = _parallel_rounds(initial, iter_multiplier)
    for _ in range(rounds):
        total = float(closest.sum(dtype=torch.float64))
        if distributed:
            total = comm.allreduce(total)
        if total <= 0:
            break
        probabilities = (oversampling * closest.double() / total).cpu().numpy()
        picked = block[torch.as_tensor(np.nonzero(local_rng.random(len(block)) < probabilities)[0])]
        if distributed:
            picked = comm.allgather_tensors(picked, axis=0)
        if len(picked) == 0:
            continue
        candidates = torch.cat([candidates, picked])
        if len(block):
            closest = torch.minimum(closest, cost(block, picked).amin(1))
    if len(candidates) < k:  # tiny data: top up with random points
        extra = rng.choice(x.shape[0], size=k - len(candidates), replace=False)
        candidates = torch.cat([candidates, _rows_at(x, extra)])
    # weight every candidate by the points nearest to it
    nearest = (
        torch.argmin(cost(block, candidates), 1)
        if len(block)
        else block.new_zeros(0, dtype=torch.int64)
    )
    weights = torch.bincount(nearest, minlength=len(candidates)).to(torch.float64)
    if distributed:
        weights = comm.allreduce_tensor(weights)
    weights = weights.clamp_(min=1e-12).to(block.dtype)
    centres = _local_plus_plus(candidates, weights, k, rng, cost)
    centres, _ = _local_lloyd(candidates, centres, weights, shift, max_iter=20)
    return centres


def _local_lloyd(
    points: torch.Tensor,
    centres: torch.Tensor,
    weights: Optional[torch.Tensor],
    shift: torch.Tensor,
    max_iter: int,
    tolerance: float = 0.0,
) -> Tuple[torch.Tensor, int]:
    """
    (Weighted) Lloyd iterations on the points of one process, no communication; they stop when
    the centres no longer change or their squared movement is at most ``tolerance``.
    """
    columns = _kernels.with_ones(points)
    for iteration in range(1, max_iter + 1):
        sums, counts = _kernels.sums_and_counts(columns, centres, shift, weights)
        updated = _new_centres(sums, counts, centres)
        if torch.equal(updated, centres):
            return updated, iteration
        movement = (updated.double() - centres.double()).square_().sum().item()
        centres = updated
        if movement <= tolerance:
            return centres, iteration
    return centres, max_iter


def _labels_array(x, labels: torch.Tensor) -> "ht.DNDarray":
    """Local int64 labels of ``x``'s rows as a DNDarray laid out as the rows."""
    balanced = x.balanced if x.split is not None else True
    return ht.DNDarray(labels, (x.shape[0],), ht.int64, x.split, x.device, x.comm, balanced)


def _new_centres(sums: torch.Tensor, counts: torch.Tensor, centres: torch.Tensor) -> torch.Tensor:
    """Means of the clusters; an empty cluster keeps its centre."""
    empty = counts == 0
    means = sums / torch.where(empty, torch.ones_like(counts), counts).unsqueeze(1)
    means = means.to(centres.dtype)
    if empty.any():
        means[empty] = centres[empty]
    return means
