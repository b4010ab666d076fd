"""
The plan of pipeline-parallel training: which layers on which stage, and which micro-batch each
stage runs forward or backward at each tick. Pure and deterministic (no MPI), so every rule is
unit-tested by itself; :class:`heat.nn.Pipeline` executes the plan.

Partitioning
------------
:func:`profile_layers` measures, layer by layer, the forward and backward time of one micro-batch,
the bytes of the layer's output (the activation that crosses a stage boundary cut after it) and of
its parameters. :func:`partition_layers` then cuts the layers into contiguous stages with
PipeDream's dynamic program: minimise the time of the slowest stage, where a boundary costs the
time to send its activation forward and the activation's gradient back at a given bandwidth
(overlapped with compute, a boundary is a resource of its own, as in PipeDream; not overlapped, it
adds to both stages it joins). :class:`Partition` holds the cut and its estimated times.

Schedules
---------
:func:`pipeline_schedule` lists, per stage, the ordered actions (:class:`PipelineAction`): forward
or backward of micro-batch ``i``, and for PipeDream the update after each backward.

* ``"gpipe"`` (fill-drain): every forward, then every backward; all ``m`` micro-batches' activations
  are alive at once.
* ``"1f1b"`` (one-forward-one-backward with a flush): stage ``s`` of ``p`` runs ``p - s - 1``
  forwards, then alternates one forward and one backward, then drains; at most ``p - s``
  micro-batches are alive. The same bubble as GPipe, a fraction ``(p - 1) / (m + p - 1)`` of the
  time for equal stages, and the same result as one process (the optimizer steps after the
  flush).
* ``"pipedream"`` (asynchronous 1F1B): the same order without a flush: the stream of micro-batches
  goes on from batch to batch, and each stage updates its weights after every backward. Each
  micro-batch's backward uses the weights its forward used (weight stashing; the executor keeps
  them). A batch is a segment of the endless stream (``start``); ``drain`` ends the stream.

:func:`simulate_schedule` runs a schedule on per-stage times: the makespan, each stage's busy time
and the peak number of micro-batches whose activations are alive on each stage.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torch

from ..core.sanitation import check_int

__all__ = [
    "LayerProfile",
    "profile_layers",
    "Partition",
    "partition_layers",
    "PipelineAction",
    "SCHEDULES",
    "pipeline_schedule",
    "ScheduleSimulation",
    "simulate_schedule",
]

#: the schedules :func:`pipeline_schedule` knows
SCHEDULES = ("gpipe", "1f1b", "pipedream")


def _check_seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not value >= 0:  # also rejects NaN
        raise ValueError(f"{name} must be >= 0, got {value}")
    return float(value)


def _layer_list(layers: Any) -> List[Tuple[str, torch.nn.Module]]:
    """``(name, module)`` of an ``nn.Sequential`` (its child names) or a list (``"0"``, ``"1"``...)."""
    if isinstance(layers, torch.nn.Sequential):
        return list(layers.named_children())
    if isinstance(layers, torch.nn.Module) or not isinstance(layers, (list, tuple)):
        raise TypeError(
            "layers must be a torch.nn.Sequential or a list of torch.nn.Module, got "
            f"{type(layers).__name__}"
        )
    for k, layer in enumerate(layers):
        if not isinstance(layer, torch.nn.Module):
            raise TypeError(f"layers[{k}] must be a torch.nn.Module, got {type(layer).__name__}")
    return [(str(k), layer) for k, layer in enumerate(layers)]


# ------------------------------------------------------------------------------------------------
# profile
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LayerProfile:
    """
    What one layer costs per micro-batch.

    Attributes
    ----------
    name : str
        The layer's name in the model (its key prefix in the state dict).
    forward_seconds, backward_seconds : float
        Time of its forward and backward pass for one micro-batch.
    activation_bytes : int
        Bytes of its output: what crosses the boundary when a stage ends after this layer.
    parameter_bytes : int
        Bytes of its parameters.

    Examples
    --------
    >>> layer = LayerProfile("0", forward_seconds=1e-3, backward_seconds=2e-3,
    ...                      activation_bytes=4096, parameter_bytes=1024)
    >>> layer.seconds
    0.003
    """

    name: str
    forward_seconds: float
    backward_seconds: float
    activation_bytes: int
    parameter_bytes: int

    @property
    def seconds(self) -> float:
        """Forward plus backward time."""
        return self.forward_seconds + self.backward_seconds


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def profile_layers(
    layers: Any, sample_input: torch.Tensor, *, repeats: int = 3
) -> List[LayerProfile]:
    """
    Measure each layer's forward and backward time on ``sample_input`` (one micro-batch), the bytes
    of its output and of its parameters.

    The layers run one after the other, each on the previous one's output; each time is the
    median of ``repeats`` runs after one unmeasured run. Gradients go to no parameter (``.grad``
    is left as it was), buffers such as batch-norm statistics are restored afterwards, and the
    random generators are forked, so profiling changes nothing in the model.

    Parameters
    ----------
    layers : torch.nn.Sequential or list of torch.nn.Module
    sample_input : torch.Tensor
        A micro-batch, on the layers' device.
    repeats : int
        Measured runs per layer (keyword only).

    Returns
    -------
    list of LayerProfile
        One per layer, in order.

    Raises
    ------
    TypeError, ValueError
        For a bad argument.

    Examples
    --------
    >>> net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    >>> profile = ht.nn.profile_layers(net, torch.randn(4, 8))
    >>> [(p.name, p.activation_bytes, p.parameter_bytes) for p in profile]
    [('0', 256, 576), ('1', 256, 0), ('2', 32, 136)]
    """
    named = _layer_list(layers)
    if not isinstance(sample_input, torch.Tensor):
        raise TypeError(f"sample_input must be a torch.Tensor, got {type(sample_input).__name__}")
    check_int(repeats, "repeats", 1)
    saved_buffers = [
        {k: b.detach().clone() for k, b in layer.named_buffers()} for _, layer in named
    ]
    times: List[List[Tuple[float, float]]] = [[] for _ in named]
    activation_bytes = [0] * len(named)
    devices = [sample_input.device] if sample_input.device.type != "cpu" else []
    try:
        with torch.random.fork_rng(devices=devices):
            for run in range(repeats + 1):
                x = sample_input
                for k, (_, layer) in enumerate(named):
                    x_in = x.detach()
                    if x_in.is_floating_point() or x_in.is_complex():
                        x_in.requires_grad_(True)
                    _synchronize(x_in.device)
                    began = time.perf_counter()
                    y = layer(x_in)
                    if not isinstance(y, torch.Tensor):
                        raise TypeError(
                            f"layer {named[k][0]!r} returned {type(y).__name__}; a pipeline "
                            "stage boundary carries one tensor"
                        )
                    _synchronize(y.device)
                    forward_done = time.perf_counter()
                    inputs = [p for p in layer.parameters() if p.requires_grad]
                    inputs += [x_in] if x_in.requires_grad else []
                    backward_done = forward_done  # no backward: nothing to differentiate
                    if y.requires_grad and inputs:
                        torch.autograd.grad(y, inputs, torch.ones_like(y), allow_unused=True)
                        _synchronize(y.device)
                        backward_done = time.perf_counter()
                    if run > 0:
                        times[k].append((forward_done - began, backward_done - forward_done))
                    activation_bytes[k] = y.numel() * y.element_size()
                    x = y.detach()
    finally:
        with torch.no_grad():
            for (_, layer), buffers in zip(named, saved_buffers):
                for key, value in layer.named_buffers():
                    value.copy_(buffers[key])
    return [
        LayerProfile(
            name=name,
            forward_seconds=statistics.median(t[0] for t in times[k]),
            backward_seconds=statistics.median(t[1] for t in times[k]),
            activation_bytes=activation_bytes[k],
            parameter_bytes=sum(p.numel() * p.element_size() for p in layer.parameters()),
        )
        for k, (name, layer) in enumerate(named)
    ]


# ------------------------------------------------------------------------------------------------
# partition
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Partition:
    """
    A cut of ``num_layers`` layers into contiguous stages, and its estimated cost.

    Attributes
    ----------
    split_points : tuple of int
        The first layer of every stage but the first (``stages - 1`` increasing indices).
    num_layers : int
    stage_seconds : tuple of float or None
        Forward plus backward time of each stage per micro-batch (with ``overlap=False`` including
        its boundaries' transfers); None without a profile.
    link_seconds : tuple of float or None
        Time to move each boundary's activation forward and its gradient back.
    bottleneck_seconds : float or None
        The slowest stage (or link, when overlapped): the time per micro-batch of the steady state.

    Examples
    --------
    >>> part = Partition.from_split_points([2, 3], 5)
    >>> part.stages
    (range(0, 2), range(2, 3), range(3, 5))
    """

    split_points: Tuple[int, ...]
    num_layers: int
    stage_seconds: Optional[Tuple[float, ...]] = None
    link_seconds: Optional[Tuple[float, ...]] = None
    bottleneck_seconds: Optional[float] = None

    @property
    def stages(self) -> Tuple[range, ...]:
        """The layer indices of each stage."""
        bounds = (0,) + tuple(self.split_points) + (self.num_layers,)
        return tuple(range(a, b) for a, b in zip(bounds[:-1], bounds[1:]))

    @classmethod
    def from_split_points(
        cls,
        split_points: Sequence[int],
        num_layers: int,
        profile: Optional[Sequence[LayerProfile]] = None,
        *,
        bandwidth: float = math.inf,
        overlap: bool = True,
    ) -> "Partition":
        """
        The partition with the given split points, costed with ``profile`` if one is given.

        Parameters
        ----------
        split_points : sequence of int
            Strictly increasing, each in ``[1, num_layers - 1]``.
        num_layers : int
        profile : sequence of LayerProfile, optional
        bandwidth : float
            Bytes per second of a link between stages (keyword only).
        overlap : bool
            Whether transfers overlap with compute (keyword only).

        Raises
        ------
        TypeError, ValueError
            For split points that do not cut ``num_layers`` layers into non-empty stages.

        Examples
        --------
        >>> layers = [LayerProfile(str(k), 1.0, 2.0, 100, 0) for k in range(4)]
        >>> Partition.from_split_points([1], 4, layers, bandwidth=100.0, overlap=False).stage_seconds
        (5.0, 11.0)
        """
        check_int(num_layers, "num_layers", 1)
        points = _check_split_points(split_points, num_layers)
        if profile is None:
            return cls(points, num_layers)
        costs = _Costs(profile, bandwidth, overlap, None)
        if costs.n != num_layers:
            raise ValueError(f"profile has {costs.n} layers, num_layers is {num_layers}")
        bounds = (0,) + points + (num_layers,)
        stage_seconds = tuple(costs.stage(a, b) for a, b in zip(bounds[:-1], bounds[1:]))
        link_seconds = tuple(costs.link(k) for k in points)
        bottleneck = max(stage_seconds + (link_seconds if overlap else ()))
        return cls(points, num_layers, stage_seconds, link_seconds, bottleneck)


def _check_split_points(split_points: Any, num_layers: int) -> Tuple[int, ...]:
    if isinstance(split_points, (str, bytes)) or not hasattr(split_points, "__iter__"):
        raise TypeError(
            f"split_points must be a sequence of int, got {type(split_points).__name__}"
        )
    points = tuple(split_points)
    for point in points:
        if isinstance(point, bool) or not isinstance(point, int):
            raise TypeError(f"split_points must hold ints, got {point!r}")
    if any(b <= a for a, b in zip((0,) + points, points + (num_layers,))):
        raise ValueError(
            f"split_points must increase strictly within [1, {num_layers - 1}] (stages of at "
            f"least one of the {num_layers} layers), got {list(points)}"
        )
    return points


class _Costs:
    """Stage and link times of a profile, from prefix sums."""

    def __init__(self, profile, bandwidth, overlap, max_parameter_bytes):
        if isinstance(profile, (str, bytes)) or not hasattr(profile, "__iter__"):
            raise TypeError(f"profile must be a list of LayerProfile, got {type(profile).__name__}")
        profile = list(profile)
        for k, layer in enumerate(profile):
            if not isinstance(layer, LayerProfile):
                raise TypeError(f"profile[{k}] must be a LayerProfile, got {type(layer).__name__}")
        if isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float)):
            raise TypeError(f"bandwidth must be a number, got {type(bandwidth).__name__}")
        if not bandwidth > 0:
            raise ValueError(f"bandwidth must be > 0 bytes/s, got {bandwidth}")
        if not isinstance(overlap, bool):
            raise TypeError(f"overlap must be a bool, got {type(overlap).__name__}")
        if max_parameter_bytes is not None:
            _check_seconds("max_parameter_bytes", max_parameter_bytes)
        self.n = len(profile)
        self.overlap = overlap
        self.limit = max_parameter_bytes
        self.seconds = [0.0]
        self.params = [0]
        for layer in profile:
            self.seconds.append(self.seconds[-1] + layer.seconds)
            self.params.append(self.params[-1] + layer.parameter_bytes)
        # the activation after layer k - 1 and its gradient cross the boundary at k
        self.links = [0.0] + [2 * layer.activation_bytes / bandwidth for layer in profile]

    def link(self, k: int) -> float:
        """Transfer time of the boundary before layer ``k`` (0 < k < n)."""
        return self.links[k]

    def stage(self, a: int, b: int) -> float:
        """Time of a stage of layers ``[a, b)``; inf beyond the parameter limit."""
        if self.limit is not None and self.params[b] - self.params[a] > self.limit:
            return math.inf
        seconds = self.seconds[b] - self.seconds[a]
        if not self.overlap:
            seconds += (self.links[a] if a > 0 else 0.0) + (self.links[b] if b < self.n else 0.0)
        return seconds


def partition_layers(
    profile: Sequence[LayerProfile],
    stages: int,
    *,
    bandwidth: float = math.inf,
    overlap: bool = True,
    max_parameter_bytes: Optional[float] = None,
) -> Partition:
    """
    PipeDream's partitioner: contiguous stages that minimise the slowest stage.

    A dynamic program over (first ``j`` layers, ``q`` stages), ``O(n^2 p)`` for ``n`` layers and
    ``p`` stages. The cost of a stage is the forward plus backward time of its layers; a boundary
    after layer ``k`` costs ``2 * activation_bytes[k] / bandwidth`` (the activation forward, its
    gradient back). With ``overlap`` (transfers run while the stages compute, as heat's
    non-blocking transport does) a link is a resource of its own and the bottleneck is the
    slowest stage or link; without, a stage's transfers add to its time.

    Parameters
    ----------
    profile : sequence of LayerProfile
        From :func:`profile_layers`, or written by hand.
    stages : int
        Number of stages, at most the number of layers.
    bandwidth : float
        Bytes per second between neighbouring stages (keyword only; default: transfers are free).
    overlap : bool
        Whether transfers overlap with compute (keyword only).
    max_parameter_bytes : float, optional
        The most parameter bytes one stage may hold (keyword only).

    Returns
    -------
    Partition
        Ties go to the cut with the earliest split points.

    Raises
    ------
    TypeError, ValueError
        For a bad argument, more stages than layers, or no cut within ``max_parameter_bytes``.

    Examples
    --------
    >>> times = [1.0, 1.0, 4.0, 1.0, 1.0]
    >>> profile = [LayerProfile(str(k), t / 3, 2 * t / 3, 8, 0) for k, t in enumerate(times)]
    >>> part = ht.nn.partition_layers(profile, 3)
    >>> part.split_points, part.bottleneck_seconds
    ((2, 3), 4.0)
    """
    costs = _Costs(profile, bandwidth, overlap, max_parameter_bytes)
    check_int(stages, "stages", 1)
    n = costs.n
    if stages > n:
        raise ValueError(f"stages ({stages}) must not exceed the number of layers ({n})")
    # best[q][j]: the least bottleneck of the first j layers in q stages; cut[q][j]: the start of
    # the last of those stages
    best = [[math.inf] * (n + 1) for _ in range(stages + 1)]
    cut = [[0] * (n + 1) for _ in range(stages + 1)]
    best[0][0] = 0.0
    for q in range(1, stages + 1):
        for j in range(q, n - (stages - q) + 1):
            for i in range(q - 1, j):
                if best[q - 1][i] == math.inf:
                    continue
                value = max(best[q - 1][i], costs.stage(i, j))
                if overlap and i > 0:
                    value = max(value, costs.link(i))
                if value < best[q][j]:
                    best[q][j], cut[q][j] = value, i
    if best[stages][n] == math.inf:
        raise ValueError(
            f"no cut of the {n} layers into {stages} stages keeps every stage within "
            f"max_parameter_bytes={max_parameter_bytes}"
        )
    points, j = [], n
    for q in range(stages, 1, -1):
        j = cut[q][j]
        points.append(j)
    return Partition.from_split_points(
        points[::-1], n, profile, bandwidth=bandwidth, overlap=overlap
    )


# ------------------------------------------------------------------------------------------------
# schedules
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PipelineAction:
    """
    One step of a stage: ``"forward"`` or ``"backward"`` of micro-batch ``micro_batch``, or an
    ``"update"`` of the stage's weights with that micro-batch's gradient (PipeDream).

    Examples
    --------
    >>> PipelineAction("forward", 3)
    F3
    """

    kind: str
    micro_batch: int

    def __repr__(self) -> str:
        return f"{self.kind[0].upper()}{self.micro_batch}"


def _forwards(count: int, first: int = 0) -> List[PipelineAction]:
    return [PipelineAction("forward", i) for i in range(first, first + count)]


def _one_f_one_b(stage: int, stages: int, start: int, stop: int, drain: bool, update: bool):
    """
    Stage ``stage``'s segment of the endless 1F1B order: from the forward of micro-batch ``start``
    to just before the forward of ``stop``; with ``drain`` the backwards still due after it.
    The stage runs ``stages - stage - 1`` forwards ahead of its backwards.
    """
    lag = stages - stage - 1

    def backward(i):
        done = [PipelineAction("backward", i)]
        return done + [PipelineAction("update", i)] if update else done

    actions = []
    for i in range(start, stop):
        actions.append(PipelineAction("forward", i))
        if i >= lag:
            actions += backward(i - lag)
    if drain:
        for i in range(max(stop - lag, 0), stop):
            actions += backward(i)
    return actions


def _stage_actions(
    schedule: str, stage: int, stages: int, micro_batches: int, start: int = 0, drain: bool = True
) -> List[PipelineAction]:
    """One stage's actions of :func:`pipeline_schedule` (arguments already checked)."""
    if schedule == "gpipe":
        return _forwards(micro_batches) + [
            PipelineAction("backward", i) for i in range(micro_batches)
        ]
    pipedream = schedule == "pipedream"
    return _one_f_one_b(stage, stages, start, start + micro_batches, drain, pipedream)


def pipeline_schedule(
    schedule: str, stages: int, micro_batches: int, *, start: int = 0, drain: bool = True
) -> List[List[PipelineAction]]:
    """
    The ordered actions of every stage.

    Parameters
    ----------
    schedule : str
        ``"gpipe"``, ``"1f1b"`` or ``"pipedream"`` (see the module's description).
    stages : int
    micro_batches : int
        Micro-batches of this batch (PipeDream with ``drain``: may be 0, the drain alone).
    start : int
        PipeDream: the index of this batch's first micro-batch in the stream that began at the
        last drain (keyword only); the actions are the segment of the endless stream from its
        forward to just before the forward of micro-batch ``start + micro_batches``.
    drain : bool
        PipeDream: end the stream after this batch, running every backward still due (keyword
        only). GPipe and 1F1B always drain.

    Returns
    -------
    list of list of PipelineAction
        ``result[s]`` is stage ``s``'s actions in order.

    Raises
    ------
    TypeError, ValueError
        For a bad argument.

    Examples
    --------
    >>> ht.nn.pipeline_schedule("1f1b", 2, 3)
    [[F0, F1, B0, F2, B1, B2], [F0, B0, F1, B1, F2, B2]]
    >>> ht.nn.pipeline_schedule("pipedream", 2, 2, drain=False)
    [[F0, F1, B0, U0], [F0, B0, U0, F1, B1, U1]]
    >>> ht.nn.pipeline_schedule("pipedream", 2, 2, start=2)
    [[F2, B1, U1, F3, B2, U2, B3, U3], [F2, B2, U2, F3, B3, U3]]
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    check_int(stages, "stages", 1)
    check_int(start, "start", 0)
    if not isinstance(drain, bool):
        raise TypeError(f"drain must be a bool, got {type(drain).__name__}")
    if schedule != "pipedream":
        check_int(micro_batches, "micro_batches", 1)
        if start != 0 or not drain:
            raise ValueError(f"{schedule!r} flushes every batch: start must be 0 and drain True")
    else:
        check_int(micro_batches, "micro_batches", 0 if drain else 1)
    return [_stage_actions(schedule, s, stages, micro_batches, start, drain) for s in range(stages)]


# ------------------------------------------------------------------------------------------------
# simulation
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScheduleSimulation:
    """
    A schedule run on given per-stage times (:func:`simulate_schedule`).

    Attributes
    ----------
    makespan : float
        From the first action's start to the last action's end.
    busy_seconds : tuple of float
        Compute time of each stage.
    peak_live : tuple of int
        The most micro-batches whose forward had run and whose backward had not, per stage: how
        many micro-batches of activations the stage holds at its peak.
    timeline : tuple of tuple
        Per stage, ``(action, start, end)`` in order.

    Examples
    --------
    >>> sim = ht.nn.simulate_schedule(ht.nn.pipeline_schedule("gpipe", 2, 4), 1.0, 2.0)
    >>> sim.makespan, sim.peak_live
    (15.0, (4, 4))
    """

    makespan: float
    busy_seconds: Tuple[float, ...]
    peak_live: Tuple[int, ...]
    timeline: Tuple[Tuple[Tuple[PipelineAction, float, float], ...], ...]

    @property
    def bubble_fraction(self) -> float:
        """The share of stage time spent idle: ``1 - sum(busy) / (stages * makespan)``."""
        if self.makespan == 0:
            return 0.0
        return 1.0 - sum(self.busy_seconds) / (len(self.busy_seconds) * self.makespan)


def _per_stage(name: str, value: Any, count: int) -> List[float]:
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            raise ValueError(f"{name} must have {count} entries, got {len(value)}")
        return [_check_seconds(f"{name}[{k}]", v) for k, v in enumerate(value)]
    return [_check_seconds(name, value)] * count


def simulate_schedule(
    schedule: Sequence[Sequence[PipelineAction]],
    forward_seconds: Union[float, Sequence[float]],
    backward_seconds: Union[float, Sequence[float]],
    transfer_seconds: Union[float, Sequence[float]] = 0.0,
    update_seconds: Union[float, Sequence[float]] = 0.0,
) -> ScheduleSimulation:
    """
    Run ``schedule`` on per-stage times: every action starts as soon as its stage is free and its
    inputs have arrived.

    A forward of micro-batch ``i`` on stage ``s > 0`` waits for the forward of ``i`` on stage
    ``s - 1`` plus the transfer; a backward on stage ``s`` below the last waits for the backward of
    ``i`` on stage ``s + 1`` plus the transfer. Micro-batches a segment of a PipeDream stream
    takes over from an earlier segment must appear in ``schedule`` (concatenate the segments).

    Parameters
    ----------
    schedule : list of list of PipelineAction
        Per stage, as from :func:`pipeline_schedule`.
    forward_seconds, backward_seconds : float or sequence of float
        Time of one micro-batch on each stage (one number: every stage).
    transfer_seconds : float or sequence of float
        Time for an activation or gradient to cross each of the ``stages - 1`` boundaries.
    update_seconds : float or sequence of float
        Time of a weight update.

    Returns
    -------
    ScheduleSimulation

    Raises
    ------
    ValueError
        If the schedule deadlocks (an action waits for one that never runs or runs later on the
        same stage), repeats an action, or runs a backward before its forward.

    Examples
    --------
    >>> sim = ht.nn.simulate_schedule(ht.nn.pipeline_schedule("1f1b", 4, 8), 1.0, 2.0)
    >>> sim.makespan / (8 * 3.0)  # (m + p - 1) / m
    1.375
    >>> sim.peak_live
    (4, 3, 2, 1)
    """
    if isinstance(schedule, (str, bytes)) or not hasattr(schedule, "__len__"):
        raise TypeError(
            f"schedule must be a list of lists of actions, got {type(schedule).__name__}"
        )
    stages = len(schedule)
    if stages < 1:
        raise ValueError("schedule must have at least one stage")
    lists = [list(actions) for actions in schedule]
    for s, actions in enumerate(lists):
        for action in actions:
            if not isinstance(action, PipelineAction):
                raise TypeError(f"schedule[{s}] holds {action!r}, not a PipelineAction")
    durations = {
        "forward": _per_stage("forward_seconds", forward_seconds, stages),
        "backward": _per_stage("backward_seconds", backward_seconds, stages),
        "update": _per_stage("update_seconds", update_seconds, stages),
    }
    transfer = _per_stage("transfer_seconds", transfer_seconds, max(stages - 1, 0))

    ended: Dict[Tuple[str, int, int], float] = {}  # (kind, stage, micro-batch) -> end time
    position = [0] * stages
    free = [0.0] * stages
    live = [0] * stages
    peak = [0] * stages
    busy = [0.0] * stages
    timeline: List[List[Tuple[PipelineAction, float, float]]] = [[] for _ in range(stages)]

    def ready_time(s: int, action: PipelineAction) -> Optional[float]:
        """When the inputs of ``action`` on stage ``s`` are there; None: not yet known."""
        i = action.micro_batch
        if action.kind == "forward":
            if s == 0:
                return 0.0
            end = ended.get(("forward", s - 1, i))
            return None if end is None else end + transfer[s - 1]
        if ("forward", s, i) not in ended:
            return None
        if action.kind == "update":
            return 0.0 if ("backward", s, i) in ended else None
        if s == stages - 1:
            return 0.0
        end = ended.get(("backward", s + 1, i))
        return None if end is None else end + transfer[s]

    remaining = sum(len(actions) for actions in lists)
    while remaining:
        progressed = False
        for s in range(stages):
            while position[s] < len(lists[s]):
                action = lists[s][position[s]]
                if action.kind not in durations:
                    raise ValueError(f"unknown action kind {action.kind!r} on stage {s}")
                key = (action.kind, s, action.micro_batch)
                if key in ended:
                    raise ValueError(f"stage {s} runs {action!r} twice")
                ready = ready_time(s, action)
                if ready is None:
                    break
                start = max(free[s], ready)
                end = start + durations[action.kind][s]
                ended[key] = end
                free[s] = end
                busy[s] += end - start
                timeline[s].append((action, start, end))
                if action.kind == "forward":
                    live[s] += 1
                    peak[s] = max(peak[s], live[s])
                elif action.kind == "backward":
                    live[s] -= 1
                position[s] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            waiting = [f"stage {s}: {lists[s][position[s]]!r}" for s in range(stages)
                       if position[s] < len(lists[s])]  # fmt: skip
            raise ValueError(f"the schedule deadlocks ({', '.join(waiting)} can never start)")
    starts = [t[0][1] for t in timeline if t]
    makespan = max(free) - min(starts) if starts else 0.0
    return ScheduleSimulation(
        makespan=makespan,
        busy_seconds=tuple(busy),
        peak_live=tuple(peak),
        timeline=tuple(tuple(t) for t in timeline),
    )
