"""
Gradient averaging over a group of processes, bucketed and overlapped with the backward pass.

A :class:`GradientReducer` packs the gradients of a module's parameters into flat buckets (in
reverse registration order, roughly the order in which backward produces them). A hook on every
parameter copies its gradient into its bucket as soon as autograd has accumulated it; a full
bucket starts its collective at once (non-blocking mode), while the rest of the backward pass goes
on. At the end of the backward pass (an autograd callback) the remaining buckets are started, all
are waited for, and the averaged gradients are written back, so after ``loss.backward()`` returns
every process holds the same averaged gradients — as with torch's DistributedDataParallel. In
blocking mode all buckets start only after the backward pass.

Buckets start in bucket order on every process, whatever order the hooks fire in, so the
collectives of different processes always match. A parameter that received no gradient on this
process contributes zeros and gets the average (zeros if no process used it).

The collective itself is a :class:`Reduction` strategy: :class:`FlatAverage` (one all-reduce over
a group, optionally compressed to bfloat16/float16 on the wire) or :class:`HierarchicalAverage`
(node-local all-reduce, sliced cross-node sum, node-local all-gather).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import torch

from ..core.communication.node_groups import (
    CrossNodeSum,
    NodeGroups,
    all_reduce_async,
    ring_allreduce_bytes,
)
from ..core.communication.shared_memory import BackgroundSums, node_shared_sum
from .averaging import FlatLayout, bucket_bounds, pack

__all__ = [
    "Reduction",
    "FlatAverage",
    "SharedMemoryAverage",
    "HierarchicalAverage",
    "GradientReducer",
    "bucket_bytes",
    "node_average",
    "shared_memory_average",
]


def bucket_bytes(bucket_size_mb: Any) -> int:
    """
    The bucket capacity in bytes for a size in MiB, checked (``bucket_size_mb`` must be > 0).

    Examples
    --------
    >>> bucket_bytes(0.5)
    524288
    """
    if isinstance(bucket_size_mb, bool) or not isinstance(bucket_size_mb, (int, float)):
        raise TypeError(f"bucket_size_mb must be a number, got {type(bucket_size_mb).__name__}")
    if not bucket_size_mb > 0:
        raise ValueError(f"bucket_size_mb must be > 0, got {bucket_size_mb}")
    return max(int(bucket_size_mb * 2**20), 1)


class Reduction:
    """
    How one bucket is averaged: ``start`` (non-blocking) then ``finish_all`` (blocking).

    Attributes
    ----------
    bytes_local, bytes_cross_node : int
        Bytes this process sent so far inside its node and across nodes (ring-algorithm model).
    """

    def __init__(self) -> None:
        self.bytes_local = 0
        self.bytes_cross_node = 0

    def start(self, bucket: torch.Tensor) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def finish_all(self, handles: Sequence[Any]) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def bucket(self, numel: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        """A new flat bucket of zeros, where the gradients of a bucket are packed (the
        reduction may hand out memory it reduces in place, e.g. a shared-memory slot)."""
        return torch.zeros(numel, dtype=dtype, device=device)

    def result(self, handle: Any, bucket: torch.Tensor) -> Tuple[torch.Tensor, Optional[float]]:
        """
        After :meth:`finish_all`: ``(values, scale)``, the bucket's average being ``values``
        (times ``scale`` unless it is None); valid until the next round starts. By default the
        bucket itself, averaged in place.
        """
        return bucket, None


class FlatAverage(Reduction):
    """
    The average over one group by a single all-reduce per bucket.

    Parameters
    ----------
    group : torch.distributed.ProcessGroup
    size : int
        Processes in ``group``.
    wire_dtype : torch.dtype, optional
        Compress to this type on the wire (``torch.bfloat16`` or ``torch.float16``); values are
        divided by ``size`` before the cast so the sum cannot overflow, and summed in that type.
    cross_node : bool
        Whether the group spans nodes (for the byte counters).
    """

    def __init__(
        self,
        group: Any,
        size: int,
        wire_dtype: Optional[torch.dtype] = None,
        cross_node: bool = False,
    ):
        super().__init__()
        self.group, self.size, self.wire_dtype, self.cross_node = (
            group,
            size,
            wire_dtype,
            cross_node,
        )

    def start(self, bucket: torch.Tensor) -> Any:
        if self.size == 1:
            return None
        if self.wire_dtype is None or self.wire_dtype == bucket.dtype:
            payload = bucket
        else:
            payload = pack(bucket, self.wire_dtype, scale=1.0 / self.size)
        nbytes = ring_allreduce_bytes(payload.numel() * payload.element_size(), self.size)
        if self.cross_node:
            self.bytes_cross_node += nbytes
        else:
            self.bytes_local += nbytes
        work = all_reduce_async(payload, self.group)
        return work, payload, bucket

    def finish_all(self, handles: Sequence[Any]) -> None:
        for handle in handles:
            if handle is None:
                continue
            work, payload, bucket = handle
            work.wait()
            if payload is bucket:
                bucket.div_(self.size)
            else:
                bucket.copy_(payload)  # already pre-divided


class SharedMemoryAverage(Reduction):
    """
    The average over the processes of one node through a shared-memory segment (CPU tensors,
    :class:`heat.core.communication.shared_memory.NodeSharedSum`). No byte crosses a socket;
    every process gets the same bits.

    The buckets it hands out (:meth:`bucket`) are pieces of this process's slot: gradients are
    packed straight into the memory the node sums, and :meth:`result` points at the node's sum
    (with the factor of the average), so the gradients are copied once in and once out.

    With ``background`` (a :class:`heat.core.communication.shared_memory.BackgroundSums`),
    each bucket is averaged as soon as it starts, during the backward pass, by a thread: its
    range summed over the node (each process its slice), the average copied back into the
    bucket; only what is left when the backward pass ends is waited for. Without it, the node
    sums all buckets at the end.

    Parameters
    ----------
    summers : dict of torch.dtype -> NodeSharedSum
        One segment per dtype of the buckets, each large enough for all buckets of its dtype.
    background : BackgroundSums, optional
        The thread that averages buckets during the backward pass.
    """

    def __init__(self, summers: Dict[torch.dtype, Any], background: Optional[Any] = None):
        super().__init__()
        self.summers = summers
        self.background = background
        self._offsets: Dict[int, int] = {}  # id(bucket) -> offset in its dtype's slot
        self._filled: Dict[torch.dtype, int] = {dtype: 0 for dtype in summers}
        self._in_slot: List[torch.Tensor] = []  # buckets handed out by bucket(), kept alive

    def _assign(self, bucket: torch.Tensor) -> int:
        # buckets are made / start in the same order on every process, so the offsets agree
        if id(bucket) not in self._offsets:
            self._offsets[id(bucket)] = self._filled[bucket.dtype]
            self._filled[bucket.dtype] += bucket.numel()
        return self._offsets[id(bucket)]

    def bucket(self, numel: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        summer = self.summers.get(dtype)
        if summer is None or torch.device(device).type != "cpu":
            return super().bucket(numel, dtype, device)
        piece = summer.slot(self._filled[dtype], numel).zero_()  # the summer holds them all
        self._in_slot.append(piece)
        self._assign(piece)
        return piece

    def place(self, bucket: torch.Tensor) -> Any:
        """Copy ``bucket`` into this process's slot unless it is a piece of it (no
        communication); its handle."""
        offset = self._assign(bucket)
        self.summers[bucket.dtype].put(offset, bucket)
        return offset, bucket

    def start(self, bucket: torch.Tensor) -> Any:
        if self.background is None:
            return self.place(bucket)
        offset, summer = self._assign(bucket), self.summers[bucket.dtype]
        self.background.submit(summer, offset, bucket, 1.0 / summer.comm.size)
        return offset, bucket

    def finish_all(self, handles: Sequence[Any]) -> None:
        if self.background is not None:
            self.background.wait()
            return
        for summer in self.summers.values():
            summer.reduce(self._filled[summer.dtype])

    def result(self, handle: Any, bucket: torch.Tensor) -> Tuple[torch.Tensor, Optional[float]]:
        if self.background is not None:
            return bucket, None  # the thread copied the average back
        summer = self.summers[bucket.dtype]
        return summer.view(handle[0], bucket.numel()), 1.0 / summer.comm.size


def node_average(
    groups: NodeGroups, parameters: Sequence[torch.nn.Parameter], background: bool = False
) -> Reduction:
    """
    The fastest average over a node's processes the node offers for ``parameters``' gradients:
    a shared-memory segment for CPU tensors when the node's processes share memory (and
    ``HEAT_NODE_SHARED_MEMORY`` is not ``0``), else one all-reduce per bucket on the node's
    torch.distributed group (NCCL for CUDA tensors). Collective over the node. With
    ``background``, the shared-memory path averages each bucket in a thread while the backward
    pass goes on (:class:`SharedMemoryAverage`); off by default: on the 2-core test machine it
    measured no faster (benchmarks/README.md, 2026-11-27) and four processes' tests ran slower.

    Examples
    --------
    >>> reduction = node_average(daso.groups, model.parameters())
    """
    shared = shared_memory_average(groups, parameters, background=background)
    if shared is not None:
        return shared
    return FlatAverage(groups.node_group, groups.local_size)


def shared_memory_average(
    groups: NodeGroups, parameters: Sequence[torch.nn.Parameter], background: bool = False
) -> Optional[SharedMemoryAverage]:
    """
    A :class:`SharedMemoryAverage` for the gradients of ``parameters`` over the node, or None
    (on every process of the node) when they are not all CPU floating-point tensors, the node's
    processes cannot share memory or ``HEAT_NODE_SHARED_MEMORY=0``. Collective over the node.
    With ``background``, a thread averages each bucket while the backward pass goes on
    (:class:`SharedMemoryAverage`); without, the caller sums the slots itself (as
    :class:`HierarchicalAverage` does, between its node and cross-node phases).
    """
    parameters = [p for p in parameters if p.requires_grad]
    on_cpu = all(p.device.type == "cpu" and p.is_floating_point() for p in parameters)
    # the same answer on every process of the node (the parameters agree, DataParallel checks)
    if not (on_cpu and parameters and groups.local_size > 1):
        return None
    totals: Dict[torch.dtype, int] = {}
    for p in parameters:
        totals[p.dtype] = totals.get(p.dtype, 0) + p.numel()
    node = groups.topology.node_comm
    summers = {dtype: node_shared_sum(node, total, dtype) for dtype, total in totals.items()}
    if all(summer is not None for summer in summers.values()):
        return SharedMemoryAverage(summers, BackgroundSums(node) if background else None)
    return None


class HierarchicalAverage(Reduction):
    """
    The average over all processes in three steps: all-reduce inside the node (fast links), the
    sliced sum across nodes (each process its slice, on its cross-node groups), all-gather inside
    the node.

    Parameters
    ----------
    groups : NodeGroups
    wire_dtype : torch.dtype, optional
        Type on the wire across nodes (summed in the bucket's precision).
    """

    def __init__(
        self,
        groups: NodeGroups,
        wire_dtype: Optional[torch.dtype] = None,
        shared: Optional[SharedMemoryAverage] = None,
    ):
        super().__init__()
        self.groups = groups
        self.wire_dtype = wire_dtype
        self.shared = shared  # the node phases through shared memory (CPU), else gloo / NCCL
        self._sums = {}  # bucket length -> CrossNodeSum (its chunks depend only on the length)

    def start(self, bucket: torch.Tensor) -> Any:
        size = self.groups.local_size
        if size == 1:
            return None, bucket
        if self._through_shared:
            return self.shared.place(bucket)
        self.bytes_local += ring_allreduce_bytes(bucket.numel() * bucket.element_size(), size)
        return all_reduce_async(bucket, self.groups.node_group), bucket

    @property
    def _through_shared(self) -> bool:
        """Whether the node phases go through the node's shared memory."""
        return self.shared is not None and self.groups.local_size > 1

    def bucket(self, numel: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        if self._through_shared:
            return self.shared.bucket(numel, dtype, device)  # a piece of the node's slot
        return super().bucket(numel, dtype, device)

    def result(self, handle: Any, bucket: torch.Tensor) -> Tuple[torch.Tensor, Optional[float]]:
        if self._through_shared:
            # the node's result area holds the whole average, reassembled by _finish_shared
            return self.shared.summers[bucket.dtype].view(handle[0], bucket.numel()), None
        return bucket, None

    def _cross_node(self, length: int, dtype: torch.dtype) -> CrossNodeSum:
        if length not in self._sums:
            self._sums[length] = CrossNodeSum(
                self.groups, length, chunk_size=length, wire_dtype=self.wire_dtype or dtype
            )
        return self._sums[length]

    def finish_all(self, handles: Sequence[Any]) -> None:
        if self._through_shared:
            self._finish_shared(handles)
            return
        groups = self.groups
        for work, _ in handles:  # node sums
            if work is not None:
                work.wait()
        started = []
        for _, bucket in handles:  # every slice starts before any is waited for
            exchange = self._cross_node(bucket.numel(), bucket.dtype)
            piece = bucket[exchange.start_index : exchange.stop_index]
            pending = exchange.start(piece)
            self.bytes_cross_node += pending.bytes_sent
            started.append((exchange, pending, bucket))
        total = float(groups.comm.size)
        for exchange, pending, bucket in started:
            summed = exchange.finish(pending).div_(total)
            self.bytes_local += groups.node_all_gather(summed, bucket.numel(), bucket)

    def _finish_shared(self, handles: Sequence[Any]) -> None:
        """The node sum and the node's reassembly through shared memory; the cross-node sum of
        each process's slice as without it. Each process reads and writes only its own slice of
        the result area between the two barriers of the node sum and the last one."""
        shared = self.shared
        for summer in shared.summers.values():
            summer.reduce(shared._filled[summer.dtype])
        started = []
        for offset, bucket in handles:  # every slice starts before any is waited for
            summer = shared.summers[bucket.dtype]
            exchange = self._cross_node(bucket.numel(), bucket.dtype)
            piece = summer.view(offset + exchange.start_index, exchange.slice_length)
            pending = exchange.start(piece)  # copies its chunks out at once
            self.bytes_cross_node += pending.bytes_sent
            started.append((exchange, pending, offset, bucket, summer))
        total = float(self.groups.comm.size)
        for exchange, pending, offset, bucket, summer in started:
            summed = exchange.finish(pending).div_(total)
            summer.share(offset + exchange.start_index, summed)
        for summer in shared.summers.values():
            summer.barrier()  # every slice of every bucket is in place: result() reads them


class GradientReducer:
    """
    Averages the gradients of ``parameters`` with ``reduction`` at the end of every backward pass.

    Parameters
    ----------
    parameters : iterable of torch.nn.Parameter
        Those with ``requires_grad`` are averaged.
    reduction : Reduction
    bucket_bytes : int
        Largest bucket in bytes (a larger tensor is a bucket by itself).
    blocking : bool
        Start the collectives after the backward pass instead of during it.

    Attributes
    ----------
    enabled : bool
        False inside :meth:`no_sync`.
    exposed_seconds : float
        Time spent waiting for communication at the end of backward passes (accumulates).
    """

    def __init__(
        self,
        parameters,
        reduction: Reduction,
        bucket_bytes: int = 25 * 2**20,
        blocking: bool = False,
    ):
        self.parameters: List[torch.nn.Parameter] = [p for p in parameters if p.requires_grad]
        self.reduction = reduction
        self.blocking = blocking
        self.enabled = True
        self.exposed_seconds = 0.0
        ordered = list(reversed(self.parameters))  # backward produces late layers first
        self.buckets: List[List[torch.nn.Parameter]] = []
        for kind in self._kinds(ordered):
            members = [p for p in ordered if (p.dtype, p.device) == kind]
            sizes = [p.numel() for p in members]
            capacity = max(bucket_bytes // members[0].element_size(), 1)
            self.buckets.extend(members[a:b] for a, b in bucket_bounds(sizes, capacity))
        self.layouts = [FlatLayout(bucket) for bucket in self.buckets]
        self.flats = [
            reduction.bucket(layout.numel, bucket[0].dtype, bucket[0].device)
            for layout, bucket in zip(self.layouts, self.buckets)
        ]
        self._where = {}
        for b, bucket in enumerate(self.buckets):
            for i, p in enumerate(bucket):
                self._where[id(p)] = (b, i)
        self._hooks = [
            p.register_post_accumulate_grad_hook(self._on_gradient) for p in self.parameters
        ]
        self._reset_round()

    @staticmethod
    def _kinds(parameters) -> List[Any]:
        kinds = []
        for p in parameters:
            if (p.dtype, p.device) not in kinds:
                kinds.append((p.dtype, p.device))
        return kinds

    def _reset_round(self) -> None:
        self._queued = False
        self._ready = [[False] * len(bucket) for bucket in self.buckets]
        self._ready_count = [0] * len(self.buckets)
        self._handles: List[Any] = [None] * len(self.buckets)
        self._next_bucket = 0

    def remove(self) -> None:
        """Remove the hooks (the parameters' gradients are no longer averaged)."""
        for hook in self._hooks:
            hook.remove()
        self._hooks = []

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, backward passes accumulate local gradients without communication."""
        previous, self.enabled = self.enabled, False
        try:
            yield
        finally:
            self.enabled = previous

    # -- during backward -------------------------------------------------------------------------

    def _copy_in(self, b: int, i: int, p: torch.nn.Parameter) -> None:
        layout = self.layouts[b]
        target = self.flats[b][layout.offsets[i] : layout.offsets[i + 1]]
        if p.grad is None:
            target.zero_()
        else:
            target.copy_(p.grad.reshape(-1))

    def _on_gradient(self, p: torch.nn.Parameter) -> None:
        if not self.enabled:
            return
        if not self._queued:
            self._queued = True
            torch.autograd.Variable._execution_engine.queue_callback(self._finish)
        if self.blocking:
            return
        b, i = self._where[id(p)]
        if self._ready[b][i]:
            raise RuntimeError(
                "a parameter received two gradients in one backward pass of a data-parallel module "
                "(call backward once per step, or accumulate inside no_sync())"
            )
        self._copy_in(b, i, p)
        self._ready[b][i] = True
        self._ready_count[b] += 1
        # start full buckets in bucket order only, so all processes issue the same sequence
        while self._next_bucket < len(self.buckets) and self._ready_count[self._next_bucket] == len(
            self.buckets[self._next_bucket]
        ):
            self._launch(self._next_bucket)

    def _launch(self, b: int) -> None:
        self._handles[b] = self.reduction.start(self.flats[b])
        self._next_bucket = b + 1

    @torch.no_grad()
    def _finish(self) -> None:
        """End of the backward pass: start what is left, wait, write the averages back."""
        try:
            for b in range(self._next_bucket, len(self.buckets)):
                for i, p in enumerate(self.buckets[b]):
                    if not self._ready[b][i]:
                        self._copy_in(b, i, p)
                self._launch(b)
            began = time.perf_counter()
            self.reduction.finish_all(self._handles)
            self.exposed_seconds += time.perf_counter() - began
            for bucket, layout, flat, handle in zip(
                self.buckets, self.layouts, self.flats, self._handles
            ):
                values, scale = self.reduction.result(handle, flat)
                for i, p in enumerate(bucket):
                    average = values[layout.offsets[i] : layout.offsets[i + 1]].view(p.shape)
                    if p.grad is None:
                        p.grad = average.clone() if scale is None else average * scale
                    elif scale is None:
                        p.grad.copy_(average)
                    else:
                        torch.mul(average, scale, out=p.grad)
        finally:
            self._reset_round()

    @torch.no_grad()
    def synchronize(self) -> None:
        """Average the current gradients now (blocking), outside a backward pass."""
        self._reset_round()
        self._finish()
