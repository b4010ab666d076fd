#!/usr/bin/env python3
"""
An alpha-beta model of data-parallel training per batch: flat all-reduce, hierarchical
all-reduce, torch DDP and DASO (issue 10), calibrated and checked on the emulated cluster, and
projected to 8-1024 nodes of 4 GPUs. docs/scaling.md derives every formula and shows the results.

The model (pure Python, importable without torch or MPI):

* a link is ``alpha`` (seconds per message) and ``beta`` (seconds per byte); a machine has
  ``nodes`` nodes of ``per_node`` processes, a cross-node link per node and a node-local link, and
  per-byte costs of the elementwise passes the algorithms make over their buffers (``gamma_copy``,
  ``gamma_add``, ``gamma_cast``: copies, reductions, casts to bfloat16); its node's processes
  share memory (heat on CPUs: node phases through a shared-memory segment, ``barrier`` and
  ``gamma_sum``) or not (gloo fallback, NCCL on GPUs: through the node-local link);
* :func:`ring_allreduce`, :func:`ring_allgather`: the ring algorithms on one link;
  :func:`shared_node_sum`, :func:`shared_node_gather`: the node's sum and reassembly through
  shared memory;
* :func:`flat_allreduce`, :func:`hierarchical_allreduce`, :func:`daso_exchange`: what heat sends;
* :func:`flat_blocking_batch`, :func:`ddp_batch`, :func:`hierarchical_blocking_batch`,
  :func:`node_average_batch`, :func:`daso_batch`: time per batch, given the compute time per
  batch.

Usage::

    # as root, on the emulated cluster (7-8 minutes): calibration, daso.py --runs 1,
    # calibration again; writes every measurement to the JSON file
    python benchmarks/scaling_model.py --calibrate calibration.json
    # the model against daso.py's measurements of that run
    python benchmarks/scaling_model.py --check calibration.json
    # the projection to 8-1024 nodes: Markdown table, and the plot
    python benchmarks/scaling_model.py --plot docs/scaling.png
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
MIB = 2**20
BUCKET_BYTES = 25 * MIB  # heat's and torch DDP's default bucket size


# ------------------------------------------------------------------------------------------------
# the model
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """A link: ``alpha`` seconds per message, ``beta`` seconds per byte (1 / bandwidth)."""

    alpha: float
    beta: float

    def __post_init__(self):
        if self.alpha < 0 or self.beta < 0:
            raise ValueError(f"alpha and beta must be >= 0, got {self.alpha} and {self.beta}")

    def time(self, nbytes: float, messages: int = 1) -> float:
        """``messages * alpha + nbytes * beta``."""
        return messages * self.alpha + nbytes * self.beta


@dataclass(frozen=True)
class Machine:
    """
    ``nodes`` nodes of ``per_node`` processes; each node's traffic to other nodes shares one
    ``cross`` link per direction, processes of a node talk over ``local``. ``gamma_*`` are seconds
    per byte of a float32 buffer for a copy, an addition into it (reduction; a division costs
    the same), a cast to a 2-byte type, an addition of a 2-byte (bfloat16) operand into it, and
    a freshly allocated buffer's first touch (page faults; zero on a GPU's caching allocator).

    ``shared_memory``: the node's processes average and reassemble through a shared-memory
    segment (what heat does for CPU tensors, the default); False: through ``local`` (gloo over
    loopback TCP with ``HEAT_NODE_SHARED_MEMORY=0``, NCCL on GPU nodes). The shared-memory path
    costs ``barrier`` seconds per node barrier (None: ``local.alpha``) and ``gamma_sum`` seconds
    per byte for adding a slot's slice into the node's sum (None: ``gamma_add``).
    """

    nodes: int
    per_node: int
    cross: Link
    local: Link
    gamma_copy: float = 0.0
    gamma_add: float = 0.0
    gamma_cast: float = 0.0
    gamma_add_wire: float = 0.0
    gamma_alloc: float = 0.0
    shared_memory: bool = True
    barrier: float | None = None
    gamma_sum: float | None = None

    def __post_init__(self):
        for name in ("nodes", "per_node"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not isinstance(self.shared_memory, bool):
            raise TypeError(f"shared_memory must be a bool, got {self.shared_memory!r}")
        for name in ("barrier", "gamma_sum"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise ValueError(f"{name} must be None or >= 0, got {value!r}")

    @property
    def processes(self) -> int:
        return self.nodes * self.per_node

    @property
    def node_barrier(self) -> float:
        """Seconds per barrier of the node's processes (shared-memory path)."""
        return self.local.alpha if self.barrier is None else self.barrier

    @property
    def gamma_slice_sum(self) -> float:
        """Seconds per byte for adding one slot's slice into the node's shared-memory sum."""
        return self.gamma_add if self.gamma_sum is None else self.gamma_sum

    @property
    def node_shares_memory(self) -> bool:
        """Whether the node phases go through shared memory: ``shared_memory`` and ``G > 1``."""
        return self.shared_memory and self.per_node > 1


def ring_allreduce(nbytes: float, procs: int, link: Link, gamma_add: float = 0.0) -> float:
    """
    Ring all-reduce of ``nbytes`` on ``procs`` processes whose slowest ring edge is ``link``.

    Reduce-scatter then all-gather, ``procs - 1`` steps each; every step sends a
    ``nbytes / procs`` block on every edge at once, and each reduce-scatter step adds the received
    block into the local one::

        T = 2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma_add

    Examples
    --------
    >>> ring_allreduce(100.0, 4, Link(alpha=1.0, beta=0.5))  # 6 alpha + 1.5 * 100 * 0.5
    81.0
    """
    if procs <= 1:
        return 0.0
    p = procs
    return (
        2 * (p - 1) * link.alpha
        + (2 * (p - 1) / p) * nbytes * link.beta
        + ((p - 1) / p) * nbytes * gamma_add
    )


def ring_allgather(nbytes: float, procs: int, link: Link) -> float:
    """
    Ring all-gather of a vector of ``nbytes`` of which each of ``procs`` processes holds
    ``nbytes / procs``: ``(p-1) alpha + (p-1)/p n beta``.
    """
    if procs <= 1:
        return 0.0
    return (procs - 1) * link.alpha + (procs - 1) / procs * nbytes * link.beta


def shared_node_sum(nbytes: float, machine: Machine) -> float:
    """
    One round of heat's node sum through shared memory (``NodeSharedSum.reduce``) of ``nbytes``
    that every process of the node has in its slot: a node barrier (every slot is filled), each
    of the ``G`` processes adds its slice ``n/G`` of the ``G`` slots into the node's result area
    (``G - 1`` additions, the first one written into the result area, all processes at once), a
    node barrier (the whole sum is there)::

        T = 2 b + (G-1)/G n gamma_s

    with ``b`` = :attr:`Machine.node_barrier`, ``gamma_s`` = :attr:`Machine.gamma_slice_sum`;
    zero for ``G = 1``. Filling the slot and taking the sum out are the callers'.

    Examples
    --------
    >>> m = Machine(1, 4, Link(0.0, 0.0), Link(0.0, 0.0), barrier=1.0, gamma_sum=0.5)
    >>> shared_node_sum(100.0, m)  # 2 * 1 + 3/4 * 100 * 0.5
    39.5
    """
    G = machine.per_node
    if G <= 1:
        return 0.0
    return 2 * machine.node_barrier + (G - 1) / G * nbytes * machine.gamma_slice_sum


def shared_node_gather(nbytes: float, machine: Machine) -> float:
    """
    The node's reassembly of a vector of ``nbytes`` from its processes' slices through shared
    memory, as DASO writes its parameters back (``DASO._write_back``): a node barrier (nobody
    reads the previous vector any more), each process writes its slice ``n/G`` into the result
    area, a node barrier, each process copies the whole vector out (into its parameters)::

        T = 2 b + (n/G + n) gamma_copy

    zero for ``G = 1`` (the one process copies its slice, the vector, into its parameters:
    ``n gamma_copy``; counted by the caller).

    Examples
    --------
    >>> m = Machine(1, 4, Link(0.0, 0.0), Link(0.0, 0.0), barrier=1.0, gamma_copy=0.5)
    >>> shared_node_gather(100.0, m)  # 2 * 1 + (25 + 100) * 0.5
    64.5
    """
    G = machine.per_node
    if G <= 1:
        return 0.0
    return 2 * machine.node_barrier + (nbytes / G + nbytes) * machine.gamma_copy


def flat_allreduce(nbytes: float, machine: Machine) -> float:
    """
    One ring all-reduce over all processes, ordered node by node: a node's processes are
    consecutive on the ring, so exactly one ring edge leaves each node and the cross-node link
    carries one edge's traffic; every step waits for the slowest edge (the cross-node one when
    there are several nodes).
    """
    link = machine.cross if machine.nodes > 1 else machine.local
    return ring_allreduce(nbytes, machine.processes, link, machine.gamma_add)


def cross_node_slices(
    nbytes: float, machine: Machine, algorithm: str = "allreduce", wire_fraction: float = 1.0
) -> float:
    """
    Every process of a node reduces its ``1/G`` slice of ``nbytes`` with its peers on the other
    nodes, all ``G`` slices at once, so the node's cross-node link carries the ``G`` slices'
    traffic together. Per process the slice is ``s = nbytes / G`` (on the wire ``wire_fraction *
    s``: 0.5 for bfloat16 instead of float32).

    * ``"allreduce"``: a ring all-reduce over the ``P`` nodes:
      ``2 (P-1) alpha + G * 2 (P-1)/P * w s beta``;
    * ``"allgather"`` (DASO's exchange on two nodes): every process sends its slice to each other
      node: ``(P-1) alpha + G * (P-1) * w s beta``;
    * ``"reduce_scatter"`` (DASO's exchange on three or more): all-to-all of the parts, then
      all-gather of the sums: ``2 (P-1) alpha + G * 2 (P-1)/P * w s beta``.

    The additions of the received values are counted by the callers (they differ).
    """
    P, G = machine.nodes, machine.per_node
    if P <= 1:
        return 0.0
    wire = wire_fraction * nbytes / G
    link = machine.cross
    if algorithm == "allreduce" or algorithm == "reduce_scatter":
        return 2 * (P - 1) * link.alpha + G * (2 * (P - 1) / P) * wire * link.beta
    if algorithm == "allgather":
        return (P - 1) * link.alpha + G * (P - 1) * wire * link.beta
    raise ValueError(f"algorithm must be allreduce, allgather or reduce_scatter, got {algorithm!r}")


def pipelined(count: int, before: float, wire: float, after: float) -> float:
    """
    ``count`` collectives started one after another and then finished one after another, as
    heat's hierarchical average and DASO's chunks do: the CPU prepares collective ``i``
    (``before``) while collective ``i - 1`` is on the wire; the wire serves them in order
    (``wire`` each); the CPU finishes collective ``i`` (``after``) when it has arrived, while
    later ones are still on the wire. Walking the two queues gives the time; when the wire is
    the bottleneck (``wire >= before`` and ``wire >= after``) it is
    ``before + count * wire + after``, and ``count = 1`` gives ``before + wire + after``.

    Examples
    --------
    >>> pipelined(4, before=1.0, wire=10.0, after=2.0)  # 1 + 4 * 10 + 2
    43.0
    """
    cpu, link, arrivals = 0.0, 0.0, []
    for _ in range(count):
        cpu += before
        link = max(link, cpu) + wire
        arrivals.append(link)
    for arrived in arrivals:
        cpu = max(cpu, arrived) + after
    return cpu


def hierarchical_allreduce(
    nbytes: float, machine: Machine, local: str = "allreduce", count: int = 1
) -> float:
    """
    heat's hierarchical all-reduce (``ht.nn.DataParallel(hierarchical=True)``) of ``count``
    buckets of ``nbytes / count`` each, slice ``s`` = bucket / ``G``.

    Through the node's ``local`` transport (``machine.shared_memory`` False or ``G = 1``):

    1. node-local all-reduce (``local="allreduce"``, what heat does) or reduce-scatter
       (``"reduce_scatter"``, NCCL-style) over the ``G`` processes of the node, every bucket;
    2. each process's slice all-reduced over the nodes (:func:`cross_node_slices`, plus the
       ring's additions); before it the slice is cloned (allocate and copy ``s``), after it the
       result is copied into a new buffer (allocate and copy ``s``) and divided (``s``);
    3. node-local all-gather of the slices (:func:`ring_allgather`) into ``G`` fresh buffers plus a
       padded copy of the slice (``G + 1`` allocations of ``s``, a copy of ``s``), then the
       gathered bucket copied into place.

    Through shared memory (``machine.shared_memory``, ``G > 1``; ``local`` does not apply;
    ``HierarchicalAverage._finish_shared``), the buckets being pieces of the process's slot:

    1. one node sum of all buckets (:func:`shared_node_sum` of ``nbytes``);
    2. as above, the slice read from the node's sum, its result divided and written into the
       result area (copy ``s``);
    3. one node barrier after the last bucket; the gradients are then copied out of the result
       area (the caller's bookkeeping).

    Steps 2-3 of all buckets run as :func:`pipelined`: every cross-node exchange is started, then
    each is finished (with its node-local all-gather) while later ones are still on the wire.
    """
    G, P = machine.per_node, machine.nodes
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    if local not in ("allreduce", "reduce_scatter"):
        raise ValueError(f"local must be 'allreduce' or 'reduce_scatter', got {local!r}")
    b = nbytes / count
    s = b / G
    gc, ga, gn = machine.gamma_copy, machine.gamma_add, machine.gamma_alloc
    before = wire = 0.0
    if P > 1:
        before = s * (gn + gc)
        wire = cross_node_slices(b, machine, "allreduce") + (P - 1) / P * s * ga
    if machine.node_shares_memory:
        after = s * (gn + gc + ga) + s * gc  # the slice's sum divided, written into the result
        return (
            shared_node_sum(nbytes, machine)
            + pipelined(count, before, wire, after)
            + machine.node_barrier
        )
    if local == "allreduce":
        t = ring_allreduce(b, G, machine.local, ga)
    else:
        t = 0.0
        if G > 1:
            t = (G - 1) * machine.local.alpha + (G - 1) / G * b * (machine.local.beta + ga)
    t *= count
    after = s * (gn + gc + ga) if P > 1 else 0.0
    if G > 1:
        after += ring_allgather(b, G, machine.local) + (G + 1) * s * gn + s * gc + b * gc
    return t + pipelined(count, before, wire, after)


def buckets(nbytes: float, bucket_bytes: float = BUCKET_BYTES) -> list[float]:
    """Sizes of the gradient buckets (equal-sized, each at most ``bucket_bytes``)."""
    if nbytes <= 0:
        return []
    count = max(math.ceil(nbytes / bucket_bytes), 1)
    return [nbytes / count] * count


def overlap_exposed(bucket_times: Sequence[float], window: float) -> float:
    """
    Communication exposed after a backward pass of ``window`` seconds during which
    ``len(bucket_times)`` buckets become ready at equal intervals (bucket ``k`` at
    ``(k+1)/K * window``) and are reduced one after the other::

        start_k = max(ready_k, end_{k-1}),  end_k = start_k + c_k,  exposed = max(0, end_K - window)

    Examples
    --------
    >>> overlap_exposed([3.0, 3.0], window=4.0)  # ready at 2 and 4, ends at 5 and 8
    4.0
    """
    end = 0.0
    K = len(bucket_times)
    for k, c in enumerate(bucket_times):
        ready = (k + 1) / K * window
        end = max(ready, end) + c
    return max(0.0, end - window) if K else 0.0


def _gradient_bookkeeping(nbytes: float, machine: Machine, shared: bool = False) -> float:
    """
    Copy the gradients into the buckets, divide by the process count, copy them back; with
    ``shared`` (the node's shared-memory sum) the buckets are pieces of the process's slot and
    the gradients are written from the node's sum times the factor of the average in one pass:
    two copies, no division.
    """
    if shared:
        return 2 * nbytes * machine.gamma_copy
    return nbytes * (2 * machine.gamma_copy + machine.gamma_add)


def flat_blocking_batch(nbytes: float, machine: Machine, compute: float) -> float:
    """Horovod-style: compute, then all buckets all-reduced over all processes."""
    if machine.processes == 1:
        return compute
    comm = sum(flat_allreduce(b, machine) for b in buckets(nbytes))
    return compute + comm + _gradient_bookkeeping(nbytes, machine)


def ddp_batch(
    nbytes: float, machine: Machine, compute: float, backward_fraction: float = 2 / 3
) -> float:
    """torch DDP / heat's non-blocking DataParallel: the flat all-reduce of each bucket overlapped
    with the rest of the backward pass (:func:`overlap_exposed`)."""
    if machine.processes == 1:
        return compute
    times = [flat_allreduce(b, machine) for b in buckets(nbytes)]
    exposed = overlap_exposed(times, backward_fraction * compute)
    return compute + exposed + _gradient_bookkeeping(nbytes, machine)


def hierarchical_blocking_batch(
    nbytes: float, machine: Machine, compute: float, local: str = "allreduce"
) -> float:
    """``ht.nn.DataParallel(hierarchical=True, blocking_parameter_updates=True)``."""
    if machine.processes == 1:
        return compute
    comm = hierarchical_allreduce(nbytes, machine, local, count=len(buckets(nbytes)))
    return compute + comm + _gradient_bookkeeping(nbytes, machine, machine.node_shares_memory)


def node_average_batch(
    nbytes: float,
    machine: Machine,
    compute: float,
    backward_fraction: float = 2 / 3,
    overlap: bool = True,
) -> float:
    """
    A batch of training whose gradients are averaged over the node's ``G`` processes only (the
    every-batch part of DASO and ``DataParallelMultiGPU``): compute, the exposed node average,
    the bookkeeping. ``overlap=False`` counts the node average in full after the backward pass
    (a CPU-bound transport on oversubscribed cores cannot hide behind compute that needs the
    same cores); with ``overlap`` the buckets are averaged as they become ready
    (:func:`overlap_exposed`, backward pass ``backward_fraction * compute``).

    * Through the ``local`` link (gloo, NCCL; ``machine.shared_memory`` False): a node-local
      all-reduce per bucket (:func:`flat_allreduce` on one node), the buckets' bookkeeping
      ``n (2 gamma_copy + gamma_add)``.
    * Through shared memory: the backward hooks copy the gradients into the process's slot
      (``n gamma_copy``), one node sum of all of them after the backward pass
      (:func:`shared_node_sum`), the gradients written from the sum times ``1/G`` in one pass
      (``n gamma_copy``). With ``overlap`` each bucket is summed by a background thread as it
      becomes ready, which also writes the bucket's average back into the bucket (per bucket
      :func:`shared_node_sum` of it plus ``b gamma_copy``).

    Examples
    --------
    >>> m = Machine(1, 2, Link(0.0, 0.0), Link(0.0, 0.0), barrier=1.0, gamma_copy=0.01)
    >>> node_average_batch(100.0, m, compute=10.0, overlap=False)  # 10 + 2 * 1 + 2 * 100 * 0.01
    14.0
    """
    if machine.per_node == 1:
        return compute
    window = backward_fraction * compute if overlap else 0.0
    shared = machine.node_shares_memory
    if shared and not overlap:
        exposed = shared_node_sum(nbytes, machine)
    elif shared:
        times = [shared_node_sum(b, machine) + b * machine.gamma_copy for b in buckets(nbytes)]
        exposed = overlap_exposed(times, window)
    else:
        local_machine = replace(machine, nodes=1)
        times = [flat_allreduce(b, local_machine) for b in buckets(nbytes)]
        exposed = overlap_exposed(times, window)
    return compute + exposed + _gradient_bookkeeping(nbytes, machine, shared)


@dataclass(frozen=True)
class DasoCosts:
    """The parts of one DASO global synchronization of a float32 parameter vector."""

    send: float  # before the exchange starts: gather the slice, subtract the reference, cast
    wire: float  # the cross-node exchange of the slices in the wire type (may run in background)
    receive: float  # after it: sum, update the reference, blend, node all-gather, write back


def daso_exchange(
    nbytes: float, machine: Machine, wire_bytes: int = 2, chunk_elements: int | None = None
) -> DasoCosts:
    """
    DASO's global synchronization of a parameter vector of ``nbytes`` (float32), sliced: each of
    a node's ``G`` processes exchanges its slice ``s = nbytes / G`` with its peers on the other
    ``P - 1`` nodes in ``wire_bytes``-byte values (bfloat16: 2), then the node reassembles the
    vector (heat/optim/daso.py, heat/core/communication/node_groups.py). With ``w = wire_bytes / 4``:

    * send: the slice gathered into a kept buffer (copy ``s``), minus the reference (add
      ``s``), cast into a fresh buffer (cast ``s``, alloc ``w s``), receive buffers (alloc ``P w
      s`` on two nodes, ``w s`` on more);
    * wire: all-gather on two nodes, reduce-scatter + all-gather on more
      (:func:`cross_node_slices` with ``wire_fraction = w``); a slice longer than
      ``chunk_elements`` (DASO's ``sending_chunk_size``) travels as several collectives, each
      paying the latency terms again;
    * receive: the sum in float32 into a kept buffer (two nodes: the first piece widened (cast
      ``s``) and ``P - 1`` added (add-wire ``s`` each); more: ``P`` parts of ``s / P`` added in a
      fresh buffer and the sums placed (alloc, add-wire and copy ``s``)), the reference updated
      (add ``s``), the slice gathered again into the kept buffer (copy ``s``), the blend (one
      in-place pass, add ``s``); then the node reassembles the vector from the slices into the
      parameters: through shared memory (``machine.shared_memory``, :func:`shared_node_gather`),
      or by a node all-gather of the slices into kept buffers (:func:`ring_allgather` of
      ``nbytes``) and the write into the parameters (copy ``nbytes``).
    """
    P, G = machine.nodes, machine.per_node
    if P <= 1:
        return DasoCosts(0.0, 0.0, 0.0)
    s = nbytes / G
    w = wire_bytes / 4
    gc, ga, gx = machine.gamma_copy, machine.gamma_add, machine.gamma_cast
    gw, gn = machine.gamma_add_wire, machine.gamma_alloc
    algorithm = "allgather" if P <= 2 else "reduce_scatter"
    receive_buffers = P * w * s if P <= 2 else w * s
    send = s * (gc + ga + gx + w * gn) + receive_buffers * gn
    wire = cross_node_slices(nbytes, machine, algorithm, wire_fraction=w)
    if chunk_elements is not None:
        chunks = max(math.ceil(s / 4 / chunk_elements), 1)
        wire += (chunks - 1) * cross_node_slices(0.0, machine, algorithm)
    if P <= 2:
        summed = s * (gx + (P - 1) * gw)
    else:
        summed = s * (gn + gw + gc)
    bookkeeping = s * (ga + gc + ga)  # reference update, slice gathered, blend
    if machine.node_shares_memory:
        reassembly = shared_node_gather(nbytes, machine)
    else:
        reassembly = ring_allgather(nbytes, G, machine.local) + nbytes * gc
    return DasoCosts(send, wire, summed + bookkeeping + reassembly)


def daso_epoch(
    costs: DasoCosts,
    batch: float,
    global_skip: int,
    batches_to_wait: int,
    batches_per_epoch: int,
) -> float:
    """
    Seconds for one cycling epoch of DASO, batch by batch as heat/optim/schedule.py decides:
    after batch ``b`` a synchronization starts if ``b % B == 0`` (never after the last batch);
    it is received after batch ``min(b + S, last)``, waiting then for whatever of its wire time
    the batches in between did not hide; the last batch of the epoch synchronizes blocking.
    ``batch`` is a batch's time without the global synchronization (compute and the exposed
    node-local gradient averaging).
    """
    if global_skip < 1 or batches_to_wait < 0 or batches_per_epoch < 1:
        raise ValueError("need global_skip >= 1, batches_to_wait >= 0, batches_per_epoch >= 1")
    last = batches_per_epoch - 1
    t = 0.0
    in_flight = None  # (wire done at, receive after batch)
    for b in range(batches_per_epoch):
        t += batch
        if in_flight is not None and (b >= in_flight[1] or b == last or b % global_skip == 0):
            t = max(t, in_flight[0]) + costs.receive
            in_flight = None
        if b == last:
            t += costs.send + costs.wire + costs.receive
        elif b % global_skip == 0:
            t += costs.send
            in_flight = (t + costs.wire, min(b + batches_to_wait, last))
    return t


def daso_batch(
    nbytes: float,
    machine: Machine,
    compute: float,
    global_skip: int = 8,
    batches_to_wait: int = 2,
    batches_per_epoch: int | None = None,
    backward_fraction: float = 2 / 3,
    wire_bytes: int = 2,
    chunk_elements: int | None = 10_000_000,
    overlap_local: bool = True,
) -> float:
    """
    DASO per batch: compute, the node-local gradient average (:func:`node_average_batch`:
    overlapped with the backward pass, or, ``overlap_local=False``, after it), and a share of
    the global synchronizations (:func:`daso_epoch`). With ``batches_per_epoch=None`` the steady state of
    an endless epoch::

        T = T_local + (send + receive + max(0, wire - S T_local)) / B
    """
    local = node_average_batch(nbytes, machine, compute, backward_fraction, overlap_local)
    costs = daso_exchange(nbytes, machine, wire_bytes, chunk_elements)
    if batches_per_epoch is None:
        hidden = max(batches_to_wait, 1) * local  # heat receives at the next batch at the earliest
        return local + (costs.send + costs.receive + max(0.0, costs.wire - hidden)) / global_skip
    return daso_epoch(costs, local, global_skip, batches_to_wait, batches_per_epoch) / (
        batches_per_epoch
    )


# ------------------------------------------------------------------------------------------------
# calibration on the emulated cluster (root)
# ------------------------------------------------------------------------------------------------


def _elementwise_gammas(n_bucket: int, timed, rank: int):
    """Seconds per float32 byte of the elementwise passes: all ranks at once, and rank 0 alone."""
    import torch

    src = torch.rand(n_bucket)
    dst = torch.rand(n_bucket)
    packed = src.to(torch.bfloat16)
    passes = {
        "copy": lambda: dst.copy_(src),
        "add": lambda: dst.add_(src),
        "div": lambda: dst.div_(1.0001),
        "cast": lambda: src.to(torch.bfloat16),
        "add_bf16": lambda: dst.add_(packed),
        "alloc": lambda: torch.zeros(n_bucket),  # a fresh buffer: page faults + first touch
    }
    concurrent = {}
    for name, fn in passes.items():
        fn()
        concurrent[name] = timed(fn, 7) / (4 * n_bucket)
    alone = {}
    for name in ("copy", "add", "cast"):
        fn = passes[name]

        def only_rank_0(fn=fn):
            return fn() if rank == 0 else None

        alone[name] = timed(only_rank_0, 7) / (4 * n_bucket)
    return concurrent, alone


def _timer(comm):
    """``timed(fn, reps)``: the median over ``reps`` of the slowest rank's time of ``fn()``,
    with a barrier of ``comm`` before each (collective over ``comm``)."""

    def timed(fn, reps: int) -> float:
        times = []
        for _ in range(reps):
            comm.Barrier()
            began = time.perf_counter()
            fn()
            times.append(max(comm.allgather(time.perf_counter() - began)))
        return statistics.median(times)

    return timed


def _shared_memory_timings(node, bucket_list, timed, barriers: int = 20):
    """
    The node phases through shared memory as heat runs them, every node at once (collective
    over the world of ``timed``; ``node`` is this process's node communicator): the node sum of
    the buckets (``bucket_list``, float32) in one round, the buckets being pieces of the
    process's slot (``SharedMemoryAverage``, ``NodeSharedSum.reduce``); the node barrier
    (``NodeSharedSum.barrier``, ``barriers`` in a row); the reassembly of the buckets' vector
    from the node's slices (DASO's write-back: barrier, share this process's slice, barrier,
    copy the whole vector out). A dict of seconds (slowest rank, median of repetitions), or
    None when the node's processes cannot share memory.
    """
    import torch

    from heat.core.communication.node_groups import slice_bounds
    from heat.core.communication.shared_memory import node_shared_sum

    total = sum(b.numel() for b in bucket_list)
    summer = node_shared_sum(node, total, torch.float32) if node.size > 1 else None
    if summer is None:
        return None
    offset = 0
    for bucket in bucket_list:  # the gradients in their buckets, which are slot pieces
        summer.slot(offset, bucket.numel()).copy_(bucket)
        offset += bucket.numel()
    start, stop = slice_bounds(total, node.size, node.rank)
    my_slice = torch.rand(stop - start)
    vector = torch.empty(total)

    def node_sum():
        summer.reduce(total)

    def barrier_row():
        for _ in range(barriers):
            summer.barrier()

    def reassembly():
        summer.barrier()
        summer.share(start, my_slice)
        summer.barrier()
        vector.copy_(summer.view(0, total))

    out = {}
    for name, fn in (("node_shared_sum", node_sum), ("node_shared_gather", reassembly)):
        fn()  # warm-up: the segment's pages
        out[name] = timed(fn, 5)
    out["node_barrier"] = timed(barrier_row, 5) / barriers
    out["shared_sum_bytes"] = 4 * total
    return out


def _calibration_worker(args: argparse.Namespace) -> None:
    """One rank of the calibration job: ping-pongs, elementwise passes, the collectives."""
    import torch
    import torch.distributed as dist

    from heat.core.communication import MPI_WORLD
    from heat.core.communication.node_groups import CrossNodeSum, NodeGroups

    torch.set_num_threads(1)
    comm = MPI_WORLD
    rank = comm.rank
    groups = NodeGroups(comm)
    G, P = groups.local_size, groups.num_nodes
    world = groups.world_group
    out: dict[str, object] = {"nodes": P, "per_node": G, "load_start": os.getloadavg()[0]}

    timed = _timer(comm)

    # -- ping-pong: one-way time of a message between two ranks, others idle ------------------
    def pingpong(pairs, elements: int, rounds: int, reps: int) -> float:
        """Pairs ``(a, b)`` ping-pong at the same time; every other rank idles."""
        buffer = torch.zeros(max(elements, 1), dtype=torch.float32)

        def run():
            for a, b in pairs:
                for _ in range(rounds):
                    if rank == a:
                        dist.send(buffer, dst=b, group=world)
                        dist.recv(buffer, src=b, group=world)
                    elif rank == b:
                        dist.recv(buffer, src=a, group=world)
                        dist.send(buffer, dst=a, group=world)

        return timed(run, reps) / (2 * rounds)

    sizes = [1, 256, 16384, 262144, 2 * MIB, 8 * MIB]  # float32 elements: 4 B .. 32 MB
    # node-local pairs of every node at once, as the training variants use them
    every_node = [(k * G, k * G + 1) for k in range(P)] if G > 1 else []
    for name, pairs in (("cross", [(0, G)]), ("local", [(0, 1)]), ("local_concurrent", every_node)):
        rows = []
        for elements in sizes:
            rounds = 20 if elements <= 16384 else 1
            reps = 5 if elements <= 262144 else 3
            rows.append([4 * elements, pingpong(pairs, elements, rounds, reps)])
        out[f"pingpong_{name}"] = rows

    # -- elementwise passes over a 25 MB float32 bucket, all ranks at once (as in training) ----
    n_bucket = args.bucket_elements
    out["gamma_concurrent"], out["gamma_alone"] = _elementwise_gammas(n_bucket, timed, rank)

    # -- the collectives the training variants use, all ranks at once -------------------------
    n_total = args.params
    count = max(math.ceil(n_total / n_bucket), 1)
    bucket_list = [torch.rand(n_total // count) for _ in range(count)]

    def flat():
        works = [dist.all_reduce(b, group=world, async_op=True) for b in bucket_list]
        for w in works:
            w.wait()

    def node():
        works = [dist.all_reduce(b, group=groups.node_group, async_op=True) for b in bucket_list]
        for w in works:
            w.wait()

    slice_sums = [
        CrossNodeSum(groups, b.numel(), b.numel(), torch.float32) for b in bucket_list[:1]
    ]

    def cross_fp32():
        exchange = slice_sums[0]
        pending = [
            exchange.start(b[exchange.start_index : exchange.stop_index]) for b in bucket_list
        ]
        for p in pending:
            exchange.finish(p)

    flat_vector = torch.rand(n_total)
    daso_sum = CrossNodeSum(groups, n_total, 10_000_000, torch.bfloat16)
    my_slice = flat_vector[daso_sum.start_index : daso_sum.stop_index].clone()

    def cross_bf16():
        daso_sum.finish(daso_sum.start(my_slice))

    full = torch.empty(n_total)

    def node_gather():
        groups.node_all_gather(my_slice, n_total, full)

    for name, fn, reps in (
        ("flat_allreduce", flat, 3),
        ("node_allreduce", node, 3),
        ("cross_slices_fp32", cross_fp32, 3),
        ("daso_exchange_bf16", cross_bf16, 3),
        ("node_allgather", node_gather, 3),
    ):
        fn()  # warm-up: connections, buffers
        out[name] = timed(fn, reps)
    # the node phases through shared memory (heat's path on CPU); the gloo figures above are
    # its fallback (HEAT_NODE_SHARED_MEMORY=0)
    shared = _shared_memory_timings(groups.topology.node_comm, bucket_list, timed)
    out["shared_memory"] = shared is not None
    out.update(shared or {})
    out["bucket_bytes"] = 4 * (n_total // count)
    out["buckets"] = count
    out["param_bytes"] = 4 * n_total
    out["load_end"] = os.getloadavg()[0]
    if rank == 0:
        print("CALIBRATION " + json.dumps(out), flush=True)


def _run_calibration_job(params: int, bucket_elements: int, timeout: float) -> dict:
    sys.path.insert(0, str(HERE))
    from emulated_cluster import EmulatedCluster

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env.pop("HEAT_RANKS_PER_NODE", None)
    command = [sys.executable, str(Path(__file__).resolve()), "--calibration-worker"]
    command += ["--params", str(params), "--bucket-elements", str(bucket_elements)]
    with EmulatedCluster(nodes=2, rate="1gbit") as cluster:
        before = cluster.link_counters()
        result = cluster.run(command, procs_per_node=2, env=env, timeout=timeout)
        after = cluster.link_counters()
    if result.returncode != 0 or result.timed_out:
        raise RuntimeError(
            f"calibration job failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    line = next(x for x in result.stdout.splitlines() if x.startswith("CALIBRATION "))
    data = json.loads(line[len("CALIBRATION ") :])
    data["link_tx_bytes"] = {n: after[n]["tx_bytes"] - before[n]["tx_bytes"] for n in after}
    data["wall_s"] = result.wall_s
    return data


def calibrate(path: str, daso_runs: int, timeout: float) -> int:
    """Calibration job, ``daso.py --runs daso_runs``, calibration job again; all into ``path``."""
    sys.path.insert(0, str(HERE))
    from emulated_cluster import unsupported_reason

    reason = unsupported_reason()
    if reason is not None:
        print(f"scaling_model.py: cannot emulate the cluster here: {reason}", file=sys.stderr)
        return 2
    params = 4 * (2500 * 2500 + 2500)  # daso.py's default MLP
    bucket_elements = BUCKET_BYTES // 4
    record: dict[str, object] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    print(f"load average {os.getloadavg()}", flush=True)
    record["before"] = _run_calibration_job(params, bucket_elements, timeout)
    print(json.dumps(record["before"], indent=1), flush=True)
    daso_json = str(Path(path).with_suffix(".daso.json"))
    began = time.time()
    subprocess.run(
        [sys.executable, str(HERE / "daso.py"), "--runs", str(daso_runs), "--json", daso_json],
        check=True,
    )
    record["daso_wall_s"] = time.time() - began
    record["daso"] = json.loads(Path(daso_json).read_text())
    record["after"] = _run_calibration_job(params, bucket_elements, timeout)
    print(json.dumps(record["after"], indent=1), flush=True)
    record["load_end"] = os.getloadavg()
    Path(path).write_text(json.dumps(record, indent=1))
    print(f"wrote {path}", flush=True)
    return 0


# ------------------------------------------------------------------------------------------------
# model vs measured
# ------------------------------------------------------------------------------------------------


def _fit_link(rows: Sequence[Sequence[float]]) -> Link:
    """alpha: one-way time of the smallest message; beta: slope between the two largest."""
    rows = sorted(rows)
    (n1, t1), (n2, t2) = rows[-2], rows[-1]
    return Link(alpha=rows[0][1], beta=max((t2 - t1) / (n2 - n1), 0.0))


def _node_local_link(calibration: dict) -> Link:
    """
    alpha: one-way time of the smallest message between two processes of a node (both nodes'
    pairs at once where measured); beta: from the node-local all-reduce of the buckets, run on
    both nodes at once as in training, solved for beta with the ring formula (the additions at
    ``gamma_add``).
    """
    rows = sorted(calibration.get("pingpong_local_concurrent", calibration["pingpong_local"]))
    alpha = rows[0][1]
    G, K, b = calibration["per_node"], calibration["buckets"], calibration["bucket_bytes"]
    per_bucket = calibration["node_allreduce"] / K
    rest = (
        per_bucket - 2 * (G - 1) * alpha - (G - 1) / G * b * calibration["gamma_concurrent"]["add"]
    )
    return Link(alpha=alpha, beta=max(rest, 0.0) / (2 * (G - 1) / G * b))


def _shared_sum_gamma(calibration: dict) -> float:
    """
    The effective ``gamma_sum`` of the node sum through shared memory: its measured time less
    its two node barriers, per byte the :func:`shared_node_sum` formula adds,
    ``(G-1)/G n``.
    """
    G, n = calibration["per_node"], calibration["shared_sum_bytes"]
    rest = calibration["node_shared_sum"] - 2 * calibration["node_barrier"]
    return max(rest, 0.0) / ((G - 1) / G * n)


def calibrated_machine(calibrations: Sequence[dict]) -> Machine:
    """
    The emulated cluster's machine from calibration jobs (medians over the jobs): the
    cross-node link from the ping-pong between nodes (alpha: smallest message, beta: slope
    between the two largest), the node-local transport from :func:`_node_local_link`, the
    ``gamma`` from the elementwise passes timed on all processes at once; the node shares
    memory when every job could time the shared-memory node sum (older calibration files did
    not: their DASO runs used gloo), its barrier as timed, ``gamma_sum`` from
    :func:`_shared_sum_gamma`.
    """

    def med(values):
        return statistics.median(values)

    cross = [_fit_link(c["pingpong_cross"]) for c in calibrations]
    local = [_node_local_link(c) for c in calibrations]
    gamma = [c["gamma_concurrent"] for c in calibrations]
    shared = all(c.get("shared_memory") and "node_shared_sum" in c for c in calibrations)
    return Machine(
        nodes=calibrations[0]["nodes"],
        per_node=calibrations[0]["per_node"],
        cross=Link(med([l.alpha for l in cross]), med([l.beta for l in cross])),
        local=Link(med([l.alpha for l in local]), med([l.beta for l in local])),
        gamma_copy=med([g["copy"] for g in gamma]),
        gamma_add=med([g["add"] for g in gamma]),
        gamma_cast=med([g["cast"] for g in gamma]),
        gamma_add_wire=med([g["add_bf16"] for g in gamma]),
        gamma_alloc=med([g["alloc"] for g in gamma if "alloc" in g] or [0.0]),
        shared_memory=shared,
        barrier=med([c["node_barrier"] for c in calibrations]) if shared else None,
        gamma_sum=med([_shared_sum_gamma(c) for c in calibrations]) if shared else None,
    )


def collective_checks(machine: Machine, calibration: dict) -> list[tuple]:
    """(name, measured s, model s) for the collectives timed by the calibration job."""
    m = calibration["param_bytes"]
    b = calibration["bucket_bytes"]
    K = calibration["buckets"]
    G, P = machine.per_node, machine.nodes
    gc, ga, gx = machine.gamma_copy, machine.gamma_add, machine.gamma_cast
    gw, gn = machine.gamma_add_wire, machine.gamma_alloc
    local = replace(machine, nodes=1)
    s_b = b / G
    # CrossNodeSum.start/finish in float32, every bucket started, then every one finished:
    # clone the slice, all-reduce, copy into a new buffer
    cross_wire = cross_node_slices(b, machine, "allreduce") + (P - 1) / P * s_b * ga
    cross_buckets = pipelined(K, s_b * (gn + gc), cross_wire, s_b * (gn + gc))
    # CrossNodeSum.start/finish in bfloat16 on two nodes: cast, all-gather, sum in float32
    s = m / G
    wire = daso_exchange(m, machine, 2, 10_000_000).wire
    exchange = s * (0.5 * gn + gx) + P * 0.5 * s * gn + wire + s * (gn + gx + (P - 1) * gw)
    # NodeGroups.node_all_gather: padded copy, G receive buffers, all-gather, copy out
    gather = s * (2 * gn + gc) + G * s * gn + ring_allgather(m, G, machine.local) + m * gc
    rows = [
        ("flat all-reduce, 4 buckets", calibration["flat_allreduce"], K * flat_allreduce(b, machine)),
        ("node all-reduce, 4 buckets", calibration["node_allreduce"], K * flat_allreduce(b, local)),
        ("cross-node slices fp32, 4 buckets", calibration["cross_slices_fp32"], cross_buckets),
        ("DASO exchange bf16 (cast, wire, sum)", calibration["daso_exchange_bf16"], exchange),
        ("node all-gather of the slices", calibration["node_allgather"], gather),
    ]  # fmt: skip
    if machine.node_shares_memory and "node_shared_sum" in calibration:
        n_sum = calibration["shared_sum_bytes"]
        rows += [
            ("node sum, shared memory, 4 buckets", calibration["node_shared_sum"],
             shared_node_sum(n_sum, machine)),
            ("node reassembly, shared memory", calibration["node_shared_gather"],
             shared_node_gather(n_sum, machine)),
        ]  # fmt: skip
    return rows


def training_checks(machine: Machine, daso_results: Sequence[dict]) -> list[tuple]:
    """(variant, measured s/batch, model s/batch) for daso.py's variants (medians over runs)."""
    by_variant: dict[str, list[dict]] = {}
    for r in daso_results:
        by_variant.setdefault(r["variant"], []).append(r)

    def measured(variant):
        rows = by_variant.get(variant)
        return statistics.median(r["batch_s"] for r in rows) if rows else None

    compute = measured("compute only")
    first = daso_results[0]
    nbytes = 4 * first["params"]
    batches = first["batches"]
    out = [("compute only", compute, compute)]
    models = {
        "flat blocking": flat_blocking_batch(nbytes, machine, compute),
        "torch DDP": ddp_batch(nbytes, machine, compute),
        "hierarchical blocking": hierarchical_blocking_batch(nbytes, machine, compute),
        "heat DASO": daso_batch(
            nbytes, machine, compute, 8, 2, batches_per_epoch=batches, overlap_local=False
        ),
        "heat DASO cool-down": daso_batch(
            nbytes, machine, compute, 1, 0, batches_per_epoch=1, overlap_local=False
        ),
    }
    for variant, model in models.items():
        value = measured(variant)
        if value is not None:
            out.append((variant, value, model))
    return out


def _ratio_table(rows: Sequence[tuple], unit: str = "ms") -> str:
    lines = [
        f"| case | measured ({unit}) | model ({unit}) | model / measured | within 20% |",
        "| --- | ---: | ---: | ---: | :---: |",
    ]
    for name, measured, model in rows:
        ratio = model / measured if measured else float("nan")
        ok = "yes" if abs(ratio - 1) <= 0.2 else "**no**"
        lines.append(f"| {name} | {measured * 1e3:.0f} | {model * 1e3:.0f} | {ratio:.2f} | {ok} |")
    return "\n".join(lines)


def check(path: str) -> int:
    record = json.loads(Path(path).read_text())
    calibrations = [record[k] for k in ("before", "after") if k in record]
    machine = calibrated_machine(calibrations)
    print(f"calibration {record.get('date', '?')}: 2 nodes x 2 processes, 1 Gbit/s (tbf)")
    for label, c in zip(("before", "after"), calibrations):
        print(f"  {label}: load average {c['load_start']:.1f} -> {c['load_end']:.1f}")
    print(
        f"  cross-node: alpha {machine.cross.alpha * 1e6:.0f} us, "
        f"beta {machine.cross.beta * 1e9:.3f} ns/B ({1e-6 / machine.cross.beta:.0f} MB/s)\n"
        f"  node-local (gloo, the fallback): alpha {machine.local.alpha * 1e6:.0f} us, "
        f"beta {machine.local.beta * 1e9:.3f} ns/B ({1e-6 / machine.local.beta:.0f} MB/s)\n"
        f"  gamma (4 ranks at once): copy {machine.gamma_copy * 1e9:.3f}, add "
        f"{machine.gamma_add * 1e9:.3f}, cast {machine.gamma_cast * 1e9:.3f} ns/B"
    )
    if machine.shared_memory:
        print(
            f"  node-local through shared memory (the model's transport): barrier "
            f"{machine.node_barrier * 1e6:.0f} us, slice sum {machine.gamma_slice_sum * 1e9:.3f} "
            f"ns/B per slot"
        )
    else:
        print("  node-local through gloo (no shared-memory timing in this calibration)")
    for label, c in zip(("before", "after"), calibrations):
        print(f"\ncollectives, model vs measured ({label} daso.py):")
        print(_ratio_table(collective_checks(machine, c)))
    if "daso" in record:
        print("\ntime per batch, model vs measured (daso.py, same run):")
        print(_ratio_table(training_checks(machine, record["daso"]["results"])))
    return 0


# ------------------------------------------------------------------------------------------------
# projection: 8-1024 nodes of 4 A100 GPUs, 200 Gbit/s per node
# ------------------------------------------------------------------------------------------------

#: A100 HBM2 bandwidth (A100 40GB datasheet: 1,555 GB/s); a copy moves 2 bytes per byte, an
#: addition 3, a cast of float32 to bfloat16 1.5.
HBM_BYTES_PER_S = 1555e9
PROJECTION_MACHINE = Machine(
    nodes=8,
    per_node=4,
    cross=Link(alpha=5e-6, beta=1 / 25e9),  # 200 Gbit/s = 25 GB/s per direction, one per node
    local=Link(alpha=2e-6, beta=1 / 100e9),  # NVLink3, 4 links per GPU pair: 100 GB/s
    gamma_copy=2 / HBM_BYTES_PER_S,
    gamma_add=3 / HBM_BYTES_PER_S,
    gamma_cast=1.5 / HBM_BYTES_PER_S,
    gamma_add_wire=2.5 / HBM_BYTES_PER_S,
    gamma_alloc=0.0,  # torch's caching allocator reuses GPU memory
    shared_memory=False,  # GPU tensors: the node's phases run on NCCL over NVLink
)
IMAGENET_TRAIN_IMAGES = 1_281_167


@dataclass(frozen=True)
class Workload:
    """A model to project: its parameters, compute per batch and GPU, batches per epoch."""

    name: str
    params: int
    compute: float  # seconds per batch on one GPU
    samples_per_gpu: int
    epoch_samples: int | None  # None: no epoch end within the horizon (steady state)

    def batches_per_epoch(self, gpus: int) -> int | None:
        if self.epoch_samples is None:
            return None
        return max(self.epoch_samples // (self.samples_per_gpu * gpus), 1)


WORKLOADS = [
    # ResNet-50 v1.5: 25,557,032 parameters; NVIDIA DeepLearningExamples (PyTorch, DGX A100
    # 80GB, 1 GPU, mixed precision): 2,470 images/s, taken to hold at 64 images per GPU.
    Workload("ResNet-50 (25.6M)", 25_557_032, 64 / 2470, 64, IMAGENET_TRAIN_IMAGES),
    # 1B-parameter transformer: 6 N D FLOPs per batch (Kaplan et al. 2020) for D = 8 x 2048
    # tokens per GPU, at 40% of the A100's 312 TFLOP/s bf16 peak.
    Workload("1B parameters", 1_000_000_000, 6 * 1e9 * 8 * 2048 / (0.4 * 312e12), 8, None),
]
NODE_COUNTS = [8, 16, 32, 64, 128, 256, 512, 1024]
VARIANTS = {
    "flat blocking": lambda n, m, c, e: flat_blocking_batch(n, m, c),
    "torch DDP (overlap)": lambda n, m, c, e: ddp_batch(n, m, c),
    "hierarchical blocking": lambda n, m, c, e: hierarchical_blocking_batch(n, m, c),
    "DASO B=8 S=2": lambda n, m, c, e: daso_batch(n, m, c, 8, 2, batches_per_epoch=e),
    "DASO B=2 S=1": lambda n, m, c, e: daso_batch(n, m, c, 2, 1, batches_per_epoch=e),
}


def projection(machine: Machine = PROJECTION_MACHINE) -> list[dict]:
    """Time per batch and parallel efficiency (compute / time) of every workload and variant."""
    rows = []
    for workload in WORKLOADS:
        nbytes = 4 * workload.params  # float32 gradients and parameters
        for nodes in NODE_COUNTS:
            m = replace(machine, nodes=nodes)
            epoch = workload.batches_per_epoch(m.processes)
            row = {"workload": workload.name, "nodes": nodes, "gpus": m.processes,
                   "compute": workload.compute, "batches_per_epoch": epoch}  # fmt: skip
            for name, fn in VARIANTS.items():
                t = fn(nbytes, m, workload.compute, epoch)
                row[name] = t
                row[name + " efficiency"] = workload.compute / t
            rows.append(row)
    return rows


def projection_table(rows: Sequence[dict]) -> str:
    names = list(VARIANTS)
    lines = []
    for workload in WORKLOADS:
        mine = [r for r in rows if r["workload"] == workload.name]
        lines.append(
            f"**{workload.name}**: compute {workload.compute * 1e3:.1f} ms per batch, "
            f"{4 * workload.params / 1e6:,.0f} MB of float32 gradients\n"
        )
        lines.append("| nodes | GPUs | batches/epoch | " + " | ".join(names) + " |")
        lines.append("| ---: | ---: | ---: | " + " | ".join("---:" for _ in names) + " |")
        for r in mine:
            cells = [f"{r[n] * 1e3:.1f} ms ({r[n + ' efficiency']:.0%})" for n in names]
            epoch = r["batches_per_epoch"] if r["batches_per_epoch"] is not None else "-"
            lines.append(f"| {r['nodes']} | {r['gpus']} | {epoch} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def plot(rows: Sequence[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(WORKLOADS), figsize=(11, 7.5), sharex=True)
    for column, workload in enumerate(WORKLOADS):
        mine = [r for r in rows if r["workload"] == workload.name]
        nodes = [r["nodes"] for r in mine]
        for name in VARIANTS:
            axes[0, column].plot(nodes, [r[name] * 1e3 for r in mine], marker="o", label=name)
            axes[1, column].plot(
                nodes, [100 * r[name + " efficiency"] for r in mine], marker="o", label=name
            )
        axes[0, column].axhline(workload.compute * 1e3, color="gray", ls=":", label="compute")
        axes[0, column].set_title(f"{workload.name}, compute {workload.compute * 1e3:.1f} ms/batch")
        axes[0, column].set_yscale("log")
        axes[0, column].set_ylabel("time per batch (ms)")
        axes[1, column].set_ylabel("parallel efficiency (%)")
        axes[1, column].set_ylim(0, 105)
        axes[1, column].set_xscale("log", base=2)
        axes[1, column].set_xlabel("nodes (4 GPUs each, 200 Gbit/s per node)")
        axes[1, column].set_xticks(NODE_COUNTS, [str(n) for n in NODE_COUNTS])
        for ax in axes[:, column]:
            ax.grid(True, which="both", alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("heat data-parallel training, alpha-beta model (benchmarks/scaling_model.py)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--calibrate", metavar="JSON", help="measure on the emulated cluster (root)"
    )
    parser.add_argument("--daso-runs", type=int, default=1, help="daso.py runs in --calibrate")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per calibration job")
    parser.add_argument("--check", metavar="JSON", help="model vs measured for a --calibrate file")
    parser.add_argument("--plot", metavar="PNG", help="plot the projection")
    parser.add_argument("--calibration-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--params", type=int, default=25_010_000, help=argparse.SUPPRESS)
    parser.add_argument(
        "--bucket-elements", type=int, default=BUCKET_BYTES // 4, help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.calibration_worker:
        _calibration_worker(args)
        return 0
    if args.calibrate:
        return calibrate(args.calibrate, args.daso_runs, args.timeout)
    if args.check:
        return check(args.check)
    rows = projection()
    print(projection_table(rows))
    if args.plot:
        plot(rows, args.plot)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
