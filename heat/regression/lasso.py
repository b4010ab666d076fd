"""
Lasso: least squares with an L1 penalty, fitted by cyclic coordinate descent on distributed samples.
"""

from __future__ import annotations

import numbers
from typing import Tuple

import numpy as np
import torch

import heat as ht
from heat.core.base import BaseEstimator, RegressionMixin, check_is_fitted
from heat.utils.validation import (
    aligned_rows,
    check_n_features,
    column_sums,
    is_finite,
    rows_like,
    rows_of,
    validate_samples,
    validate_targets,
)

from ..core.communication import MPI

__all__ = ["Lasso"]

# precompute="auto" uses the Gram matrix up to this many features (a (f, f) float64 matrix)
_GRAM_MAX_FEATURES = 2048
# entries of the centred block of rows the Gram matrix is accumulated from
_BLOCK_ENTRIES = 1 << 18


class Lasso(RegressionMixin, BaseEstimator):
    r"""
    Linear regression with an L1 penalty on the coefficients, which drives some of them to
    exactly zero. Minimizes

    .. math:: \frac{1}{2 n} \lVert y - X w - b \rVert_2^2 + \lambda \lVert w \rVert_1

    over the coefficients ``w`` and the intercept ``b`` by cyclic coordinate descent. This is
    the objective of :class:`sklearn.linear_model.Lasso`, with ``lam`` in the role of
    scikit-learn's ``alpha``: ``Lasso(lam=a)`` and scikit-learn's ``Lasso(alpha=a)`` have the
    same solution. The signature is HeAT's (``lam``, ``max_iter=100``, ``tol=1e-6``).

    The samples are used split along the rows (split=0; data split along the features is
    redistributed along the rows once, data that is not split is used as it is). The intercept
    is fitted by centring ``X`` and ``y`` (as scikit-learn): one allreduce of the column sums.
    Then one of two ways to do the descent, which reach the same coefficients:

    - with the Gram matrix (``precompute=True``, and "auto" up to 2048 features): one more
      allreduce of ``X^T X`` and ``X^T y``, after which every sweep over the coefficients is
      local and costs ``O(n_features^2)``, independent of the number of samples: the whole fit
      communicates twice;
    - with the residual (``precompute=False``): every process keeps the residual of its own
      rows; a coordinate update needs ``X_j^T r``, one allreduce of a scalar, and updates the
      local residual. The column norms are precomputed in one allreduce.

    Parameters
    ----------
    lam : float
        Weight of the L1 penalty, >= 0 (scikit-learn's ``alpha``). 0 gives ordinary least
        squares (slowly; prefer a least-squares solver).
    max_iter : int
        Maximum number of sweeps over all coefficients.
    tol : float
        The descent stops after a sweep in which no coefficient changed by more than ``tol``
        times the largest coefficient (scikit-learn additionally checks the duality gap).
    fit_intercept : bool
        Whether to fit the intercept ``b``; False fits ``y = X w``.
    precompute : {"auto", True, False}
        Whether to run the descent on the Gram matrix (see above).

    Attributes
    ----------
    coef_ : DNDarray
        The coefficients ``w``, shape ``(n_features,)``, replicated on every process.
    intercept_ : float
        The intercept ``b`` (0.0 without ``fit_intercept``).
    n_iter_ : int
        Sweeps run.
    n_features_in_ : int
        Number of features.
    theta : DNDarray
        HeAT's view of the model: ``(n_features + 1, 1)``, the intercept followed by the
        coefficients.
    n_iter : int
        The same as ``n_iter_`` (HeAT's name).

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], split=0)
    >>> y = ht.array([0.0, 1.0, 2.0], split=0)
    >>> model = ht.regression.Lasso(lam=0.1).fit(x, y)
    >>> model.coef_
    DNDarray([0.85, 0.  ], dtype=ht.float32, device=cpu:0, split=None)
    >>> round(model.intercept_, 4)
    0.15
    >>> model.predict(ht.array([[1.0, 1.0]]))
    DNDarray([1.], dtype=ht.float32, device=cpu:0, split=None)
    """

    def __init__(
        self,
        lam: float = 0.1,
        max_iter: int = 100,
        tol: float = 1e-6,
        fit_intercept: bool = True,
        precompute="auto",
    ):
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.precompute = precompute

    # ------------------------------------------------------------------------------ HeAT names
    @property
    def theta(self) -> "ht.DNDarray":
        """The intercept followed by the coefficients, shape ``(n_features + 1, 1)``."""
        check_is_fitted(self, ["coef_"])
        coef = self.coef_.larray
        column = torch.cat([coef.new_tensor([self.intercept_]), coef]).unsqueeze(1)
        return ht.array(column, comm=self.coef_.comm, device=self.coef_.device)

    @property
    def n_iter(self) -> int:
        """Sweeps run (``n_iter_``)."""
        check_is_fitted(self, ["n_iter_"])
        return self.n_iter_

    # ---------------------------------------------------------------------------------- checks
    def _check_params(self) -> None:
        """Raise TypeError/ValueError for bad parameters (no communication)."""
        if isinstance(self.lam, bool) or not isinstance(self.lam, numbers.Real):
            raise TypeError(f"lam must be a real number, but was {type(self.lam).__name__}")
        if not self.lam >= 0:
            raise ValueError(f"lam must be >= 0, but was {self.lam}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral):
            raise TypeError(f"max_iter must be an integer, but was {type(self.max_iter).__name__}")
        if self.max_iter < 1:
            raise ValueError(f"max_iter must be >= 1, but was {self.max_iter}")
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real):
            raise TypeError(f"tol must be a real number, but was {type(self.tol).__name__}")
        if not self.tol >= 0:
            raise ValueError(f"tol must be >= 0, but was {self.tol}")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise TypeError(
                f"fit_intercept must be a bool, but was {type(self.fit_intercept).__name__}"
            )
        if not (self.precompute is True or self.precompute is False or self.precompute == "auto"):
            raise ValueError(
                f"precompute must be 'auto', True or False, but was {self.precompute!r}"
            )

    # ------------------------------------------------------------------------------------- fit
    def fit(self, x, y) -> "Lasso":
        """
        Fit the coefficients to the samples ``x`` and targets ``y``. Collective.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``, split along either axis or not at all.
            NumPy arrays and tensors are taken as the same data on every process.
        y : DNDarray
            Targets, shape ``(n_samples,)``, in any layout (redistributed to the rows of ``x``
            if needed).

        Returns
        -------
        self

        Raises
        ------
        TypeError
            For parameters or data of the wrong type.
        ValueError
            For bad parameter values, ``x`` not 2-D, ``y`` not 1-D or of another length than
            ``x``, or NaN or infinity in either. Every process raises alike, before any
            communication except the agreement on finiteness.
        """
        self._check_params()
        x = validate_samples(x, name="x", ensure_finite=False, min_samples=1)
        y = validate_targets(y, x)
        x = rows_of(x)
        comm = x.comm
        dtype = x.larray.dtype
        samples = x.larray
        targets = aligned_rows(y, x).to(dtype)
        finite = [is_finite(samples), is_finite(targets)]
        finite = comm.allreduce_tensor(torch.tensor(finite, dtype=torch.int32), MPI.MIN)
        for flag, name in zip(finite.tolist(), ("x", "y")):
            if not flag:
                raise ValueError(f"{name} contains NaN or infinity")

        distributed = x.split == 0 and comm.size > 1
        n, features = x.shape
        if self.fit_intercept:
            # one allreduce of the column sums of x and the sum of y
            sums = torch.cat([column_sums(samples), column_sums(targets).reshape(1)])
            if distributed:
                sums = comm.allreduce_tensor(sums)
            means = (sums / n).cpu()
            x_mean, y_mean = means[:features], means[features]
        else:
            x_mean = torch.zeros(features, dtype=torch.float64)
            y_mean = torch.tensor(0.0, dtype=torch.float64)

        threshold = float(self.lam) * n
        use_gram = self.precompute is True or (
            self.precompute == "auto" and features <= _GRAM_MAX_FEATURES
        )
        if use_gram:
            coef, n_iter = self._descend_gram(
                samples, targets, x_mean, y_mean, threshold, comm, distributed
            )
        else:
            coef, n_iter = self._descend_residual(
                samples, targets, x_mean, y_mean, threshold, comm, distributed
            )

        intercept = (
            float(y_mean - (x_mean * torch.from_numpy(coef)).sum()) if self.fit_intercept else 0.0
        )
        self.coef_ = ht.array(
            torch.from_numpy(coef).to(dtype=dtype, device=x.larray.device),
            comm=comm,
            device=x.device,
        )
        self.intercept_ = intercept
        self.n_iter_ = n_iter
        self.n_features_in_ = features
        return self

    def _descend_gram(
        self,
        samples: torch.Tensor,
        targets: torch.Tensor,
        x_mean: torch.Tensor,
        y_mean: torch.Tensor,
        threshold: float,
        comm,
        distributed: bool,
    ) -> Tuple[np.ndarray, int]:
        """Coordinate descent on ``X^T X`` and ``X^T y``: one allreduce, then local sweeps."""
        features = samples.shape[1]
        x_mean, y_mean = x_mean.to(samples), y_mean.to(targets)
        gram = samples.new_zeros((features, features))
        correlation = samples.new_zeros(features)
        # the products of the centred data, a bounded block of rows centred at a time
        rows = max(1, _BLOCK_ENTRIES // max(1, features))
        for first in range(0, samples.shape[0], rows):
            block = samples[first : first + rows] - x_mean
            gram.addmm_(block.T, block)
            correlation.addmv_(block.T, targets[first : first + rows] - y_mean)
        packed = torch.cat([gram.flatten(), correlation]).to(torch.float64)
        if distributed:
            packed = comm.allreduce_tensor(packed.cpu())
        packed = packed.cpu().numpy()
        gram = packed[: features * features].reshape(features, features)
        correlation = packed[features * features :]
        fitted = np.zeros(features)  # gram @ coef, kept up to date

        def correlation_of(j: int) -> float:
            return correlation[j] - fitted[j]

        def update(j: int, change: float) -> None:
            fitted[:] += change * gram[:, j]

        return self._sweeps(gram.diagonal().copy(), correlation_of, update, threshold)

    def _descend_residual(
        self,
        samples: torch.Tensor,
        targets: torch.Tensor,
        x_mean: torch.Tensor,
        y_mean: torch.Tensor,
        threshold: float,
        comm,
        distributed: bool,
    ) -> Tuple[np.ndarray, int]:
        """Coordinate descent on the local residual: one scalar allreduce per coordinate."""
        columns = samples.T.contiguous()  # the one copy: a coordinate's column is contiguous
        columns -= x_mean.to(columns).unsqueeze(1)
        residual = targets - y_mean.to(targets)
        norms = (columns * columns).sum(1, dtype=torch.float64)
        if distributed:
            norms = comm.allreduce_tensor(norms.cpu())
        norms = norms.cpu().numpy()

        def correlation_of(j: int) -> float:
            dot = float(columns[j] @ residual) if residual.numel() else 0.0
            return comm.allreduce(dot) if distributed else dot

        def update(j: int, change: float) -> None:
            residual.add_(columns[j], alpha=-change)

        return self._sweeps(norms, correlation_of, update, threshold)

    def _sweeps(self, norms: np.ndarray, correlation_of, update, threshold: float):
        """
        Cyclic coordinate descent from zero: ``correlation_of(j)`` is ``X_j^T r`` for the current
        residual ``r``, ``update(j, change)`` accounts for coefficient ``j`` changing by
        ``change``. Returns the coefficients and the number of sweeps.
        """
        coef = np.zeros(len(norms))
        for sweep in range(1, self.max_iter + 1):
            largest_change = largest_coef = 0.0
            for j in range(len(norms)):
                if norms[j] == 0.0:  # a constant feature keeps coefficient 0
                    continue
                old = coef[j]
                new = _soft_threshold(correlation_of(j) + norms[j] * old, threshold) / norms[j]
                if new != old:
                    update(j, new - old)
                    coef[j] = new
                largest_change = max(largest_change, abs(new - old))
                largest_coef = max(largest_coef, abs(new))
            if largest_coef == 0.0 or largest_change <= self.tol * largest_coef:
                return coef, sweep
        return coef, self.max_iter

    # --------------------------------------------------------------------------------- predict
    def predict(self, x) -> "ht.DNDarray":
        """
        The predictions ``x @ coef_ + intercept_``. Collective only for the finiteness check
        (and the redistribution of data split along the features).

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.

        Returns
        -------
        DNDarray
            Shape ``(n_samples,)``, split along the rows like ``x`` (or not split).

        Raises
        ------
        NotFittedError
            If the estimator has not been fitted.
        ValueError
            If ``x`` has another number of features than the fitted data, or NaN or infinity.
        """
        check_is_fitted(self, ["coef_"])
        x = validate_samples(x, name="x", ensure_finite=False)
        check_n_features(self, x)
        x = rows_of(validate_samples(x, name="x"))
        coef = self.coef_.larray
        return rows_like(x, x.larray.to(coef.dtype) @ coef + self.intercept_, self.coef_.dtype)


def _soft_threshold(value: float, threshold: float) -> float:
    """``sign(value) * max(|value| - threshold, 0)``."""
    if value > threshold:
        return value - threshold
    if value < -threshold:
        return value + threshold
    return 0.0
