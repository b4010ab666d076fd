"""
Neural networks: data, pipeline and tensor parallel.

* :class:`DataParallel` — gradients averaged over all processes (bucketed, overlapped with the
  backward pass; optional compression and hierarchical all-reduce);
* :class:`DataParallelMultiGPU` — the model side of :class:`heat.optim.DASO`;
* :class:`Pipeline` — a sequence of layers cut into stages, one per process, trained with
  micro-batches on a GPipe, 1F1B or PipeDream schedule; its plan (:func:`profile_layers`,
  :func:`partition_layers`, :func:`pipeline_schedule`, :func:`simulate_schedule`) is pure and
  usable on its own;
* tensor parallelism (Megatron-style) — :class:`ColumnParallelLinear`, :class:`RowParallelLinear`,
  :class:`ParallelEmbedding`, :class:`ParallelMLP`, :class:`ParallelSelfAttention` split their
  weights over the processes; :func:`parallelize` swaps them into an existing model;
  :func:`full_state_dict` / :func:`load_full_state_dict` save and load such a model in the
  unsplit torch model's format;
* :mod:`heat.nn.lightning` (optional, ``pip install 'heat-mpi[lightning]'``) -- PyTorch Lightning
  strategies on DASO and DataParallel, and the streaming loader as a resumable DataModule;
  imported only when used.

Every name of ``torch.nn`` is available here too (``ht.nn.Linear``, ``ht.nn.functional``, ...).
"""

import torch.nn as _torch_nn

from . import functional  # noqa: F401  (heat.nn.functional, not torch's through __getattr__)
from .data_parallel import DataParallel, DataParallelMultiGPU
from .pipeline import Pipeline
from .pipeline_plan import (
    LayerProfile,
    Partition,
    PipelineAction,
    ScheduleSimulation,
    partition_layers,
    pipeline_schedule,
    profile_layers,
    simulate_schedule,
)
from .tensor_parallel import (
    ColumnParallelLinear,
    ParallelEmbedding,
    ParallelMLP,
    ParallelSelfAttention,
    RowParallelLinear,
    parallelize,
)
from .tensor_parallel_state import full_state_dict, load_full_state_dict

__all__ = [
    "DataParallel",
    "DataParallelMultiGPU",
    "Pipeline",
    "LayerProfile",
    "Partition",
    "PipelineAction",
    "ScheduleSimulation",
    "partition_layers",
    "pipeline_schedule",
    "profile_layers",
    "simulate_schedule",
    "ColumnParallelLinear",
    "RowParallelLinear",
    "ParallelEmbedding",
    "ParallelMLP",
    "ParallelSelfAttention",
    "parallelize",
    "full_state_dict",
    "load_full_state_dict",
]


def __getattr__(name: str):
    if name == "lightning":  # optional (PyTorch Lightning): imported on first use only
        import importlib

        return importlib.import_module(".lightning", __name__)
    # the rest of torch.nn, so scripts need only ``ht.nn``
    try:
        return getattr(_torch_nn, name)
    except AttributeError:
        raise AttributeError(f"module 'heat.nn' has no attribute {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(dir(_torch_nn)))
