"""
Neural networks, data parallel.

* :class:`DataParallel` — gradients averaged over all processes (bucketed, overlapped with the
  backward pass; optional compression and hierarchical all-reduce);
* :class:`DataParallelMultiGPU` — the model side of :class:`heat.optim.DASO`.

Every name of ``torch.nn`` is available here too (``ht.nn.Linear``, ``ht.nn.functional``, ...).
"""

import torch.nn as _torch_nn

from .data_parallel import DataParallel, DataParallelMultiGPU

__all__ = ["DataParallel", "DataParallelMultiGPU"]


def __getattr__(name: str):
    # the rest of torch.nn, so scripts need only ``ht.nn``
    try:
        return getattr(_torch_nn, name)
    except AttributeError:
        raise AttributeError(f"module 'heat.nn' has no attribute {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(dir(_torch_nn)))
