"""
When DASO synchronizes: warm-up, cycling skips adapted to loss plateaus, cool-down.

Pure Python state (no MPI, no tensors), so every rule can be unit-tested by itself. The DASO
optimizer (:mod:`heat.optim.daso`) asks it, batch by batch, whether to synchronize blocking, whether
to start a non-blocking global synchronization, and when to receive it.

Phases, by epoch ``e`` of ``total_epochs``:

* warm-up, ``e < warmup_epochs``: a blocking global synchronization after every batch;
* cool-down, ``e >= total_epochs - cooldown_epochs`` (and any epoch beyond ``total_epochs``): the
  same;
* cycling, in between: a global synchronization starts every ``global_skip`` (B) batches and is
  received ``batches_to_wait`` (S) batches later. B starts at ``max_global_skips``; each time the
  loss plateaus, B and the local skip are divided by ``skip_reduction_factor`` and S decreases by
  one; a plateau while B is already 1 resets B, the local skip and S to their maxima.

The last batch of every epoch (when the epoch's length is known) synchronizes blocking, so every
epoch ends with the same parameters on every process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional

from ..core.sanitation import check_int

__all__ = ["PlateauDetector", "DASOSchedule"]


@dataclass
class PlateauDetector:
    """
    Detects a plateau of a loss that should decrease.

    An epoch improves when its loss is lower than the best loss so far by more than ``threshold``
    relative to the best (``best - loss > threshold * |best|``). After ``patience`` consecutive
    epochs without improvement :meth:`update` reports a plateau and starts counting anew, so the
    next plateau needs another ``patience`` epochs.

    Parameters
    ----------
    threshold : float
        Relative improvement that counts (DASO's ``stability_level``).
    patience : int
        Epochs without improvement that make a plateau.

    Examples
    --------
    >>> detector = PlateauDetector(threshold=0.05, patience=2)
    >>> [detector.update(loss) for loss in (1.0, 0.9, 0.89, 0.88, 0.5)]
    [False, False, False, True, False]
    """

    threshold: float
    patience: int = 2
    best: Optional[float] = None
    bad_epochs: int = 0

    def update(self, loss: float) -> bool:
        """Record one epoch's loss; True when it completes a plateau."""
        loss = float(loss)
        if not math.isnan(loss) and (
            self.best is None or self.best - loss > self.threshold * abs(self.best)
        ):
            self.best = loss
            self.bad_epochs = 0
            return False
        self.bad_epochs += 1
        if self.bad_epochs >= self.patience:
            self.bad_epochs = 0
            return True
        return False

    def reset(self) -> None:
        """Forget the best loss and the count of epochs without improvement."""
        self.best = None
        self.bad_epochs = 0


class DASOSchedule:
    """
    DASO's synchronization schedule (pure state, see the module docstring for the rules).

    Parameters
    ----------
    total_epochs : int
        Number of training epochs (>= 1, and >= ``warmup_epochs + cooldown_epochs``).
    warmup_epochs, cooldown_epochs : int
        Epochs of blocking synchronization after every batch at the start and at the end (>= 0).
    max_global_skips : int
        The largest global skip B: batches between two global synchronizations (>= 1).
    stability_level : float
        Relative loss improvement that counts as progress (in [0, 1)).
    skip_reduction_factor : int
        B and the local skip are divided by it on a plateau (>= 2).
    local_skip_factor : int
        The local skip and the batches to wait S start at ``max_global_skips // local_skip_factor``
        (at least 1; S at most B) (>= 1).
    patience : int
        Epochs without improvement that make a plateau.

    Attributes
    ----------
    epoch : int
        The epoch being trained (0-based).
    global_skip, local_skip, batches_to_wait : int
        B, the local skip and S of the current epoch; all 0 in blocking epochs.

    Raises
    ------
    TypeError, ValueError
        For an argument of the wrong type or out of range (naming it).

    Examples
    --------
    >>> schedule = DASOSchedule(total_epochs=6, warmup_epochs=1, cooldown_epochs=1)
    >>> schedule.phase, schedule.global_skip
    ('warmup', 0)
    >>> schedule.end_epoch(1.0)
    >>> schedule.phase, schedule.global_skip, schedule.batches_to_wait
    ('cycling', 8, 2)
    """

    def __init__(
        self,
        total_epochs: int,
        warmup_epochs: int = 4,
        cooldown_epochs: int = 4,
        max_global_skips: int = 8,
        stability_level: float = 0.05,
        skip_reduction_factor: int = 2,
        local_skip_factor: int = 4,
        patience: int = 2,
    ):
        self.total_epochs = check_int(total_epochs, "total_epochs", 1)
        self.warmup_epochs = check_int(warmup_epochs, "warmup_epochs", 0)
        self.cooldown_epochs = check_int(cooldown_epochs, "cooldown_epochs", 0)
        if warmup_epochs + cooldown_epochs > total_epochs:
            raise ValueError(
                f"total_epochs ({total_epochs}) must be >= warmup_epochs + cooldown_epochs "
                f"({warmup_epochs} + {cooldown_epochs})"
            )
        self.max_global_skips = check_int(max_global_skips, "max_global_skips", 1)
        if isinstance(stability_level, bool) or not isinstance(stability_level, (int, float)):
            raise TypeError(
                f"stability_level must be a float, got {type(stability_level).__name__}"
            )
        if not 0.0 <= float(stability_level) < 1.0:
            raise ValueError(f"stability_level must be in [0, 1), got {stability_level}")
        self.skip_reduction_factor = check_int(skip_reduction_factor, "skip_reduction_factor", 2)
        self.local_skip_factor = check_int(local_skip_factor, "local_skip_factor", 1)
        self.detector = PlateauDetector(float(stability_level), check_int(patience, "patience", 1))
        self.epoch = 0
        self.global_skip = self.local_skip = self.batches_to_wait = 0
        self._enter_epoch(previous_phase=None, loss=None)

    # -- phases ----------------------------------------------------------------------------------

    def phase_of(self, epoch: int) -> str:
        """``"warmup"``, ``"cycling"`` or ``"cooldown"`` for a 0-based epoch number."""
        if epoch < self.warmup_epochs:
            return "warmup"
        if epoch >= self.total_epochs - self.cooldown_epochs:
            return "cooldown"
        return "cycling"

    @property
    def phase(self) -> str:
        """The phase of the current epoch."""
        return self.phase_of(self.epoch)

    @property
    def blocking(self) -> bool:
        """Whether every batch of the current epoch synchronizes blocking."""
        return self.global_skip == 0

    def _reset_cycle(self) -> None:
        top = self.max_global_skips
        self.global_skip = top
        self.local_skip = max(top // self.local_skip_factor, 1)
        self.batches_to_wait = min(max(top // self.local_skip_factor, 1), top)

    def _reduce_skips(self) -> None:
        factor = self.skip_reduction_factor
        self.global_skip = max(self.global_skip // factor, 1)
        self.local_skip = max(self.local_skip // factor, 1)
        # S < B keeps at most one synchronization in flight (S == B: received, then sent anew)
        self.batches_to_wait = min(max(self.batches_to_wait - 1, 1), self.global_skip)

    def _enter_epoch(self, previous_phase: Optional[str], loss: Optional[float]) -> str:
        phase = self.phase
        if phase != "cycling":
            self.global_skip = self.local_skip = self.batches_to_wait = 0
            return "blocking"
        if previous_phase != "cycling":
            self._reset_cycle()
            self.detector.reset()
            if loss is not None:  # the last blocking epoch's loss is the baseline
                self.detector.update(loss)
            return "start"
        if not self.detector.update(loss):
            return "keep"
        if self.global_skip > 1:
            self._reduce_skips()
            return "reduce"
        self._reset_cycle()
        return "reset"

    def end_epoch(self, loss: float) -> str:
        """
        Finish the current epoch with its (globally averaged) loss and set the next epoch's skips.

        Returns
        -------
        str
            What changed: ``"blocking"`` (the next epoch synchronizes every batch), ``"start"``
            (cycling starts at the maximal skips), ``"keep"``, ``"reduce"`` (plateau: skips
            reduced) or ``"reset"`` (plateau at B = 1: skips back to their maxima).
        """
        previous = self.phase
        self.epoch += 1
        return self._enter_epoch(previous, loss)

    # -- batches ---------------------------------------------------------------------------------

    def blocking_at(self, batch: int, batches_per_epoch: Optional[int]) -> bool:
        """Whether batch ``batch`` (0-based) synchronizes blocking: blocking epoch or last batch."""
        return self.blocking or (batches_per_epoch is not None and batch >= batches_per_epoch - 1)

    def sends_at(self, batch: int, batches_per_epoch: Optional[int]) -> bool:
        """Whether a non-blocking global synchronization starts after batch ``batch``."""
        return not self.blocking_at(batch, batches_per_epoch) and batch % self.global_skip == 0

    def receive_batch(self, sent_at: int, batches_per_epoch: Optional[int]) -> int:
        """The batch after which a synchronization started after ``sent_at`` is received."""
        receive = sent_at + self.batches_to_wait
        if batches_per_epoch is not None:
            receive = min(receive, batches_per_epoch - 1)
        return receive

    # -- checkpoints -----------------------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """The schedule's state (plain Python values)."""
        return {
            "epoch": self.epoch,
            "global_skip": self.global_skip,
            "local_skip": self.local_skip,
            "batches_to_wait": self.batches_to_wait,
            "best_loss": self.detector.best,
            "bad_epochs": self.detector.bad_epochs,
        }

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore a state from :meth:`state_dict`."""
        self.epoch = int(state["epoch"])
        self.global_skip = int(state["global_skip"])
        self.local_skip = int(state["local_skip"])
        self.batches_to_wait = int(state["batches_to_wait"])
        self.detector.best = state["best_loss"]
        self.detector.bad_epochs = int(state["bad_epochs"])

    def __repr__(self) -> str:
        return (
            f"DASOSchedule(epoch={self.epoch}, phase={self.phase!r}, global_skip="
            f"{self.global_skip}, local_skip={self.local_skip}, batches_to_wait="
            f"{self.batches_to_wait})"
        )
