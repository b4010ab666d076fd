"""
DASO: distributed, asynchronous and selective optimization for nodes of several processes.

The optimizer composes three parts that live in their own modules:

* the schedule (:mod:`.schedule`): when to synchronize globally;
* the averaging (:mod:`.averaging`): how the stale global and the fresh local parameters merge;
* the transport (:mod:`heat.core.communication.node_groups`, :mod:`.gradients`): the node-local
  gradient average of every batch (bucketed, overlapped with backward) and the sliced,
  non-blocking cross-node exchange.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import torch

from ..core.communication import MPI_WORLD, MPICommunication, sanitize_comm, verdicts
from ..core.communication.node_groups import (
    CrossNodeSum,
    NodeGroups,
    all_reduce,
    ring_allreduce_bytes,
)
from ..core.communication.shared_memory import node_shared_sum
from ..core.sanitation import check_bool, check_choice, check_int, check_type, warn_ignored
from .averaging import WIRE_DTYPES, FlatLayout, blend_average_
from .gradients import GradientReducer, bucket_bytes
from .schedule import DASOSchedule
from .timeline import BatchRecord, Timeline

__all__ = ["DASO"]

_SCHEDULER_TYPES = (
    torch.optim.lr_scheduler.LRScheduler,
    torch.optim.lr_scheduler.ReduceLROnPlateau,
)


@dataclass
class _InFlight:
    """A global synchronization between its send and its receive."""

    sent_at: int
    receive_at: int
    handle: Any = None
    node_sum: Optional[torch.Tensor] = None  # the received sum of deltas, once waited for


class DASO:
    r"""
    Distributed Asynchronous and Selective Optimization (DASO) around a local torch optimizer.

    Processes on one node average their gradients every batch (fast links). Across nodes the
    parameters are averaged only every ``global_skip`` batches, without blocking: the exchange
    runs while the next ``batches_to_wait`` batches compute, then the received average of the
    nodes' parameters (as they were when sent) is blended with the parameters trained meanwhile,
    ``x = (2S x_local + sum_p x_p) / (2S + P)``. The first ``warmup_epochs`` and the last
    ``cooldown_epochs`` epochs, and the last batch of every epoch, average blocking; in between the
    skips shrink whenever the loss plateaus (see :class:`heat.optim.DASOSchedule`).

    Each of a node's processes exchanges only its slice of the parameter vector across nodes, on
    its own cross-node group, concurrently with its node mates; the node then reassembles the
    vector. Parameters travel in ``downcast_type`` (bfloat16) in every phase, as differences from
    the last global average (small numbers, so little precision is lost), and are summed in
    float32. Nodes may hold different numbers of processes, including one.

    Use it with :class:`heat.nn.DataParallelMultiGPU`, which wraps the model::

        daso = ht.optim.DASO(local_optimizer=optimizer, total_epochs=num_epochs)
        model = ht.nn.DataParallelMultiGPU(net, daso)
        for epoch in range(num_epochs):
            for x, y in loader:
                daso.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                daso.step()
            daso.epoch_loss_logic(loss)

    Parameters
    ----------
    local_optimizer : torch.optim.Optimizer
        Updates the local model (every parameter group).
    total_epochs : int
        Number of training epochs (decides when the cool-down starts).
    comm : MPICommunication, optional
        The processes that train together (default ``MPI_WORLD``), or this process's piece of a
        partition of the world (every process constructs its DASO at the same time), e.g. a
        pipeline stage's replicas, ``ht.nn.Pipeline(..., replicas=r).replica_comm``: stages
        inside a node, DASO across nodes. Nodes are detected by shared memory, or emulated with
        ``HEAT_RANKS_PER_NODE``.
    warmup_epochs, cooldown_epochs : int, optional
        Epochs averaging blocking after every batch at the start and at the end (default 4 each).
    scheduler : torch learning-rate scheduler, optional
        Any scheduler of ``local_optimizer``. It is stepped after every optimizer step
        (``scheduler_interval="batch"``) or at the end of every epoch (``"epoch"``);
        ``ReduceLROnPlateau`` is stepped at the end of every epoch with the averaged loss.
    stability_level : float, optional
        Relative loss improvement below which an epoch counts as no progress (default 0.05); two
        such epochs are a plateau.
    max_global_skips : int, optional
        The largest number of batches between global synchronizations (default 8).
    sending_chunk_size : int, optional
        Largest number of elements in one cross-node message (default 10,000,000).
    downcast_type : torch.dtype, optional
        Type on the wire across nodes: ``torch.bfloat16`` (default), ``torch.float16`` or
        ``torch.float32``.
    use_mpi_groups : bool, optional
        Kept for scripts written for the original; the groups always come from MPI here.
    skip_reduction_factor : int, optional
        Divides the global and local skips on a plateau (default 2).
    local_skip_factor : int, optional
        The local skip and the batches to wait start at ``max_global_skips // local_skip_factor``
        (default 4). The local skip is reported as in the original, but gradients are averaged
        inside the node every batch: the sliced exchange needs identical parameters on a node.
    verbose : bool, optional
        Print the schedule's decisions on rank 0.
    scheduler_interval : {"batch", "epoch"}, optional
        When ``scheduler`` is stepped (keyword only).
    bucket_size_mb : float, optional
        Gradient bucket size of the node-local averaging (keyword only, default 25).

    Attributes
    ----------
    schedule : DASOSchedule
    timeline : Timeline
        One :class:`BatchRecord` per batch: compute time, exposed communication, bytes.
    last_batch : int or None
        Batches per epoch. Set it, or attach the loader (:meth:`attach_loader`), or leave it None:
        it is then learned in the first epoch (whose end is synchronized by
        :meth:`epoch_loss_logic`).

    Raises
    ------
    TypeError, ValueError
        On every process, before any other communication, for a bad argument (naming it), also
        when it is bad on one process only.
    ValueError
        On every process, if the processes pass different values of an argument that decides
        the communication (``total_epochs``, the warm-up, cool-down, skip and plateau settings,
        ``sending_chunk_size``, ``downcast_type``, the scheduler's type and interval,
        ``bucket_size_mb``), naming the argument and which processes passed which value: such
        processes would change phase at different epochs and wait for each other forever. One
        small all-gather checks them.

    Examples
    --------
    >>> net = torch.nn.Linear(4, 2)
    >>> optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    >>> daso = ht.optim.DASO(local_optimizer=optimizer, total_epochs=10)
    >>> model = ht.nn.DataParallelMultiGPU(net, daso)
    """

    def __init__(
        self,
        local_optimizer: torch.optim.Optimizer,
        total_epochs: int,
        comm: MPICommunication = MPI_WORLD,
        warmup_epochs: int = 4,
        cooldown_epochs: int = 4,
        scheduler: Any = None,
        stability_level: float = 0.05,
        max_global_skips: int = 8,
        sending_chunk_size: int = 10_000_000,
        downcast_type: torch.dtype = torch.bfloat16,
        use_mpi_groups: bool = True,
        skip_reduction_factor: int = 2,
        local_skip_factor: int = 4,
        verbose: bool = False,
        *,
        scheduler_interval: str = "batch",
        bucket_size_mb: float = 25,
    ):
        comm = sanitize_comm(comm)

        def check_arguments():
            nonlocal sending_chunk_size, use_mpi_groups, verbose
            check_type(
                local_optimizer, "local_optimizer", torch.optim.Optimizer, "a torch.optim.Optimizer"
            )
            schedule = DASOSchedule(
                total_epochs,
                warmup_epochs=warmup_epochs,
                cooldown_epochs=cooldown_epochs,
                max_global_skips=max_global_skips,
                stability_level=stability_level,
                skip_reduction_factor=skip_reduction_factor,
                local_skip_factor=local_skip_factor,
            )
            if scheduler is not None:
                check_type(
                    scheduler, "scheduler", _SCHEDULER_TYPES, "a torch learning-rate scheduler"
                )
                if scheduler.optimizer is not local_optimizer:
                    raise ValueError("scheduler must schedule local_optimizer")
            check_choice(scheduler_interval, "scheduler_interval", ("batch", "epoch"))
            sending_chunk_size = check_int(sending_chunk_size, "sending_chunk_size", 1)
            check_type(downcast_type, "downcast_type", torch.dtype, "a torch.dtype")
            if downcast_type not in WIRE_DTYPES[:3]:
                raise ValueError(
                    "downcast_type must be torch.bfloat16, torch.float16 or torch.float32, got "
                    f"{downcast_type}"
                )
            use_mpi_groups = check_bool(use_mpi_groups, "use_mpi_groups")
            warn_ignored(
                use_mpi_groups, "use_mpi_groups", True,
                "heat's groups always come from MPI (torch.distributed groups made from MPI "
                "communicators, no MASTER_ADDR)", stacklevel=4,
            )  # fmt: skip
            verbose = check_bool(verbose, "verbose")
            return schedule, bucket_bytes(bucket_size_mb)

        def settings(checked):
            # what decides the collectives: a process with another total_epochs changes phase
            # (blocking vs. non-blocking averaging) at another epoch, and the job hangs there
            agreed = dict(
                total_epochs=total_epochs,
                warmup_epochs=warmup_epochs,
                cooldown_epochs=cooldown_epochs,
                stability_level=float(stability_level),
                max_global_skips=max_global_skips,
                skip_reduction_factor=skip_reduction_factor,
                local_skip_factor=local_skip_factor,
                sending_chunk_size=sending_chunk_size,
                downcast_type=downcast_type,
                scheduler=None if scheduler is None else type(scheduler).__name__,
                scheduler_interval=scheduler_interval,
                bucket_size_mb=checked[1] / 2**20,  # 25 and 25.0 agree
            )
            return "DASO's arguments", {name: repr(value) for name, value in agreed.items()}

        # every check before the first collective; the processes agree on the outcome and on the
        # arguments in one small all-gather, so a bad or differing argument raises everywhere
        self.schedule, capacity = verdicts.agree(comm, check_arguments, fingerprint=settings)

        self.local_optimizer = local_optimizer
        self.comm = comm
        self.scheduler = scheduler
        self.scheduler_interval = scheduler_interval
        self.sending_chunk_size = sending_chunk_size
        self.downcast_type = downcast_type
        self.use_mpi_groups = use_mpi_groups
        self.verbose = verbose
        self.bucket_bytes = capacity
        self.groups = NodeGroups(comm)  # collective: node-local and cross-node groups
        self.timeline = Timeline()
        self.last_batch: Optional[int] = None
        self.current_batch = 0
        self.module: Optional[torch.nn.Module] = None
        self.reducer: Optional[GradientReducer] = None
        self._scaler = None
        self._loader = None
        self._learned_batches: Optional[int] = None
        self._in_flight: Optional[_InFlight] = None
        self._synchronized = True  # parameters equal the global reference (no local steps since)
        self._last_step_end: Optional[float] = None
        self._counters = (0.0, 0)  # the reducer's seconds and bytes at the last step

    # -- published names -------------------------------------------------------------------------

    @property
    def epoch(self) -> int:
        """The epoch being trained (0-based)."""
        return self.schedule.epoch

    @property
    def global_skip(self) -> int:
        return self.schedule.global_skip

    @property
    def local_skip(self) -> int:
        return self.schedule.local_skip

    @property
    def batches_to_wait(self) -> int:
        return self.schedule.batches_to_wait

    def print0(self, *args: Any, **kwargs: Any) -> None:
        """Print on rank 0 when ``verbose``."""
        if self.verbose and self.comm.rank == 0:
            print(*args, **kwargs, flush=True)

    def add_scaler(self, scaler: Any) -> None:
        """
        Use a ``torch.amp.GradScaler`` for mixed precision: :meth:`step` then calls
        ``scaler.step(local_optimizer)`` and ``scaler.update()``.
        """
        if not (
            hasattr(scaler, "step") and hasattr(scaler, "update") and hasattr(scaler, "state_dict")
        ):
            raise TypeError(f"scaler must be a torch.amp.GradScaler, got {type(scaler).__name__}")
        self._scaler = scaler

    def attach_loader(self, loader: Any) -> None:
        """
        Tell DASO which data loader feeds it: ``len(loader)`` is then the number of batches per
        epoch (unless ``last_batch`` is set), and :meth:`state_dict` includes the loader's
        position when it has ``state_dict``/``load_state_dict``.
        """
        self._loader = loader

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter group of the local optimizer."""
        self.local_optimizer.zero_grad(set_to_none=set_to_none)

    # -- model -----------------------------------------------------------------------------------

    def _attach(self, module: torch.nn.Module, reducer: Optional[GradientReducer]) -> None:
        """Called by DataParallelMultiGPU (its parameters are already identical everywhere)."""
        self.module = module
        self.reducer = reducer
        self._parameters = [p for p in module.parameters() if p.requires_grad]
        if not self._parameters:
            raise ValueError("module has no parameters that require gradients")
        for p in self._parameters:
            if not p.is_floating_point():
                raise TypeError(f"DASO averages floating-point parameters, got {p.dtype}")
        self._buffers = [b for b in module.buffers() if b.is_floating_point()]
        self._layout = FlatLayout(self._parameters)
        wide = any(p.dtype == torch.float64 for p in self._parameters)
        self._flat_dtype = torch.float64 if wide else torch.float32
        self._device = self._parameters[0].device
        self._exchange = CrossNodeSum(
            self.groups, self._layout.numel, self.sending_chunk_size, self.downcast_type
        )
        self._reference = self._my_slice()  # the last global average (identical on all nodes)
        # buffers kept across synchronizations (a fresh 100 MB tensor costs its page faults
        # every time on CPU): this slice, padded to the node's all-gather width; the sum over
        # nodes; the node's slices received in the all-gather
        numel, width = self._layout.numel, self.groups.gather_width(self._layout.numel)
        flat = dict(dtype=self._flat_dtype, device=self._device)
        self._slice_buffer = torch.zeros(width, **flat)
        self._sum_buffer = torch.empty(self._exchange.slice_length, **flat)
        self._received = torch.empty(width * self.groups.local_size, **flat)
        # the node's processes reassemble the parameters through shared memory where they can
        # (CPU tensors), else with a node-local all-gather
        self._node_memory = None
        if self.groups.local_size > 1 and self._device.type == "cpu":
            self._node_memory = node_shared_sum(
                self.groups.topology.node_comm, numel, self._flat_dtype
            )
        self._last_step_end = time.perf_counter()

    def _require_model(self) -> None:
        if self.module is None:
            raise RuntimeError(
                "DASO has no model: wrap it with ht.nn.DataParallelMultiGPU(module, daso) first"
            )

    def _my_slice(self, into_buffer: bool = False) -> torch.Tensor:
        """This process's slice of the parameters: a new tensor, or in the kept slice buffer."""
        exchange = self._exchange
        if into_buffer:
            out = self._slice_buffer[: exchange.slice_length]
        else:
            out = torch.empty(exchange.slice_length, dtype=self._flat_dtype, device=self._device)
        return self._layout.gather(self._parameters, exchange.start_index, exchange.stop_index, out)

    def batches_per_epoch(self) -> Optional[int]:
        """``last_batch`` if set, else the attached loader's length, else the first epoch's."""
        if self.last_batch is not None:
            return int(self.last_batch)
        if self._loader is not None:
            try:
                return len(self._loader)
            except TypeError:
                pass
        return self._learned_batches

    # -- the step --------------------------------------------------------------------------------

    def step(self) -> None:
        """
        One optimization step: the local optimizer's step (through the gradient scaler, if any;
        then the scheduler, if stepped per batch), and the global synchronization the schedule
        asks for after this batch.
        """
        self._require_model()
        began = time.perf_counter()
        reducer_wait, reducer_bytes = self._reducer_counters()
        if self._scaler is not None:
            self._scaler.step(self.local_optimizer)
            self._scaler.update()
        else:
            self.local_optimizer.step()
        if self.scheduler is not None and self._steps_scheduler_per_batch():
            self.scheduler.step()
        self._synchronized = False
        sync_began = time.perf_counter()
        action, bytes_local, bytes_cross, phases = self._global_sync(self.current_batch)
        ended = time.perf_counter()
        if self.reducer is not None:
            phases = {"node average": reducer_wait, **phases}
        previous_end = self._last_step_end if self._last_step_end is not None else began
        self.timeline.append(
            BatchRecord(
                epoch=self.epoch,
                batch=self.current_batch,
                action=action,
                compute_seconds=max(began - previous_end - reducer_wait, 0.0),
                exposed_seconds=reducer_wait + (ended - sync_began if action != "local" else 0.0),
                step_seconds=ended - began,
                bytes_local=reducer_bytes + bytes_local,
                bytes_cross_node=bytes_cross,
                phases=phases,
            )
        )
        self._last_step_end = ended
        self.current_batch += 1

    def _steps_scheduler_per_batch(self) -> bool:
        plateau = isinstance(self.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)
        return not plateau and self.scheduler_interval == "batch"

    def _reducer_counters(self):
        """Exposed seconds and bytes of the node-local gradient averaging since the last step."""
        if self.reducer is None:
            return 0.0, 0
        seconds, nbytes = self.reducer.exposed_seconds, self.reducer.reduction.bytes_local
        last_seconds, last_bytes = self._counters
        self._counters = (seconds, nbytes)
        return seconds - last_seconds, nbytes - last_bytes

    @torch.no_grad()
    def _global_sync(self, batch: int):
        """
        Receive, send or average blocking as the schedule says; (action, bytes local, bytes
        cross-node, seconds by phase).
        """
        schedule, per_epoch = self.schedule, self.batches_per_epoch()
        actions, bytes_local, bytes_cross, phases = [], 0, 0, {}
        if self._in_flight is not None and self._in_flight.handle is not None:
            self._exchange.progress(self._in_flight.handle)  # never blocks
        blocking = schedule.blocking_at(batch, per_epoch)
        sends = not blocking and self.groups.num_nodes > 1 and schedule.sends_at(batch, per_epoch)
        if self._in_flight is not None and (
            blocking or sends or batch >= self._in_flight.receive_at
        ):
            began = time.perf_counter()
            local, cross = self._receive(batch)
            phases["receive"] = time.perf_counter() - began
            bytes_local, bytes_cross = bytes_local + local, bytes_cross + cross
            actions.append("receive")
        if blocking:
            began = time.perf_counter()
            local, cross = self._average_blocking()
            phases["blocking"] = time.perf_counter() - began
            return "blocking", bytes_local + local, bytes_cross + cross, phases
        if sends:
            began = time.perf_counter()
            bytes_cross += self._send(batch, schedule.receive_batch(batch, per_epoch))
            phases["send"] = time.perf_counter() - began
            actions.append("send")
        return "+".join(actions) or "local", bytes_local, bytes_cross, phases

    def _send(self, batch: int, receive_at: int) -> int:
        """Start the cross-node sum of this slice's difference from the reference."""
        if self.groups.num_nodes == 1:
            return 0
        delta = self._my_slice(into_buffer=True).sub_(self._reference)
        handle = self._exchange.start(delta)  # copies out of the buffer (cast or clone) at once
        self._in_flight = _InFlight(sent_at=batch, receive_at=receive_at, handle=handle)
        return handle.bytes_sent

    def _wait_in_flight(self) -> torch.Tensor:
        flight = self._in_flight
        if flight.node_sum is None:
            flight.node_sum = self._exchange.finish(flight.handle, out=self._sum_buffer)
            flight.handle = None
        return flight.node_sum

    def _receive(self, batch: int) -> Tuple[int, int]:
        """Blend the received average into this node's parameters (see :func:`blend`)."""
        nodes = self.groups.num_nodes
        delta_sum = self._wait_in_flight()
        waited = batch - self._in_flight.sent_at
        self._in_flight = None
        self._reference.add_(delta_sum, alpha=1.0 / nodes)  # the nodes' average when they sent
        # blend(x, P * reference, P, S) = (2S x + P reference) / (2S + P), as one in-place pass
        blend_average_(self._my_slice(into_buffer=True), self._reference, nodes, waited)
        local, cross = self._average_buffers()
        return self._write_back() + local, cross

    def _average_blocking(self):
        """Average the parameters over all nodes now; every process ends with the same values."""
        nodes = self.groups.num_nodes
        bytes_local = bytes_cross = 0
        if nodes > 1:
            delta = self._my_slice(into_buffer=True).sub_(self._reference)
            handle = self._exchange.start(delta)
            bytes_cross += handle.bytes_sent
            node_sum = self._exchange.finish(handle, out=self._sum_buffer)
            self._reference.add_(node_sum, alpha=1.0 / nodes)
            self._slice_buffer[: self._reference.numel()].copy_(self._reference)
            bytes_local += self._write_back()
        else:
            self._reference = self._my_slice()
        local, cross = self._average_buffers()
        self._synchronized = True
        return bytes_local + local, bytes_cross + cross

    def _write_back(self) -> int:
        """
        Write the node's slices (this process's is in the slice buffer) into the parameters
        (node-local all-gather straight from and into kept buffers).
        """
        memory = self._node_memory
        if memory is not None:  # through shared memory: nothing is sent
            memory.barrier()  # no process still reads the previous write-back
            memory.share(
                self._exchange.start_index, self._slice_buffer[: self._exchange.slice_length]
            )
            memory.barrier()
            self._layout.scatter(memory.view(0, self._layout.numel), self._parameters, 0)
            return 0
        slices, sent = self.groups.node_all_gather_slices(
            self._slice_buffer, self._layout.numel, self._received
        )
        for start, _, values in slices:
            self._layout.scatter(values, self._parameters, start)
        return sent

    def _average_buffers(self):
        """Average floating-point buffers (e.g. batch-norm statistics) over all processes."""
        if not self._buffers or self.comm.size == 1:
            return 0, 0
        layout = FlatLayout(self._buffers)
        flat = layout.gather(
            self._buffers,
            out=torch.empty(layout.numel, dtype=self._flat_dtype, device=self._device),
        )
        all_reduce(flat, self.groups.world_group)
        layout.scatter(flat.div_(self.comm.size), self._buffers)
        nbytes = ring_allreduce_bytes(flat.numel() * flat.element_size(), self.comm.size)
        return (0, nbytes) if self.groups.num_nodes > 1 else (nbytes, 0)

    # -- epochs ----------------------------------------------------------------------------------

    @torch.no_grad()
    def epoch_loss_logic(self, loss: Any, loss_globally_averaged: bool = False) -> None:
        """
        End the epoch: average its loss over all processes, synchronize blocking if the last
        batch did not, and let the schedule set the next epoch's skips. Call it once at the end
        of every epoch, on every process.

        Parameters
        ----------
        loss : torch.Tensor or float
            This process's training loss of the epoch.
        loss_globally_averaged : bool
            Whether ``loss`` is already the average over all processes.

        Raises
        ------
        RuntimeError
            On every process, if the processes trained different numbers of batches this epoch.
        """
        self._require_model()
        value = float(loss.detach().item() if isinstance(loss, torch.Tensor) else loss)
        reports = self.comm.allgather((value, self.current_batch))
        counts = sorted({count for _, count in reports})
        if len(counts) > 1:
            raise RuntimeError(
                f"processes trained different numbers of batches this epoch ({counts}); every "
                "process must take the same number of steps (balance the data loaders)"
            )
        average = value if loss_globally_averaged else sum(v for v, _ in reports) / len(reports)
        if not self._synchronized or self._in_flight is not None:
            if self._in_flight is not None:
                self._receive(self.current_batch)
            self._average_blocking()
        if self.current_batch > 0:
            self._learned_batches = self.current_batch
        event = self.schedule.end_epoch(average)
        if isinstance(self.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
            self.scheduler.step(average)
        elif self.scheduler is not None and self.scheduler_interval == "epoch":
            self.scheduler.step()
        self.current_batch = 0
        self._last_step_end = time.perf_counter()  # evaluation between epochs is not compute
        self.print0(
            f"DASO epoch {self.epoch - 1} loss {average:.5g}: {event}; next epoch "
            f"{self.schedule.phase} global skip {self.global_skip}, local skip {self.local_skip}, "
            f"batches to wait {self.batches_to_wait}"
        )

    # -- checkpoints -----------------------------------------------------------------------------

    def _layout_signature(self) -> Dict[str, Any]:
        return {
            "node_sizes": list(self.groups.node_sizes),
            "node_index": self.groups.node_index,
            "local_rank": self.groups.local_rank,
            "numel": self._layout.numel,
        }

    def state_dict(self, loader: Any = None) -> Dict[str, Any]:
        """
        This process's training state: model, local optimizer, scheduler, gradient scaler, the
        schedule and position in the epoch, the global reference and a synchronization in flight
        (its communication is completed here; it is still blended at its scheduled batch, so a
        resumed run repeats the uninterrupted one), and the loader's position (``loader``, or the
        attached loader, when it has ``state_dict``).

        Between epochs every process holds the same model, so any process's state resumes a run
        on any number of processes; in the middle of an epoch each process saves its own and the
        run resumes on the same layout.
        """
        self._require_model()
        flight = None
        if self._in_flight is not None:
            node_sum = self._wait_in_flight()
            flight = {
                "sent_at": self._in_flight.sent_at,
                "receive_at": self._in_flight.receive_at,
                "node_sum": node_sum.clone(),
            }
        loader = loader if loader is not None else self._loader
        state = {
            "model": copy.deepcopy(self.module.state_dict()),
            "optimizer": copy.deepcopy(self.local_optimizer.state_dict()),
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
            "scaler": self._scaler.state_dict() if self._scaler is not None else None,
            "schedule": self.schedule.state_dict(),
            "current_batch": self.current_batch,
            "learned_batches": self._learned_batches,
            "last_batch": self.last_batch,
            "synchronized": self._synchronized and self._in_flight is None,
            "reference": self._reference.clone(),
            "in_flight": flight,
            "layout": self._layout_signature(),
            "loader": loader.state_dict()
            if loader is not None and hasattr(loader, "state_dict")
            else None,
        }
        return state

    def load_state_dict(self, state: Dict[str, Any], loader: Any = None) -> None:
        """
        Restore a state from :meth:`state_dict` (collective: every process loads one).

        Raises
        ------
        ValueError
            On every process, if some process's state cannot resume here: taken in the middle of
            an epoch on a different layout of processes, or for a different model.
        """
        self._require_model()
        problem = None
        if not isinstance(state, dict) or "schedule" not in state or "layout" not in state:
            problem = "state must come from DASO.state_dict()"
        elif state["layout"]["numel"] != self._layout.numel:
            problem = "state is of a model with a different number of parameters"
        elif state["layout"] != self._layout_signature() and not state["synchronized"]:
            problem = (
                "state was taken in the middle of an epoch on a different layout of processes; "
                "resume on the same layout, or save between epochs"
            )
        problems = [p for p in self.comm.allgather(problem) if p is not None]
        if problems:
            raise ValueError(problems[0])
        self.module.load_state_dict(state["model"])
        self.local_optimizer.load_state_dict(state["optimizer"])
        if self.scheduler is not None and state["scheduler"] is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        if self._scaler is not None and state["scaler"] is not None:
            self._scaler.load_state_dict(state["scaler"])
        self.schedule.load_state_dict(state["schedule"])
        self.current_batch = int(state["current_batch"])
        self._learned_batches = state["learned_batches"]
        self.last_batch = state["last_batch"]
        self._synchronized = bool(state["synchronized"])
        if state["layout"] == self._layout_signature():
            self._reference = state["reference"].to(self._device, self._flat_dtype).clone()
        else:  # between epochs the parameters are the reference
            self._reference = self._my_slice()
        flight = state["in_flight"]
        self._in_flight = None
        if flight is not None:
            self._in_flight = _InFlight(
                sent_at=flight["sent_at"],
                receive_at=flight["receive_at"],
                node_sum=flight["node_sum"].to(self._device).clone(),
            )
        loader = loader if loader is not None else self._loader
        if loader is not None and state.get("loader") is not None:
            loader.load_state_dict(state["loader"])
        self._last_step_end = time.perf_counter()
