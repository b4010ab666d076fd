"""
Utilities on top of heat's arrays: data loading for training (:mod:`heat.utils.data`) and the
input checks heat's estimators share (:mod:`heat.utils.validation`).
"""

from . import data, validation  # noqa: F401
