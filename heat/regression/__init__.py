"""
Regression estimators on distributed samples, following scikit-learn's conventions.
"""

from .lasso import Lasso

__all__ = ["Lasso"]
