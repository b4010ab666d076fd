"""
Pipeline-parallel training: :class:`Pipeline` cuts a sequence of layers into stages, one per
process of a communicator, and trains it with micro-batches on a GPipe, 1F1B or PipeDream schedule.

The plan (which layers on which stage, the order of forwards and backwards) comes from
:mod:`heat.nn.pipeline_plan`, the messages between stages from :mod:`heat.nn.pipeline_transport`;
this module is the math in between: the stage module, the loss on the last stage, gradient
accumulation over micro-batches or PipeDream's per-micro-batch updates with stashed weights,
activation checkpointing, the gathered state dict, and hybrid parallelism (stages x data-parallel
replicas, each stage's gradients averaged among its replicas).
"""

from __future__ import annotations

import math
import time
import zlib
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
from torch.utils.checkpoint import checkpoint as _checkpoint

from ..core.communication import MPI_SELF, MPICommunication, get_comm, verdicts
from ..core.sanitation import check_bool, check_int
from . import pipeline_checkpoint
from .pipeline_plan import (
    SCHEDULES,
    LayerProfile,
    Partition,
    PipelineAction,
    _layer_list,
    _stage_actions,
    partition_layers,
    profile_layers,
)
from .pipeline_transport import ReplicaAverage, StageLink, TensorSpec

__all__ = ["Pipeline"]


# ------------------------------------------------------------------------------------------------
# what differs between the processes' pipelines (the verdicts: core.communication.verdicts)
# ------------------------------------------------------------------------------------------------


def _describe_layers(k: int, mine: Tuple[Any, ...], theirs: Tuple[Any, ...], rank: int) -> str:
    """How layer ``k`` of process 0 (``mine``) and of process ``rank`` differ."""
    (name, kind, tensors), (other_name, other_kind, other_tensors) = mine, theirs
    where = f"layer {k} ({name!r}, {kind})"
    if (name, kind) != (other_name, other_kind):
        return f"{where} on process 0 is ({other_name!r}, {other_kind}) on process {rank}"
    shapes = [t[:3] for t in tensors]
    other_shapes = [t[:3] for t in other_tensors]
    if shapes != other_shapes:
        return (
            f"{where} has the tensors {shapes} (name, shape, dtype) on process 0 and "
            f"{other_shapes} on process {rank}"
        )
    differing = [t[0] for t, o in zip(tensors, other_tensors) if t[3] != o[3]]
    return (
        f"the values of {where}'s {', '.join(differing)} differ between process 0 and process "
        f"{rank} (seed torch's generator alike on every process, or load one state dict)"
    )


def _describe(fingerprints: Sequence[Dict[str, Any]]) -> str:
    """Where the first process whose fingerprint differs from process 0's differs from it."""
    reference = fingerprints[0]
    for rank, other in enumerate(fingerprints):
        for field, mine in reference.items():
            theirs = other.get(field)
            if mine == theirs:
                continue
            if field == "layers" and len(mine) == len(theirs):
                k = next(k for k, (a, b) in enumerate(zip(mine, theirs)) if a != b)
                return _describe_layers(k, mine[k], theirs[k], rank)
            return f"{field} is {mine} on process 0 and {theirs} on process {rank}"
    return "their fingerprints differ"


def _tensor_fingerprint(t: torch.Tensor) -> Tuple[Any, ...]:
    """Shape, dtype and a checksum of the bits (no values for meta tensors)."""
    if t.device.type == "meta" or t.numel() == 0:
        checksum = None
    else:
        raw = t.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8)
        checksum = zlib.crc32(raw.numpy().tobytes())
    return tuple(t.shape), str(t.dtype), checksum


def _module_fingerprint(name: str, layer: torch.nn.Module) -> Tuple[Any, ...]:
    tensors = list(layer.named_parameters()) + list(layer.named_buffers())
    return (
        name,
        type(layer).__qualname__,
        tuple((key, *_tensor_fingerprint(t)) for key, t in tensors),
    )


# ------------------------------------------------------------------------------------------------
# activation counting
# ------------------------------------------------------------------------------------------------


class _Saved:
    """A tensor autograd saved for backward, counted while it lives."""

    __slots__ = ("tensor", "counter", "micro_batch", "nbytes")

    def __init__(self, tensor, counter, micro_batch):
        self.tensor = tensor
        self.counter = counter
        self.micro_batch = micro_batch
        self.nbytes = tensor.numel() * tensor.element_size()
        counter._add(micro_batch, self.nbytes)

    def __del__(self):
        self.counter._add(self.micro_batch, -self.nbytes)


class _ActivationCounter:
    """Saved activations per micro-batch; the peaks of live micro-batches and bytes."""

    def __init__(self):
        self.live: Dict[int, List[int]] = {}  # micro-batch -> [tensors, bytes]
        self.bytes = 0
        self.peak_micro_batches = 0
        self.peak_bytes = 0

    def _add(self, micro_batch: int, nbytes: int) -> None:
        entry = self.live.setdefault(micro_batch, [0, 0])
        entry[0] += 1 if nbytes >= 0 else -1
        entry[1] += nbytes
        self.bytes += nbytes
        if entry[0] == 0:
            del self.live[micro_batch]
        self.peak_micro_batches = max(self.peak_micro_batches, len(self.live))
        self.peak_bytes = max(self.peak_bytes, self.bytes)

    def hooks(self, micro_batch: int, weights: Sequence[torch.Tensor]):
        """Hooks that count what autograd saves in ``micro_batch``'s forward, weights excepted."""
        excluded = {w.untyped_storage().data_ptr() for w in weights}

        def pack(tensor):
            if tensor.untyped_storage().data_ptr() in excluded:
                return tensor
            return _Saved(tensor, self, micro_batch)

        def unpack(saved):
            return saved.tensor if isinstance(saved, _Saved) else saved

        return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


# ------------------------------------------------------------------------------------------------
# the pipeline
# ------------------------------------------------------------------------------------------------


class Pipeline(torch.nn.Module):
    """
    Pipeline-parallel training of a sequence of layers: each process of ``comm`` holds one stage
    (consecutive layers) and only that stage's parameters; micro-batches flow through the stages,
    activations forward and gradients back, point to point and non-blocking.

    Every process calls the same methods with tensors of the same shapes. :meth:`train_step`
    runs the forward and backward passes of all micro-batches of a batch in the order of
    ``schedule``, the loss on the last stage, and returns the batch's loss on every process.
    With ``"gpipe"`` and ``"1f1b"`` the gradients of the micro-batches add up (each micro-batch's
    loss is divided by their number): :meth:`step` after :meth:`train_step` then makes the update
    one process would make on the whole batch. ``"pipedream"`` never flushes the pipeline: each
    stage updates after every backward with that micro-batch's gradient, each backward using the
    weights its forward used (stashed), and the stream of micro-batches runs on from batch to
    batch until :meth:`flush`.

    Parameters
    ----------
    module : torch.nn.Sequential or list of torch.nn.Module
        The layers, the same on every process (types, shapes and values are checked). The
        pipeline keeps only this process's stage; drop your reference to ``module`` to free the
        rest.
    loss_fn : callable, optional
        ``loss_fn(output, target)`` on the last stage, a scalar tensor (needed for training).
    optimizer : type or callable, optional
        ``optimizer(parameters, **optimizer_kwargs)`` gives the stage's torch optimizer, e.g.
        ``torch.optim.Adam`` (needed for training; a stage without parameters has none).
    optimizer_kwargs : dict, optional
        Keyword arguments of ``optimizer``.
    comm : MPICommunication, optional
        The processes of the pipeline, one stage each in rank order (keyword only; default: the
        default communicator). A sub-communicator, e.g. from ``comm.Split``, runs an independent
        pipeline.
    micro_batches : int
        Micro-batches per batch; must divide the batch size (keyword only).
    schedule : str
        ``"gpipe"``, ``"1f1b"`` (default) or ``"pipedream"`` (keyword only; see
        :func:`heat.nn.pipeline_schedule`).
    split_points : sequence of int, optional
        The first layer of every stage but the first (keyword only). Default: from a profile if
        ``sample_input`` is given, else equal numbers of layers (the first stages one more).
    sample_input : torch.Tensor, optional
        A micro-batch to profile the layers with (keyword only): every process profiles, the times
        are averaged, and :func:`heat.nn.partition_layers` cuts the layers.
    bandwidth : float
        Bytes per second between stages, for the partitioner (keyword only).
    checkpoint : bool or sequence of bool
        Recompute the stage's activations in the backward pass instead of keeping them
        (``torch.utils.checkpoint``); one flag per stage or one for all (keyword only).
    measure_activations : bool
        Count what autograd saves per micro-batch: :attr:`peak_live_micro_batches` and
        :attr:`peak_activation_bytes` (keyword only).
    trace : bool
        Record every action in :attr:`trace` (keyword only).
    replicas : int
        Hybrid parallelism: the processes of ``comm`` form ``stages x replicas`` (keyword only,
        default 1; it must divide ``comm.size``). Each replica is a whole pipeline on
        ``comm.size // replicas`` consecutive ranks (process ``r`` is stage ``r % stages`` of
        replica ``r // stages``; with nodes of ``stages`` processes, one pipeline per node) and
        trains on its own part of the global batch: every process passes its replica's part,
        of the same shape on every replica. At the end of :meth:`train_step` each stage's
        gradients are averaged among its replicas (one non-blocking all-reduce per dtype over
        :attr:`replica_comm`, started while the earlier stages finish their backwards;
        PipeDream: at each update), and the returned loss is the replicas' average. With equal
        parts, ``"gpipe"`` and ``"1f1b"`` then make the update one process makes on the whole
        batch.
    average_replicas : bool
        Average each stage's gradients among its replicas (keyword only, default True). False
        leaves that to another optimizer over :attr:`replica_comm`, e.g. DASO across nodes with
        the stages inside a node (``HEAT_RANKS_PER_NODE`` = stages to emulate them):
        ``daso = ht.optim.DASO(pipe.optimizer, total_epochs, comm=pipe.replica_comm)``,
        ``ht.nn.DataParallelMultiGPU(pipe.stage_module, daso, comm=pipe.replica_comm)``, then
        ``daso.step()`` instead of :meth:`step` (every stage needs parameters). The loss is
        averaged over the replicas either way.

    Attributes
    ----------
    stage : int
        This process's stage.
    stages : int
    replica, replicas : int
        This process's replica (pipeline) and their number.
    pipeline_comm : MPICommunication
        This replica's processes, one per stage (``comm`` itself without replicas).
    replica_comm : MPICommunication
        The processes of this stage in every replica (``MPI_SELF`` without replicas).
    replica_average : ReplicaAverage or None
        The averaging among replicas: ``wait_seconds``, ``bytes_reduced``.
    stage_module : torch.nn.Sequential
        This stage's layers, under their names in ``module`` (so its state-dict keys are the
        whole module's).
    optimizer : torch.optim.Optimizer or None
    partition : Partition
        The cut; with a profile, its estimated stage times.
    profile : list of LayerProfile or None
        The averaged profile the cut came from.
    trace : list of tuple
        ``(action, weight_version, start, end)`` per action (with ``trace=True``); the version
        counts this stage's updates, start and end are ``time.perf_counter()`` values.
    link : StageLink
        The stage's messages: ``wait_seconds``, ``bytes_sent``, ``bytes_received``.

    Raises
    ------
    TypeError, ValueError
        For bad arguments, more stages than layers, ``replicas`` that does not divide the
        number of processes, or modules (values included: replicas must start alike), split
        points or settings that differ between processes: the same error on every process,
        before any other communication.

    Examples
    --------
    >>> torch.manual_seed(0)  # the same layers on every process
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    >>> pipe = ht.nn.Pipeline(net, torch.nn.functional.mse_loss, torch.optim.Adam,
    ...                       {"lr": 1e-2}, micro_batches=4, schedule="1f1b")
    >>> x, y = torch.randn(16, 4), torch.randn(16, 1)
    >>> pipe.zero_grad()
    >>> loss = pipe.train_step(x, y)  # the same float on every process
    >>> pipe.step()
    >>> full = pipe.state_dict(gather="all")  # the keys of net.state_dict()
    >>> sorted(full)
    ['0.bias', '0.weight', '2.bias', '2.weight']

    Hybrid: with 4 processes, 2 stages x 2 replicas, each replica half of the global batch

    >>> pipe = ht.nn.Pipeline(net, torch.nn.functional.mse_loss, torch.optim.Adam,
    ...                       {"lr": 1e-2}, micro_batches=4, replicas=2)
    >>> rows = slice(pipe.replica * 8, (pipe.replica + 1) * 8)
    >>> loss = pipe.train_step(x[rows], y[rows])  # the global batch's loss, on every process
    >>> pipe.step()  # the same update as one process on x, y
    """

    def __init__(
        self,
        module: Union[torch.nn.Sequential, Sequence[torch.nn.Module]],
        loss_fn: Optional[Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = None,
        optimizer: Optional[Callable[..., torch.optim.Optimizer]] = None,
        optimizer_kwargs: Optional[Dict[str, Any]] = None,
        *,
        comm: Optional[MPICommunication] = None,
        micro_batches: int = 1,
        schedule: str = "1f1b",
        split_points: Optional[Sequence[int]] = None,
        sample_input: Optional[torch.Tensor] = None,
        bandwidth: float = math.inf,
        checkpoint: Union[bool, Sequence[bool]] = False,
        measure_activations: bool = False,
        trace: bool = False,
        replicas: int = 1,
        average_replicas: bool = True,
    ):
        super().__init__()
        if comm is None:
            comm = get_comm()
        if not isinstance(comm, MPICommunication):
            raise TypeError(
                "comm must be a heat communicator (heat.MPICommunication, e.g. ht.MPI_WORLD or "
                f"one from its Split), got {type(comm).__name__}"
            )
        stages = comm.size
        error, named, fingerprint = None, [], None
        try:
            replicas = check_int(replicas, "replicas", 1)
            check_bool(average_replicas, "average_replicas")
            stages = self._stages_of(comm.size, replicas)
            named = _layer_list(module)
            checkpoints = self._check_arguments(
                len(named), stages, loss_fn, optimizer, optimizer_kwargs, micro_batches,
                schedule, split_points, sample_input, bandwidth, checkpoint,
                measure_activations, trace,
            )  # fmt: skip
            fingerprint = {
                "replicas": replicas,  # first: a differing one is named, not the stages it gives
                "stages": stages,
                "average_replicas": average_replicas,
                "schedule": schedule,
                "micro_batches": micro_batches,
                "split_points": None if split_points is None else list(split_points),
                "profiled": sample_input is not None,
                "checkpoint": checkpoints,
                "number of layers": len(named),
                "layers": [_module_fingerprint(name, layer) for name, layer in named],
            }
        except Exception as caught:  # noqa: B902 - every failure becomes collective
            error = caught
        # the first communication: every process agrees on the arguments and the module
        self._agree(comm, error, fingerprint, describe=True)

        # stages x replicas: each pipeline (replica) holds consecutive ranks, so that a node of
        # ``stages`` processes holds one whole pipeline and the replicas' averaging crosses nodes
        self.comm = comm
        self.replicas = replicas
        self.stage, self.stages = comm.rank % stages, stages
        self.replica = comm.rank // stages
        stage = self.stage
        if replicas > 1:
            self.pipeline_comm = comm.Split(self.replica, stage)
            self.replica_comm = comm.Split(stage, self.replica)
        else:
            self.pipeline_comm, self.replica_comm = comm, MPI_SELF
        self.micro_batches = micro_batches
        self.schedule = schedule
        self.loss_fn = loss_fn
        self.profile: Optional[List[LayerProfile]] = None
        if split_points is not None:
            self.partition = Partition.from_split_points(split_points, len(named))
        elif sample_input is not None:
            self.profile = self._averaged_profile(named, sample_input)
            self.partition = partition_layers(self.profile, stages, bandwidth=bandwidth)
        else:
            base, extra = divmod(len(named), stages)
            sizes = [base + (1 if s < extra else 0) for s in range(stages)]
            points = [sum(sizes[: s + 1]) for s in range(stages - 1)]
            self.partition = Partition.from_split_points(points, len(named))
        owned = self.partition.stages[stage]
        self.stage_module = torch.nn.Sequential(OrderedDict(named[k] for k in owned))
        self._layer_names = [name for name, _ in named]
        del named  # the other stages' layers are not kept
        parameters = list(self.stage_module.parameters())
        self.optimizer = (
            optimizer(parameters, **(optimizer_kwargs or {}))
            if optimizer is not None and parameters
            else None
        )
        self.checkpointing = checkpoints[stage]
        pipeline_comm = self.pipeline_comm
        self.link = StageLink(pipeline_comm.Dup() if stages > 1 else pipeline_comm, self._device())
        self.replica_average = ReplicaAverage(self.replica_comm) if replicas > 1 else None
        self.average_replicas = average_replicas
        self.trace: List[Tuple[PipelineAction, int, float, float]] = []
        self._tracing = trace
        self._counter = _ActivationCounter() if measure_activations else None
        self._specs: Dict[Any, List[TensorSpec]] = {}  # batch key -> each stage's output spec
        self._version = 0  # updates of this stage (PipeDream)
        self._stash: Optional[Tuple[int, Dict[str, torch.Tensor]]] = None
        self._stream = 0  # PipeDream: micro-batches since the last drain
        self._in_flight: Dict[int, Dict[str, Any]] = {}  # micro-batch -> what its backward needs
        self._pending_update: Optional[Dict[str, torch.Tensor]] = None  # PipeDream's gradients
        self._named_parameters: List[Tuple[str, torch.nn.Parameter]] = []  # set by _run
        self._stage_buffers: List[torch.Tensor] = []

    # -- construction --------------------------------------------------------------------------

    @staticmethod
    def _stages_of(processes: int, replicas: int) -> int:
        """The number of stages of ``processes`` = stages x ``replicas``."""
        if processes % replicas:
            factorings = [
                f"{processes // r} x {r}" for r in range(1, processes + 1) if processes % r == 0
            ]
            raise ValueError(
                f"replicas ({replicas}) must divide the number of processes of comm "
                f"({processes}): the processes form stages x replicas, here "
                f"{', '.join(factorings)}"
            )
        return processes // replicas

    @staticmethod
    def _check_arguments(
        num_layers, stages, loss_fn, optimizer, optimizer_kwargs, micro_batches, schedule,
        split_points, sample_input, bandwidth, checkpoint, measure_activations, trace,
    ) -> List[bool]:  # fmt: skip
        """Every local check; the checkpoint flag of each stage."""
        if loss_fn is not None and not callable(loss_fn):
            raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
        if optimizer is not None and not callable(optimizer):
            raise TypeError(
                f"optimizer must be an optimizer class or factory, got {type(optimizer).__name__}"
            )
        if optimizer_kwargs is not None and not isinstance(optimizer_kwargs, dict):
            raise TypeError(
                f"optimizer_kwargs must be a dict, got {type(optimizer_kwargs).__name__}"
            )
        check_int(micro_batches, "micro_batches", 1)
        if schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
        if stages > num_layers:
            raise ValueError(
                f"the pipeline has {stages} stages (processes) but the module only {num_layers} "
                "layers: give it at least one layer per stage"
            )
        if split_points is not None:
            Partition.from_split_points(split_points, num_layers)
            if len(split_points) != stages - 1:
                raise ValueError(
                    f"split_points must have {stages - 1} entries for {stages} stages, got "
                    f"{len(split_points)}"
                )
        if sample_input is not None and not isinstance(sample_input, torch.Tensor):
            raise TypeError(
                f"sample_input must be a torch.Tensor, got {type(sample_input).__name__}"
            )
        if isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float)):
            raise TypeError(f"bandwidth must be a number, got {type(bandwidth).__name__}")
        if not bandwidth > 0:
            raise ValueError(f"bandwidth must be > 0 bytes/s, got {bandwidth}")
        if isinstance(checkpoint, bool):
            checkpoints = [checkpoint] * stages
        else:
            checkpoints = list(checkpoint) if isinstance(checkpoint, (list, tuple)) else None
            if checkpoints is None or not all(isinstance(c, bool) for c in checkpoints):
                raise TypeError("checkpoint must be a bool or a sequence of bool, one per stage")
            if len(checkpoints) != stages:
                raise ValueError(
                    f"checkpoint must have one flag per stage ({stages}), got {len(checkpoints)}"
                )
        check_bool(measure_activations, "measure_activations")
        check_bool(trace, "trace")
        if schedule == "pipedream" and optimizer is None:
            raise ValueError("schedule 'pipedream' updates after every backward: give an optimizer")
        if optimizer is not None:  # a bad keyword fails here, on every process alike
            optimizer([torch.nn.Parameter(torch.zeros(1))], **(optimizer_kwargs or {}))
        return checkpoints

    @staticmethod
    def _agree(comm, error, summary, describe=False) -> List[Any]:
        """
        One all-gather of every process's error and summary: raise the first error everywhere,
        or (``describe``) a ValueError if the summaries differ; return the summaries.
        """
        outcome = None if error is None else verdicts.portable(error)
        if comm.size == 1:
            verdicts.raise_first([outcome], error)
            return [summary]
        digest = zlib.crc32(repr(summary).encode()) if describe else None
        gathered = comm.allgather((outcome, digest if describe else summary))
        verdicts.raise_first([g[0] for g in gathered], error)
        if describe and any(g[1] != digest for g in gathered):
            summaries = comm.allgather(summary)  # only when something is wrong
            raise ValueError(
                "the processes were given different pipelines: " + _describe(summaries)
            )
        return [summary] * comm.size if describe else [g[1] for g in gathered]

    def _averaged_profile(self, named, sample_input) -> List[LayerProfile]:
        """Every process profiles the whole model; the times are averaged (one all-gather)."""
        profile, error = None, None
        try:
            profile = profile_layers([layer for _, layer in named], sample_input)
        except Exception as caught:  # noqa: B902 - every failure becomes collective
            error = caught
        everyone = self._agree(self.comm, error, profile)
        return [
            LayerProfile(
                name=named[k][0],
                forward_seconds=sum(p[k].forward_seconds for p in everyone) / len(everyone),
                backward_seconds=sum(p[k].backward_seconds for p in everyone) / len(everyone),
                activation_bytes=layer.activation_bytes,
                parameter_bytes=layer.parameter_bytes,
            )
            for k, layer in enumerate(everyone[0])
        ]

    def _device(self) -> torch.device:
        for tensor in list(self.stage_module.parameters()) + list(self.stage_module.buffers()):
            return tensor.device
        return torch.device("cpu")

    # -- public API ------------------------------------------------------------------------------

    @property
    def peak_live_micro_batches(self) -> Optional[int]:
        """
        The most micro-batches whose saved activations were alive at once on this stage, measured
        (None without ``measure_activations``).
        """
        return None if self._counter is None else self._counter.peak_micro_batches

    @property
    def peak_activation_bytes(self) -> Optional[int]:
        """The most bytes of saved activations alive at once on this stage, measured."""
        return None if self._counter is None else self._counter.peak_bytes

    def reset_activation_peaks(self) -> None:
        """
        Start measuring the activation peaks anew.

        Examples
        --------
        >>> pipe.reset_activation_peaks()
        """
        if self._counter is not None:
            self._counter.peak_micro_batches = len(self._counter.live)
            self._counter.peak_bytes = self._counter.bytes

    def train_step(
        self, inputs: torch.Tensor, targets: torch.Tensor, *, broadcast_loss: bool = True
    ) -> Optional[float]:
        """
        Forward and backward passes of one batch, split into ``micro_batches`` along dimension 0.

        Collective: every process passes tensors of the same shapes (only the first stage reads
        ``inputs``, only the last ``targets``). The first batch of each new shape agrees on the
        activation shapes: a header message runs down the pipeline with a forward pass of one
        micro-batch (in eval mode, without gradients) on every stage, and every process raises
        the same error if a stage fails on it.

        Parameters
        ----------
        inputs, targets : torch.Tensor
            The batch; the same batch size.
        broadcast_loss : bool
            Give the loss to every process (keyword only). The broadcast makes every stage wait
            for the last one to finish the batch; under PipeDream that is a bubble of about
            ``p - 1`` forward passes per batch, which False avoids: only the last stage returns
            the loss, the others None, and the stream of micro-batches runs on without a break.

        Returns
        -------
        float or None
            The mean of the micro-batches' losses (with a mean-reducing ``loss_fn``: the batch's
            loss), on every process (``broadcast_loss=False``: on the last stage only).

        Raises
        ------
        TypeError, ValueError
            On every process: no ``loss_fn``, tensors of a wrong type, batch sizes that differ or
            that ``micro_batches`` does not divide, or a stage that fails on the batch's shapes.

        Examples
        --------
        >>> pipe.zero_grad()
        >>> loss = pipe.train_step(torch.randn(16, 4), torch.randn(16, 1))
        >>> pipe.step()
        """
        check_bool(broadcast_loss, "broadcast_loss")
        key = ("train", _spec_or_type(inputs), _spec_or_type(targets))
        if key not in self._specs:
            self._agree_on_shapes(key, inputs, targets)
        m = self.micro_batches
        if self.schedule == "pipedream":
            actions = _stage_actions("pipedream", self.stage, self.stages, m, self._stream, False)
            self._stream += m
        else:
            actions = _stage_actions(self.schedule, self.stage, self.stages, m)
        scale = 1.0 / m if self.schedule != "pipedream" else 1.0
        with torch.enable_grad():
            losses = self._run(actions, key, inputs, targets, scale, training=True)
        last = self.stage == self.stages - 1
        loss = (sum(losses) / m).reshape(1).to(torch.float64) if last else None
        # replicas: the stage's gradients (PipeDream: averaged at each update already) and the
        # last stage's loss are averaged over the replicas by one all-reduce per dtype, started
        # now, while the earlier stages still run their last backwards
        averaged = [loss] if last else []
        if self.schedule != "pipedream" and self.average_replicas:
            averaged += self._gradients()
        if self.replica_average is not None and averaged:
            self.replica_average.start(averaged)
        if self.schedule != "pipedream":
            self.link.finish_sends()
        if last and self.replica_average is not None:
            self.replica_average.finish()  # the loss to broadcast is the replicas' average
        value = float(loss[0]) if last else None
        if self.stages > 1 and broadcast_loss:
            # non-blocking and waited for politely: the stages that finish first would otherwise
            # spin in MPI while the others still compute on the same cores
            buffer = torch.tensor([value if last else 0.0], dtype=torch.float64)
            value = float(self.link.wait(self.link.comm.Ibcast(buffer, root=self.stages - 1))[0])
        if not last and self.replica_average is not None:
            self.replica_average.finish()
        return value

    def _gradients(self) -> List[torch.Tensor]:
        """The gradients of this stage's trained parameters (zeros where backward gave none)."""
        gradients = []
        for p in self.stage_module.parameters():
            if p.requires_grad:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
                gradients.append(p.grad)
        return gradients

    def flush(self) -> None:
        """
        PipeDream: run the backwards and updates still due, ending the stream (collective; other
        schedules flush every batch and do nothing here).

        Examples
        --------
        >>> pipe.flush()
        """
        if self.schedule == "pipedream" and self._stream > 0:
            actions = _stage_actions("pipedream", self.stage, self.stages, 0, self._stream, True)
            with torch.enable_grad():
                self._run(actions, None, None, None, 1.0, training=True)
            self._stream = 0
        self.link.finish_sends()

    def step(self) -> None:
        """
        Update this stage's parameters with its optimizer (GPipe, 1F1B; PipeDream updates inside
        :meth:`train_step`, so this does nothing there).

        Examples
        --------
        >>> pipe.step()
        """
        if self.schedule == "pipedream":
            return
        if self.optimizer is not None:
            self.optimizer.step()
            self._version += 1

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """
        Inference: the whole model's output for ``inputs`` on every process (collective; micro-
        batches along dimension 0, without gradients).

        Parameters
        ----------
        inputs : torch.Tensor

        Returns
        -------
        torch.Tensor
            The last stage's outputs of all micro-batches, concatenated along dimension 0.

        Examples
        --------
        >>> pipe(torch.randn(16, 4)).shape
        torch.Size([16, 1])
        """
        key = ("forward", _spec_or_type(inputs))
        if key not in self._specs:
            self._agree_on_shapes(key, inputs, None)
        m = self.micro_batches
        actions = [PipelineAction("forward", i) for i in range(m)]
        with torch.no_grad():
            outputs = self._run(actions, key, inputs, None, 1.0, training=False)
        last = self._specs[key][-1]
        shape = (last.shape[0] * m,) + last.shape[1:]
        if self.stage == self.stages - 1:
            result = torch.cat(outputs) if m > 1 else outputs[0]
        else:
            result = torch.empty(shape, dtype=last.dtype, device=self.link.device)
        if self.stages > 1:
            self.link.wait(self.link.comm.Ibcast(result, root=self.stages - 1))
        return result

    def state_dict(
        self, *args, gather: Optional[str] = "root", **kwargs
    ) -> Optional[Dict[str, torch.Tensor]]:
        """
        The model's parameters and buffers, under the keys of the unsplit module's state dict.

        Parameters
        ----------
        gather : str or None
            ``"root"`` (default): the whole model on process 0 of ``comm`` (None elsewhere;
            with replicas, only the first replica's stages communicate); ``"all"``: on every
            process (each replica gathers its own pipeline's); None or ``"stage"``: this stage's
            entries only, no communication (keyword only). Gathered tensors are on the CPU.
        *args, **kwargs
            ``torch.nn.Module.state_dict``'s arguments (``destination``, ``prefix``,
            ``keep_vars``), as a parent module passes them: then this stage's entries, the way
            torch collects a module tree, without communication.

        Returns
        -------
        dict or None

        Examples
        --------
        >>> state = pipe.state_dict(gather="all")
        >>> list(state) == list(net.state_dict())
        True
        """
        if args or kwargs:  # called by torch for a module tree that holds the pipeline
            return super().state_dict(*args, **kwargs)
        if gather not in (None, "stage", "root", "all"):
            raise ValueError(f"gather must be 'root', 'all', 'stage' or None, got {gather!r}")
        local = self.stage_module.state_dict()
        if gather in (None, "stage"):
            return local
        if gather == "root" and self.replica > 0:  # the replicas hold the same model
            return None
        local = OrderedDict((k, v.detach().to("cpu", copy=True)) for k, v in local.items())
        if self.stages == 1:
            return local
        comm = self.pipeline_comm
        parts = comm.allgather(local) if gather == "all" else comm.gather(local)
        if parts is None:
            return None
        merged: Dict[str, torch.Tensor] = OrderedDict()
        for part in parts:
            merged.update(part)
        return merged

    def save_checkpoint(self, folder: str) -> None:
        """
        Save the pipeline into ``folder``, one file per stage (its layers' state, its optimizer's
        state and update count) written by that stage's process of the first replica, and a
        manifest written by process 0 once every stage has written (collective).

        Atomic as a whole: the stage files of a save get fresh names, and the manifest, which
        names them, is replaced by a rename only when all are written (then the previous save's
        files are deleted); a job that stops at any moment leaves the previous checkpoint or
        the new one. ``folder`` must be on a file system every process sees.

        Parameters
        ----------
        folder : str or os.PathLike
            Created if missing.

        Raises
        ------
        TypeError, ValueError, OSError
            On every process: a bad ``folder``, a PipeDream stream not flushed, a manifest of
            something else in ``folder``, or a write that failed on some process.

        Examples
        --------
        >>> pipe.save_checkpoint("checkpoints/pipe")
        >>> pipe.load_checkpoint("checkpoints/pipe")  # e.g. in the next job
        """
        pipeline_checkpoint.save(self, folder)

    def load_checkpoint(self, folder: str) -> None:
        """
        Load what :meth:`save_checkpoint` wrote into ``folder``: every process (every replica)
        its stage's file (collective).

        Parameters
        ----------
        folder : str or os.PathLike

        Raises
        ------
        FileNotFoundError, ValueError, RuntimeError
            On every process: no checkpoint in ``folder``, one whose stages hold other layers
            (another cut or number of stages: load its gathered :meth:`state_dict` instead), or
            a stage file that cannot be loaded.

        Examples
        --------
        >>> pipe.load_checkpoint("checkpoints/pipe")
        """
        pipeline_checkpoint.load(self, folder)

    def load_state_dict(self, state_dict: Dict[str, torch.Tensor], strict: bool = True):
        """
        Load this stage's entries of a whole-model state dict (or of a stage's own), collective:
        a missing or unexpected key raises on every process.

        Parameters
        ----------
        state_dict : dict
        strict : bool
            Every key of this stage must be there (and, for a stage's own dict, nothing else).

        Examples
        --------
        >>> pipe.load_state_dict(net.state_dict())
        """
        error = None
        try:
            if not isinstance(state_dict, dict):
                raise TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
            own = set(self.stage_module.state_dict())
            mine = {k: v for k, v in state_dict.items() if k in own}
            self.stage_module.load_state_dict(mine, strict=strict)
        except Exception as caught:  # noqa: B902 - every failure becomes collective
            error = caught
        self._agree(self.comm, error, None)

    # -- shape agreement -------------------------------------------------------------------------

    def _micro_batch_size(self, inputs, targets) -> int:
        if not isinstance(inputs, torch.Tensor):
            raise TypeError(f"inputs must be a torch.Tensor, got {type(inputs).__name__}")
        if targets is not None and not isinstance(targets, torch.Tensor):
            raise TypeError(f"targets must be a torch.Tensor, got {type(targets).__name__}")
        if inputs.dim() == 0:
            raise ValueError("inputs must have a batch dimension (dimension 0)")
        batch = inputs.shape[0]
        if targets is not None and (targets.dim() == 0 or targets.shape[0] != batch):
            raise ValueError(
                f"targets must have the batch size of inputs ({batch}), got shape "
                f"{tuple(targets.shape)}"
            )
        if batch % self.micro_batches:
            raise ValueError(
                f"micro_batches ({self.micro_batches}) must divide the batch size ({batch})"
            )
        return batch // self.micro_batches

    def _agree_on_shapes(self, key, inputs, targets) -> None:
        """
        The header chain and one all-gather: every stage's output spec for batches of ``key``,
        or the same error on every process.
        """
        training = targets is not None
        error, spec_in, spec_out = None, None, None
        try:
            if training and self.loss_fn is None:
                raise ValueError("train_step needs a loss_fn: give it to the Pipeline")
            size = self._micro_batch_size(inputs, targets)
        except Exception as caught:  # noqa: B902 - every failure becomes collective
            error = caught
        if self.stage == 0:
            spec_in = None if error is not None else TensorSpec.of(inputs[:size])
        else:
            spec_in = self.link.receive_header()  # None: a stage before failed
        if error is None and spec_in is not None:
            try:
                spec_out = self._probe(spec_in, inputs, targets[:size] if training else None)
            except Exception as caught:  # noqa: B902 - every failure becomes collective
                layers = self.partition.stages[self.stage]
                cls, message = verdicts.portable(caught)
                error = cls(
                    f"stage {self.stage} (layers {layers.start}-{layers.stop - 1}) fails on a "
                    f"micro-batch of shape {spec_in.shape} ({spec_in.dtype}): {message}"
                )
                error.__cause__ = caught
        if self.stage < self.stages - 1:
            self.link.send_header(spec_out)
        everyone = self._agree(self.comm, error, spec_out)
        if self.stages > 1:
            self.link.finish_sends()
        per_replica = [
            everyone[r * self.stages : (r + 1) * self.stages] for r in range(self.replicas)
        ]
        for r, specs in enumerate(per_replica):
            if specs != per_replica[0]:  # every process sees all: the same error everywhere
                raise ValueError(
                    "every replica must be given batches of the same shapes: replica 0's stages "
                    f"produce {[(s.shape, s.dtype) for s in per_replica[0]]}, replica {r}'s "
                    f"{[(s.shape, s.dtype) for s in specs]}"
                )
        self._specs[key] = per_replica[self.replica]

    def _probe(self, spec_in: TensorSpec, inputs, target) -> TensorSpec:
        """The stage's output spec: one micro-batch forward, in eval mode, without gradients."""
        device = self._device()
        if self.stage == 0:
            x = inputs[: spec_in.shape[0]].to(device)
        else:
            x = torch.zeros(spec_in.shape, dtype=spec_in.dtype, device=device)
        training = self.stage_module.training
        self.stage_module.eval()
        try:
            with torch.no_grad():
                out = self.stage_module(x)
                if not isinstance(out, torch.Tensor):
                    raise TypeError(
                        f"stage {self.stage} returned {type(out).__name__}; a stage boundary "
                        "carries one tensor"
                    )
                if target is not None and self.stage == self.stages - 1:
                    loss = self.loss_fn(out, target.to(out.device))
                    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                        raise ValueError("loss_fn must return a scalar tensor")
        finally:
            self.stage_module.train(training)
        spec = TensorSpec.of(out)
        if self.stage < self.stages - 1:
            spec.check()
        return spec

    # -- execution -------------------------------------------------------------------------------

    def _weights(self) -> Tuple[int, Optional[Dict[str, torch.Tensor]]]:
        """PipeDream: this version's weights as leaves of their own (shared until the next update)."""
        if self.schedule != "pipedream":
            return self._version, None
        if self._stash is None or self._stash[0] != self._version:
            weights = {
                name: p.detach().clone().requires_grad_(p.requires_grad)
                for name, p in self._named_parameters
            }
            self._stash = (self._version, weights)
        return self._stash

    def _output_spec(self, micro_batch: int, specs: Optional[List[TensorSpec]]) -> TensorSpec:
        """The spec of this stage's output of ``micro_batch`` (sent, or to be sent)."""
        entry = self._in_flight.get(micro_batch)
        return entry["spec"] if entry is not None else specs[self.stage]

    def _run(self, actions, key, inputs, targets, scale, training) -> List[Any]:
        """Execute this stage's actions; the last stage's losses (training) or outputs."""
        link, stage, last = self.link, self.stage, self.stages - 1
        # once per batch, not per micro-batch: the module may have moved or changed since
        link.device = device = self._device()
        self._named_parameters = list(self.stage_module.named_parameters())
        self._stage_buffers = list(self.stage_module.buffers())
        specs = self._specs.get(key)
        spec_in = specs[stage - 1] if specs is not None and stage > 0 else None
        forwards = [a.micro_batch for a in actions if a.kind == "forward"]
        backwards = [a.micro_batch for a in actions if a.kind == "backward"]
        pending = {"activation": list(forwards) if stage > 0 else [], "gradient": []}
        if stage < last:  # gradients come back for differentiable activations only
            pending["gradient"] = [
                i for i in backwards if self._output_spec(i, specs).differentiable
            ]
        micro = inputs.shape[0] // self.micro_batches if inputs is not None else 0
        results: List[Any] = []

        def post_ahead(kind: str, micro_batch: int) -> None:
            # post the receives up to the one after ``micro_batch``: it arrives while this computes
            queue = pending[kind]
            while queue and (link.posted(kind) < 2 or queue[0] <= micro_batch):
                i = queue.pop(0)
                spec = spec_in if kind == "activation" else self._output_spec(i, specs)
                link.post(kind, i, spec)

        if forwards:
            post_ahead("activation", forwards[0] - 1)
        if pending["gradient"]:
            post_ahead("gradient", pending["gradient"][0] - 1)
        for action in actions:
            began = time.perf_counter()
            i = action.micro_batch
            version = self._version
            if action.kind == "forward":
                post_ahead("activation", i)
                if stage == 0:
                    x = inputs[(i - forwards[0]) * micro :][:micro].to(device)
                else:
                    x = link.receive("activation", i)
                    if training and spec_in.differentiable:
                        x.requires_grad_(True)
                output, version = self._forward(i, x, training)
                if stage == last:
                    if training:
                        target = targets[(i - forwards[0]) * micro :][:micro]
                        loss = self.loss_fn(output, target.to(output.device))
                        results.append(loss.detach())
                        self._in_flight[i]["output"] = loss * scale if scale != 1.0 else loss
                    else:
                        results.append(output)
                else:
                    if TensorSpec.of(output) != specs[stage]:  # the probe said otherwise
                        raise RuntimeError(
                            f"stage {stage} produced {TensorSpec.of(output)} in training mode "
                            f"but {specs[stage]} in eval mode; the pipeline needs one shape"
                        )
                    link.send("activation", output)
                if not training:
                    self._in_flight.pop(i)
                    if stage > 0:
                        link.release(x)
            elif action.kind == "backward":
                post_ahead("gradient", i)
                version = self._backward(i)
            else:
                version = self._update()
            link.progress()
            if self._tracing:
                self.trace.append((action, version, began, time.perf_counter()))
        return results

    def _forward(self, micro_batch: int, x: torch.Tensor, training: bool):
        """The stage's forward pass; remembers what the backward needs. (output, weight version)"""
        version, weights = self._weights() if training else (self._version, None)
        if weights is None:
            function = self.stage_module
            in_use = [p for _, p in self._named_parameters]
        else:

            def function(inputs):
                return torch.func.functional_call(self.stage_module, weights, (inputs,))

            in_use = list(weights.values())
        in_use += self._stage_buffers
        counting = (
            self._counter.hooks(micro_batch, in_use)
            if self._counter is not None and training
            else _nothing()
        )
        with counting:
            if self.checkpointing and training:
                output = _checkpoint(function, x, use_reentrant=False)
            else:
                output = function(x)
        self._in_flight[micro_batch] = {
            "input": x,
            "output": output,
            "spec": TensorSpec.of(output),
            "version": version,
            "weights": weights,
        }
        return output, version

    def _backward(self, micro_batch: int) -> int:
        """The stage's backward pass of ``micro_batch``; the weight version it used."""
        link, stage = self.link, self.stage
        entry = self._in_flight.pop(micro_batch)
        output, x = entry["output"], entry["input"]
        gradient = None
        if stage < self.stages - 1 and entry["spec"].differentiable:
            gradient = link.receive("gradient", micro_batch)
        if output.requires_grad:
            torch.autograd.backward(output, gradient)
        if gradient is not None:
            link.release(gradient)
        if stage > 0:
            if x.requires_grad:
                link.send("gradient", x.grad if x.grad is not None else torch.zeros_like(x))
            link.release(x)
        if entry["weights"] is not None:
            self._pending_update = entry["weights"]
        return entry["version"]

    def _update(self) -> int:
        """PipeDream: apply the gradient just computed (on the stashed weights) to the weights."""
        weights = self._pending_update
        self._pending_update = None
        if self.optimizer is not None:
            for name, p in self._named_parameters:
                p.grad = weights[name].grad
                weights[name].grad = None
            if self.replica_average is not None and self.average_replicas:  # the same update
                self.replica_average.start(self._gradients())
                self.replica_average.finish()
            self.optimizer.step()
            for _, p in self._named_parameters:
                p.grad = None
        self._version += 1
        return self._version


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _spec_or_type(tensor: Any) -> Any:
    """What identifies a batch's shapes (a type name for a wrong argument, raised on later)."""
    if isinstance(tensor, torch.Tensor):
        return TensorSpec.of(tensor)
    return type(tensor).__name__
