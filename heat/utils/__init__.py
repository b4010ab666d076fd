"""Utilities on top of heat's arrays: data loading for training (:mod:`heat.utils.data`)."""

from . import data  # noqa: F401
