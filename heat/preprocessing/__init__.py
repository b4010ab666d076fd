"""
Feature scaling for distributed data (``ht.preprocessing``), with scikit-learn's estimators and
attributes: :class:`StandardScaler`, :class:`MinMaxScaler`, :class:`MaxAbsScaler` (each with
``partial_fit``, so that the features of a file larger than memory can be fitted window by
window), :class:`RobustScaler` and :class:`Normalizer`.
"""

from .preprocessing import *  # noqa: F401,F403
from .preprocessing import __all__  # noqa: F401
