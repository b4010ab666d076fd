"""
Principal component analysis of distributed data, as scikit-learn's ``sklearn.decomposition``:
:class:`PCA` (three SVD solvers) and :class:`IncrementalPCA` (window by window).

Samples are rows and features columns; the data may be split along either axis (split=0, many
samples spread over the processes, is the common case) or not at all. The fitted model (the
components, their variances, the mean) is small and replicated on every process (DNDarrays with
``split=None``), so ``transform`` and ``inverse_transform`` are one distributed matrix product
each and keep the input's row layout.

Solvers of :class:`PCA`:

- ``"full"``: the exact SVD. Only ``S`` and ``V^T`` of the centred data are needed, and they are
  those of its triangular factor ``R`` (``X_c = Q R``), so the data go through heat's QR
  (:func:`heat.linalg.qr`, TSQR for tall data split along its rows: one all-gather of the
  ``n_features x n_features`` local factors) and only the small ``R`` is decomposed, on every
  process; ``Q`` (as large as the data) is never formed. Wide data split along its features
  use :func:`heat.linalg.svd` (TSQR of the transpose).
- ``"hierarchical"``: :func:`heat.linalg.hsvd_rank` (``n_components`` an integer) or
  :func:`heat.linalg.hsvd_rtol` (``n_components`` a float ``v`` in (0, 1): relative error
  ``rtol = sqrt(1 - v)``, i.e. at least the fraction ``v`` of the variance is kept, since the
  discarded squared Frobenius norm is the discarded variance).
- ``"randomized"``: :func:`heat.linalg.rsvd` (Halko et al.); ``random_state`` seeds heat's
  generator for the call and restores its state afterwards.

The total variance (the sum of the column variances, ``||X_c||_F^2 / (n - 1)``, one all-reduce)
is computed for every solver, so ``explained_variance_ratio_`` and ``noise_variance_`` are
defined for the truncated solvers too, as in scikit-learn.

Signs: every component is flipped so that its entry of largest magnitude is positive (as
scikit-learn's ``svd_flip(..., u_based_decision=False)``), and the fitted factors are broadcast
from process 0, so the model is the same on every process and comparable with scikit-learn's.

As scikit-learn, ``fit`` raises ValueError on NaN or infinity (here on every process alike);
the input is never modified (``copy`` is accepted for compatibility).
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any, Optional, Tuple, Union

import numpy as np
import torch

import heat as ht
from heat.core.base import BaseEstimator, TransformMixin, check_is_fitted
from heat.core.sanitation import check_bool, check_int, check_type, warn_ignored
from heat.utils.validation import (
    check_n_features,
    validate_samples,
)

__all__ = ["IncrementalPCA", "PCA"]

ArrayLike = Union["ht.DNDarray", np.ndarray, torch.Tensor]
PathLike = Union[str, os.PathLike]

_SOLVERS = ("full", "hierarchical", "randomized")


# ---------------------------------------------------------------------------------------------
# parameter checks (from parameters and global shapes only: identical on every process)
# ---------------------------------------------------------------------------------------------
def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


# ---------------------------------------------------------------------------------------------
# shared numerics
# ---------------------------------------------------------------------------------------------
def _replicated_tensor(x: "ht.DNDarray") -> torch.Tensor:
    """The whole of a small DNDarray on every process."""
    if x.split is not None and x.comm.size > 1:
        x = ht.resplit(x, None)
    return x.larray


def _as_model(tensor: torch.Tensor, like: "ht.DNDarray", dtype) -> "ht.DNDarray":
    """A replicated DNDarray of the fitted model from a tensor every process holds alike."""
    tensor = tensor.to(dtype.torch_type()).contiguous()
    return ht.array(tensor, dtype=dtype, split=None, device=like.device, comm=like.comm)


def _flip_and_agree(s: torch.Tensor, vt: torch.Tensor, comm) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    Sign-normalize the rows of ``vt`` (largest-magnitude entry positive, as scikit-learn's
    ``svd_flip(u_based_decision=False)``) and make ``s`` and ``vt`` bitwise identical on every
    process (one broadcast from process 0 of the small factors): each process decomposed the
    same small matrix, but a threaded LAPACK need not round alike everywhere.
    """
    vt = vt.contiguous()
    if vt.numel():
        largest = vt.abs().argmax(dim=1)
        signs = torch.sign(vt.gather(1, largest.unsqueeze(1)))
        signs[signs == 0] = 1
        vt = vt * signs
    if comm.size > 1:
        packed = torch.cat((s.to(vt.dtype).reshape(-1), vt.reshape(-1))).contiguous()
        comm.Bcast(packed, root=0)
        s = packed[: s.numel()].to(s.dtype)
        vt = packed[s.numel() :].reshape(vt.shape)
    return s, vt


def _r_factor_svd(centered: "ht.DNDarray") -> Tuple[torch.Tensor, torch.Tensor]:
    """
    The singular values and right singular vectors of the centred data, replicated: from the
    triangular factor of heat's QR (TSQR for data split along its rows), or, for wide data split
    along its features, from heat's SVD of the transpose.
    """
    n_samples, n_features = centered.shape
    if centered.split == 1 and centered.comm.size > 1 and n_features > n_samples:
        _, s, vt = ht.linalg.svd(centered, full_matrices=False)
        return _replicated_tensor(s), _replicated_tensor(vt)
    r = _replicated_tensor(ht.linalg.qr(centered, mode="r").R)
    _, s, vt = torch.linalg.svd(r, full_matrices=False)
    return s, vt


def _squared_norm(x: "ht.DNDarray") -> float:
    """``||x||_F^2`` in double precision, the same on every process (one all-reduce)."""
    local = float((x.larray.double() ** 2).sum()) if x.larray.numel() else 0.0
    if x.split is not None and x.comm.size > 1:
        local = x.comm.allreduce(local)
    return local


class _BasePCA(TransformMixin, BaseEstimator):
    """``transform`` and ``inverse_transform`` shared by the PCA estimators."""

    def _whitening_scale(self) -> "ht.DNDarray":
        # as scikit-learn: variances below eps are clipped so that whitening stays finite
        scale = self.explained_variance_.larray.sqrt()
        eps = torch.finfo(scale.dtype).eps
        scale = torch.where(scale < eps, torch.full_like(scale, eps), scale)
        return _as_model(scale, self.explained_variance_, self.explained_variance_.dtype)

    def transform(self, x: ArrayLike) -> "ht.DNDarray":
        """
        Project ``x`` onto the principal components: ``(x - mean_) @ components_.T``, divided by
        ``sqrt(explained_variance_)`` when ``whiten``.

        Parameters
        ----------
        x : DNDarray or array_like
            Samples, shape ``(n_samples, n_features)``; any split.

        Returns
        -------
        DNDarray
            Shape ``(n_samples, n_components_)``, split along its rows when ``x`` is.

        Raises
        ------
        NotFittedError
            If the estimator has not been fitted.
        ValueError
            If ``x`` does not have ``n_features_in_`` columns.

        Examples
        --------
        >>> import heat as ht
        >>> x = ht.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], split=0)
        >>> pca = ht.decomposition.PCA(n_components=1).fit(x)
        >>> pca.transform(x).shape
        (3, 1)
        """
        check_is_fitted(self, ["components_"])
        x = validate_samples(x, ensure_finite=False)
        check_n_features(self, x)
        projected = ht.matmul(x - self.mean_, self.components_.T)
        if self.whiten:
            projected = projected / self._whitening_scale()
        return projected

    def inverse_transform(self, x: ArrayLike) -> "ht.DNDarray":
        """
        Map projected samples back to the feature space: ``x @ components_ + mean_`` (undoing the
        whitening first when ``whiten``). Exact for data in the span of the components.

        Parameters
        ----------
        x : DNDarray or array_like
            Projected samples, shape ``(n_samples, n_components_)``.

        Returns
        -------
        DNDarray
            Shape ``(n_samples, n_features_in_)``.

        Raises
        ------
        NotFittedError
            If the estimator has not been fitted.
        ValueError
            If ``x`` does not have ``n_components_`` columns.

        Examples
        --------
        >>> import heat as ht
        >>> x = ht.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], split=0)
        >>> pca = ht.decomposition.PCA().fit(x)
        >>> bool(ht.allclose(pca.inverse_transform(pca.transform(x)), x, atol=1e-5))
        True
        """
        check_is_fitted(self, ["components_"])
        x = validate_samples(x, ensure_finite=False)
        if x.shape[1] != self.n_components_:
            raise ValueError(
                f"x has {x.shape[1]} columns, but {type(self).__name__} has "
                f"{self.n_components_} components"
            )
        components = self.components_
        if self.whiten:
            components = components * self._whitening_scale().reshape((-1, 1))
        return ht.matmul(x, components) + self.mean_


# ---------------------------------------------------------------------------------------------
# PCA
# ---------------------------------------------------------------------------------------------
class PCA(_BasePCA):
    """
    Principal component analysis: the linear projection of the centred data onto the
    ``n_components`` directions of largest variance, found by an SVD of the distributed data
    (scikit-learn's ``sklearn.decomposition.PCA``; see the module docstring for the solvers).

    Parameters
    ----------
    n_components : int, float or None
        How many components to keep. None: ``min(n_samples, n_features)``. An integer in
        ``[1, min(n_samples, n_features)]``. A float in (0, 1): with ``"full"``, the fewest
        components whose explained variance ratio exceeds it (as scikit-learn); with
        ``"hierarchical"``, :func:`heat.linalg.hsvd_rtol` with ``rtol = sqrt(1 - n_components)``,
        which keeps at least that fraction of the variance. Not allowed with ``"randomized"``.
    copy : bool
        Accepted for compatibility: the input is never modified.
    whiten : bool
        Scale the projections to unit variance (divide by ``sqrt(explained_variance_)``).
    svd_solver : {"full", "hierarchical", "randomized"}
        The SVD used (module docstring).
    tol : float or None
        Accepted for compatibility (scikit-learn uses it for ARPACK only); must be None or >= 0.
    iterated_power : int or "auto"
        Power iterations of the randomized solver; "auto": 7 if ``n_components`` is less than
        a tenth of ``min(n_samples, n_features)``, else 4 (as scikit-learn).
    n_oversamples : int
        Extra random samples of the randomized solver.
    power_iteration_normalizer : {"qr", "auto"}
        How the randomized solver's power iterations are orthonormalized; QR (TSQR) is the only
        one, "auto" selects it.
    random_state : int or None
        Seed of the randomized solver (heat's generator is reseeded for the call and its state
        restored after it); None uses heat's generator as it is.

    Attributes
    ----------
    components_ : DNDarray
        The principal axes, ``(n_components_, n_features)``, rows of unit length in order of
        decreasing variance; replicated.
    explained_variance_ : DNDarray
        The variance along each component, ``singular_values_**2 / (n_samples - 1)``.
    explained_variance_ratio_ : DNDarray
        ``explained_variance_`` divided by the total variance (sum of the column variances).
    total_explained_variance_ratio_ : float
        HeAT's share of the total variance that the components explain together: the sum of
        ``explained_variance_ratio_`` for "full" and "randomized"; for "hierarchical", HeAT's
        lower estimate ``1 - error**2`` from the hierarchical SVD's bound ``error`` on the
        relative error (see :func:`heat.linalg.hsvd_rank`).
    singular_values_ : DNDarray
        The singular values of the centred data belonging to the components.
    mean_ : DNDarray
        The per-feature mean, ``(n_features,)``.
    n_components_ : int
        The number of components.
    n_samples_ : int
        The number of samples seen by ``fit``.
    n_features_in_ : int
        The number of features seen by ``fit``.
    noise_variance_ : float
        The variance not explained by the components, averaged over the remaining
        ``min(n_samples, n_features) - n_components_`` directions (probabilistic PCA, Tipping
        and Bishop); 0.0 when none remain.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[2.0, 0.0], [0.0, 1.0], [-2.0, 0.0], [0.0, -1.0]], split=0)
    >>> pca = ht.decomposition.PCA(n_components=1).fit(x)
    >>> pca.components_
    DNDarray([[1., 0.]], dtype=ht.float32, device=cpu:0, split=None)
    >>> pca.explained_variance_ratio_
    DNDarray([0.8], dtype=ht.float32, device=cpu:0, split=None)
    >>> round(pca.total_explained_variance_ratio_, 6)
    0.8
    """

    def __init__(
        self,
        n_components: Optional[Union[int, float]] = None,
        copy: bool = True,
        whiten: bool = False,
        svd_solver: str = "full",
        tol: Optional[float] = None,
        iterated_power: Union[int, str] = 0,
        n_oversamples: int = 10,
        power_iteration_normalizer: str = "qr",
        random_state: Optional[int] = None,
    ):
        self.n_components = n_components
        self.copy = copy
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.tol = tol
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state

    # -- checks -----------------------------------------------------------------------------
    def _check_params(self) -> None:
        """Everything that does not depend on the data."""
        check_bool(self.copy, "copy")
        check_bool(self.whiten, "whiten")
        if not isinstance(self.svd_solver, str):
            raise TypeError(
                f"svd_solver must be a string, but was {type(self.svd_solver).__name__}"
            )
        if self.svd_solver not in _SOLVERS:
            raise ValueError(f"svd_solver must be one of {_SOLVERS}, but was {self.svd_solver!r}")
        n_components = self.n_components
        if n_components is not None and not _is_real(n_components):
            raise TypeError(
                f"n_components must be None, an integer or a float, but was "
                f"{type(n_components).__name__}"
            )
        if n_components is not None and not _is_int(n_components):
            if self.svd_solver == "randomized":
                raise ValueError(
                    f"n_components must be None or an integer with svd_solver='randomized', "
                    f"but was {n_components!r}"
                )
            if not 0 < n_components < 1:
                raise ValueError(
                    f"n_components as a float must be in (0, 1), but was {n_components!r}"
                )
        if self.tol is not None:
            if not _is_real(self.tol):
                raise TypeError(f"tol must be None or a number, but was {type(self.tol).__name__}")
            if not self.tol >= 0:
                raise ValueError(f"tol must be non-negative, but was {self.tol!r}")
        if not (isinstance(self.iterated_power, str) and self.iterated_power == "auto"):
            if isinstance(self.iterated_power, str):
                raise ValueError(
                    f"iterated_power must be 'auto' or an integer, but was {self.iterated_power!r}"
                )
            check_int(self.iterated_power, "iterated_power", 0)
        check_int(self.n_oversamples, "n_oversamples", 0)
        normalizer = self.power_iteration_normalizer
        if not isinstance(normalizer, str) or normalizer.lower() not in ("qr", "auto"):
            raise ValueError(
                f"power_iteration_normalizer must be 'qr' or 'auto' (heat orthonormalizes with "
                f"QR), but was {normalizer!r}"
            )
        state = self.random_state
        if state is not None:
            if not _is_int(state):
                raise TypeError(
                    f"random_state must be None or an integer, but was {type(state).__name__}"
                )
            if not 0 <= state < 2**64:
                raise ValueError(f"random_state must be in [0, 2**64), but was {state}")

    def _resolved_components(self, n_samples: int, n_features: int) -> Union[int, float]:
        """``n_components`` checked against the data's shape; None becomes the maximum."""
        largest = min(n_samples, n_features)
        if self.n_components is None:
            return largest
        if _is_int(self.n_components):
            if not 1 <= self.n_components <= largest:
                raise ValueError(
                    f"n_components={self.n_components} must be between 1 and "
                    f"min(n_samples, n_features)={largest} with svd_solver={self.svd_solver!r}"
                )
            return int(self.n_components)
        return float(self.n_components)

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, x: ArrayLike, y: Any = None) -> "PCA":
        """
        Fit the model: the mean and the principal components of ``x``. Collective.

        Parameters
        ----------
        x : DNDarray or array_like
            Training samples, shape ``(n_samples, n_features)``, ``n_samples >= 2``; any split
            (a NumPy array or tensor is taken as the same data on every process).
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            If a parameter or ``x`` has the wrong type.
        ValueError
            If a parameter is out of range (``n_components`` larger than
            ``min(n_samples, n_features)``, an unknown ``svd_solver``, ...), or ``x`` is not 2-D,
            has fewer than 2 samples, or contains NaN or infinity. Every process raises alike.

        Examples
        --------
        >>> import heat as ht
        >>> x = ht.random.randn(100, 5, split=0)
        >>> ht.decomposition.PCA(n_components=2, svd_solver="hierarchical").fit(x).n_components_
        2
        """
        self._check_params()
        x = validate_samples(x, min_samples=2)
        n_samples, n_features = x.shape
        n_components = self._resolved_components(n_samples, n_features)
        dtype = x.dtype
        mean = ht.mean(x, axis=0)
        mean_tensor = _replicated_tensor(mean)
        mean = _as_model(mean_tensor, x, dtype)
        centered = x - mean
        largest = min(n_samples, n_features)
        error = None  # the hierarchical SVD's relative error estimate
        if self.svd_solver == "full":
            s, vt = _r_factor_svd(centered)
            s, vt = _flip_and_agree(s, vt, x.comm)
            variance_all = s.double() ** 2 / (n_samples - 1)
            total_variance = float(variance_all.sum())
            if not _is_int(n_components):
                ratio_cumsum = torch.cumsum(variance_all / total_variance, 0)
                threshold = torch.tensor(
                    [n_components], dtype=ratio_cumsum.dtype, device=ratio_cumsum.device
                )
                found = int(torch.searchsorted(ratio_cumsum, threshold, right=True)) + 1
                n_components = min(found, s.numel())
            remaining = variance_all[n_components:]
            noise_variance = float(remaining.mean()) if n_components < largest else 0.0
        else:
            total_variance = _squared_norm(centered) / (n_samples - 1)
            s, vt, error = self._truncated_svd(centered, n_components)
            s, vt = _flip_and_agree(s, vt, x.comm)
            n_components = s.numel()
            explained = float((s.double() ** 2).sum()) / (n_samples - 1)
            if n_components < largest:
                # the remaining variance, never negative through rounding
                noise_variance = max(0.0, total_variance - explained) / (largest - n_components)
            else:
                noise_variance = 0.0
        s, vt = s[:n_components], vt[:n_components]
        variance = s.double() ** 2 / (n_samples - 1)
        ratio = variance / total_variance if total_variance > 0 else torch.zeros_like(variance)

        self.n_features_in_ = n_features
        self.n_samples_ = n_samples
        self.n_components_ = int(n_components)
        self.mean_ = mean
        self.components_ = _as_model(vt, x, dtype)
        self.singular_values_ = _as_model(s, x, dtype)
        self.explained_variance_ = _as_model(variance, x, dtype)
        self.explained_variance_ratio_ = _as_model(ratio, x, dtype)
        if self.svd_solver == "hierarchical":
            # HeAT's lower estimate: the hierarchical SVD bounds the relative error from above
            self.total_explained_variance_ratio_ = 1.0 - float(error) ** 2
        else:
            self.total_explained_variance_ratio_ = float(ratio.sum())
        self.noise_variance_ = float(noise_variance)
        return self

    def _truncated_svd(
        self, centered: "ht.DNDarray", n_components: Union[int, float]
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """
        Singular values, right singular vectors and (hierarchical only, else None) the relative
        error estimate of the hierarchical or randomized SVD.
        """
        if self.svd_solver == "hierarchical":
            if _is_int(n_components):
                _, s, vt, error = ht.linalg.hsvd_rank(centered, n_components, compute_sv=True)
            else:
                rtol = math.sqrt(1.0 - n_components)
                _, s, vt, error = ht.linalg.hsvd_rtol(centered, rtol, compute_sv=True)
            return _replicated_tensor(s), _replicated_tensor(vt), error
        power = self.iterated_power
        if power == "auto":
            power = 7 if n_components < 0.1 * min(centered.shape) else 4
        saved = None
        if self.random_state is not None:
            saved = ht.random.get_state()
            ht.random.seed(int(self.random_state))
        try:
            _, s, vt = ht.linalg.rsvd(
                centered, n_components, n_oversamples=int(self.n_oversamples), power_iter=int(power)
            )
        finally:
            if saved is not None:
                ht.random.set_state(saved)
        return _replicated_tensor(s), _replicated_tensor(vt), None


# ---------------------------------------------------------------------------------------------
# IncrementalPCA
# ---------------------------------------------------------------------------------------------
def _batch_moments(x: "ht.DNDarray") -> Tuple[torch.Tensor, torch.Tensor]:
    """Per-feature mean and (ddof=0) variance of a batch, replicated, in double precision."""
    x64 = x.astype(ht.float64) if x.dtype is not ht.float64 else x
    mean = _replicated_tensor(ht.mean(x64, axis=0))
    var = _replicated_tensor(ht.var(x64, axis=0))
    return mean, var


class IncrementalPCA(_BasePCA):
    """
    Principal component analysis fitted batch by batch (scikit-learn's
    ``sklearn.decomposition.IncrementalPCA``): memory beyond one batch is
    ``O(n_components x n_features)``, so data larger than memory can be fitted window by window
    with :meth:`partial_fit`.

    Each batch updates the SVD of all data seen so far (Ross, Lim, Lin and Yang, 2008): the
    previous components scaled by their singular values, the centred batch and one row that
    corrects for the shift between the old and the batch mean are stacked, and the top right
    singular vectors of the stack are the new components. The batch enters through the
    triangular factor of heat's QR of the centred batch (TSQR for a batch split along its rows),
    which has the same singular values and right singular vectors; the small stack is decomposed
    on every process. The running mean and variance are merged with Chan's pairwise update.

    Parameters
    ----------
    n_components : int or None
        How many components to keep; None: ``min(n_samples, n_features)`` of the first batch.
        Every batch must have at least ``n_components`` samples.
    copy : bool
        Accepted for compatibility: the input is never modified.
    whiten : bool
        Scale the projections to unit variance.
    batch_size : int or None
        Samples per batch in :meth:`fit`; None: ``5 * n_features``.

    Attributes
    ----------
    components_, explained_variance_, explained_variance_ratio_, singular_values_, mean_ : DNDarray
        As :class:`PCA`, for all samples seen so far (replicated).
    var_ : DNDarray
        The per-feature variance (ddof=0) of all samples seen.
    n_components_ : int
        The number of components.
    n_samples_seen_ : int
        The number of samples seen so far.
    n_features_in_ : int
        The number of features.
    noise_variance_ : float
        As :class:`PCA`, estimated from the singular values of the last update.
    batch_size_ : int
        The batch size used by :meth:`fit`.

    Examples
    --------
    >>> import heat as ht
    >>> ipca = ht.decomposition.IncrementalPCA(n_components=2)
    >>> for start in range(0, 60, 20):
    ...     _ = ipca.partial_fit(ht.random.randn(20, 4, split=0))
    >>> ipca.n_samples_seen_, ipca.components_.shape
    (60, (2, 4))
    """

    def __init__(
        self,
        n_components: Optional[int] = None,
        copy: bool = True,
        whiten: bool = False,
        batch_size: Optional[int] = None,
    ):
        self.n_components = n_components
        self.copy = copy
        self.whiten = whiten
        self.batch_size = batch_size

    def _check_params(self) -> None:
        check_int(self.n_components, "n_components", 1, allow_none=True)
        check_bool(self.copy, "copy")
        check_bool(self.whiten, "whiten")
        check_int(self.batch_size, "batch_size", 1, allow_none=True)

    def _reset(self) -> None:
        for name in (
            "components_",
            "explained_variance_",
            "explained_variance_ratio_",
            "singular_values_",
            "mean_",
            "var_",
            "n_samples_seen_",
            "noise_variance_",
            "n_components_",
            "n_features_in_",
            "batch_size_",
            "_running_mean",
            "_running_var",
            "_dtype",
        ):
            if name in vars(self):
                delattr(self, name)

    def fit(
        self,
        x: Union[ArrayLike, PathLike],
        y: Any = None,
        chunk_size: Optional[int] = None,
        dataset: str = "DATA",
    ) -> "IncrementalPCA":
        """
        Fit the model from scratch with batches of ``batch_size_`` rows of ``x`` (the last
        batch absorbs a remainder smaller than ``n_components``, as scikit-learn). Collective.

        ``x`` may also be the path of an HDF5 file (HeAT's interface): the 2-D dataset
        ``dataset`` is then read in chunks of ``chunk_size`` rows (each split along its rows
        over the processes, :func:`heat.load_hdf5`), and every chunk updates the model as one
        :meth:`partial_fit`, so only one chunk is in memory at a time. As for arrays, a last
        chunk with fewer than ``n_components`` rows is merged into the one before it.
        ``batch_size_`` is then ``chunk_size``. As in HeAT, the chunk size may follow the path
        positionally: ``fit(path, chunk_size)`` or ``fit(path, chunk_size, dataset)``.

        Parameters
        ----------
        x : DNDarray, array_like, str or os.PathLike
            Training samples, shape ``(n_samples, n_features)``, any split; or an HDF5 file
            holding them.
        y : None
            Ignored (with a path: the chunk size, where given positionally as in HeAT).
        chunk_size : int, optional
            With a path (then required): the rows read and fitted at once, between
            ``n_components`` and the dataset's number of rows. Ignored with an array.
        dataset : str
            With a path: the dataset of the file (default ``"DATA"``). Ignored with an array.

        Returns
        -------
        self

        Raises
        ------
        TypeError, ValueError
            As :meth:`partial_fit`, on every process alike. With a path also: ValueError if the
            file is no HDF5 file, the dataset is not 2-D, ``chunk_size`` is missing, exceeds the
            number of rows or is below ``n_components``; TypeError if ``chunk_size`` is no int
            or ``dataset`` no str.
        FileNotFoundError, KeyError
            With a path: if the file or the dataset does not exist (on every process alike).

        Examples
        --------
        >>> import heat as ht
        >>> x = ht.random.randn(50, 4, split=0)
        >>> ht.decomposition.IncrementalPCA(n_components=2, batch_size=20).fit(x).n_samples_seen_
        50

        From an HDF5 file, 20 rows at a time:

        >>> ht.save_hdf5(x, "samples.h5", "DATA")
        >>> ipca = ht.decomposition.IncrementalPCA(n_components=2)
        >>> ipca.fit("samples.h5", chunk_size=20).n_samples_seen_
        50
        """
        if isinstance(x, (str, os.PathLike)):
            return self._fit_file(x, y, chunk_size, dataset)
        warn_ignored(chunk_size, "chunk_size", None, "x is an array, not a file")
        warn_ignored(dataset, "dataset", "DATA", "x is an array, not a file")
        self._check_params()
        x = validate_samples(x, min_samples=1)
        self._reset()
        n_samples, n_features = x.shape
        self.batch_size_ = 5 * n_features if self.batch_size is None else int(self.batch_size)
        if self.n_components is not None and self.n_components > n_features:
            raise ValueError(
                f"n_components={self.n_components} must be at most n_features={n_features}"
            )
        for start, stop in _batches(n_samples, self.batch_size_, self.n_components or 0):
            self._partial_fit(x[start:stop])
        return self

    def _fit_file(self, path: PathLike, y: Any, chunk_size: Any, dataset: Any) -> "IncrementalPCA":
        """:meth:`fit` from the dataset ``dataset`` of the HDF5 file ``path``, chunk by chunk."""
        if y is not None:  # HeAT's positional fit(path, chunk_size[, dataset])
            if isinstance(chunk_size, str) and dataset == "DATA":
                dataset = chunk_size
            elif chunk_size is not None:
                raise TypeError(
                    f"chunk_size was given twice: positionally ({y!r}) and as chunk_size "
                    f"({chunk_size!r})"
                )
            chunk_size = y
        self._check_params()
        if chunk_size is None:
            raise ValueError("chunk_size is required when x is the path of an HDF5 file")
        chunk_size = check_int(chunk_size, "chunk_size", 1)
        check_type(dataset, "dataset", str, "a str")
        path = os.fspath(path)
        n_samples, n_features = _hdf5_matrix_shape(path, dataset, ht.get_comm())
        if chunk_size > n_samples:
            raise ValueError(
                f"chunk_size must be at most the number of rows of dataset '{dataset}' "
                f"({n_samples}), got {chunk_size}"
            )
        if self.n_components is not None:
            if self.n_components > n_features:
                raise ValueError(
                    f"n_components={self.n_components} must be at most n_features={n_features}"
                )
            if chunk_size < self.n_components:
                raise ValueError(
                    f"chunk_size must be >= n_components={self.n_components} (every chunk is "
                    f"one partial_fit), got {chunk_size}"
                )
        self._reset()
        self.batch_size_ = chunk_size
        for start, stop in _batches(n_samples, chunk_size, self.n_components or 0):
            chunk = ht.load_hdf5(path, dataset, slices=(slice(start, stop),), split=0)
            self._partial_fit(validate_samples(chunk, min_samples=1))
        return self

    def partial_fit(self, x: ArrayLike, y: Any = None) -> "IncrementalPCA":
        """
        Update the model with one batch of samples. Collective: every process calls it equally
        often, each with its part of the batch (e.g. ``ht.array(local_rows, is_split=0)``).

        Parameters
        ----------
        x : DNDarray or array_like
            The batch, shape ``(n_batch, n_features)`` with ``n_batch >= n_components``.
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            If a parameter or ``x`` has the wrong type.
        ValueError
            If ``n_components`` exceeds the batch's samples or features, the number of features
            changed, or ``x`` contains NaN or infinity. Every process raises alike.

        Examples
        --------
        >>> import heat as ht
        >>> ipca = ht.decomposition.IncrementalPCA(n_components=1)
        >>> ipca.partial_fit(ht.random.randn(10, 3, split=0)).n_samples_seen_
        10
        """
        self._check_params()
        x = validate_samples(x, min_samples=1)
        return self._partial_fit(x)

    def _partial_fit(self, x: "ht.DNDarray") -> "IncrementalPCA":
        n_batch, n_features = x.shape
        first = "components_" not in vars(self)
        if not first:
            check_n_features(self, x)
        if self.n_components is None:
            n_components = min(n_batch, n_features) if first else self.n_components_
        elif self.n_components > n_features:
            raise ValueError(
                f"n_components={self.n_components} must be at most n_features={n_features}"
            )
        elif self.n_components > n_batch:
            raise ValueError(
                f"n_components={self.n_components} must be less or equal to the batch number "
                f"of samples {n_batch}"
            )
        else:
            n_components = int(self.n_components)
        if not first and n_components != self.n_components_:
            raise ValueError(
                f"the number of components changed from {self.n_components_} to {n_components} "
                f"between calls to partial_fit; set n_components to a fixed value"
            )
        dtype = self._dtype if not first else x.dtype
        if x.dtype is not dtype:
            x = x.astype(dtype)
        torch_type = dtype.torch_type()

        batch_mean, batch_var = _batch_moments(x)
        seen = 0 if first else self.n_samples_seen_
        total = seen + n_batch
        if first:
            mean, var = batch_mean, batch_var
        else:
            old_mean, old_var = self._running_mean, self._running_var
            delta = batch_mean - old_mean
            mean = old_mean + delta * (n_batch / total)
            m2 = old_var * seen + batch_var * n_batch + delta**2 * (seen * n_batch / total)
            var = m2 / total

        centered = x - _as_model(batch_mean, x, dtype)
        r = _replicated_tensor(ht.linalg.qr(centered, mode="r").R).to(torch_type)
        if first:
            stack = r
        else:
            previous = self.singular_values_.larray.unsqueeze(1) * self.components_.larray
            correction = math.sqrt(seen / total * n_batch) * (old_mean - batch_mean)
            stack = torch.cat((previous, r, correction.to(torch_type).unsqueeze(0)))
        _, s, vt = torch.linalg.svd(stack, full_matrices=False)
        s, vt = _flip_and_agree(s, vt, x.comm)

        variance_all = (
            s.double() ** 2 / (total - 1)
            if total > 1
            else torch.full_like(s, float("nan"), dtype=torch.float64)
        )
        total_variance = float((var * total).sum())
        ratio_all = (
            s.double() ** 2 / total_variance
            if total_variance > 0
            else torch.zeros_like(s, dtype=torch.float64)
        )
        if n_components not in (n_batch, n_features) and variance_all.numel() > n_components:
            noise_variance = float(variance_all[n_components:].mean())
        else:
            noise_variance = 0.0

        self._dtype = dtype
        self._running_mean, self._running_var = mean, var
        self.n_features_in_ = n_features
        self.n_components_ = n_components
        self.n_samples_seen_ = total
        self.mean_ = _as_model(mean, x, dtype)
        self.var_ = _as_model(var, x, dtype)
        self.components_ = _as_model(vt[:n_components], x, dtype)
        self.singular_values_ = _as_model(s[:n_components], x, dtype)
        self.explained_variance_ = _as_model(variance_all[:n_components], x, dtype)
        self.explained_variance_ratio_ = _as_model(ratio_all[:n_components], x, dtype)
        self.noise_variance_ = noise_variance
        return self


def _hdf5_matrix_shape(path: str, dataset: str, comm) -> Tuple[int, int]:
    """
    The shape of the 2-D dataset ``dataset`` of the HDF5 file ``path``. Every process reads the
    metadata; one all-gather then agrees, so a file one process cannot read raises the same
    error on all of them.
    """
    outcome: Tuple[str, Any]
    try:
        if not ht.supports_hdf5():
            raise RuntimeError("reading an HDF5 file needs h5py, which is not installed")
        import h5py

        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such file: '{path}'")
        if not h5py.is_hdf5(path):
            raise ValueError(f"'{path}' is not an HDF5 file")
        with h5py.File(path, "r") as handle:
            node = handle.get(dataset)
            if not isinstance(node, h5py.Dataset):
                raise KeyError(f"'{path}' has no dataset '{dataset}'")
            shape = tuple(int(n) for n in node.shape)
        if len(shape) != 2:
            raise ValueError(
                f"dataset '{dataset}' of '{path}' must be 2-D (samples x features), got shape "
                f"{shape}"
            )
        outcome = ("shape", shape)
    except (OSError, ValueError, KeyError, RuntimeError) as error:
        outcome = ("error", (type(error), error.args))
    outcomes = comm.allgather(outcome)
    for kind, value in outcomes:
        if kind == "error":
            kind_of_error, args = value
            raise kind_of_error(*args)
    shapes = {value for _, value in outcomes}
    if len(shapes) != 1:
        raise ValueError(f"the processes see different shapes of '{dataset}' in '{path}': {shapes}")
    return shapes.pop()


def _batches(n: int, batch_size: int, min_batch_size: int):
    """``(start, stop)`` of consecutive batches, as scikit-learn's ``gen_batches``: a last batch
    smaller than ``min_batch_size`` is merged into the one before it."""
    start = 0
    for _ in range(n // batch_size):
        stop = start + batch_size
        if stop + min_batch_size > n:
            continue
        yield start, stop
        start = stop
    if start < n:
        yield start, n
