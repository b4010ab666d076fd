"""
Data-parallel modules: :class:`DataParallel` (gradients averaged over all processes) and
:class:`DataParallelMultiGPU` (the model side of DASO).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Union

import torch

from ..core.communication import (
    MPI_WORLD,
    MPICommunication,
    sanitize_comm,
    torch_process_group,
    verdicts,
)
from ..core.communication.node_groups import (
    NodeGroups,
    broadcast_tensors,
    broadcast_training_state,
)
from ..optim.daso import DASO
from ..optim.data_parallel import DataParallelOptimizer
from ..optim.gradients import (
    FlatAverage,
    GradientReducer,
    HierarchicalAverage,
    bucket_bytes,
    node_average,
    shared_memory_average,
)

__all__ = ["DataParallel", "DataParallelMultiGPU"]


def _check_module(module: Any) -> None:
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")


def _model_entries(module: torch.nn.Module) -> Dict[str, str]:
    """
    What every process's copy of the model must agree in: each parameter's and buffer's name,
    type and shape (and whether a parameter is trained), in the module's order. Processes that
    differ would broadcast and reduce tensors of other sizes: a hang, or an abort inside torch.
    """
    entries = {}
    for name, parameter in module.named_parameters():
        frozen = "" if parameter.requires_grad else " (requires_grad=False)"
        entries[f"parameter {name!r}"] = _tensor_text(parameter) + frozen
    for name, buffer in module.named_buffers():
        entries[f"buffer {name!r}"] = _tensor_text(buffer)
    return entries


def _tensor_text(tensor: torch.Tensor) -> str:
    return f"{str(tensor.dtype).replace('torch.', '')} {tuple(tensor.shape)}"


def _agree_on_model(
    comm: MPICommunication,
    owner: str,
    check_arguments: Callable[[], Any],
    module: Any,
    arguments: Callable[[Any], Dict[str, Any]],
) -> Any:
    """
    Run ``check_arguments()`` on every process, then check with one small all-gather that no
    process failed and that all hold the same model (:func:`_model_entries`) and the same
    ``arguments(checked)`` (name -> value, given the checks' result); raise the same exception
    on every process otherwise (naming the first parameter or argument that differs and the
    processes). Returns ``check_arguments()``.
    """

    def fingerprint(checked):
        entries = {name: repr(value) for name, value in arguments(checked).items()}
        entries.update(_model_entries(module))
        return f"{owner}'s models and arguments", entries

    def checked():
        _check_module(module)
        return check_arguments()

    return verdicts.agree(comm, checked, fingerprint=fingerprint)


class DataParallel(torch.nn.Module):
    """
    Data-parallel training over the processes of ``comm``: every process runs ``module`` on its
    own part of the batch, and the gradients are averaged over all processes by the end of every
    backward pass, so every process makes the same update.

    Gradients are fused into buckets; a bucket's all-reduce starts as soon as backward has produced
    all its gradients and runs during the rest of the backward pass (``blocking_parameter_updates
    =False``), or all buckets are reduced after the backward pass (True). At the start, every
    process takes rank 0's parameters, buffers and optimizer state.

    Parameters
    ----------
    module : torch.nn.Module
    comm : MPICommunication, optional
        The processes that train together (default ``MPI_WORLD``; communicators that partition
        the world may train independent models, each process passing its own).
    optimizer : DataParallelOptimizer or torch.optim.Optimizer, or a list of them, optional
        Its state is broadcast from rank 0 at the start; a ``DataParallelOptimizer`` gets this
        module's ``blocking_parameter_updates``. A list (as HeAT accepted; e.g. one optimizer
        per parameter group, the same number on every process) is treated item by item.
    blocking_parameter_updates : bool
        Reduce the gradients after the backward pass instead of during it.
    compression : torch.dtype, optional
        ``torch.bfloat16`` or ``torch.float16``: gradients travel in this type, pre-divided by the
        number of processes (keyword only).
    hierarchical : bool
        Average inside each node first, then across nodes (each process its slice of every
        bucket), then reassemble inside the node; ``comm`` must hold every process (keyword only).
    bucket_size_mb : float
        Largest bucket (keyword only, default 25).
    broadcast_buffers : bool
        Give every process rank 0's buffers (e.g. batch-norm statistics) before every forward
        pass in training mode, as DistributedDataParallel does (keyword only, default True).

    Attributes
    ----------
    module : torch.nn.Module
    reducer : GradientReducer
        Its ``exposed_seconds`` and its reduction's byte counters measure the communication.

    Raises
    ------
    TypeError, ValueError
        On every process, before any other communication, for a bad argument (also when it is
        bad on one process only).
    ValueError
        On every process, if the processes hold different models (a parameter or buffer whose
        name, dtype, shape or ``requires_grad`` differs, or that only some have) or pass
        different ``blocking_parameter_updates``, ``compression``, ``hierarchical``,
        ``bucket_size_mb`` or ``broadcast_buffers``: the message names the first difference and
        which processes have what. One small all-gather of a digest checks this at construction.

    Examples
    --------
    >>> net = torch.nn.Linear(3, 1)
    >>> model = ht.nn.DataParallel(net)
    >>> optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    >>> model(torch.randn(8, 3)).pow(2).mean().backward()  # gradients averaged over processes
    >>> optimizer.step()
    >>> with model.no_sync():                               # accumulate without communication
    ...     model(torch.randn(8, 3)).sum().backward()
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 1))
    >>> first = ht.optim.DataParallelOptimizer(torch.optim.SGD(net[0].parameters(), lr=0.1))
    >>> second = ht.optim.DataParallelOptimizer(torch.optim.Adam(net[1].parameters()))
    >>> model = ht.nn.DataParallel(net, optimizer=[first, second])
    """

    def __init__(
        self,
        module: torch.nn.Module,
        comm: MPICommunication = MPI_WORLD,
        optimizer: Optional[
            Union[DataParallelOptimizer, torch.optim.Optimizer, List[DataParallelOptimizer]]
        ] = None,
        blocking_parameter_updates: bool = False,
        *,
        compression: Optional[torch.dtype] = None,
        hierarchical: bool = False,
        bucket_size_mb: float = 25,
        broadcast_buffers: bool = True,
    ):
        super().__init__()
        comm = sanitize_comm(comm)
        many = isinstance(optimizer, (list, tuple))
        optimizers = list(optimizer) if many else ([] if optimizer is None else [optimizer])

        def check_arguments():
            if many and not optimizers:
                raise ValueError("optimizer must not be an empty list")
            for one in optimizers:
                if not isinstance(one, (DataParallelOptimizer, torch.optim.Optimizer)):
                    raise TypeError(
                        "optimizer must be a DataParallelOptimizer, a torch.optim.Optimizer, a "
                        f"list of them or None, got {type(one).__name__}"
                        + (" in the list" if many else "")
                    )
            for name, flag in (
                ("blocking_parameter_updates", blocking_parameter_updates),
                ("hierarchical", hierarchical),
                ("broadcast_buffers", broadcast_buffers),
            ):
                if not isinstance(flag, bool):
                    raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
            if compression is not None and compression not in (torch.bfloat16, torch.float16):
                raise ValueError(
                    f"compression must be None, torch.bfloat16 or torch.float16, got {compression}"
                )
            return bucket_bytes(bucket_size_mb)

        # before any other communication: every process checks its arguments, then one small
        # all-gather agrees on the outcome, the model and the arguments that shape the reduction
        def arguments(capacity):
            return dict(
                blocking_parameter_updates=blocking_parameter_updates,
                compression=compression,
                hierarchical=hierarchical,
                bucket_size_mb=capacity / 2**20,  # 25 and 25.0 agree
                broadcast_buffers=broadcast_buffers,
                optimizers=len(optimizers),  # one state broadcast each
            )

        capacity = _agree_on_model(comm, "DataParallel", check_arguments, module, arguments)

        self.module = module
        self.comm = comm
        self.blocking_parameter_updates = blocking_parameter_updates
        self.broadcast_buffers = broadcast_buffers
        if hierarchical:
            groups = NodeGroups(comm)
            self._group = groups.world_group
            shared = shared_memory_average(groups, list(module.parameters()))
            reduction = HierarchicalAverage(groups, compression, shared)
        else:
            self._group = torch_process_group(comm)
            spans_nodes = comm.node_topology().num_nodes > 1
            reduction = FlatAverage(self._group, comm.size, compression, cross_node=spans_nodes)
        torch_optimizers = [
            one.torch_optimizer if isinstance(one, DataParallelOptimizer) else one
            for one in optimizers
        ]
        broadcast_training_state(module, torch_optimizers, self._group, comm)
        for one in optimizers:
            if isinstance(one, DataParallelOptimizer):
                one.blocking = blocking_parameter_updates
        self.optimizer = optimizer
        self.reducer = GradientReducer(
            module.parameters(), reduction, capacity, blocking=blocking_parameter_updates
        )
        self._buffers_to_share = [b for b in module.buffers()]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if (
            self.broadcast_buffers
            and self._buffers_to_share
            and self.training
            and self.comm.size > 1
        ):
            broadcast_tensors(self._buffers_to_share, self.comm, self._group)
        return self.module(*args, **kwargs)

    def no_sync(self):
        """Context manager: backward passes inside accumulate local gradients, no communication."""
        return self.reducer.no_sync()


class DataParallelMultiGPU(torch.nn.Module):
    """
    The model side of :class:`heat.optim.DASO`: every process starts from rank 0's parameters,
    buffers and optimizer state, and gradients are averaged among the processes of each node by
    the end of every backward pass (bucketed, overlapped with it). The cross-node part happens in
    ``daso.step()``.

    Parameters
    ----------
    module : torch.nn.Module
    optimizer : DASO
    comm : MPICommunication, optional
        Must hold the same processes as the DASO's communicator (default ``MPI_WORLD``).

    Raises
    ------
    TypeError
        If ``module`` is not a torch module or ``optimizer`` not a DASO optimizer.
    ValueError
        On every process, if the processes hold different models (a parameter or buffer whose
        name, dtype, shape or ``requires_grad`` differs, or that only some have), naming the
        first difference and which processes have what; checked before any other communication.

    Examples
    --------
    >>> daso = ht.optim.DASO(local_optimizer=optimizer, total_epochs=num_epochs)
    >>> model = ht.nn.DataParallelMultiGPU(net, daso)
    """

    def __init__(
        self, module: torch.nn.Module, optimizer: DASO, comm: MPICommunication = MPI_WORLD
    ):
        super().__init__()
        _check_module(module)
        if not isinstance(optimizer, DASO):
            raise TypeError(f"optimizer must be a heat.optim.DASO, got {type(optimizer).__name__}")
        comm = sanitize_comm(comm)
        if comm.size != optimizer.comm.size:
            raise ValueError(
                f"comm ({comm.size} processes) must hold the processes of the DASO optimizer "
                f"({optimizer.comm.size})"
            )
        # the same model everywhere, agreed in one small all-gather before the broadcast
        _agree_on_model(optimizer.comm, "DataParallelMultiGPU", lambda: None, module, lambda _: {})
        self.module = module
        self.comm = optimizer.comm
        self.optimizer = optimizer
        groups = optimizer.groups
        broadcast_training_state(
            module, optimizer.local_optimizer, groups.world_group, optimizer.comm
        )
        reducer = None
        if groups.local_size > 1:
            reducer = GradientReducer(
                module.parameters(),
                node_average(groups, list(module.parameters())),
                optimizer.bucket_bytes,
            )
        self.reducer = reducer
        optimizer._attach(module, reducer)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def no_sync(self):
        """Context manager: backward passes inside accumulate local gradients, no communication."""
        if self.reducer is None:
            import contextlib

            return contextlib.nullcontext()
        return self.reducer.no_sync()
