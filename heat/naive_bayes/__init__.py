"""
Naive Bayes classifiers on distributed samples, following scikit-learn's conventions.
"""

from .gaussian import GaussianNB

__all__ = ["GaussianNB"]
