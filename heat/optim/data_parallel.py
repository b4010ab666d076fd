"""
``DataParallelOptimizer``: a torch optimizer for :class:`heat.nn.DataParallel` models.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import torch

from ..core.sanitation import check_bool, warn_ignored

__all__ = ["DataParallelOptimizer"]


class DataParallelOptimizer:
    """
    A torch optimizer used with :class:`heat.nn.DataParallel`.

    The data-parallel module averages the gradients over all processes by the end of every
    backward pass, so ``step`` is the torch optimizer's step on averaged gradients; every process
    makes the same update. ``blocking`` chooses when the gradient collectives run: during the
    backward pass, overlapped with it (False), or after it (True); the module passed this
    optimizer sets it from its own ``blocking_parameter_updates``.

    Parameters
    ----------
    torch_optimizer : torch.optim.Optimizer
        Any torch optimizer, with any number of parameter groups.
    blocking : bool
        Start the gradient collectives only after the backward pass.

    Raises
    ------
    TypeError
        If ``torch_optimizer`` is not a torch optimizer or ``blocking`` not a bool.

    Examples
    --------
    >>> net = torch.nn.Linear(3, 1)
    >>> optimizer = ht.optim.DataParallelOptimizer(torch.optim.SGD(net.parameters(), lr=0.1))
    >>> model = ht.nn.DataParallel(net, optimizer=optimizer)
    >>> loss = model(torch.ones(4, 3)).sum()
    >>> loss.backward()          # gradients averaged over all processes
    >>> optimizer.step()
    >>> optimizer.zero_grad()
    """

    def __init__(self, torch_optimizer: torch.optim.Optimizer, blocking: bool = False):
        if not isinstance(torch_optimizer, torch.optim.Optimizer):
            raise TypeError(
                "torch_optimizer must be a torch.optim.Optimizer, got "
                f"{type(torch_optimizer).__name__}"
            )
        blocking = check_bool(blocking, "blocking")
        warn_ignored(
            blocking, "blocking", False,
            "heat.nn.DataParallel(blocking_parameter_updates=...) decides; it sets this attribute",
        )  # fmt: skip
        self.torch_optimizer = torch_optimizer
        self.blocking = blocking

    @property
    def blocking_parameter_updates(self) -> bool:
        """The original's name of ``blocking``."""
        return self.blocking

    @property
    def param_groups(self):
        return self.torch_optimizer.param_groups

    @property
    def state(self):
        return self.torch_optimizer.state

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        """Update the parameters with the (already averaged) gradients."""
        return (
            self.torch_optimizer.step(closure)
            if closure is not None
            else self.torch_optimizer.step()
        )

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter group."""
        self.torch_optimizer.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> Dict[str, Any]:
        return self.torch_optimizer.state_dict()

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.torch_optimizer.load_state_dict(state)

    def __repr__(self) -> str:
        return f"DataParallelOptimizer({self.torch_optimizer!r}, blocking={self.blocking})"
