"""
Lightning strategies on heat's data-parallel modules: :class:`HeatDataParallelStrategy`
(:class:`heat.nn.DataParallel`) and :class:`DASOStrategy` (:class:`heat.nn.DataParallelMultiGPU`
with :class:`heat.optim.DASO`). Their collectives (``reduce``, ``all_gather``, ``broadcast``,
``barrier``: what ``self.log(..., sync_dist=True)`` and callbacks use) go through heat's
communicator.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

import torch

from ...core.communication import MPI, MPICommunication, verdicts
from ...core.sanitation import check_bool, check_int
from ...optim.averaging import WIRE_DTYPES
from ...optim.daso import DASO
from ...optim.gradients import bucket_bytes
from ...optim.schedule import DASOSchedule
from ..data_parallel import DataParallel, DataParallelMultiGPU
from ._imports import (
    MixedPrecision,
    ParallelStrategy,
    _all_gather_ddp_if_available,
    _sync_ddp_if_available,
    pl,
    rank_zero_only,
)
from .environment import HeatEnvironment, check_world

__all__ = ["HeatDataParallelStrategy", "DASOStrategy"]

#: Lightning's reduce operations (names and torch.distributed.ReduceOp) -> (MPI op, mean?)
_REDUCE_OPS = {"sum": (MPI.SUM, False), "mean": (MPI.SUM, True), "avg": (MPI.SUM, True)}
_REDUCE_OPS.update(max=(MPI.MAX, False), min=(MPI.MIN, False), product=(MPI.PROD, False))


def _mpi_reduce_op(reduce_op: Any):
    """(MPI op, whether to divide by the process count) for Lightning's ``reduce_op``."""
    if reduce_op is None:
        return MPI.SUM, True
    name = reduce_op if isinstance(reduce_op, str) else str(reduce_op).split(".")[-1]
    name = name.lower()
    name = {"average": "avg", "prod": "product"}.get(name, name)
    if name not in _REDUCE_OPS:
        raise ValueError(
            f"reduce_op must be one of 'sum', 'mean', 'avg', 'max', 'min', 'product' (or a "
            f"torch.distributed.ReduceOp of them), got {reduce_op!r}"
        )
    return _REDUCE_OPS[name]


class _HeatParallelStrategy(ParallelStrategy):
    """What heat's strategies share: the environment, the collectives, the devices."""

    #: the name in error messages
    _owner = "heat strategy"

    def __init__(
        self,
        comm: Optional[MPICommunication] = None,
        accelerator: Any = None,
        checkpoint_io: Any = None,
        precision_plugin: Any = None,
    ):
        comm = check_world(comm, type(self).__name__)
        super().__init__(
            accelerator=accelerator,
            cluster_environment=HeatEnvironment(comm),
            checkpoint_io=checkpoint_io,
            precision_plugin=precision_plugin,
        )
        self.comm = comm

    def _agree_on_options(self, check: Callable[[], Any], options: Dict[str, Any]) -> None:
        """
        Run ``check`` on every process and agree, in one small all-gather, on its outcome and
        on ``options`` (name -> value): the same exception on every process otherwise.
        """

        def fingerprint(_):
            return f"{self._owner}'s options", {k: repr(v) for k, v in options.items()}

        verdicts.agree(self.comm, check, fingerprint=fingerprint)

    def _refuse_gradient_scaler(self) -> None:
        """``precision="16-mixed"``: its scaler may skip a step on some processes only."""
        precision = self.precision_plugin
        if isinstance(precision, MixedPrecision) and precision.scaler is not None:
            raise ValueError(
                f'{self._owner} does not support precision="16-mixed": its gradient scaler may '
                'skip a step on some processes only; use precision="bf16-mixed"'
            )

    # -- layout ----------------------------------------------------------------------------------

    @property
    def root_device(self) -> torch.device:
        devices = self.parallel_devices or [torch.device("cpu")]
        return devices[self.local_rank % len(devices)]

    @property
    def num_nodes(self) -> int:
        """Nodes of the job (heat's node topology; ``HEAT_RANKS_PER_NODE`` emulates them)."""
        return self.cluster_environment.num_nodes

    @num_nodes.setter
    def num_nodes(self, num_nodes: int) -> None:
        # Trainer(num_nodes=...) is ignored: the MPI job and heat's topology decide
        pass

    @property
    def is_distributed(self) -> bool:
        """True: ``self.log(..., sync_dist=True)`` reduces over the processes."""
        return True

    @property
    def distributed_sampler_kwargs(self) -> Dict[str, int]:
        return {"num_replicas": self.world_size, "rank": self.global_rank}

    def set_world_ranks(self) -> None:
        rank_zero_only.rank = self.global_rank

    def _configure_launcher(self) -> None:
        self._launcher = None  # mpiexec started the processes

    def setup_environment(self) -> None:
        super().setup_environment()
        self.set_world_ranks()

    def model_to_device(self) -> None:
        self.model.to(self.root_device)

    def teardown(self) -> None:
        if self.lightning_module is not None:
            self.model = self.lightning_module  # unwrap
        super().teardown()

    # -- collectives on heat's communicator --------------------------------------------------------

    def _group_comm(self, group: Any) -> Optional[MPICommunication]:
        if group is None:
            return self.comm
        if isinstance(group, MPICommunication):
            return group
        return None  # a torch.distributed group: Lightning's own collectives

    def reduce(
        self, tensor: Any, group: Any = None, reduce_op: Optional[Union[str, Any]] = "mean"
    ) -> Any:
        """
        ``reduce_op`` ('mean' (default), 'sum', 'max', 'min', 'product') over the processes of
        heat's communicator (or of ``group``); what ``self.log(..., sync_dist=True)`` uses.
        Non-tensors are returned unchanged.
        """
        if not isinstance(tensor, torch.Tensor):
            return tensor
        comm = self._group_comm(group)
        if comm is None:
            return _sync_ddp_if_available(tensor, group, reduce_op=reduce_op)
        op, mean = _mpi_reduce_op(reduce_op)
        values = tensor.detach()
        if mean and not values.is_floating_point():
            values = values.to(torch.get_default_dtype())
        if comm.size > 1:
            values = comm.allreduce_tensor(values.contiguous(), op)
        if mean:
            values = values / comm.size
        return values

    def all_gather(self, tensor: torch.Tensor, group: Any = None, sync_grads: bool = False):
        """Every process's ``tensor``, stacked along a new first axis (in rank order)."""
        comm = self._group_comm(group)
        if comm is None or sync_grads:  # gradients flow only through torch.distributed
            return _all_gather_ddp_if_available(tensor, group=group, sync_grads=sync_grads)
        return comm.allgather_tensors(tensor.detach().contiguous().unsqueeze(0), axis=0)

    def barrier(self, name: Optional[str] = None) -> None:
        self.comm.Barrier()

    def broadcast(self, obj: Any, src: int = 0) -> Any:
        return self.comm.bcast(obj, root=src)

    # -- steps -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def block_backward_sync(self) -> Iterator[None]:
        """Gradient accumulation: backward passes inside average nothing."""
        no_sync = getattr(self.model, "no_sync", None)
        with no_sync() if no_sync is not None else contextlib.nullcontext():
            yield

    # evaluation runs the module itself: no collective per batch, so processes may hold
    # different numbers of evaluation batches
    def validation_step(self, *args: Any, **kwargs: Any) -> Any:
        with self.precision_plugin.val_step_context():
            return self.lightning_module.validation_step(*args, **kwargs)

    def test_step(self, *args: Any, **kwargs: Any) -> Any:
        with self.precision_plugin.test_step_context():
            return self.lightning_module.test_step(*args, **kwargs)

    def predict_step(self, *args: Any, **kwargs: Any) -> Any:
        with self.precision_plugin.predict_step_context():
            return self.lightning_module.predict_step(*args, **kwargs)

    def _fitting(self, trainer: "pl.Trainer") -> bool:
        return trainer.state.fn == "fit"

    def setup(self, trainer: "pl.Trainer") -> None:
        self.accelerator.setup(trainer)
        self.model = self.precision_plugin.convert_module(self.model)
        self.model_to_device()
        if self._fitting(trainer):
            self._setup_training(trainer)  # wraps the model, sets up the optimizers
        self.setup_precision_plugin()
        if self._fitting(trainer):
            for optimizer in self.optimizers:
                for state in optimizer.state.values():
                    for key, value in state.items():
                        if isinstance(value, torch.Tensor):
                            state[key] = value.to(self.root_device)

    def _setup_training(self, trainer: "pl.Trainer") -> None:
        raise NotImplementedError


class HeatDataParallelStrategy(_HeatParallelStrategy):
    """
    A Lightning strategy that trains the LightningModule in :class:`heat.nn.DataParallel`:
    every process its part of the data, gradients averaged over all processes by the end of
    every backward pass (in buckets, overlapped with it), optionally in bfloat16 / float16 on the
    wire and hierarchically (inside each node first, then across nodes).

    Run the script under MPI (``mpiexec -n 4 python fit.py``); no ``MASTER_ADDR`` is needed.
    Gradient accumulation (``Trainer(accumulate_grad_batches=k)``) skips the averaging of the
    first ``k - 1`` backward passes; gradient clipping, LR schedulers and
    ``precision="bf16-mixed"`` work as with Lightning's DDP.

    Parameters
    ----------
    comm : MPICommunication, optional
        Must hold every process of the job (default: heat's default communicator).
    blocking_parameter_updates : bool
        Reduce the gradients after the backward pass instead of during it.
    compression : torch.dtype, optional
        ``torch.bfloat16`` or ``torch.float16`` on the wire.
    hierarchical : bool
        Average inside each node first, then across nodes.
    bucket_size_mb : float
        Largest gradient bucket (default 25).
    broadcast_buffers : bool
        Give every process rank 0's buffers before every training forward pass (default True).
    accelerator, checkpoint_io, precision_plugin
        As for Lightning's strategies (usually set through the Trainer).

    Raises
    ------
    TypeError, ValueError
        On every process, at construction, for a bad argument or a ``comm`` that does not hold
        every process; at ``trainer.fit`` (before training) if the processes hold different
        models.

    Examples
    --------
    >>> from heat.nn.lightning import HeatDataParallelStrategy
    >>> strategy = HeatDataParallelStrategy(compression=torch.bfloat16, hierarchical=True)
    >>> trainer = lightning.pytorch.Trainer(strategy=strategy, max_epochs=3)
    >>> trainer.fit(model, datamodule)
    """

    _owner = "HeatDataParallelStrategy"

    def __init__(
        self,
        comm: Optional[MPICommunication] = None,
        *,
        blocking_parameter_updates: bool = False,
        compression: Optional[torch.dtype] = None,
        hierarchical: bool = False,
        bucket_size_mb: float = 25,
        broadcast_buffers: bool = True,
        accelerator: Any = None,
        checkpoint_io: Any = None,
        precision_plugin: Any = None,
    ):
        options = dict(
            blocking_parameter_updates=blocking_parameter_updates,
            compression=compression,
            hierarchical=hierarchical,
            bucket_size_mb=bucket_size_mb,
            broadcast_buffers=broadcast_buffers,
        )

        def check():
            for name in ("blocking_parameter_updates", "hierarchical", "broadcast_buffers"):
                check_bool(options[name], name)
            if compression is not None and compression not in (torch.bfloat16, torch.float16):
                raise ValueError(
                    f"compression must be None, torch.bfloat16 or torch.float16, got {compression}"
                )
            bucket_bytes(bucket_size_mb)

        super().__init__(comm, accelerator, checkpoint_io, precision_plugin)
        verdicts.agree(self.comm, check)
        self.data_parallel_options = options

    def _setup_training(self, trainer: "pl.Trainer") -> None:
        # DataParallel checks, on every process before any other communication, that all hold
        # the same model, and gives every process rank 0's parameters and buffers
        self.model = DataParallel(self.model, comm=self.comm, **self.data_parallel_options)
        self.setup_optimizers(trainer)


class _DASOSteps(torch.optim.Optimizer):
    """
    What Lightning steps instead of the configured optimizer: the closure (forward, backward,
    gradient clipping), then ``daso.step()`` (the local step and the synchronization the
    schedule asks for). Parameter groups, state and state dicts are the wrapped optimizer's, so
    LR schedulers, gradient clipping and Lightning's checkpoints see the optimizer itself.
    """

    def __init__(self, daso: DASO):  # no Optimizer.__init__: everything is the local optimizer's
        self.daso = daso
        self.local_optimizer = daso.local_optimizer

    @property
    def param_groups(self) -> List[Dict[str, Any]]:
        return self.local_optimizer.param_groups

    @param_groups.setter
    def param_groups(self, groups: List[Dict[str, Any]]) -> None:
        self.local_optimizer.param_groups = groups

    @property
    def state(self) -> Dict[Any, Any]:
        return self.local_optimizer.state

    @property
    def defaults(self) -> Dict[str, Any]:
        return self.local_optimizer.defaults

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self.daso.step()
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.local_optimizer.zero_grad(set_to_none=set_to_none)

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        raise RuntimeError("DASOStrategy: parameter groups cannot be added during training")

    def state_dict(self) -> Dict[str, Any]:
        return self.local_optimizer.state_dict()

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.local_optimizer.load_state_dict(state_dict)

    def __repr__(self) -> str:
        return f"DASO({self.local_optimizer!r})"


class _DASOFitLoopHooks(pl.Callback):
    """The fit loop's epoch boundaries and losses, fed to the strategy's DASO."""

    def __init__(self, strategy: "DASOStrategy"):
        self.strategy = strategy

    def on_train_start(self, trainer: "pl.Trainer", pl_module: Any) -> None:
        # first of the callbacks: the others see DASO as the checkpoint left it
        self.strategy._restore_pending()

    def on_train_epoch_start(self, trainer: "pl.Trainer", pl_module: Any) -> None:
        self.strategy._begin_epoch()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self.strategy._record_loss(outputs)

    def on_train_epoch_end(self, trainer: "pl.Trainer", pl_module: Any) -> None:
        self.strategy._end_epoch()


#: the key of DASO's per-process state in Lightning's checkpoints
CHECKPOINT_KEY = "heat_daso"


class DASOStrategy(_HeatParallelStrategy):
    """
    A Lightning strategy that trains with DASO (:class:`heat.optim.DASO`): the LightningModule
    is wrapped in :class:`heat.nn.DataParallelMultiGPU` (gradients averaged inside each node
    every batch) and DASO around the optimizer Lightning configures synchronizes across nodes
    -- blocking in the warm-up and cool-down epochs and at the end of every epoch, in between
    every few batches without blocking, in reduced precision.

    The fit loop drives DASO: the batches per epoch (optimizer steps, so accumulation counts)
    and the epoch's training loss (averaged over the processes, for the plateau detection) are
    fed to it, so a LightningModule needs no change. ``total_epochs`` is the Trainer's
    ``max_epochs``. LR schedulers (stepped by Lightning), gradient clipping, gradient
    accumulation and ``precision="bf16-mixed"`` work. DASO's state -- its schedule, the position
    in the epoch, the global reference, a synchronization in flight, and every node's
    parameters and optimizer state -- is saved in Lightning's checkpoints, so
    ``trainer.fit(..., ckpt_path=...)`` resumes in the middle of an epoch: on the same layout of
    processes exactly where it stopped; on another one with the nodes' parameters averaged and
    the schedule (phase, skips, position) kept.

    Run the script under MPI (``mpiexec -n 8 python fit.py``); no ``MASTER_ADDR`` is needed.
    Nodes are found by shared memory, or emulated with ``HEAT_RANKS_PER_NODE``.

    Parameters
    ----------
    comm : MPICommunication, optional
        Must hold every process of the job (default: heat's default communicator).
    warmup_epochs, cooldown_epochs, stability_level, max_global_skips : optional
        DASO's schedule (see :class:`heat.optim.DASO`), keyword only.
    sending_chunk_size, downcast_type, skip_reduction_factor, local_skip_factor : optional
        DASO's options (see :class:`heat.optim.DASO`), keyword only.
    verbose, bucket_size_mb : optional
        DASO's options (see :class:`heat.optim.DASO`), keyword only.
    accelerator, checkpoint_io, precision_plugin
        As for Lightning's strategies (usually set through the Trainer).

    Raises
    ------
    TypeError, ValueError
        On every process, at construction, for a bad option (naming it; also when it is bad on
        one process only) or a ``comm`` that does not hold every process. At ``trainer.fit``,
        before the first batch, on every process: ``max_epochs`` shorter than the warm-up and
        cool-down, ``precision="16-mixed"`` (its gradient scaler may skip a step on one node
        only), more than one optimizer, processes with different models or options.

    Notes
    -----
    Every process must return a loss from ``training_step`` for every batch and see the same
    number of batches per epoch (``StreamingDataModule`` guarantees it).

    Examples
    --------
    >>> from heat.nn.lightning import DASOStrategy
    >>> strategy = DASOStrategy(warmup_epochs=1, cooldown_epochs=1, max_global_skips=4)
    >>> trainer = lightning.pytorch.Trainer(strategy=strategy, max_epochs=10)
    >>> trainer.fit(model, datamodule)
    >>> strategy.daso.timeline  # what every batch did
    """

    _owner = "DASOStrategy"

    def __init__(
        self,
        comm: Optional[MPICommunication] = None,
        *,
        warmup_epochs: int = 4,
        cooldown_epochs: int = 4,
        stability_level: float = 0.05,
        max_global_skips: int = 8,
        sending_chunk_size: int = 10_000_000,
        downcast_type: torch.dtype = torch.bfloat16,
        skip_reduction_factor: int = 2,
        local_skip_factor: int = 4,
        verbose: bool = False,
        bucket_size_mb: float = 25,
        accelerator: Any = None,
        checkpoint_io: Any = None,
        precision_plugin: Any = None,
    ):
        options = dict(
            warmup_epochs=warmup_epochs,
            cooldown_epochs=cooldown_epochs,
            stability_level=stability_level,
            max_global_skips=max_global_skips,
            sending_chunk_size=sending_chunk_size,
            downcast_type=downcast_type,
            skip_reduction_factor=skip_reduction_factor,
            local_skip_factor=local_skip_factor,
            verbose=verbose,
            bucket_size_mb=bucket_size_mb,
        )

        def check():
            # the schedule's checks, for epochs enough for any warm-up and cool-down; the
            # Trainer's max_epochs is checked against them at fit
            epochs = check_int(warmup_epochs, "warmup_epochs", 0) + check_int(
                cooldown_epochs, "cooldown_epochs", 0
            )
            DASOSchedule(
                max(epochs, 1),
                warmup_epochs=warmup_epochs,
                cooldown_epochs=cooldown_epochs,
                max_global_skips=max_global_skips,
                stability_level=stability_level,
                skip_reduction_factor=skip_reduction_factor,
                local_skip_factor=local_skip_factor,
            )
            check_int(sending_chunk_size, "sending_chunk_size", 1)
            if downcast_type not in WIRE_DTYPES[:3]:
                raise ValueError(
                    "downcast_type must be torch.bfloat16, torch.float16 or torch.float32, got "
                    f"{downcast_type!r}"
                )
            check_bool(verbose, "verbose")
            bucket_bytes(bucket_size_mb)

        super().__init__(comm, accelerator, checkpoint_io, precision_plugin)
        self._agree_on_options(check, options)
        self.daso_options = options
        self.daso: Optional[DASO] = None
        self._epoch_loss = [0.0, 0]  # this process's sum of training losses and their count
        self._pending_state: Optional[Dict[str, Any]] = None  # from a checkpoint, until fit starts

    # -- setup -----------------------------------------------------------------------------------

    def _setup_training(self, trainer: "pl.Trainer") -> None:
        max_epochs = trainer.max_epochs

        def check():
            warmup = self.daso_options["warmup_epochs"]
            cooldown = self.daso_options["cooldown_epochs"]
            if max_epochs is None or max_epochs < 1:
                raise ValueError(
                    "DASOStrategy needs Trainer(max_epochs=...) (DASO plans its warm-up and "
                    f"cool-down in epochs), got max_epochs={max_epochs}"
                )
            if warmup + cooldown > max_epochs:
                raise ValueError(
                    f"Trainer(max_epochs={max_epochs}) must be >= DASOStrategy's warmup_epochs "
                    f"+ cooldown_epochs ({warmup} + {cooldown})"
                )
            self._refuse_gradient_scaler()

        verdicts.agree(self.comm, check)
        self.setup_optimizers(trainer)  # the module's own optimizers and schedulers

        def one_optimizer():
            if len(self.optimizers) != 1:
                raise ValueError(
                    "DASOStrategy drives one optimizer; configure_optimizers returned "
                    f"{len(self.optimizers)} (put all parameter groups into one optimizer)"
                )

        verdicts.agree(self.comm, one_optimizer)
        options = dict(self.daso_options)
        options.pop("verbose")
        self.daso = DASO(
            local_optimizer=self.optimizers[0],
            total_epochs=max_epochs,
            comm=self.comm,
            verbose=self.daso_options["verbose"],
            **options,
        )
        self.model = DataParallelMultiGPU(self.model, self.daso, comm=self.comm)
        self.optimizers = [_DASOSteps(self.daso)]
        callbacks = trainer.callbacks
        if not any(isinstance(c, _DASOFitLoopHooks) for c in callbacks):
            callbacks.insert(0, _DASOFitLoopHooks(self))  # before checkpointing callbacks

    # -- the fit loop ------------------------------------------------------------------------------

    def _steps_per_epoch(self) -> Optional[int]:
        trainer = self.lightning_module.trainer
        batches = trainer.num_training_batches
        if batches is None or batches == float("inf"):
            return None  # DASO learns it in the first epoch
        return math.ceil(batches / trainer.accumulate_grad_batches)

    def _restore_pending(self) -> None:
        if self._pending_state is not None:
            state, self._pending_state = self._pending_state, None
            self._restore(state)

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
        if self.daso is not None:
            self.daso.last_batch = self._steps_per_epoch()

    def _begin_epoch(self) -> None:
        if self.daso.current_batch != 0:
            # resumed from a checkpoint taken after the last batch of an epoch, before its end
            # (e.g. by validation): end that epoch now, as the uninterrupted run did
            self._end_epoch()
        self._epoch_loss = [0.0, 0]

    def _record_loss(self, outputs: Any) -> None:
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        if isinstance(loss, torch.Tensor):
            self._epoch_loss[0] += float(loss.detach().float())
            self._epoch_loss[1] += 1

    def _end_epoch(self) -> None:
        total, count = self._epoch_loss
        self.daso.epoch_loss_logic(total / count if count else 0.0)
        self._epoch_loss = [0.0, 0]

    def teardown(self) -> None:
        trainer = self.lightning_module.trainer if self.lightning_module is not None else None
        if trainer is not None:
            trainer.callbacks[:] = [
                c for c in trainer.callbacks if not isinstance(c, _DASOFitLoopHooks)
            ]
        super().teardown()

    # -- checkpoints -------------------------------------------------------------------------------

    def save_checkpoint(self, checkpoint: Dict[str, Any], filepath: Any, storage_options=None):
        """
        Add DASO's state of every process to Lightning's checkpoint (collective: the processes'
        states are gathered on rank 0, which writes the file).
        """
        if self.daso is not None and self.daso.module is not None:
            gathered = self.comm.gather(self._process_state(), root=0)
            if self.is_global_zero:
                checkpoint[CHECKPOINT_KEY] = _combine_states(gathered)
        super().save_checkpoint(checkpoint, filepath, storage_options=storage_options)

    def _process_state(self) -> Dict[str, Any]:
        state = self.daso.state_dict()
        groups = self.daso.groups
        leader = groups.local_rank == 0
        return {
            "daso": {k: v for k, v in state.items() if k not in ("model", "optimizer", "loader")},
            "node": groups.node_index,
            "model": state["model"] if leader else None,
            "optimizer": state["optimizer"] if leader else None,
            "epoch_loss": list(self._epoch_loss),
        }

    def load_checkpoint(self, checkpoint_path: Any, weights_only: Optional[bool] = None):
        checkpoint = super().load_checkpoint(checkpoint_path, weights_only=weights_only)
        self._pending_state = checkpoint.get(CHECKPOINT_KEY)
        return checkpoint

    def _restore(self, saved: Dict[str, Any]) -> None:
        """Load DASO's state from a checkpoint (collective; after Lightning restored its part)."""
        daso = self.daso
        processes = saved["processes"]
        mine = processes[self.comm.rank] if len(processes) == self.comm.size else None
        same_layout = mine is not None and mine["daso"]["layout"] == daso._layout_signature()
        if verdicts.any_true(self.comm, not same_layout):
            state = _consolidated_state(saved)
            epoch_loss = [0.0, 0]
        else:
            node = mine["node"]
            state = dict(
                mine["daso"],
                model=saved["nodes"][node]["model"],
                optimizer=saved["nodes"][node]["optimizer"],
            )
            epoch_loss = mine["epoch_loss"]
        daso.load_state_dict(state)
        self._epoch_loss = list(epoch_loss)


def _combine_states(gathered: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The checkpoint entry: every process's small state, every node's model and optimizer."""
    nodes: Dict[int, Dict[str, Any]] = {}
    for process in gathered:
        if process["model"] is not None:
            nodes[process["node"]] = {"model": process["model"], "optimizer": process["optimizer"]}
    processes = [
        {"daso": p["daso"], "node": p["node"], "epoch_loss": p["epoch_loss"]} for p in gathered
    ]
    return {"format": 1, "processes": processes, "nodes": [nodes[i] for i in sorted(nodes)]}


def _consolidated_state(saved: Dict[str, Any]) -> Dict[str, Any]:
    """
    A DASO state for another layout of processes: the nodes' parameters averaged (what a
    blocking synchronization would have given), node 0's optimizer state, and the schedule and
    position in the epoch, which every process shares.
    """
    nodes = saved["nodes"]
    first = saved["processes"][0]["daso"]
    model = {}
    for name, value in nodes[0]["model"].items():
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            model[name] = sum(node["model"][name].double() for node in nodes) / len(nodes)
            model[name] = model[name].to(value.dtype)
        else:
            model[name] = value
    return dict(
        first,
        model=model,
        optimizer=nodes[0]["optimizer"],
        synchronized=True,
        in_flight=None,
        # a layout no process has: DASO then takes the loaded parameters as its reference
        layout=dict(first["layout"], node_sizes=None),
    )
