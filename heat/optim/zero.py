"""
Sharded data parallelism (ZeRO): :class:`ZeroRedundancyOptimizer`.

Every process of a communicator trains the same model on its own part of the batch, as with
:class:`heat.nn.DataParallel`, but the redundant copies are cut into shards:

* the plan -- parameters are flattened into buckets (one per module in stage 3, of at most
  ``bucket_size_mb`` otherwise); each bucket's flat space is cut into one contiguous, balanced
  block per process (:func:`shard_bounds`, heat's balanced layout: ``n // p`` elements, one more
  for the first ``n % p`` processes);
* the math -- the inner torch optimizer sees only this process's blocks, as one flat tensor per
  bucket, so its state (Adam's moments) exists once in the whole job;
* the transport -- reduce-scatter of gradients and all-gather of parameters through heat's
  communicator (``Ireduce_scatter``, ``Allgatherv``), on a duplicate of ``comm`` so that they
  never interleave with the user's own collectives.

Stages: 1 shards the optimizer state (full gradients averaged with one all-reduce per bucket, the
updated blocks all-gathered after the step); 2 also shards the gradients (reduce-scattered as soon
as backward has produced a bucket's gradients, the full gradients freed); 3 also shards the
parameters (each module's parameters gathered just before its forward and its backward, freed
after them, the next module's gathered in the background meanwhile).

Sharded checkpoints live in :mod:`.zero_checkpoint`.
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import torch

from ..core.communication import MPI, MPICommunication, sanitize_comm, verdicts
from ..core.sanitation import check_bool
from .gradients import bucket_bytes

__all__ = ["ZeroRedundancyOptimizer", "shard_bounds"]

#: reduce-scatters in flight at most; each holds its bucket's full gradients until it completes
_MAX_PENDING_REDUCTIONS = 2


def shard_bounds(numel: int, processes: int) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """
    Counts and offsets of ``processes`` contiguous blocks covering ``numel`` elements, balanced:
    ``numel // processes`` each, one more for the first ``numel % processes``.

    Examples
    --------
    >>> shard_bounds(10, 3)
    ((4, 3, 3), (0, 4, 7))
    """
    base, extra = divmod(numel, processes)
    counts = tuple(base + (1 if r < extra else 0) for r in range(processes))
    offsets = tuple(sum(counts[:r]) for r in range(processes))
    return counts, offsets


@dataclass(frozen=True)
class ParameterSlot:
    """Where one parameter lies in its bucket's flat space."""

    index: int  # among all parameters of the optimizer, in torch's state_dict numbering
    name: str
    shape: Tuple[int, ...]
    offset: int
    numel: int


class FlatBucket:
    """
    Parameters of one dtype and device (and one parameter group) flattened into one vector, of
    which this process owns the block ``[start, stop)`` as ``shard`` (what the inner optimizer
    updates). ``flat`` holds the whole vector when materialized; the parameters are views into it.
    """

    def __init__(
        self,
        parameters: Sequence[torch.nn.Parameter],
        slots: Sequence[ParameterSlot],
        group: int,
        rank: int,
        processes: int,
    ):
        self.parameters = list(parameters)
        self.slots = list(slots)
        self.group = group
        self.numel = sum(slot.numel for slot in slots)
        self.dtype = parameters[0].dtype
        self.device = parameters[0].device
        self.counts, self.offsets = shard_bounds(self.numel, processes)
        self.start = self.offsets[rank]
        self.stop = self.start + self.counts[rank]
        self.flat = torch.empty(self.numel, dtype=self.dtype, device=self.device)
        self.shard: torch.nn.Parameter = None  # set by the optimizer once the values agree
        self.materialized = True
        self.pending_gather: Any = None
        self.arrived = 0  # gradients produced by the current backward pass
        self.reductions = 0  # reduce-scatters started since the last step
        self.shard_grad: Optional[torch.Tensor] = None
        self.grad_buffer: Optional[torch.Tensor] = None  # the gradients, flat

    @property
    def nbytes(self) -> int:
        return self.numel * self.flat.element_size()

    def overlaps(self, start: int, stop: int) -> Iterator[Tuple[ParameterSlot, int, int]]:
        """(slot, first, last) for every parameter with elements in ``[start, stop)`` of the
        flat space: its elements ``first:last`` (in its own flattened numbering)."""
        for slot in self.slots:
            first = max(start, slot.offset) - slot.offset
            last = min(stop, slot.offset + slot.numel) - slot.offset
            if first < last:
                yield slot, first, last


class BufferPool:
    """
    Flat tensors reused from step to step (gradient vectors, reduced blocks): no fresh
    allocation, page faults and zeroing of a bucket-sized tensor per bucket and step, and no
    holes in the CPU heap from freeing them (glibc serves tensors below its mmap threshold, which
    grows to 32 MiB after the first large free, from the heap).
    """

    def __init__(self, spares: int = _MAX_PENDING_REDUCTIONS + 1):
        self.spares = spares
        self._free: Dict[Tuple[int, torch.dtype, torch.device], List[torch.Tensor]] = {}

    def take(self, numel: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        """A tensor of ``numel`` zeros."""
        stack = self._free.get((numel, dtype, device))
        if stack:
            return stack.pop().zero_()
        return torch.zeros(numel, dtype=dtype, device=device)

    def give(self, tensor: torch.Tensor) -> None:
        """Return ``tensor`` (nobody else may use it any more)."""
        stack = self._free.setdefault((tensor.numel(), tensor.dtype, tensor.device), [])
        if len(stack) < self.spares:
            stack.append(tensor)


def _owned_piece(
    bucket: FlatBucket, values: Dict[int, torch.Tensor], dtype: torch.dtype
) -> torch.Tensor:
    """This process's block of the bucket from full per-parameter ``values`` (index -> tensor)."""
    pieces = [
        values[slot.index].reshape(-1)[first:last].to(dtype)
        for slot, first, last in bucket.overlaps(bucket.start, bucket.stop)
    ]
    if not pieces:
        return torch.zeros(0, dtype=dtype, device=bucket.device)
    return torch.cat(pieces).to(bucket.device)


def _parameter_groups(params: Any) -> Tuple[List[Dict[str, Any]], Dict[int, str]]:
    """The parameter groups (dicts with ``params`` lists) of ``params`` and parameter names."""
    names: Dict[int, str] = {}
    if isinstance(params, torch.nn.Module):
        named = list(params.named_parameters())
        names = {id(p): name for name, p in named}
        params = [p for _, p in named]
    if isinstance(params, torch.Tensor):
        raise TypeError("params must be an iterable of tensors or dicts, or a torch.nn.Module")
    try:
        items = list(params)
    except TypeError:
        raise TypeError(
            "params must be an iterable of tensors or of parameter-group dicts, or a "
            f"torch.nn.Module, got {type(params).__name__}"
        ) from None
    if not items:
        raise ValueError("params must not be empty")
    if all(isinstance(item, dict) for item in items):
        groups = []
        for item in items:
            if "params" not in item:
                raise ValueError("params: every parameter-group dict needs a 'params' entry")
            group = dict(item)
            group_params = group["params"]
            group["params"] = (
                [group_params] if isinstance(group_params, torch.Tensor) else list(group_params)
            )
            groups.append(group)
    elif all(isinstance(item, torch.Tensor) for item in items):
        groups = [{"params": items}]
    else:
        raise TypeError("params must hold only tensors or only parameter-group dicts")
    seen = set()
    for group in groups:
        for p in group["params"]:
            if not isinstance(p, torch.Tensor) or not p.is_leaf:
                raise TypeError("params: every parameter must be a leaf torch.Tensor")
            if not p.requires_grad:
                raise ValueError("params: every parameter must require grad")
            if id(p) in seen:
                raise ValueError("params: a parameter appears more than once")
            seen.add(id(p))
    return groups, names


def _per_element_state(optimizer_class: type, options: Dict[str, Any]) -> Optional[List[str]]:
    """
    The state entries of ``optimizer_class`` that hold one value per parameter element (Adam's
    ``exp_avg``, ``exp_avg_sq``), found by one step on a two-element probe; also checks the
    options. None if the probe step cannot run (e.g. an optimizer that needs a closure).
    """
    probe = torch.zeros(2, requires_grad=True)
    optimizer = optimizer_class([probe], **options)  # raises for bad options
    probe.grad = torch.zeros(2)
    try:
        optimizer.step()
    except Exception:  # noqa: B902 - the probe is only a hint; shapes decide then
        return None
    state = optimizer.state.get(probe, {})
    return sorted(
        key for key, value in state.items() if torch.is_tensor(value) and value.shape == (2,)
    )


class ZeroRedundancyOptimizer(torch.optim.Optimizer):
    """
    A torch optimizer whose state -- and from stage 2 the gradients, in stage 3 the parameters
    too -- is sharded over the processes of ``comm`` (ZeRO, "zero redundancy"). Every process
    computes forward and backward on its own part of the batch; the result after each step is that
    of one process training on the whole batch with ``optimizer_class`` (the gradients are
    averaged over the processes).

    The parameters are flattened into buckets; each process owns one contiguous, balanced block
    of every bucket and runs ``optimizer_class`` on its blocks only.

    * ``stage=1``: after backward every process holds the full gradients; ``step`` averages them
      (one all-reduce per bucket; ``average_gradients=False`` when something else, e.g.
      :class:`heat.nn.DataParallel`, did) and updates its blocks, then all-gathers the blocks.
    * ``stage=2``: each bucket's gradients are reduce-scattered (non-blocking) as soon as backward
      has produced all of them and then freed; each process keeps only the averaged gradient of
      its blocks. ``step`` updates the blocks and all-gathers them.
    * ``stage=3``: ``params`` must be the model (a ``torch.nn.Module``). Each module's own
      parameters form one bucket and exist only as blocks between uses: they are gathered just
      before the module's forward and again before its backward, and freed right after each; the
      next module's (in the order of the last forward, or backward) are gathered in the background
      meanwhile (``prefetch``). Gradients are reduce-scattered as in stage 2; ``step`` updates the
      blocks only.

    Parameters
    ----------
    params : torch.nn.Module, iterable of tensors or of parameter-group dicts
        What to optimize (a module stands for its parameters, named by their module path).
    optimizer_class : type
        A subclass of ``torch.optim.Optimizer`` (e.g. ``torch.optim.Adam``), run on the blocks.
    stage : int
        1, 2 or 3.
    comm : MPICommunication, optional
        The processes that share the work (default: heat's default communicator). May be a
        sub-communicator, e.g. the processes of one node (``comm.node_topology().node_comm``):
        the state is then sharded per node.
    average_gradients : bool
        Stage 1 only: average the gradients in ``step`` (keyword only, default True).
    bucket_size_mb : float
        Largest bucket in stages 1 and 2 (keyword only, default 25).
    prefetch : bool
        Stage 3: gather the next module's parameters while the current one computes (keyword
        only, default True; costs the memory of one more module's parameters).
    **optimizer_kwargs
        Passed to ``optimizer_class`` (``lr``, ``betas``, ...).

    Attributes
    ----------
    optimizer : torch.optim.Optimizer
        The inner optimizer, over this process's blocks (one flat tensor per bucket).
    buckets : list of FlatBucket
        The layout: each bucket's parameters, their offsets, the blocks of every process.
    param_groups : list of dict
        The inner optimizer's groups: changing ``lr`` there (as learning-rate schedulers do)
        changes the steps.

    Raises
    ------
    TypeError, ValueError
        On every process, before any other communication: ``stage`` not 1, 2 or 3;
        ``optimizer_class`` not a torch optimizer class or ``optimizer_kwargs`` it rejects;
        stage 3 without a module; parameters that do not require grad; and processes that hold
        different parameters (names, shapes, dtypes) or pass different arguments (the message
        names the first difference and the processes).

    Notes
    -----
    Every process starts from process 0's parameter values. Each parameter's gradient is moved
    into its bucket's flat gradient vector as soon as backward has produced it (stage 1: the
    parameter's ``grad`` becomes a view of the vector; stages 2, 3: it is freed), so the full
    gradients exist once. Parameters without a gradient count as zero gradients. Stages 2 and 3
    need the same backward graph on every process (the reductions start in the order the
    gradients appear) and average the gradients themselves: do not wrap the model in
    :class:`heat.nn.DataParallel` for them (stage 1 with ``average_gradients=False`` composes
    with it, and with :class:`heat.optim.DASO` as its ``local_optimizer`` on the node's
    communicator: the state is then sharded per node, DASO averages across nodes).
    In stage 3 a module's parameters are unusable outside its forward and backward; read them
    inside :meth:`gathered_parameters`; :meth:`release_parameters` hands them back for good.
    :meth:`state_dict` is collective and returns torch's
    format for the full parameters (loadable into ``optimizer_class`` itself);
    :meth:`save_sharded` / :meth:`load_sharded` write and read one file per process.

    Examples
    --------
    >>> model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    >>> optimizer = ht.optim.ZeroRedundancyOptimizer(
    ...     model.parameters(), torch.optim.Adam, stage=2, lr=1e-3
    ... )
    >>> loss = model(torch.randn(4, 8)).pow(2).mean()   # this process's part of the batch
    >>> loss.backward()                                 # gradients reduce-scattered meanwhile
    >>> optimizer.step()                                # Adam on this process's block only
    >>> optimizer.zero_grad()
    >>> sharded = ht.optim.ZeroRedundancyOptimizer(model, torch.optim.Adam, stage=3, lr=1e-3)
    >>> with sharded.gathered_parameters():
    ...     weight = model[0].weight.clone()            # the full parameter, for a moment
    """

    def __init__(
        self,
        params: Any,
        optimizer_class: type,
        stage: int = 1,
        comm: Optional[MPICommunication] = None,
        *,
        average_gradients: bool = True,
        bucket_size_mb: float = 25,
        prefetch: bool = True,
        **optimizer_kwargs: Any,
    ):
        comm = sanitize_comm(comm)
        module = params if isinstance(params, torch.nn.Module) else None

        def check() -> Tuple[List[Dict[str, Any]], Dict[int, str], Optional[List[str]], int]:
            if isinstance(stage, bool) or stage not in (1, 2, 3):
                raise ValueError(f"stage must be 1, 2 or 3, got {stage!r}")
            if not (
                isinstance(optimizer_class, type)
                and issubclass(optimizer_class, torch.optim.Optimizer)
            ):
                raise TypeError(
                    "optimizer_class must be a subclass of torch.optim.Optimizer (e.g. "
                    f"torch.optim.Adam), got {optimizer_class!r}"
                )
            if issubclass(optimizer_class, ZeroRedundancyOptimizer):
                raise TypeError("optimizer_class must not be a ZeroRedundancyOptimizer")
            check_bool(average_gradients, "average_gradients")
            check_bool(prefetch, "prefetch")
            if stage == 3 and module is None:
                raise TypeError(
                    "params must be a torch.nn.Module for stage 3 (its modules' parameters are "
                    f"gathered around their forward and backward), got {type(params).__name__}"
                )
            if stage > 1 and not average_gradients:
                raise ValueError(
                    "average_gradients=False is only possible in stage 1 (stages 2 and 3 average "
                    "in their reduce-scatter)"
                )
            groups, names = _parameter_groups(params)
            capacity = bucket_bytes(bucket_size_mb)
            keys = _per_element_state(optimizer_class, optimizer_kwargs)
            return groups, names, keys, capacity

        def fingerprint(checked):
            groups, names = checked[0], checked[1]
            entries = {
                "stage": repr(stage),
                "optimizer_class": f"{optimizer_class.__module__}.{optimizer_class.__qualname__}",
                "average_gradients": repr(average_gradients),
                "bucket_size_mb": repr(checked[3] / 2**20),
                "prefetch": repr(prefetch),
            }
            for key, value in sorted(optimizer_kwargs.items()):
                entries[f"optimizer argument {key!r}"] = repr(value)
            index = 0
            for g, group in enumerate(groups):
                for key, value in sorted(group.items()):
                    if key != "params":
                        entries[f"group {g} option {key!r}"] = repr(value)
                for p in group["params"]:
                    name = names.get(id(p), f"#{index}")
                    entries[f"parameter {name}"] = (
                        f"{str(p.dtype).replace('torch.', '')} {tuple(p.shape)} in group {g}"
                    )
                    index += 1
            return "ZeroRedundancyOptimizer's parameters and arguments", entries

        groups, names, keys, capacity = verdicts.agree(comm, check, fingerprint=fingerprint)
        defaults = dict(optimizer_kwargs)
        super().__init__([dict(g) for g in groups], defaults)  # torch's hooks and bookkeeping
        self.comm = comm
        self._traffic = comm.Dup() if comm.size > 1 else comm
        self.stage = stage
        self.optimizer_class = optimizer_class
        self.optimizer_kwargs = dict(optimizer_kwargs)
        self.average_gradients = average_gradients
        self.prefetch = prefetch
        self.per_element_state = keys
        self.module = module
        self.buckets = self._make_buckets(groups, names, module, capacity)
        self._pending: List[Tuple[FlatBucket, Any, torch.Tensor, torch.Tensor]] = []
        self._pool = BufferPool()
        self._hooks: List[Any] = []
        self.materialized_bytes = sum(b.nbytes for b in self.buckets)
        self.peak_materialized_bytes = self.materialized_bytes
        self._share_initial_values()
        inner_groups = []
        for g, group in enumerate(groups):
            options = {k: v for k, v in group.items() if k != "params"}
            shards = [b.shard for b in self.buckets if b.group == g]
            inner_groups.append({"params": shards, **options})
        self.optimizer = optimizer_class(inner_groups, **optimizer_kwargs)
        self.param_groups = self.optimizer.param_groups
        self.state = self.optimizer.state
        self._install_gradient_hooks()
        if stage == 3:
            self._forward_order: List[int] = []
            self._recording: List[int] = []
            self._install_module_hooks()
            for bucket in self.buckets:
                self._free(bucket)
            self.peak_materialized_bytes = 0

    # -------------------------------------------------------------------------------------------
    # layout
    # -------------------------------------------------------------------------------------------

    def _make_buckets(
        self,
        groups: List[Dict[str, Any]],
        names: Dict[int, str],
        module: Optional[torch.nn.Module],
        capacity: int,
    ) -> List[FlatBucket]:
        index_of: Dict[int, int] = {}
        group_of: Dict[int, int] = {}
        for g, group in enumerate(groups):
            for p in group["params"]:
                index_of[id(p)] = len(index_of)
                group_of[id(p)] = g
        units: List[List[torch.Tensor]] = []
        if self.stage == 3:
            self._unit_modules: List[torch.nn.Module] = []
            for sub in module.modules():
                own = [p for p in sub.parameters(recurse=False) if id(p) in index_of]
                own = [p for p in own if id(p) not in {id(q) for u in units for q in u}]
                if own:
                    units.append(own)
                    self._unit_modules.append(sub)
        else:
            params = [p for group in groups for p in group["params"]]
            current: List[torch.Tensor] = []
            size = 0
            for p in params:
                nbytes = p.numel() * p.element_size()
                if current and (
                    size + nbytes > capacity
                    or p.dtype != current[0].dtype
                    or p.device != current[0].device
                    or group_of[id(p)] != group_of[id(current[0])]
                ):
                    units.append(current)
                    current, size = [], 0
                current.append(p)
                size += nbytes
            if current:
                units.append(current)
        buckets = []
        for unit in units:
            slots, offset = [], 0
            for p in unit:
                slots.append(
                    ParameterSlot(
                        index_of[id(p)],
                        names.get(id(p), f"#{index_of[id(p)]}"),
                        tuple(p.shape),
                        offset,
                        p.numel(),
                    )
                )
                offset += p.numel()
            kinds = {(p.dtype, p.device, group_of[id(p)]) for p in unit}
            if len(kinds) > 1:
                raise ValueError(
                    "params: the parameters of one module must share dtype, device and parameter "
                    f"group in stage 3, got {sorted(str(k) for k in kinds)}"
                )
            buckets.append(
                FlatBucket(unit, slots, group_of[id(unit[0])], self.comm.rank, self.comm.size)
            )
        return buckets

    def _share_initial_values(self) -> None:
        """Every process takes process 0's values; the parameters become views of the buckets."""
        with torch.no_grad():
            for bucket in self.buckets:
                for p, slot in zip(bucket.parameters, bucket.slots):
                    bucket.flat[slot.offset : slot.offset + slot.numel].copy_(p.reshape(-1))
                if self.comm.size > 1:
                    self._traffic.Bcast(bucket.flat, root=0)
                for p, slot in zip(bucket.parameters, bucket.slots):
                    p.data = bucket.flat[slot.offset : slot.offset + slot.numel].view(slot.shape)
                bucket.shard = torch.nn.Parameter(bucket.flat[bucket.start : bucket.stop].clone())

    # -------------------------------------------------------------------------------------------
    # transport of parameters
    # -------------------------------------------------------------------------------------------

    def _all_gather(self, bucket: FlatBucket, blocking: bool = True) -> Any:
        if self.comm.size == 1:
            bucket.flat.copy_(bucket.shard.detach())
            return None
        layout = (bucket.flat, list(bucket.counts), list(bucket.offsets))
        if blocking:
            self._traffic.Allgatherv(bucket.shard.detach(), layout)
            return None
        return self._traffic.Iallgatherv(bucket.shard.detach(), layout)

    def _start_gather(self, bucket: FlatBucket) -> None:
        """Stage 3: allocate the bucket's full vector and start gathering it (non-blocking)."""
        if bucket.materialized or bucket.pending_gather is not None:
            return
        bucket.flat.untyped_storage().resize_(bucket.nbytes)
        self._count_materialized(bucket.nbytes)
        bucket.pending_gather = self._all_gather(bucket, blocking=False)
        if bucket.pending_gather is None:
            bucket.materialized = True

    def _materialize(self, bucket: FlatBucket) -> None:
        """Stage 3: the bucket's full parameters, now."""
        if bucket.materialized:
            return
        self._start_gather(bucket)
        if bucket.pending_gather is not None:
            verdicts.wait_without_spinning(bucket.pending_gather)
            bucket.pending_gather = None
        bucket.materialized = True

    def _free(self, bucket: FlatBucket) -> None:
        """Stage 3: release the bucket's full vector (its parameters keep shape, lose memory)."""
        if not bucket.materialized or self.stage < 3:
            return
        bucket.flat.untyped_storage().resize_(0)
        bucket.materialized = False
        self.materialized_bytes -= bucket.nbytes

    def _count_materialized(self, nbytes: int) -> None:
        self.materialized_bytes += nbytes
        self.peak_materialized_bytes = max(self.peak_materialized_bytes, self.materialized_bytes)

    # -------------------------------------------------------------------------------------------
    # transport of gradients
    # -------------------------------------------------------------------------------------------

    def _install_gradient_hooks(self) -> None:
        this = weakref.ref(self)
        for bucket in self.buckets:
            for p, slot in zip(bucket.parameters, bucket.slots):

                def ready(p: torch.Tensor, bucket: FlatBucket = bucket, slot=slot) -> None:
                    owner = this()
                    if owner is not None:
                        owner._gradient_arrived(bucket, slot, p)

                self._hooks.append(p.register_post_accumulate_grad_hook(ready))

    def _gradient_arrived(self, bucket: FlatBucket, slot: ParameterSlot, p: torch.Tensor) -> None:
        """
        A parameter's gradient of this backward pass is complete: move it into the bucket's
        gradient vector (so that the full gradients exist once, not twice). Stage 1 keeps the
        vector, the parameter's ``grad`` a view of it; from stage 2 the parameter's ``grad`` is
        freed, and once all of the bucket's gradients are in, the vector is reduce-scattered.
        """
        if bucket.grad_buffer is None:
            bucket.grad_buffer = self._pool.take(bucket.numel, bucket.dtype, bucket.device)
        region = bucket.grad_buffer[slot.offset : slot.offset + slot.numel].view(slot.shape)
        with torch.no_grad():
            if self.stage == 1:
                if p.grad.data_ptr() != region.data_ptr():
                    region.copy_(p.grad)
                    p.grad = region
                return
            region.add_(p.grad)  # a stage-2 parameter's grad is None after each arrival
        p.grad = None
        bucket.arrived += 1
        if bucket.arrived == len(bucket.parameters):
            self._reduce_scatter(bucket)
            self._free(bucket)

    def _reduce_scatter(self, bucket: FlatBucket) -> None:
        """Start the reduce-scatter of the bucket's gradient vector, which it then owns."""
        if bucket.grad_buffer is None:  # no gradient arrived (unused parameters): zeros
            bucket.grad_buffer = self._pool.take(bucket.numel, bucket.dtype, bucket.device)
        grads, bucket.grad_buffer = bucket.grad_buffer, None
        bucket.arrived = 0
        bucket.reductions += 1
        own = self._pool.take(bucket.counts[self.comm.rank], bucket.dtype, bucket.device)
        if self.comm.size == 1:
            own.copy_(grads)
            request = None
        else:
            request = self._traffic.Ireduce_scatter(grads, own, list(bucket.counts), MPI.SUM)
        self._pending.append((bucket, request, own, grads))
        while len(self._pending) > _MAX_PENDING_REDUCTIONS:
            self._complete_oldest()

    def _complete_oldest(self) -> None:
        bucket, request, own, grads = self._pending.pop(0)
        if request is not None:
            verdicts.wait_without_spinning(request)
        self._pool.give(grads)
        own.div_(self.comm.size)
        if bucket.shard_grad is None:
            bucket.shard_grad = own
        else:
            bucket.shard_grad.add_(own)
            self._pool.give(own)

    def _finish_gradients(self) -> None:
        """Every process: the averaged gradient of each of its blocks, as the blocks' ``grad``."""
        if self.stage == 1:
            with torch.no_grad():
                for bucket in self.buckets:
                    self._collect_stage1_gradients(bucket)
                    grads = bucket.grad_buffer
                    if self.average_gradients and self.comm.size > 1:
                        self._traffic.Allreduce(MPI.IN_PLACE, grads, MPI.SUM)
                        grads.div_(self.comm.size)
                    bucket.shard.grad = grads[bucket.start : bucket.stop]
            return
        # buckets whose gradients backward did not complete (unused parameters), in bucket order
        for bucket in self.buckets:
            if bucket.arrived > 0 or bucket.reductions == 0:
                self._reduce_scatter(bucket)
        while self._pending:
            self._complete_oldest()
        for bucket in self.buckets:
            bucket.shard.grad = bucket.shard_grad
            bucket.shard_grad = None
            bucket.reductions = 0
            self._free(bucket)

    def _collect_stage1_gradients(self, bucket: FlatBucket) -> None:
        """
        Stage 1: every parameter's ``grad`` a view of the bucket's gradient vector -- also where
        the hooks did not run or something replaced ``grad`` after them (an averaging wrapper);
        zeros for parameters without a gradient.
        """
        if bucket.grad_buffer is None:
            bucket.grad_buffer = self._pool.take(bucket.numel, bucket.dtype, bucket.device)
        for p, slot in zip(bucket.parameters, bucket.slots):
            region = bucket.grad_buffer[slot.offset : slot.offset + slot.numel].view(slot.shape)
            if p.grad is None:
                region.zero_()
            elif p.grad.data_ptr() != region.data_ptr():
                region.copy_(p.grad)
                p.grad = region

    # -------------------------------------------------------------------------------------------
    # stage 3: gather around each module's forward and backward
    # -------------------------------------------------------------------------------------------

    def _install_module_hooks(self) -> None:
        this = weakref.ref(self)
        for position, sub in enumerate(self._unit_modules):

            def before_forward(module, args, position=position):
                owner = this()
                if owner is not None:
                    owner._before_forward(position)

            def after_forward(module, args, output, position=position):
                owner = this()
                if owner is not None:
                    owner._after_forward(position, output)

            self._hooks.append(sub.register_forward_pre_hook(before_forward))
            self._hooks.append(sub.register_forward_hook(after_forward))

    def _order(self) -> List[int]:
        return self._forward_order or list(range(len(self.buckets)))

    def _neighbour(self, position: int, step: int) -> Optional[FlatBucket]:
        order = self._order()
        if position not in order:
            return None
        at = order.index(position) + step
        return self.buckets[order[at]] if 0 <= at < len(order) else None

    def _before_forward(self, position: int) -> None:
        if self._recording and position == self._recording[0]:
            self._forward_order = list(self._recording)  # a new forward pass begins
            self._recording = []
        if position not in self._recording:
            self._recording.append(position)
            if len(self._recording) > len(self._forward_order):
                self._forward_order = list(self._recording)
        self._materialize(self.buckets[position])
        if self.prefetch:
            following = self._neighbour(position, +1)
            if following is not None:
                self._start_gather(following)

    def _after_forward(self, position: int, output: Any) -> None:
        bucket = self.buckets[position]
        if not torch.is_grad_enabled():
            self._free(bucket)
            return
        tensors = [t for t in _tensors_in(output) if t.requires_grad]
        if not tensors:
            return  # backward may still need the parameters: keep them until the step
        this = weakref.ref(self)

        def before_backward(grad: torch.Tensor) -> None:
            owner = this()
            if owner is not None:
                owner._before_backward(position)

        for t in tensors:
            t.register_hook(before_backward)
        self._free(bucket)

    def _before_backward(self, position: int) -> None:
        bucket = self.buckets[position]
        if bucket.arrived == 0 and not bucket.materialized:
            self._materialize(bucket)
        if self.prefetch:
            previous = self._neighbour(position, -1)
            if previous is not None and previous.arrived == 0:
                self._start_gather(previous)

    @contextlib.contextmanager
    def gathered_parameters(self) -> Iterator[None]:
        """
        Context manager: in stage 3, every parameter whole inside (gathered on entry, changes
        written back to the blocks and freed on exit; collective); nothing to do in stages 1, 2.

        Examples
        --------
        >>> with optimizer.gathered_parameters():
        ...     torch.save(model.state_dict(), "model.pt")
        """
        if self.stage < 3:
            yield
            return
        for bucket in self.buckets:
            self._materialize(bucket)
        try:
            yield
        finally:
            with torch.no_grad():
                for bucket in self.buckets:
                    bucket.shard.copy_(bucket.flat[bucket.start : bucket.stop])
                    self._free(bucket)

    # -------------------------------------------------------------------------------------------
    # the optimizer interface
    # -------------------------------------------------------------------------------------------

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], float]] = None) -> Optional[float]:
        """
        Average the gradients (stage 1) or complete their reduce-scatter (stages 2, 3), update
        this process's blocks with the inner optimizer, and (stages 1, 2) all-gather the updated
        parameters. Collective over ``comm``.
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._finish_gradients()
        if self.stage < 3:
            # the parameters may have changed in place since the last step (DASO's averaging
            # across nodes, a loaded model state): the blocks start from what they hold now
            for bucket in self.buckets:
                bucket.shard.copy_(bucket.flat[bucket.start : bucket.stop])
        self.optimizer.step()
        if self.stage < 3:
            for bucket in self.buckets:
                self._all_gather(bucket)
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        """
        Clear the gradients of the parameters and of this process's blocks. Local, apart from
        completing reduce-scatters that a backward pass without a step started. Stage 1 keeps
        its gradient vector for the next backward pass (overwritten there, not zeroed here).
        """
        while self._pending:
            self._complete_oldest()
        for bucket in self.buckets:
            if self.stage > 1:
                if bucket.grad_buffer is not None:
                    self._pool.give(bucket.grad_buffer)
                bucket.grad_buffer, bucket.arrived, bucket.reductions = None, 0, 0
                if bucket.shard.grad is not None:
                    self._pool.give(bucket.shard.grad)
            for p in bucket.parameters:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        p.grad.detach_().zero_()
            bucket.shard.grad = None
            bucket.shard_grad = None

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        if not hasattr(self, "buckets"):  # torch.optim.Optimizer.__init__ adds the groups
            return super().add_param_group(param_group)
        raise NotImplementedError(
            "ZeroRedundancyOptimizer cannot add parameter groups after construction; pass every "
            "group to the constructor"
        )

    def release_parameters(self) -> None:
        """
        Hand the parameters back as ordinary, whole tensors and stop managing them: the hooks on
        the parameters (and, in stage 3, on the modules) are removed, and in stage 3 every
        parameter is gathered into a tensor of its own (collective over ``comm``). Afterwards the
        model runs on one process without communication; this optimizer must not step again.

        Examples
        --------
        >>> optimizer = ht.optim.ZeroRedundancyOptimizer(model, torch.optim.Adam, stage=3)
        >>> ...                                # training
        >>> optimizer.release_parameters()    # every process: the full, trained model
        >>> torch.save(model.state_dict(), "model.pt")
        """
        while self._pending:
            self._complete_oldest()
        for handle in self._hooks:
            handle.remove()
        self._hooks = []
        if self.stage < 3:
            return
        with torch.no_grad():
            for bucket in self.buckets:
                self._materialize(bucket)
                for p, slot in zip(bucket.parameters, bucket.slots):
                    whole = bucket.flat[slot.offset : slot.offset + slot.numel]
                    p.data = whole.view(slot.shape).clone()
                self._free(bucket)

    def optimizer_state_bytes(self) -> int:
        """Bytes of the tensors in the inner optimizer's state on this process (its blocks)."""
        return sum(
            value.numel() * value.element_size()
            for state in self.optimizer.state.values()
            for value in state.values()
            if torch.is_tensor(value)
        )

    def _is_per_element(self, key: str, value: Any, shape: Tuple[int, ...]) -> bool:
        if not torch.is_tensor(value):
            return False
        if self.per_element_state is not None:
            return key in self.per_element_state
        return tuple(value.shape) == tuple(shape)

    def state_dict(self) -> Dict[str, Any]:
        """
        The state of the whole optimizer in torch's format: ``state`` (per parameter index,
        per-element entries such as Adam's moments shaped like the parameter) and
        ``param_groups``, as ``optimizer_class`` over the full parameters would give it.
        Collective over ``comm`` (the blocks are all-gathered) once the optimizer has state;
        the same on every process.

        Examples
        --------
        >>> full = optimizer.state_dict()          # every process
        >>> torch.optim.Adam(model.parameters()).load_state_dict(full)
        """
        state: Dict[int, Dict[str, Any]] = {}
        # no state before the first step, on every process alike: nothing to gather
        buckets = self.buckets if self.optimizer.state else []
        for bucket in buckets:
            own = self.optimizer.state.get(bucket.shard, {})
            keys = sorted(own)
            if self.comm.size > 1:
                keys = self._traffic.bcast(keys, root=0)
            entries: Dict[int, Dict[str, Any]] = {slot.index: {} for slot in bucket.slots}
            for key in keys:
                value = own[key]
                if self._is_per_element(key, value, tuple(bucket.shard.shape)):
                    whole = torch.empty(bucket.numel, dtype=value.dtype, device=value.device)
                    if self.comm.size > 1:
                        self._traffic.Allgatherv(
                            value.contiguous(),
                            (whole, list(bucket.counts), list(bucket.offsets)),
                        )
                    else:
                        whole.copy_(value)
                    for slot in bucket.slots:
                        piece = whole[slot.offset : slot.offset + slot.numel]
                        entries[slot.index][key] = piece.view(slot.shape).clone()
                else:
                    for slot in bucket.slots:
                        entries[slot.index][key] = (
                            value.clone() if torch.is_tensor(value) else value
                        )
            if keys:
                state.update(entries)
        groups = []
        for g, group in enumerate(self.optimizer.param_groups):
            options = {k: v for k, v in group.items() if k != "params"}
            indices = [s.index for b in self.buckets if b.group == g for s in b.slots]
            groups.append({**options, "params": sorted(indices)})
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """
        Load a state in torch's format for the full parameters (from :meth:`state_dict`, or from
        ``optimizer_class`` over the same parameters); each process keeps its blocks. Local.

        Raises
        ------
        ValueError
            If the parameter groups do not match.
        """
        groups = state_dict["param_groups"]
        if len(groups) != len(self.optimizer.param_groups):
            raise ValueError(
                f"state_dict has {len(groups)} parameter groups, this optimizer "
                f"{len(self.optimizer.param_groups)}"
            )
        full_state = {int(k): v for k, v in state_dict["state"].items()}
        inner_state: Dict[int, Dict[str, Any]] = {}
        inner_groups = []
        position = 0
        for g, group in enumerate(groups):
            options = {k: v for k, v in group.items() if k != "params"}
            indices = []
            for bucket in (b for b in self.buckets if b.group == g):
                indices.append(position)
                entry = self._owned_state(bucket, full_state)
                if entry:
                    inner_state[position] = entry
                position += 1
            inner_groups.append({**options, "params": indices})
        self.optimizer.load_state_dict({"state": inner_state, "param_groups": inner_groups})

    def _owned_state(
        self, bucket: FlatBucket, full_state: Dict[int, Dict[str, Any]]
    ) -> Dict[str, Any]:
        """The inner optimizer's state of this process's block of ``bucket``."""
        present = [s for s in bucket.slots if full_state.get(s.index)]
        if not present:
            return {}
        entry: Dict[str, Any] = {}
        for key, value in full_state[present[0].index].items():
            if self._is_per_element(key, value, present[0].shape):
                values = {}
                for slot in bucket.slots:
                    found = full_state.get(slot.index, {}).get(key)
                    values[slot.index] = (
                        found if found is not None else torch.zeros(slot.shape, dtype=value.dtype)
                    )
                entry[key] = _owned_piece(bucket, values, value.dtype)
            else:
                entry[key] = value.clone() if torch.is_tensor(value) else value
        return entry

    def save_sharded(self, path: str) -> None:
        """Write a sharded checkpoint; see :func:`heat.optim.zero_checkpoint.save_sharded`."""
        from .zero_checkpoint import save_sharded

        save_sharded(self, path)

    def load_sharded(self, path: str) -> None:
        """Read a sharded checkpoint; see :func:`heat.optim.zero_checkpoint.load_sharded`."""
        from .zero_checkpoint import load_sharded

        load_sharded(self, path)

    def __repr__(self) -> str:
        return (
            f"ZeroRedundancyOptimizer(stage={self.stage}, processes={self.comm.size}, "
            f"buckets={len(self.buckets)}, optimizer={self.optimizer_class.__name__})"
        )


def _tensors_in(output: Any) -> Iterable[torch.Tensor]:
    """The tensors of a module's output (a tensor, or nested tuples, lists and dicts of them)."""
    if torch.is_tensor(output):
        yield output
    elif isinstance(output, (list, tuple)):
        for item in output:
            yield from _tensors_in(item)
    elif isinstance(output, dict):
        for item in output.values():
            yield from _tensors_in(item)
