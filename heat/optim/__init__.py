"""
Optimizers for data-parallel training.

* :class:`DASO` — distributed asynchronous and selective optimization for nodes of several
  processes (with :class:`heat.nn.DataParallelMultiGPU`);
* :class:`DataParallelOptimizer` — a torch optimizer for :class:`heat.nn.DataParallel`;
* :class:`ZeroRedundancyOptimizer` — sharded data parallelism (ZeRO stages 1-3: optimizer state,
  gradients, parameters sharded over the processes), with sharded checkpoints
  (``zero_checkpoint``);
* :class:`DASOSchedule` — DASO's synchronization schedule, usable on its own;
* :class:`DetectMetricPlateau` (also ``heat.optim.utils``) — HeAT's plateau detector, with
  ``ReduceLROnPlateau``'s rules;
* :func:`scaled_learning_rate`, :func:`large_batch_scheduler` — the large-batch learning-rate rule.

Every name of ``torch.optim`` is available here too (``ht.optim.SGD``, ``ht.optim.Adam``, ...), and
torch's learning-rate schedulers as ``ht.optim.lr_scheduler``.

Modules: ``schedule`` (when to synchronize), ``averaging`` (how values combine: pure tensor
math), ``gradients`` (bucketed gradient averaging over the groups of
:mod:`heat.core.communication.node_groups`, which is who talks to whom), ``daso``,
``data_parallel``, ``lr_rules``, ``timeline``, ``zero``, ``zero_checkpoint``.
"""

import torch.optim as _torch_optim
from torch.optim import lr_scheduler  # noqa: F401

from . import utils  # noqa: F401  (ht.optim.utils, HeAT's module)
from . import zero_checkpoint  # noqa: F401  (sharded checkpoints of ZeroRedundancyOptimizer)
from .daso import DASO
from .data_parallel import DataParallelOptimizer
from .lr_rules import large_batch_scheduler, scaled_learning_rate
from .schedule import DASOSchedule, PlateauDetector
from .timeline import BatchRecord, Timeline
from .utils import DetectMetricPlateau
from .zero import ZeroRedundancyOptimizer

__all__ = [
    "DASO",
    "DataParallelOptimizer",
    "ZeroRedundancyOptimizer",
    "DASOSchedule",
    "PlateauDetector",
    "DetectMetricPlateau",
    "BatchRecord",
    "Timeline",
    "scaled_learning_rate",
    "large_batch_scheduler",
    "lr_scheduler",
]


def __getattr__(name: str):
    # the rest of torch.optim (SGD, Adam, Optimizer, ...), so scripts need only ``ht.optim``
    try:
        return getattr(_torch_optim, name)
    except AttributeError:
        raise AttributeError(f"module 'heat.optim' has no attribute {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(dir(_torch_optim)))
