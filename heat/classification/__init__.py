"""
Classification estimators on distributed samples, following scikit-learn's conventions.
"""

from .kneighborsclassifier import KNeighborsClassifier

__all__ = ["KNeighborsClassifier"]
