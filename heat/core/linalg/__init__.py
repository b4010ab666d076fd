"""Linear algebra on DNDarrays."""

from .basics import *  # noqa: F401,F403
