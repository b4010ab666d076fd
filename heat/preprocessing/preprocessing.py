"""
Scalers and normalizers of features, as scikit-learn's ``sklearn.preprocessing``.

Samples are rows and features columns; the data may be split along either axis (split=0, many
samples spread over the processes, is the common case). Every per-feature statistic is computed
locally first and then combined across processes with one small collective:

- moments (:class:`StandardScaler`): each process reduces its block to (count, mean, sum of
  squared deviations), and the parts are merged with the pairwise update of Chan, Golub and
  LeVeque, which stays accurate where the textbook ``E[x^2] - E[x]^2`` cancels catastrophically.
  The same update folds each ``partial_fit`` window into the running statistics, so a file
  larger than memory is fitted window by window with the accuracy of one pass over all of it;
- extrema (:class:`MinMaxScaler`, :class:`MaxAbsScaler`) combine by min/max;
- quantiles (:class:`RobustScaler`) come from :func:`heat.percentile`.

The fitted statistics are replicated on every process (DNDarrays with ``split=None``), so
``transform`` and ``inverse_transform`` are local: no communication, and the result keeps the
layout of the input. They also accept a NumPy array or a torch tensor, which is then transformed
on the calling process alone and returned as the same type, e.g. a batch that one process of a
data-parallel training loop streamed.

``fit`` and ``partial_fit`` take DNDarrays; a NumPy array or torch tensor is read as the same
data on every process (as :func:`heat.array`). To fit a window that each process read itself,
join the windows first: ``scaler.partial_fit(ht.array(local_batch, is_split=0))``.

Unlike scikit-learn, which ignores NaN as missing values, ``fit`` raises ValueError on NaN or
infinity (on every process alike).
"""

from __future__ import annotations

import math
import numbers
import statistics
from typing import Any, Callable, Optional, Tuple, Union

import numpy as np
import torch

import heat as ht
from heat.core.base import BaseEstimator, TransformMixin, check_is_fitted
from heat.core.sanitation import check_bool, warn_ignored
from heat.utils.validation import (
    check_n_features,
    validate_samples,
)

__all__ = ["MaxAbsScaler", "MinMaxScaler", "Normalizer", "RobustScaler", "StandardScaler"]

ArrayLike = Union["ht.DNDarray", np.ndarray, torch.Tensor]


# ---------------------------------------------------------------------------------------------
# shared helpers: per-feature statistics and local element-wise application
# ---------------------------------------------------------------------------------------------
def _feature_statistics(
    x: "ht.DNDarray",
    local_statistics: Callable[[torch.Tensor], torch.Tensor],
    merge: Callable[[torch.Tensor], torch.Tensor],
) -> torch.Tensor:
    """
    Per-feature statistics of the 2-D ``x``, replicated on every process. Collective.

    ``local_statistics(block)`` reduces a block of rows to a ``(s, features)`` tensor (it must
    handle zero rows); ``merge(parts)`` combines the ``(p, s, features)`` parts of ``p`` row
    blocks, in process order, to ``(s, features)``. A split along the features needs no merge:
    each process's columns are complete, and one all-gather joins them.
    """
    local = local_statistics(x.larray)
    if x.split is None or x.comm.size == 1:
        return local
    if x.split == 1:
        return x.comm.allgather_tensors(local, axis=1)
    parts = x.comm.allgather_tensors(local.unsqueeze(0), axis=0)
    return merge(parts)


def _local_columns(x: "ht.DNDarray", statistic: torch.Tensor) -> torch.Tensor:
    """The entries of a per-feature ``statistic`` that belong to the local block's columns."""
    if x.split != 1 or x.comm.size == 1:
        return statistic
    counts, displs = x.counts_displs()
    start = displs[x.comm.rank]
    return statistic[start : start + counts[x.comm.rank]]


def _transformed(
    x: ArrayLike,
    estimator: BaseEstimator,
    apply: Callable[..., torch.Tensor],
    copy: bool,
) -> ArrayLike:
    """
    Apply the element-wise ``apply(block, columns, array)`` to ``x`` without communication
    (``array``: ``x`` as a validated DNDarray); ``columns`` maps a replicated per-feature
    statistic to the block's columns (in the block's type).

    DNDarrays keep their layout; NumPy arrays and torch tensors are treated as local data and
    returned as the same type. ``copy=False`` writes into ``x`` where its type allows.
    """
    check_is_fitted(estimator)
    kind = "heat"
    # local data stays where it is (NumPy on the CPU, a tensor on its device), so that copy=False
    # can write into it
    if isinstance(x, np.ndarray):
        kind, x = "numpy", ht.array(x, copy=None, comm=ht.MPI_SELF, device="cpu")
    elif isinstance(x, torch.Tensor):
        device = "gpu" if x.is_cuda else "cpu"
        kind, x = "torch", ht.array(x, copy=None, comm=ht.MPI_SELF, device=device)
    validated = validate_samples(x, ensure_finite=False)
    if hasattr(estimator, "n_features_in_"):  # a stateless one may not have been fitted
        check_n_features(estimator, validated)
    block = validated.larray
    if copy and validated is x:  # (a converted copy may be overwritten)
        block = block.clone()

    def columns(statistic: torch.Tensor) -> torch.Tensor:
        return _local_columns(validated, statistic).to(block.device, block.dtype, copy=False)

    result = apply(block, columns, validated)
    if kind == "torch":
        return result
    if kind == "numpy":
        return result.cpu().numpy()
    return ht.DNDarray(
        result,
        validated.gshape,
        validated.dtype,
        validated.split,
        validated.device,
        validated.comm,
        validated.balanced if validated.split is not None else True,
    )


def _zeros_to_one(scale: torch.Tensor, constant: Optional[torch.Tensor] = None) -> torch.Tensor:
    """
    Scales of constant features become 1, so that they are not divided by (nearly) zero:
    those flagged by ``constant``, else those below ten machine epsilons.
    """
    if constant is None:
        constant = scale < 10 * torch.finfo(scale.dtype).eps
    return torch.where(constant, torch.ones_like(scale), scale)


def _replicated(statistic: torch.Tensor, like: "ht.DNDarray", dtype=None) -> "ht.DNDarray":
    """A per-feature statistic as a DNDarray every process holds (split=None)."""
    return ht.array(statistic.to(like.larray.device), dtype=dtype, comm=like.comm)


def _check_partial_fit_features(estimator: BaseEstimator, x: "ht.DNDarray") -> bool:
    """Whether this is the first window of a ``partial_fit`` sequence (else check the features)."""
    if getattr(estimator, "n_samples_seen_", 0) == 0:
        return True
    check_n_features(estimator, x)
    return False


# ---------------------------------------------------------------------------------------------
# what the scalers share: transform, inverse_transform, fit as the first window of partial_fit
# ---------------------------------------------------------------------------------------------
class _Scaler(TransformMixin, BaseEstimator):
    """A transformer whose ``transform`` is the local, element-wise ``_forward``."""

    def transform(self, x: ArrayLike, copy: Optional[bool] = None) -> ArrayLike:
        """
        Transform ``x`` with the fitted statistics. Local (no communication, except for a
        :class:`Normalizer` of data split along the features); the result keeps ``x``'s layout.

        Parameters
        ----------
        x : DNDarray, numpy.ndarray or torch.Tensor
            Samples, shape ``(n_samples, n_features)``. NumPy arrays and tensors are transformed
            on the calling process alone and returned as the same type.
        copy : bool, optional
            Overrides the estimator's ``copy``.

        Returns
        -------
        DNDarray, numpy.ndarray or torch.Tensor
            The transformed samples, the type of ``x`` (integers become floating point).

        Raises
        ------
        NotFittedError
            If the estimator has not been fitted.
        ValueError
            If ``x`` has another number of features than the fitted data.
        """
        check_is_fitted(self, ["n_features_in_"])
        return _transformed(x, self, self._forward, self.copy if copy is None else copy)

    def _forward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        raise NotImplementedError


class _InvertibleScaler(_Scaler):
    """A :class:`_Scaler` with ``inverse_transform``, the element-wise ``_backward``."""

    def inverse_transform(self, x: ArrayLike, copy: Optional[bool] = None) -> ArrayLike:
        """
        Undo :meth:`transform`: the samples in their original units. Local; the result keeps
        ``x``'s layout.

        Parameters
        ----------
        x : DNDarray, numpy.ndarray or torch.Tensor
            Transformed samples, shape ``(n_samples, n_features)``.
        copy : bool, optional
            Overrides the estimator's ``copy``.

        Returns
        -------
        DNDarray, numpy.ndarray or torch.Tensor
            The samples in their original units, the type of ``x``.

        Raises
        ------
        NotFittedError
            If the estimator has not been fitted.
        ValueError
            If ``x`` has another number of features than the fitted data.
        """
        check_is_fitted(self, ["n_features_in_"])
        return _transformed(x, self, self._backward, self.copy if copy is None else copy)

    def _backward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        raise NotImplementedError


class _IncrementalScaler(_InvertibleScaler):
    """An invertible scaler fitted window by window: ``fit`` is ``partial_fit`` from scratch."""

    # the fitted state, forgotten by fit
    _fitted_names: Tuple[str, ...] = ()

    def fit(self, x: ArrayLike, y: Any = None):
        """
        Compute the statistics of ``x``, forgetting earlier windows. Collective.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``, split along either axis.
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        TypeError, ValueError
            As ``partial_fit``.
        """
        for name in self._fitted_names + ("n_samples_seen_", "n_features_in_"):
            if hasattr(self, name):
                delattr(self, name)
        return self.partial_fit(x)

    def partial_fit(self, x: ArrayLike, y: Any = None):
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# StandardScaler
# ---------------------------------------------------------------------------------------------
def _moments(block: torch.Tensor) -> torch.Tensor:
    """(count, mean, sum of squared deviations) per column of a block, in float64."""
    rows = block.shape[0]
    values = block.to(torch.float64)
    count = torch.full((block.shape[1],), float(rows), dtype=torch.float64, device=block.device)
    if rows == 0:
        zeros = torch.zeros_like(count)
        return torch.stack([count, zeros, zeros])
    mean = values.mean(dim=0)
    squares = ((values - mean) ** 2).sum(dim=0)
    return torch.stack([count, mean, squares])


def _merge_moments(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """Chan et al.'s pairwise update of two (count, mean, M2) stacks."""
    n_a, mean_a, m2_a = first
    n_b, mean_b, m2_b = second
    n = n_a + n_b
    safe_n = torch.where(n > 0, n, torch.ones_like(n))
    delta = mean_b - mean_a
    mean = mean_a + delta * (n_b / safe_n)
    m2 = m2_a + m2_b + delta * delta * (n_a * n_b / safe_n)
    return torch.stack([n, mean, m2])


def _merge_moment_parts(parts: torch.Tensor) -> torch.Tensor:
    merged = parts[0]
    for part in parts[1:]:
        merged = _merge_moments(merged, part)
    return merged


class StandardScaler(_IncrementalScaler):
    """
    Standardize features: subtract the mean and divide by the standard deviation, ``z = (x - u)
    / s``, as :class:`sklearn.preprocessing.StandardScaler`.

    Parameters
    ----------
    copy : bool
        If False, ``transform`` and ``inverse_transform`` overwrite their input where its type
        allows (a floating-point DNDarray, tensor or array).
    with_mean : bool
        Subtract the mean.
    with_std : bool
        Divide by the standard deviation (population, ``ddof=0``). Features with (numerically)
        zero variance are left unscaled.

    Attributes
    ----------
    mean_ : DNDarray or None
        Per-feature mean, float64, replicated (None if neither ``with_mean`` nor ``with_std``).
    var_ : DNDarray or None
        Per-feature variance, float64 (None if not ``with_std``).
    scale_ : DNDarray or None
        Per-feature scale, ``sqrt(var_)`` with zeros replaced by 1 (None if not ``with_std``).
    n_samples_seen_ : int
        Samples seen by ``fit``, or by all ``partial_fit`` calls since the last ``fit``.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [1.0, 1.0]], split=0)
    >>> scaler = ht.preprocessing.StandardScaler().fit(x)
    >>> scaler.mean_
    DNDarray([0.5, 0.5], dtype=ht.float64, device=cpu:0, split=None)
    >>> scaler.transform(ht.array([[2.0, 2.0]]))
    DNDarray([[3., 3.]], dtype=ht.float32, device=cpu:0, split=None)

    Window by window, e.g. from a file larger than memory:

    >>> scaler = ht.preprocessing.StandardScaler()
    >>> for start in range(0, 4, 2):
    ...     scaler = scaler.partial_fit(x[start : start + 2])
    >>> scaler.var_
    DNDarray([0.25, 0.25], dtype=ht.float64, device=cpu:0, split=None)
    """

    _fitted_names = ("mean_", "var_", "scale_", "_moments")

    def __init__(self, *, copy: bool = True, with_mean: bool = True, with_std: bool = True):
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std

    def partial_fit(self, x: ArrayLike, y: Any = None) -> "StandardScaler":
        """
        Fold the window ``x`` into the running mean and variance. Collective.

        Parameters
        ----------
        x : DNDarray
            One window of samples, shape ``(n_window, n_features)``.
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            If ``x`` is not an array of real numbers.
        ValueError
            If ``x`` is not 2-D, holds NaN or infinity, or has another number of features than
            the windows before it.
        """
        x = validate_samples(x)
        first = _check_partial_fit_features(self, x)
        window = _feature_statistics(x, _moments, _merge_moment_parts)
        if first:
            self.n_features_in_ = x.shape[1]
            self.n_samples_seen_ = 0
            running = window
        else:
            running = _merge_moments(self._moments, window)
        self._moments = running
        self.n_samples_seen_ += x.shape[0]
        count, mean, squares = running
        if self.with_std:
            safe_count = torch.where(count > 0, count, torch.ones_like(count))
            var = squares / safe_count
            # features whose variance is within rounding of zero are constant: leave them unscaled
            eps = torch.finfo(torch.float64).eps
            constant = var <= count * eps * var + (count * mean * eps) ** 2
            self.var_ = _replicated(var, x)
            self.scale_ = _replicated(_zeros_to_one(var.sqrt(), constant), x)
        else:
            self.var_ = self.scale_ = None
        self.mean_ = _replicated(mean, x) if (self.with_mean or self.with_std) else None
        return self

    def _forward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        if self.with_mean:
            block -= columns(self.mean_.larray)
        if self.with_std:
            block /= columns(self.scale_.larray)
        return block

    def _backward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        if self.with_std:
            block *= columns(self.scale_.larray)
        if self.with_mean:
            block += columns(self.mean_.larray)
        return block


# ---------------------------------------------------------------------------------------------
# MinMaxScaler, MaxAbsScaler
# ---------------------------------------------------------------------------------------------
def _extrema(block: torch.Tensor) -> torch.Tensor:
    """(min, max) per column of a block; (+inf, -inf) for no rows, the neutral elements."""
    if block.shape[0] == 0:
        shape = (block.shape[1],)
        inf = torch.full(shape, math.inf, dtype=block.dtype, device=block.device)
        return torch.stack([inf, -inf])
    low, high = torch.aminmax(block, dim=0)
    return torch.stack([low, high])


def _merge_extrema(parts: torch.Tensor) -> torch.Tensor:
    return torch.stack([parts[:, 0].amin(dim=0), parts[:, 1].amax(dim=0)])


def _check_feature_range(feature_range: Any) -> Tuple[float, float]:
    try:
        low, high = (float(value) for value in feature_range)
    except (TypeError, ValueError):
        raise TypeError(
            f"feature_range must be a pair of numbers (min, max), but was {feature_range!r}"
        ) from None
    if not low < high:
        raise ValueError(f"feature_range must satisfy min < max, but was {feature_range!r}")
    return low, high


class MinMaxScaler(_IncrementalScaler):
    """
    Scale every feature linearly to ``feature_range``: ``x * scale_ + min_``, as
    :class:`sklearn.preprocessing.MinMaxScaler`.

    Parameters
    ----------
    feature_range : tuple (min, max)
        The range of the transformed training data.
    copy : bool
        If False, ``transform`` and ``inverse_transform`` overwrite their input where possible.
    clip : bool
        Clip transformed values of unseen data to ``feature_range``.

    Attributes
    ----------
    data_min_, data_max_ : DNDarray
        Per-feature minimum and maximum seen, replicated, in the data's type.
    data_range_ : DNDarray
        ``data_max_ - data_min_``.
    scale_ : DNDarray
        ``(max - min) / data_range_`` (a constant feature gets the scale of range 1).
    min_ : DNDarray
        ``min - data_min_ * scale_``.
    n_samples_seen_ : int
        Samples seen since the last ``fit``.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[-1.0, 2.0], [-0.5, 6.0], [0.0, 10.0], [1.0, 18.0]], split=0)
    >>> ht.preprocessing.MinMaxScaler().fit_transform(x)
    DNDarray([[0.  , 0.  ],
              [0.25, 0.25],
              [0.5 , 0.5 ],
              [1.  , 1.  ]], dtype=ht.float32, device=cpu:0, split=0)
    """

    _fitted_names = ("data_min_", "data_max_", "data_range_", "scale_", "min_")

    def __init__(self, feature_range=(0, 1), *, copy: bool = True, clip: bool = False):
        self.feature_range = feature_range
        self.copy = copy
        self.clip = clip

    def partial_fit(self, x: ArrayLike, y: Any = None) -> "MinMaxScaler":
        """
        Fold the window ``x`` into the running minimum and maximum. Collective.

        Parameters
        ----------
        x : DNDarray
            One window of samples, shape ``(n_window, n_features)``.
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            If ``x`` is not an array of real numbers, or ``feature_range`` not a pair of numbers.
        ValueError
            If ``feature_range`` is not increasing, ``x`` is not 2-D, holds NaN or infinity, or
            has another number of features than the windows before it.
        """
        low, high = _check_feature_range(self.feature_range)
        x = validate_samples(x)
        first = _check_partial_fit_features(self, x)
        window = _feature_statistics(x, _extrema, _merge_extrema)
        if first:
            self.n_features_in_ = x.shape[1]
            self.n_samples_seen_ = 0
            data_min, data_max = window
        else:
            data_min = torch.minimum(self.data_min_.larray, window[0].to(self.data_min_.larray))
            data_max = torch.maximum(self.data_max_.larray, window[1].to(self.data_max_.larray))
        self.n_samples_seen_ += x.shape[0]
        data_range = data_max - data_min
        scale = (high - low) / _zeros_to_one(data_range)
        self.data_min_ = _replicated(data_min, x)
        self.data_max_ = _replicated(data_max, x)
        self.data_range_ = _replicated(data_range, x)
        self.scale_ = _replicated(scale, x)
        self.min_ = _replicated(low - data_min * scale, x)
        return self

    def _forward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        low, high = _check_feature_range(self.feature_range)
        block *= columns(self.scale_.larray)
        block += columns(self.min_.larray)
        if self.clip:
            block.clamp_(low, high)
        return block

    def _backward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        block -= columns(self.min_.larray)
        block /= columns(self.scale_.larray)
        return block


def _max_abs(block: torch.Tensor) -> torch.Tensor:
    """Largest absolute value per column, as a (1, features) stack; 0 for no rows."""
    if block.shape[0] == 0:
        return torch.zeros((1, block.shape[1]), dtype=block.dtype, device=block.device)
    return block.abs().amax(dim=0, keepdim=True)


def _merge_max_abs(parts: torch.Tensor) -> torch.Tensor:
    return parts.amax(dim=0)


class MaxAbsScaler(_IncrementalScaler):
    """
    Divide every feature by its largest absolute value, so that the training data lies in
    ``[-1, 1]`` (zeros stay zero), as :class:`sklearn.preprocessing.MaxAbsScaler`.

    Parameters
    ----------
    copy : bool
        If False, ``transform`` and ``inverse_transform`` overwrite their input where possible.

    Attributes
    ----------
    max_abs_ : DNDarray
        Per-feature maximum absolute value, replicated.
    scale_ : DNDarray
        ``max_abs_`` with zeros replaced by 1.
    n_samples_seen_ : int
        Samples seen since the last ``fit``.
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[1.0, -1.0, 2.0], [2.0, 0.0, 0.0], [0.0, 1.0, -1.0]], split=0)
    >>> ht.preprocessing.MaxAbsScaler().fit_transform(x)
    DNDarray([[ 0.5, -1. ,  1. ],
              [ 1. ,  0. ,  0. ],
              [ 0. ,  1. , -0.5]], dtype=ht.float32, device=cpu:0, split=0)
    """

    _fitted_names = ("max_abs_", "scale_")

    def __init__(self, *, copy: bool = True):
        self.copy = copy

    def partial_fit(self, x: ArrayLike, y: Any = None) -> "MaxAbsScaler":
        """
        Fold the window ``x`` into the running maximum absolute values. Collective.

        Parameters
        ----------
        x : DNDarray
            One window of samples, shape ``(n_window, n_features)``.
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            If ``x`` is not an array of real numbers.
        ValueError
            If ``x`` is not 2-D, holds NaN or infinity, or has another number of features than
            the windows before it.
        """
        x = validate_samples(x)
        first = _check_partial_fit_features(self, x)
        max_abs = _feature_statistics(x, _max_abs, _merge_max_abs)[0]
        if first:
            self.n_features_in_ = x.shape[1]
            self.n_samples_seen_ = 0
        else:
            max_abs = torch.maximum(self.max_abs_.larray, max_abs.to(self.max_abs_.larray))
        self.n_samples_seen_ += x.shape[0]
        self.max_abs_ = _replicated(max_abs, x)
        self.scale_ = _replicated(_zeros_to_one(max_abs), x)
        return self

    def _forward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        block /= columns(self.scale_.larray)
        return block

    def _backward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        block *= columns(self.scale_.larray)
        return block


# ---------------------------------------------------------------------------------------------
# RobustScaler
# ---------------------------------------------------------------------------------------------
class RobustScaler(_InvertibleScaler):
    """
    Scale features with statistics that outliers do not move: subtract the median and divide
    by the interquartile range (or the range between other quantiles), as
    :class:`sklearn.preprocessing.RobustScaler`.

    Parameters
    ----------
    with_centering : bool
        Subtract the median.
    with_scaling : bool
        Divide by the quantile range.
    quantile_range : tuple (q_min, q_max)
        Percentiles, ``0 < q_min < q_max < 100``, whose difference is the scale (default: the
        interquartile range).
    copy : bool
        If False, ``transform`` and ``inverse_transform`` overwrite their input where possible.
    unit_variance : bool
        Divide the scale by the quantile range of the standard normal distribution, so that
        normally distributed features end up with variance 1.
    sketched : bool
        Compute the median and the quantile range from a random subset ("sketch") of the rows
        instead of all of them (HeAT's option): cheaper for large data, approximate.
    sketch_size : float, optional
        With ``sketched``: the fraction of the rows in the sketch, in ``(0, 1]`` (HeAT's
        default, None: 1 / the number of processes). The ``ceil(sketch_size * n_samples)`` rows
        are drawn without replacement from heat's random generator, so
        :func:`heat.random.seed` makes the choice reproducible, the same rows at every process
        count; the sketch is gathered on every process and its quantiles computed there.
        Ignored (with a warning when set) without ``sketched``.

    Attributes
    ----------
    center_ : DNDarray or None
        Per-feature median (None if not ``with_centering``).
    scale_ : DNDarray or None
        Per-feature quantile range, zeros replaced by 1 (None if not ``with_scaling``).
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[1.0, -2.0, 2.0], [-2.0, 1.0, 3.0], [4.0, 1.0, -2.0]], split=0)
    >>> ht.preprocessing.RobustScaler().fit_transform(x)
    DNDarray([[ 0. , -2. ,  0. ],
              [-1. ,  0. ,  0.4],
              [ 1. ,  0. , -1.6]], dtype=ht.float32, device=cpu:0, split=0)

    The statistics of a sketch of a quarter of the rows approximate those of all rows:

    >>> ht.random.seed(1)
    >>> x = ht.random.randn(4000, 2, split=0)
    >>> sketched = ht.preprocessing.RobustScaler(sketched=True, sketch_size=0.25).fit(x)
    >>> exact = ht.preprocessing.RobustScaler().fit(x)
    >>> bool(ht.allclose(sketched.scale_, exact.scale_, atol=0.15))
    True
    """

    def __init__(
        self,
        *,
        with_centering: bool = True,
        with_scaling: bool = True,
        quantile_range=(25.0, 75.0),
        copy: bool = True,
        unit_variance: bool = False,
        sketched: bool = False,
        sketch_size: Optional[float] = None,
    ):
        self.with_centering = with_centering
        self.with_scaling = with_scaling
        self.quantile_range = quantile_range
        self.copy = copy
        self.unit_variance = unit_variance
        self.sketched = sketched
        self.sketch_size = sketch_size

    def _check_sketch(self) -> Optional[float]:
        """The sketch's fraction of the rows (None: 1 / processes), or None without a sketch."""
        sketched = check_bool(self.sketched, "sketched")
        size = self.sketch_size
        if size is not None:
            if isinstance(size, (bool, np.bool_)) or not isinstance(size, numbers.Real):
                raise TypeError(f"sketch_size must be None or a float, got {type(size).__name__}")
            if not 0.0 < size <= 1.0:
                raise ValueError(f"sketch_size must be in (0, 1], got {size}")
        if not sketched:
            warn_ignored(size, "sketch_size", None, "sketched is False", stacklevel=4)
            return None
        return size

    def _sketch(self, x: "ht.DNDarray", fraction: Optional[float]) -> "ht.DNDarray":
        """
        ``ceil(fraction * n)`` rows of ``x`` drawn without replacement, held by every process
        (or split along the features like ``x``). Every row gets a uniform key from heat's
        counter-based generator (the same keys at every process count); the rows with the
        smallest keys form the sketch (:func:`heat.topk`, then one gather of the sketch).
        """
        n = x.shape[0]
        if fraction is None:
            fraction = 1.0 / x.comm.size
        size = min(n, max(1, math.ceil(fraction * n)))
        if size == n:
            return x
        keys = ht.random.rand(
            n, dtype=ht.float64, split=0 if x.split == 0 else None, device=x.device, comm=x.comm
        )
        threshold = ht.topk(keys, size, largest=False)[0].max().item()
        sketch = x[keys <= threshold]
        return ht.resplit(sketch, None) if sketch.split == 0 else sketch

    def fit(self, x: ArrayLike, y: Any = None) -> "RobustScaler":
        """
        Compute the per-feature median and quantile range of ``x``. Collective.

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
        TypeError
            If ``x`` is not an array of real numbers, ``quantile_range`` not a pair of numbers,
            ``sketched`` not a bool or ``sketch_size`` not a float.
        ValueError
            If ``quantile_range`` is not within ``0 <= q_min < q_max <= 100``, ``sketch_size``
            not in ``(0, 1]``, or ``x`` is not 2-D, empty or holds NaN or infinity.
        """
        try:
            q_min, q_max = (float(q) for q in self.quantile_range)
        except (TypeError, ValueError):
            raise TypeError(
                f"quantile_range must be a pair of numbers, but was {self.quantile_range!r}"
            ) from None
        if not 0 <= q_min < q_max <= 100:
            raise ValueError(
                f"quantile_range must satisfy 0 <= q_min < q_max <= 100, but was "
                f"{self.quantile_range!r}"
            )
        fraction = self._check_sketch()
        x = validate_samples(x, min_samples=1)
        wanted = []
        if self.with_centering:
            wanted.append(50.0)
        if self.with_scaling:
            wanted += [q_min, q_max]
        self.n_features_in_ = x.shape[1]
        self.center_ = self.scale_ = None
        if not wanted:
            return self
        if self.sketched:
            x = self._sketch(x, fraction)
        quantiles = ht.percentile(x, wanted, axis=0)
        if quantiles.split is not None:
            quantiles = ht.resplit(quantiles, None)
        values = quantiles.larray
        if self.with_centering:
            self.center_ = _replicated(values[0], x)
        if self.with_scaling:
            scale = _zeros_to_one(values[-1] - values[-2])
            if self.unit_variance:
                normal = statistics.NormalDist()
                scale = scale / (normal.inv_cdf(q_max / 100.0) - normal.inv_cdf(q_min / 100.0))
            self.scale_ = _replicated(scale, x)
        return self

    def _forward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        if self.center_ is not None:
            block -= columns(self.center_.larray)
        if self.scale_ is not None:
            block /= columns(self.scale_.larray)
        return block

    def _backward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        if self.scale_ is not None:
            block *= columns(self.scale_.larray)
        if self.center_ is not None:
            block += columns(self.center_.larray)
        return block


# ---------------------------------------------------------------------------------------------
# Normalizer
# ---------------------------------------------------------------------------------------------
_NORMS = ("l1", "l2", "max")


class Normalizer(_Scaler):
    """
    Scale every sample (row) to unit norm, as :class:`sklearn.preprocessing.Normalizer`.
    Rows of norm zero stay zero. Stateless: ``fit`` only checks the data and remembers the
    number of features, and :meth:`transform` works without it (as in scikit-learn and HeAT).

    Parameters
    ----------
    norm : {"l1", "l2", "max"}
        The norm of each row after the transform.
    copy : bool
        If False, ``transform`` overwrites its input where possible.

    Attributes
    ----------
    n_features_in_ : int
        Number of features.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[3.0, 4.0], [1.0, 0.0]], split=0)
    >>> ht.preprocessing.Normalizer().fit_transform(x)
    DNDarray([[0.6, 0.8],
              [1. , 0. ]], dtype=ht.float32, device=cpu:0, split=0)
    """

    _requires_fit = False  # stateless: check_is_fitted passes, transform needs no fit

    def __init__(self, norm: str = "l2", *, copy: bool = True):
        self.norm = norm
        self.copy = copy

    def _check_norm(self) -> None:
        if self.norm not in _NORMS:
            raise ValueError(f"norm must be one of {_NORMS}, but was {self.norm!r}")

    def fit(self, x: ArrayLike, y: Any = None) -> "Normalizer":
        """
        Check ``x`` and remember its number of features. Collective (the finiteness check).

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        self._check_norm()
        x = validate_samples(x)
        self.n_features_in_ = x.shape[1]
        return self

    def transform(self, x: ArrayLike, copy: Optional[bool] = None) -> ArrayLike:
        """
        Scale every row of ``x`` to unit norm. Local, except for data split along the features
        (one allreduce of the row norms). Needs no :meth:`fit`; after one, ``x`` must have the
        fitted number of features.

        Parameters
        ----------
        x : DNDarray, numpy.ndarray or torch.Tensor
            Samples, shape ``(n_samples, n_features)``.
        copy : bool, optional
            Overrides the estimator's ``copy``.

        Returns
        -------
        DNDarray, numpy.ndarray or torch.Tensor
            The normalized samples, the type of ``x``.

        Raises
        ------
        ValueError
            If ``norm`` is not one of "l1", "l2", "max", or ``x`` has another number of
            features than the fitted data.
        """
        self._check_norm()
        return super().transform(x, copy)

    def _forward(self, block: torch.Tensor, columns, array) -> torch.Tensor:
        if self.norm == "l2":
            norms, op = (block * block).sum(dim=1), ht.MPI.SUM
        elif self.norm == "l1":
            norms, op = block.abs().sum(dim=1), ht.MPI.SUM
        else:
            norms = block.abs().amax(dim=1) if block.shape[1] else block.new_zeros(len(block))
            op = ht.MPI.MAX
        if array.split == 1 and array.comm.size > 1:  # each process holds some of the features
            norms = array.comm.allreduce_tensor(norms, op)
        if self.norm == "l2":
            norms = norms.sqrt()
        block /= _zeros_to_one(norms).unsqueeze(1)
        return block
