"""
HeAT's helpers for optimizers: :class:`DetectMetricPlateau`, a plateau detector with the rules of
``torch.optim.lr_scheduler.ReduceLROnPlateau`` (pure Python state, no communication; feed it
the same metric on every process and every process decides alike).

heat's DASO uses its own detector, :class:`heat.optim.PlateauDetector`; this class keeps HeAT's
name, signature and checkpoint state for ported scripts.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Dict

from ..core.sanitation import check_choice, check_int, check_type

__all__ = ["DetectMetricPlateau"]


class DetectMetricPlateau:
    """
    Detects when a metric has stopped improving, with ``ReduceLROnPlateau``'s rules (HeAT's
    class).

    Each call of :meth:`test_if_improving` records one epoch's metric. A metric better than the
    best so far by more than the threshold becomes the best; any other counts as a bad epoch.
    When more than ``patience`` bad epochs follow each other, the call returns True (a plateau),
    the count starts anew and the next ``cooldown`` epochs count no bad epochs.

    Parameters
    ----------
    mode : {"min", "max"}
        Whether the metric should decrease (a loss) or increase (an accuracy).
    patience : int
        Bad epochs tolerated; the ``patience + 1``-th in a row is a plateau (>= 0).
    threshold : float
        The least improvement that counts (>= 0).
    threshold_mode : {"rel", "abs"}
        ``"rel"``: better than ``best`` by ``threshold * |best|``; ``"abs"``: by ``threshold``.
    cooldown : int
        Epochs after a plateau during which bad epochs are not counted (>= 0).

    Raises
    ------
    TypeError
        If an argument has a wrong type.
    ValueError
        If ``mode`` or ``threshold_mode`` is unknown, or a number is negative.

    Notes
    -----
    Despite its name (kept from HeAT), :meth:`test_if_improving` returns True when a plateau is
    detected. In ``"max"`` mode with ``"rel"`` and a negative best value, the bar is
    ``best + threshold * |best|`` (HeAT multiplied by ``1 + threshold``, which lowers the bar
    for negative values).

    Examples
    --------
    >>> detector = ht.optim.utils.DetectMetricPlateau(patience=1, threshold=0.1)
    >>> [detector.test_if_improving(loss) for loss in (1.0, 0.8, 0.79, 0.78, 0.5)]
    [False, False, False, True, False]
    """

    def __init__(
        self,
        mode: str = "min",
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
    ):
        self.mode = check_choice(mode, "mode", ("min", "max"))
        self.patience = check_int(patience, "patience", 0)
        self.threshold = _check_threshold(threshold)
        self.threshold_mode = check_choice(threshold_mode, "threshold_mode", ("rel", "abs"))
        self.cooldown = check_int(cooldown, "cooldown", 0)
        self.last_epoch = 0
        self.reset()

    @property
    def mode_worse(self) -> float:
        """The worst value of the metric: ``inf`` for ``"min"``, ``-inf`` for ``"max"``."""
        return math.inf if self.mode == "min" else -math.inf

    @property
    def in_cooldown(self) -> bool:
        """Whether bad epochs are not counted now (after a plateau)."""
        return self.cooldown_counter > 0

    def reset(self) -> None:
        """Forget the best value, the count of bad epochs and the cooldown."""
        self.best = self.mode_worse
        self.num_bad_epochs = 0
        self.cooldown_counter = 0

    def is_better(self, value: float, best: float) -> bool:
        """
        Whether ``value`` improves on ``best`` by more than the threshold (NaN never does).

        Examples
        --------
        >>> ht.optim.utils.DetectMetricPlateau(threshold=0.1).is_better(0.95, 1.0)
        False
        """
        if math.isnan(value):
            return False
        if math.isinf(best):
            return value < best if self.mode == "min" else value > best
        margin = self.threshold * abs(best) if self.threshold_mode == "rel" else self.threshold
        return value < best - margin if self.mode == "min" else value > best + margin

    def test_if_improving(self, metric: Any) -> bool:
        """
        Record one epoch's metric (a number or a one-element tensor); True when it completes a
        plateau (HeAT's name).

        Examples
        --------
        >>> detector = ht.optim.utils.DetectMetricPlateau(mode="max", patience=0)
        >>> detector.test_if_improving(0.5), detector.test_if_improving(0.4)
        (False, True)
        """
        current = float(metric)
        self.last_epoch += 1
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
            return True
        return False

    def get_state(self) -> Dict[str, Any]:
        """
        The detector's parameters and counters, for a checkpoint (HeAT's keys).

        Examples
        --------
        >>> ht.optim.utils.DetectMetricPlateau().get_state()["best"]
        inf
        """
        return {
            "patience": self.patience,
            "cooldown": self.cooldown,
            "cooldown_counter": self.cooldown_counter,
            "mode": self.mode,
            "threshold": self.threshold,
            "threshold_mode": self.threshold_mode,
            "best": self.best,
            "num_bad_epochs": self.num_bad_epochs,
            "mode_worse": self.mode_worse,
            "last_epoch": self.last_epoch,
        }

    def set_state(self, state: Dict[str, Any]) -> None:
        """
        Restore a state from :meth:`get_state` (``mode_worse`` follows from ``mode``).

        Raises
        ------
        TypeError
            If ``state`` is not a dict or a value has a wrong type.
        KeyError
            If a key is missing.
        ValueError
            If a value is out of range.

        Examples
        --------
        >>> a = ht.optim.utils.DetectMetricPlateau(patience=3)
        >>> b = ht.optim.utils.DetectMetricPlateau()
        >>> b.set_state(a.get_state()); b.patience
        3
        """
        check_type(state, "state", dict, "a dict")
        missing = [key for key in self.get_state() if key not in state and key != "mode_worse"]
        if missing:
            raise KeyError(f"state lacks {missing}")
        self.mode = check_choice(state["mode"], "state['mode']", ("min", "max"))
        self.patience = check_int(state["patience"], "state['patience']", 0)
        self.threshold = _check_threshold(state["threshold"], "state['threshold']")
        self.threshold_mode = check_choice(
            state["threshold_mode"], "state['threshold_mode']", ("rel", "abs")
        )
        self.cooldown = check_int(state["cooldown"], "state['cooldown']", 0)
        self.cooldown_counter = check_int(state["cooldown_counter"], "state['cooldown_counter']", 0)
        self.num_bad_epochs = check_int(state["num_bad_epochs"], "state['num_bad_epochs']", 0)
        self.last_epoch = check_int(state["last_epoch"], "state['last_epoch']", 0)
        self.best = float(check_type(state["best"], "state['best']", numbers.Real, "a number"))


def _check_threshold(value: Any, name: str = "threshold") -> float:
    value = float(check_type(value, name, numbers.Real, "a number"))
    if not value >= 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value
