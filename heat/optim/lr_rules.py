"""
The large-batch learning-rate rule: data parallelism over ``p`` processes multiplies the global
batch by ``p``; the learning rate is scaled with it (linearly, or by ``sqrt(p)``), reached through a
gradual warm-up so the first steps stay stable.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import torch

from ..core.communication import sanitize_comm

__all__ = ["scaled_learning_rate", "large_batch_scheduler"]

_RULES = ("linear", "sqrt")


def _factor(rule: str, processes: Optional[int], comm: Any) -> float:
    if rule not in _RULES:
        raise ValueError(f"rule must be 'linear' or 'sqrt', got {rule!r}")
    if processes is None:
        processes = sanitize_comm(comm).size
    if isinstance(processes, bool) or not isinstance(processes, int):
        raise TypeError(f"processes must be an int, got {type(processes).__name__}")
    if processes < 1:
        raise ValueError(f"processes must be >= 1, got {processes}")
    return float(processes) if rule == "linear" else math.sqrt(processes)


def scaled_learning_rate(
    base_lr: float, processes: Optional[int] = None, rule: str = "linear", comm: Any = None
) -> float:
    """
    The learning rate for ``processes`` data-parallel processes, from the single-process one.

    Parameters
    ----------
    base_lr : float
        Learning rate tuned for one process's batch.
    processes : int, optional
        Number of processes (default: the size of ``comm``).
    rule : {"linear", "sqrt"}
        ``base_lr * p`` (Goyal et al., SGD) or ``base_lr * sqrt(p)`` (often better for Adam).
    comm : MPICommunication, optional
        Default communicator when ``processes`` is not given.

    Examples
    --------
    >>> scaled_learning_rate(0.1, processes=4)
    0.4
    >>> scaled_learning_rate(0.1, processes=4, rule="sqrt")
    0.2
    """
    if isinstance(base_lr, bool) or not isinstance(base_lr, (int, float)):
        raise TypeError(f"base_lr must be a float, got {type(base_lr).__name__}")
    return base_lr * _factor(rule, processes, comm)


def large_batch_scheduler(
    optimizer: torch.optim.Optimizer,
    processes: Optional[int] = None,
    rule: str = "linear",
    warmup_steps: int = 0,
    comm: Any = None,
) -> torch.optim.lr_scheduler.LambdaLR:
    """
    A scheduler that scales every parameter group's learning rate by the large-batch factor,
    rising linearly from 1 to the factor over ``warmup_steps`` calls of ``step()``.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
        Its learning rates are the single-process ones.
    processes, rule, comm
        As in :func:`scaled_learning_rate`.
    warmup_steps : int
        Length of the gradual warm-up (0: the scaled rate at once).

    Returns
    -------
    torch.optim.lr_scheduler.LambdaLR

    Examples
    --------
    >>> optimizer = torch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.1)
    >>> scheduler = large_batch_scheduler(optimizer, processes=4, warmup_steps=3)
    >>> rates = []
    >>> for _ in range(4):
    ...     rates.append(round(optimizer.param_groups[0]["lr"], 3))
    ...     optimizer.step()
    ...     scheduler.step()
    >>> rates
    [0.1, 0.2, 0.3, 0.4]
    """
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}"
        )
    if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int):
        raise TypeError(f"warmup_steps must be an int, got {type(warmup_steps).__name__}")
    if warmup_steps < 0:
        raise ValueError(f"warmup_steps must be >= 0, got {warmup_steps}")
    factor = _factor(rule, processes, comm)

    def multiplier(step: int) -> float:
        if warmup_steps == 0 or step >= warmup_steps:
            return factor
        return 1.0 + (factor - 1.0) * step / warmup_steps

    return torch.optim.lr_scheduler.LambdaLR(optimizer, multiplier)
