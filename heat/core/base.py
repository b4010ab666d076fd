"""
The estimator interface shared by heat's machine-learning packages (``ht.cluster``,
``ht.preprocessing``, ...), following scikit-learn's conventions so that code written for
scikit-learn reads the same with heat:

- ``__init__`` only stores its keyword arguments, unchanged, as attributes of the same names;
  :meth:`BaseEstimator.get_params`, :meth:`BaseEstimator.set_params` and the ``repr`` are derived
  from its signature;
- ``fit`` validates the data, learns, and returns ``self``; what it learned is stored in
  attributes whose names end in ``_`` (``cluster_centers_``, ``mean_``);
- the mixins add the convenience methods of an estimator family (``fit_predict``,
  ``fit_transform``, ``score``), and the ``is_*`` functions tell the families apart.

Estimators are collective: every process calls ``fit`` and ``predict`` with its part of the same
distributed data, and the fitted state is identical on every process. Hence an unfitted
estimator raises :class:`NotFittedError` on every process alike, before any communication.

The input checks the estimators share (``validate_samples``, ``check_n_features``, ...) live
beside the estimators, in :mod:`heat.utils.validation`. No module of heat.core imports this one.
"""

from __future__ import annotations

import inspect
from typing import Any, Dict, Iterable, List, Optional

__all__ = [
    "BaseEstimator",
    "ClassificationMixin",
    "ClusteringMixin",
    "NotFittedError",
    "RegressionMixin",
    "TransformMixin",
    "check_is_fitted",
    "is_classifier",
    "is_clusterer",
    "is_estimator",
    "is_regressor",
    "is_transformer",
]


class NotFittedError(ValueError, AttributeError):
    """
    An estimator was used (``predict``, ``transform``, a fitted attribute) before ``fit``.

    A subclass of both ValueError and AttributeError, as scikit-learn's
    ``sklearn.exceptions.NotFittedError``, so that either ``except`` clause catches it.

    Examples
    --------
    >>> import heat as ht
    >>> try:
    ...     ht.cluster.KMeans(n_clusters=2).predict(ht.zeros((4, 2)))
    ... except ht.NotFittedError as error:
    ...     print(str(error)[:38])
    This KMeans instance is not fitted yet
    """


class BaseEstimator:
    """
    Base class of every heat estimator: parameter access and a readable ``repr``.

    A subclass declares its parameters as explicit keyword arguments of ``__init__`` (no
    ``*args``/``**kwargs``) and stores each, unchanged, in an attribute of the same name.

    Examples
    --------
    >>> import heat as ht
    >>> class Shift(ht.BaseEstimator):
    ...     def __init__(self, offset=0.0, scale=1.0):
    ...         self.offset = offset
    ...         self.scale = scale
    >>> Shift(offset=2.0)
    Shift(offset=2.0)
    >>> Shift(offset=2.0).get_params()
    {'offset': 2.0, 'scale': 1.0}
    >>> Shift().set_params(scale=3.0).scale
    3.0
    """

    @classmethod
    def _get_param_names(cls) -> List[str]:
        """The names of the ``__init__`` parameters, in signature order."""
        init = cls.__init__
        if init is object.__init__:
            return []
        names = []
        for parameter in inspect.signature(init).parameters.values():
            if parameter.name == "self":
                continue
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                # get_params could not know the names, so set_params/clone could not work
                raise RuntimeError(
                    f"{cls.__name__}.__init__ must list its parameters explicitly, "
                    f"not as *args or **kwargs"
                )
            names.append(parameter.name)
        return names

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """
        The estimator's parameters (the arguments of its ``__init__``) as a dict.

        Parameters
        ----------
        deep : bool
            If True, parameters that are estimators themselves contribute their own parameters
            too, as ``"<name>__<parameter>"``.

        Returns
        -------
        dict
            Parameter names mapped to their values.

        Examples
        --------
        >>> import heat as ht
        >>> ht.preprocessing.StandardScaler(with_mean=False).get_params()
        {'copy': True, 'with_mean': False, 'with_std': True}
        """
        params = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                for inner_name, inner_value in value.get_params(deep=True).items():
                    params[f"{name}__{inner_name}"] = inner_value
            params[name] = value
        return params

    def set_params(self, **params: Any) -> "BaseEstimator":
        """
        Set parameters of the estimator; ``"<name>__<parameter>"`` sets a parameter of a nested
        estimator.

        Parameters
        ----------
        **params
            Parameter names and their new values.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If a name is not a parameter of this estimator.

        Examples
        --------
        >>> import heat as ht
        >>> ht.cluster.KMeans().set_params(n_clusters=3, max_iter=50)
        KMeans(max_iter=50, n_clusters=3)
        """
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: Dict[str, Dict[str, Any]] = {}
        for key, value in params.items():
            name, _, inner = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"invalid parameter {name!r} for estimator {type(self).__name__}; "
                    f"valid parameters are {sorted(self._get_param_names())}"
                )
            if inner:
                nested.setdefault(name, {})[inner] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, inner_params in nested.items():
            valid[name].set_params(**inner_params)
        return self

    def __repr__(self) -> str:
        # as scikit-learn: only the parameters that differ from their defaults
        signature = inspect.signature(type(self).__init__)
        shown = []
        for name in sorted(self._get_param_names()):
            value = getattr(self, name, None)
            default = signature.parameters[name].default
            if _differs(value, default):
                shown.append(f"{name}={_short_repr(value)}")
        return f"{type(self).__name__}({', '.join(shown)})"


def _differs(value: Any, default: Any) -> bool:
    """Whether a parameter value differs from its default (arrays compare by identity)."""
    if value is default:
        return False
    if default is inspect.Parameter.empty:
        return True
    try:
        return bool(value != default)
    except Exception:  # arrays: ambiguous truth value; show them
        return True


def _short_repr(value: Any) -> str:
    """A parameter's repr, cut short for large values such as arrays of initial centres."""
    text = repr(value)
    if len(text) > 60 or "\n" in text:
        return f"<{type(value).__name__}>"
    return text


def check_is_fitted(estimator: BaseEstimator, attributes: Optional[Iterable[str]] = None) -> None:
    """
    Raise :class:`NotFittedError` unless ``estimator`` has been fitted.

    Parameters
    ----------
    estimator : BaseEstimator
        The estimator to check.
    attributes : iterable of str, optional
        Fitted attributes that must exist and not be None. By default, any attribute whose
        name ends (but does not start) with an underscore shows that ``fit`` ran.

    Raises
    ------
    NotFittedError
        If it has not been fitted. The fitted state is the same on every process, so every
        process raises alike. Stateless estimators (a class attribute ``_requires_fit =
        False``, scikit-learn's ``requires_fit`` tag), e.g. :class:`heat.preprocessing.Normalizer`,
        count as fitted.

    Examples
    --------
    >>> import heat as ht
    >>> scaler = ht.preprocessing.StandardScaler()
    >>> ht.check_is_fitted(scaler.fit(ht.ones((3, 2), split=0)))  # fitted: no error
    >>> ht.check_is_fitted(ht.preprocessing.StandardScaler())
    Traceback (most recent call last):
    ...
    heat.core.base.NotFittedError: This StandardScaler instance is not fitted yet. ...
    """
    if not getattr(estimator, "_requires_fit", True):
        return
    if attributes is not None:
        fitted = all(getattr(estimator, name, None) is not None for name in attributes)
    else:
        fitted = any(name.endswith("_") and not name.startswith("_") for name in vars(estimator))
    if not fitted:
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
            f"appropriate arguments before using this estimator."
        )


class ClusteringMixin:
    """
    Mixin of clustering estimators: ``fit_predict``. ``fit`` must set ``labels_``.

    Examples
    --------
    >>> import heat as ht
    >>> ht.is_clusterer(ht.cluster.KMeans())
    True
    """

    _estimator_type = "clusterer"

    def fit_predict(self, x, y=None):
        """
        Fit to ``x`` and return the cluster label of every sample (``labels_``).

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.
        y : None
            Ignored; there for API consistency.

        Returns
        -------
        DNDarray
            The labels, shape ``(n_samples,)``.
        """
        self.fit(x)
        return self.labels_


class TransformMixin:
    """
    Mixin of transformers: ``fit_transform``.

    Examples
    --------
    >>> import heat as ht
    >>> ht.is_transformer(ht.preprocessing.StandardScaler())
    True
    """

    _estimator_type = "transformer"

    def fit_transform(self, x, y=None, **fit_params):
        """
        Fit to ``x``, then transform it.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.
        y : optional
            Targets, passed to ``fit`` for supervised transformers.
        **fit_params
            Further arguments of ``fit``.

        Returns
        -------
        DNDarray
            The transformed ``x``.
        """
        if y is None:
            return self.fit(x, **fit_params).transform(x)
        return self.fit(x, y, **fit_params).transform(x)


class RegressionMixin:
    """
    Mixin of regressors: ``fit_predict`` and ``score`` (the coefficient of determination R^2).

    Examples
    --------
    >>> import heat as ht
    >>> class Mean(ht.RegressionMixin, ht.BaseEstimator):
    ...     def fit(self, x, y):
    ...         self.mean_ = y.mean()
    ...         return self
    ...     def predict(self, x):
    ...         return ht.zeros(x.shape[0], split=x.split) + self.mean_
    >>> ht.is_regressor(Mean())
    True
    """

    _estimator_type = "regressor"

    def fit_predict(self, x, y):
        """
        Fit to ``(x, y)`` and return the predictions for ``x``.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.
        y : DNDarray
            Targets, shape ``(n_samples,)`` or ``(n_samples, n_targets)``.

        Returns
        -------
        DNDarray
            The predictions for ``x``.
        """
        self.fit(x, y)
        return self.predict(x)

    def score(self, x, y) -> float:
        """
        The coefficient of determination R^2 of the predictions for ``x`` against ``y``:
        ``1 - sum((y - y_pred)**2) / sum((y - mean(y))**2)`` (1 is a perfect fit).

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.
        y : DNDarray
            True targets.

        Returns
        -------
        float
            R^2, the same on every process.
        """
        predicted = self.predict(x)
        residual = ((y - predicted) ** 2).sum().item()
        total = ((y - y.mean()) ** 2).sum().item()
        if total == 0.0:
            return 1.0 if residual == 0.0 else 0.0
        return 1.0 - residual / total


class ClassificationMixin:
    """
    Mixin of classifiers: ``fit_predict`` and ``score`` (the mean accuracy).

    Examples
    --------
    >>> import heat as ht
    >>> class Constant(ht.ClassificationMixin, ht.BaseEstimator):
    ...     def fit(self, x, y):
    ...         self.label_ = 0
    ...         return self
    >>> ht.is_classifier(Constant())
    True
    """

    _estimator_type = "classifier"

    def fit_predict(self, x, y):
        """
        Fit to ``(x, y)`` and return the predicted classes of ``x``.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.
        y : DNDarray
            Class labels, shape ``(n_samples,)``.

        Returns
        -------
        DNDarray
            The predicted class of every sample.
        """
        self.fit(x, y)
        return self.predict(x)

    def score(self, x, y) -> float:
        """
        The mean accuracy of the predictions for ``x`` against the labels ``y``.

        Parameters
        ----------
        x : DNDarray
            Samples, shape ``(n_samples, n_features)``.
        y : DNDarray
            True labels, shape ``(n_samples,)``.

        Returns
        -------
        float
            The fraction of correctly predicted samples, the same on every process.
        """
        if y.shape[0] == 0:
            return 0.0
        predicted = self.predict(x)
        return (predicted == y).sum().item() / y.shape[0]


def is_estimator(obj: Any) -> bool:
    """
    Whether ``obj`` is a heat estimator (an instance of :class:`BaseEstimator`).

    Examples
    --------
    >>> import heat as ht
    >>> ht.is_estimator(ht.cluster.KMeans()), ht.is_estimator(ht.zeros(3))
    (True, False)
    """
    return isinstance(obj, BaseEstimator)


def is_classifier(obj: Any) -> bool:
    """
    Whether ``obj`` is a classifier (an estimator with :class:`ClassificationMixin`).

    Examples
    --------
    >>> import heat as ht
    >>> ht.is_classifier(ht.cluster.KMeans())
    False
    """
    return is_estimator(obj) and isinstance(obj, ClassificationMixin)


def is_clusterer(obj: Any) -> bool:
    """
    Whether ``obj`` is a clustering estimator (with :class:`ClusteringMixin`).

    Examples
    --------
    >>> import heat as ht
    >>> ht.is_clusterer(ht.cluster.KMeans())
    True
    """
    return is_estimator(obj) and isinstance(obj, ClusteringMixin)


def is_regressor(obj: Any) -> bool:
    """
    Whether ``obj`` is a regressor (an estimator with :class:`RegressionMixin`).

    Examples
    --------
    >>> import heat as ht
    >>> ht.is_regressor(ht.cluster.KMeans())
    False
    """
    return is_estimator(obj) and isinstance(obj, RegressionMixin)


def is_transformer(obj: Any) -> bool:
    """
    Whether ``obj`` is a transformer (an estimator with :class:`TransformMixin`).

    Examples
    --------
    >>> import heat as ht
    >>> ht.is_transformer(ht.preprocessing.MinMaxScaler())
    True
    """
    return is_estimator(obj) and isinstance(obj, TransformMixin)
