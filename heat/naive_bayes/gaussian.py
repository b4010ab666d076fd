"""
Gaussian naive Bayes classification of distributed samples.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Tuple

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

__all__ = ["GaussianNB"]


class GaussianNB(ClassificationMixin, BaseEstimator):
    """
    Gaussian naive Bayes, as :class:`sklearn.naive_bayes.GaussianNB`: every class is modelled by
    independent normal distributions of the features, whose means ``theta_`` and variances
    ``var_`` are estimated from the samples of the class (weighted by ``sample_weight``), and a
    sample is assigned the class of largest posterior probability.

    The samples are used split along the rows (split=0; data split along the features is
    redistributed along the rows once, data that is not split is used as it is). Each ``fit``
    or ``partial_fit`` takes two allreduces of the per-class sums: first the weights and sums
    (for the means), then the squared deviations from those means, an exact two-pass variance.
    ``partial_fit`` merges every batch into the running statistics with the pairwise update of
    Chan, Golub and LeVeque, so batches fitted one after another give the statistics of all of
    them. The model is small and replicated on every process; prediction is local.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), optional
        Prior probabilities of the classes; non-negative, summing to 1. None: the relative
        class frequencies (weights) of the fitted samples.
    var_smoothing : float
        Portion of the largest variance of the features added to every variance, for stability.

    Attributes
    ----------
    classes_ : DNDarray
        The sorted class labels, shape ``(n_classes,)``.
    class_count_ : DNDarray
        Number (total weight) of the fitted samples of every class.
    class_prior_ : DNDarray
        Probability of every class.
    theta_ : DNDarray
        Mean of every feature per class, shape ``(n_classes, n_features)``.
    var_ : DNDarray
        Variance of every feature per class (plus ``epsilon_``).

    The floating-point attributes have the type of the data of the first fit (as in
    scikit-learn); the running statistics behind them are kept in float64.
    epsilon_ : float
        The absolute value added to the variances: ``var_smoothing`` times the largest feature
        variance of the data of the last ``fit`` or ``partial_fit``.
    n_features_in_ : int
        Number of features.

    Notes
    -----
    scikit-learn removes the new batch's ``epsilon_`` from the variances before merging a
    ``partial_fit`` batch, where the previous one was added; heat keeps the variances without
    ``epsilon_`` apart and adds the current ``epsilon_`` only to ``var_``. The two differ by
    ``var_smoothing`` times a difference of variances.

    Examples
    --------
    >>> import heat as ht
    >>> x = ht.array([[-1.0, -1.0], [-2.0, -1.0], [-3.0, -2.0], [1.0, 1.0], [2.0, 1.0], [3.0, 2.0]],
    ...              split=0)
    >>> y = ht.array([1, 1, 1, 2, 2, 2], split=0)
    >>> model = ht.naive_bayes.GaussianNB().fit(x, y)
    >>> model.predict(ht.array([[-0.8, -1.0]]))
    DNDarray([1], dtype=ht.int64, device=cpu:0, split=None)
    >>> model.theta_
    DNDarray([[-2.       , -1.3333334],
              [ 2.       ,  1.3333334]], dtype=ht.float32, device=cpu:0, split=None)
    """

    def __init__(self, priors=None, var_smoothing: float = 1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    # ---------------------------------------------------------------------------------- checks
    def _check_params(self) -> None:
        """Raise TypeError/ValueError for bad parameters (no communication)."""
        smoothing = self.var_smoothing
        if isinstance(smoothing, bool) or not isinstance(smoothing, numbers.Real):
            raise TypeError(
                f"var_smoothing must be a real number, but was {type(smoothing).__name__}"
            )
        if not smoothing >= 0:
            raise ValueError(f"var_smoothing must be >= 0, but was {smoothing}")

    def _checked_priors(self, n_classes: int) -> Optional[torch.Tensor]:
        """The priors as a float64 tensor, checked against the number of classes."""
        if self.priors is None:
            return None
        priors = self.priors
        if isinstance(priors, ht.DNDarray):
            priors = priors.numpy()
        priors = torch.as_tensor(np.asarray(priors, dtype=np.float64)).flatten()
        if priors.numel() != n_classes:
            raise ValueError(
                f"priors has {priors.numel()} entries, but there are {n_classes} classes"
            )
        if not math.isclose(float(priors.sum()), 1.0, rel_tol=1e-5, abs_tol=1e-8):
            raise ValueError(f"priors must sum to 1, but sum to {float(priors.sum())}")
        if bool((priors < 0).any()):
            raise ValueError("priors must be non-negative")
        return priors

    def _check_data(self, x, y, sample_weight) -> Tuple[Any, Any, Any]:
        """Validated samples, targets and weights (no communication but a resplit)."""
        self._check_params()
        x = validate_samples(x, name="x", ensure_finite=False, min_samples=1)
        y = validate_targets(y, x, name="y")
        if sample_weight is not None:
            sample_weight = validate_targets(sample_weight, x, name="sample_weight")
        return x, y, sample_weight

    # ------------------------------------------------------------------------------------- fit
    def fit(self, x, y, sample_weight=None) -> "GaussianNB":
        """
        Fit the class statistics to the samples ``x`` with labels ``y``, forgetting earlier
        fits. Collective.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``, split along either axis or not at all.
        y : DNDarray
            Class labels (integers or floats), shape ``(n_samples,)``, in any layout.
        sample_weight : DNDarray, optional
            Weight of every sample, shape ``(n_samples,)``.

        Returns
        -------
        self

        Raises
        ------
        TypeError
            For data of the wrong type.
        ValueError
            For ``x`` not 2-D, ``y`` or ``sample_weight`` of another length, NaN or infinity in
            any of them, or ``priors`` not matching the classes. Every process raises alike.
        """
        x, y, sample_weight = self._check_data(x, y, sample_weight)
        x = rows_of(x)
        labels, weights = self._local_targets(x, y, sample_weight, None)
        classes = unique_labels(labels, x.split == 0, x.comm)
        return self._update(x, labels, weights, classes, first_call=True)

    def partial_fit(self, x, y, classes=None, sample_weight=None) -> "GaussianNB":
        """
        Add a batch of samples to the class statistics (the first call starts them). Collective.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.
        y : DNDarray
            Class labels, shape ``(n_samples,)``; every label must be one of ``classes``.
        classes : array-like, optional
            All classes that may occur; required in the first call, and if given later, the
            same as in the first.
        sample_weight : DNDarray, optional
            Weight of every sample, shape ``(n_samples,)``.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            As :meth:`fit`; also if ``classes`` is missing in the first call or differs from the
            first call's, if a label is not a class, or ``x`` has another number of features
            than before.
        """
        x, y, sample_weight = self._check_data(x, y, sample_weight)
        first_call = getattr(self, "classes_", None) is None
        if classes is not None:
            if isinstance(classes, ht.DNDarray):
                classes = classes.numpy()
            classes = torch.unique(torch.as_tensor(np.asarray(classes)))
            if classes.ndim != 1 or classes.numel() == 0:
                raise ValueError("classes must be a non-empty 1-D array of class labels")
        if first_call:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            self._checked_priors(classes.numel())
        else:
            check_n_features(self, x)
            known = self.classes_.larray.cpu()
            if classes is not None and not (
                classes.shape == known.shape and bool((classes.to(known.dtype) == known).all())
            ):
                raise ValueError(
                    f"classes={classes.tolist()} is not the same as in the first call to "
                    f"partial_fit: {known.tolist()}"
                )
            classes = known
        x = rows_of(x)
        labels, weights = self._local_targets(x, y, sample_weight, classes)
        return self._update(x, labels, weights, classes, first_call)

    def _local_targets(
        self, x, y, sample_weight, classes
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """
        The labels and weights of the local rows; raises if anything is not finite or (given
        ``classes``) a label is not a class. One allreduce of the flags.
        """
        labels = aligned_rows(y, x)
        weights = (
            None if sample_weight is None else aligned_rows(sample_weight, x).to(torch.float64)
        )
        flags = [
            is_finite(x.larray),
            is_finite(labels),
            weights is None or is_finite(weights),
            True if classes is None else encode_labels(labels, classes.to(labels.device))[1],
        ]
        flags = torch.tensor(flags, dtype=torch.int32)
        if x.split == 0 and x.comm.size > 1:
            flags = x.comm.allreduce_tensor(flags, MPI.MIN)
        messages = (
            "x contains NaN or infinity",
            "y contains NaN or infinity",
            "sample_weight contains NaN or infinity",
            f"y holds labels that are not in classes {None if classes is None else classes.tolist()}",
        )
        for flag, message in zip(flags.tolist(), messages):
            if not flag:
                raise ValueError(message)
        return labels, weights

    def _update(self, x, labels, weights, classes, first_call: bool) -> "GaussianNB":
        """Merge the batch into the class statistics (two allreduces)."""
        comm = x.comm
        distributed = x.split == 0 and comm.size > 1
        device = x.larray.device
        classes = classes.to(device)
        n_classes, features = classes.numel(), x.shape[1]
        priors = self._checked_priors(n_classes)  # raises alike everywhere: classes are agreed
        samples = x.larray.to(torch.float64)
        index, _ = encode_labels(labels, classes)
        membership = torch.zeros((samples.shape[0], n_classes), dtype=torch.float64, device=device)
        membership.scatter_(1, index.unsqueeze(1), 1.0 if weights is None else weights.unsqueeze(1))

        # pass 1: class weights, weighted class sums, column sums (for epsilon_)
        first = torch.cat([membership.sum(0), (membership.T @ samples).flatten(), samples.sum(0)])
        if distributed:
            first = comm.allreduce_tensor(first.cpu()).to(device)
        counts = first[:n_classes]
        sums = first[n_classes : n_classes + n_classes * features].view(n_classes, features)
        means = sums / counts.clamp(min=torch.finfo(torch.float64).tiny).unsqueeze(1)
        overall_mean = first[n_classes + n_classes * features :] / x.shape[0]

        # pass 2: squared deviations from the class means and from the overall mean
        deviations = (samples - means[index]).square_()
        if weights is not None:
            deviations *= weights.unsqueeze(1)
        second = torch.cat(
            [
                torch.zeros((n_classes, features), dtype=torch.float64, device=device)
                .index_add_(0, index, deviations)
                .flatten(),
                (samples - overall_mean).square_().sum(0),
            ]
        )
        if distributed:
            second = comm.allreduce_tensor(second.cpu()).to(device)
        variances = second[: n_classes * features].view(n_classes, features) / counts.clamp(
            min=torch.finfo(torch.float64).tiny
        ).unsqueeze(1)
        epsilon = (
            float(self.var_smoothing) * float(second[n_classes * features :].max()) / x.shape[0]
        )

        if first_call:
            past_counts = torch.zeros(n_classes, dtype=torch.float64, device=device)
            past_means = torch.zeros((n_classes, features), dtype=torch.float64, device=device)
            past_variances = torch.zeros_like(past_means)
        else:  # the running statistics are kept in float64, whatever the data's type
            past_counts, past_means, past_variances = self._statistics
        # classes without (weight in) this batch keep their statistics, as in scikit-learn
        present = (counts > 1e-8).unsqueeze(1)
        total = past_counts + counts
        safe_total = total.clamp(min=torch.finfo(torch.float64).tiny).unsqueeze(1)
        merged_means = (
            past_counts.unsqueeze(1) * past_means + counts.unsqueeze(1) * means
        ) / safe_total
        merged_variances = (
            past_counts.unsqueeze(1) * past_variances
            + counts.unsqueeze(1) * variances
            + (past_counts * counts).unsqueeze(1) / safe_total * (past_means - means).square()
        ) / safe_total
        first_data = (past_counts == 0).unsqueeze(1)
        merged_means = torch.where(first_data, means, merged_means)
        merged_variances = torch.where(first_data, variances, merged_variances)
        theta = torch.where(present, merged_means, past_means)
        raw_variances = torch.where(present, merged_variances, past_variances)

        if first_call:
            self._dtype = x.dtype  # the fitted attributes take the data's type, as scikit-learn
            self.classes_ = ht.array(classes, comm=comm, device=x.device)
        prior = total / total.sum() if priors is None else priors.to(device)
        self._statistics = (total, theta, raw_variances)
        self._log_prior = torch.log(prior)

        def replicated(tensor):
            return ht.array(tensor.to(self._dtype.torch_type()), comm=comm, device=x.device)

        self.class_count_ = replicated(total)
        self.theta_ = replicated(theta)
        self.var_ = replicated(raw_variances + epsilon)
        self.epsilon_ = epsilon
        self.class_prior_ = replicated(prior)
        self.n_features_in_ = features
        return self

    # --------------------------------------------------------------------------------- predict
    def _joint_log_likelihood(self, x) -> Tuple[Any, torch.Tensor]:
        """The validated samples and the local rows' log joint likelihood of every class."""
        check_is_fitted(self, ["theta_"])
        x = validate_samples(x, name="x", ensure_finite=False)
        check_n_features(self, x)
        x = rows_of(validate_samples(x, name="x"))
        samples = x.larray.to(torch.float64)
        _, theta, raw_variances = self._statistics
        var = raw_variances + self.epsilon_
        log_prior = self._log_prior
        normalizer = -0.5 * torch.log(2.0 * math.pi * var).sum(1)
        likelihood = torch.empty(
            (samples.shape[0], theta.shape[0]), dtype=torch.float64, device=samples.device
        )
        for c in range(theta.shape[0]):
            likelihood[:, c] = ((samples - theta[c]).square_() / var[c]).sum(1)
        return x, log_prior + normalizer - 0.5 * likelihood

    def predict(self, x) -> "ht.DNDarray":
        """
        The most probable class of every sample. Local but for the finiteness check.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.

        Returns
        -------
        DNDarray
            Labels of the type of ``classes_``, shape ``(n_samples,)``, split along the rows
            like ``x`` (or not split).

        Raises
        ------
        NotFittedError
            If the estimator has not been fitted.
        ValueError
            If ``x`` has another number of features than the fitted data, or NaN or infinity.
        """
        x, joint = self._joint_log_likelihood(x)
        labels = self.classes_.larray[joint.argmax(1)]
        return rows_like(x, labels, self.classes_.dtype)

    def predict_log_proba(self, x) -> "ht.DNDarray":
        """
        The logarithm of the probability of every class for every sample.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.

        Returns
        -------
        DNDarray
            Shape ``(n_samples, n_classes)``, of the fitted type, columns in the order of ``classes_``,
            split along the rows like ``x`` (or not split).

        Raises
        ------
        NotFittedError, ValueError
            As :meth:`predict`.
        """
        x, joint = self._joint_log_likelihood(x)
        log_proba = joint - torch.logsumexp(joint, dim=1, keepdim=True)
        return rows_like(x, log_proba.to(self._dtype.torch_type()), self._dtype)

    def predict_proba(self, x) -> "ht.DNDarray":
        """
        The probability of every class for every sample.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.

        Returns
        -------
        DNDarray
            Shape ``(n_samples, n_classes)``, of the fitted type, rows summing to 1.

        Raises
        ------
        NotFittedError, ValueError
            As :meth:`predict`.
        """
        x, joint = self._joint_log_likelihood(x)
        proba = torch.softmax(joint, dim=1).to(self._dtype.torch_type())
        return rows_like(x, proba, self._dtype)
