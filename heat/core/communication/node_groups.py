"""
Who talks to whom in data-parallel training: the node-local group, the cross-node groups of the
"sliced" synchronization, and the ``torch.distributed`` collectives on them that heat.optim and
heat.nn use (they import neither torch.distributed nor mpi4py themselves).

Groups come from the node topology (``comm.node_topology()``) and :func:`torch_process_group`,
so CPU runs use gloo and GPU runs NCCL with the same code, and the user never calls
``init_process_group``.

Sliced cross-node synchronization
---------------------------------
A node of ``G`` processes cuts a flat vector of ``n`` elements into ``G`` consecutive slices
(``slice_bounds``); local rank ``j`` reduces slice ``j`` across the nodes, concurrently with its
node mates, and the node then reassembles the vector with a node-local all-gather. When nodes have
different sizes their slices do not line up; the vector is then cut at every node's slice
boundaries (all lie on a grid of ``lcm(sizes)`` cells, see :func:`cross_node_segments`) and each
segment is reduced by the group made of its owner on every node. A process whose slice spans
several segments belongs to several groups (e.g. nodes of 2 and 1 processes: the single process
reduces its first half with local rank 0 of the other node and its second half with local rank 1),
and every element is still reduced by exactly one process per node.

Progress
--------
Every collective runs on the backend's own threads (gloo) or streams (NCCL), so a synchronization
started now advances while the next batches compute, without help from Python. Plain MPI
non-blocking collectives would not (MPI progresses only inside MPI calls; measured in the project's
notes on multi-node emulation), which is why the transport is torch.distributed. The one chain
that needs Python — the second phase of a reduced-precision sum over three or more nodes, see
:class:`CrossNodeSum` — is started by a non-blocking completion check that DASO makes every batch,
and at the latest when the result is needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from mpi4py import MPI

from .communicator import MPICommunication
from .torch_groups import torch_process_group

__all__ = [
    "Segment",
    "cross_node_segments",
    "disjoint_rounds",
    "ring_allreduce_bytes",
    "slice_bounds",
    "chunk_bounds",
    "sum_packed",
    "NodeGroups",
    "CrossNodeSum",
    "all_reduce",
    "all_reduce_async",
    "broadcast_tensors",
    "broadcast_training_state",
]


# ------------------------------------------------------------------------------------------------
# slices and chunks of flat vectors (pure)
# ------------------------------------------------------------------------------------------------
def slice_bounds(length: int, parts: int, index: int) -> Tuple[int, int]:
    """
    ``[start, stop)`` of part ``index`` when ``length`` elements are cut into ``parts`` nearly
    equal consecutive parts (``start = index * length // parts``).

    Examples
    --------
    >>> [slice_bounds(10, 3, i) for i in range(3)]
    [(0, 3), (3, 6), (6, 10)]
    """
    return index * length // parts, (index + 1) * length // parts


def chunk_bounds(start: int, stop: int, chunk: int) -> List[Tuple[int, int]]:
    """
    ``[start, stop)`` cut into pieces of at most ``chunk`` elements.

    Examples
    --------
    >>> chunk_bounds(0, 10, 4)
    [(0, 4), (4, 8), (8, 10)]
    """
    return [(lo, min(lo + chunk, stop)) for lo in range(start, stop, chunk)]


def sum_packed(pieces: Sequence[torch.Tensor], out: torch.Tensor) -> torch.Tensor:
    """
    The sum of ``pieces`` (any wire type) in ``out``'s precision (float32 or wider), added in the
    order given -- the same order on every process, so every process gets the same bits.

    Examples
    --------
    >>> pieces = [torch.tensor([256.0]).bfloat16(), torch.tensor([1.0]).bfloat16()]
    >>> sum_packed(pieces, torch.empty(1))  # bfloat16 arithmetic would give 256
    tensor([257.])
    """
    if not pieces:
        return out.zero_()
    out.copy_(pieces[0])
    for piece in pieces[1:]:
        out.add_(piece)  # a bf16 operand is widened to out's type before adding
    return out


# ------------------------------------------------------------------------------------------------
# torch.distributed collectives for heat.optim and heat.nn
# ------------------------------------------------------------------------------------------------
def all_reduce_async(tensor: torch.Tensor, group: Any) -> Any:
    """
    Start summing ``tensor`` in place over ``group`` (a torch.distributed group from
    :func:`torch_process_group`); returns the work handle (``.wait()``, ``.is_completed()``).

    Examples
    --------
    >>> work = all_reduce_async(bucket, MPI_WORLD.torch_process_group())
    >>> work.wait()   # bucket holds the sum over the processes
    """
    import torch.distributed as dist

    return dist.all_reduce(tensor, group=group, async_op=True)


def all_reduce(tensor: torch.Tensor, group: Any) -> torch.Tensor:
    """Sum ``tensor`` in place over ``group``; blocking. Returns ``tensor``."""
    all_reduce_async(tensor, group).wait()
    return tensor


@torch.no_grad()
def broadcast_tensors(tensors: Sequence[torch.Tensor], comm: MPICommunication, group: Any) -> None:
    """
    Overwrite ``tensors`` on every process of ``comm`` with rank 0's, in place (all broadcasts
    in flight together; collective on ``comm``, whose torch.distributed group is ``group``).

    Examples
    --------
    >>> broadcast_tensors(list(model.buffers()), MPI_WORLD, MPI_WORLD.torch_process_group())
    """
    if comm.size == 1 or not tensors:
        return
    import torch.distributed as dist

    root = comm.world_ranks()[0]  # torch addresses the source by its world rank
    works = [dist.broadcast(t.data, src=root, group=group, async_op=True) for t in tensors]
    for work in works:
        work.wait()


# ------------------------------------------------------------------------------------------------
# pure planning
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """Elements ``[start, stop)`` reduced by local rank ``owners[k]`` of every node ``k``."""

    start: int
    stop: int
    owners: Tuple[int, ...]


def cross_node_segments(length: int, node_sizes: Sequence[int]) -> List[Segment]:
    """
    Cut a flat vector of ``length`` elements at the slice boundaries of every node.

    Node ``k`` of ``G_k`` processes gives local rank ``j`` the slice
    ``slice_bounds(length, G_k, j)``. All these boundaries lie on the grid of ``L = lcm(G_k)``
    cells ``[c * length // L, (c + 1) * length // L)``, and cell ``c`` belongs to local rank
    ``c * G_k // L`` of node ``k``; consecutive cells with the same owners form one segment.

    Parameters
    ----------
    length : int
    node_sizes : sequence of int
        Processes per node, in node order.

    Returns
    -------
    list of Segment
        Non-empty segments, in order, covering ``[0, length)``.

    Examples
    --------
    >>> [(s.start, s.stop, s.owners) for s in cross_node_segments(10, [2, 1])]
    [(0, 5, (0, 0)), (5, 10, (1, 0))]
    >>> [s.owners for s in cross_node_segments(12, [2, 3])]
    [(0, 0), (0, 1), (1, 1), (1, 2)]
    """
    cells = math.lcm(*node_sizes) if node_sizes else 1
    segments: List[Segment] = []
    for cell in range(cells):
        start, stop = slice_bounds(length, cells, cell)
        if start == stop:
            continue
        owners = tuple(cell * size // cells for size in node_sizes)
        if segments and segments[-1].owners == owners:
            segments[-1] = Segment(segments[-1].start, stop, owners)
        else:
            segments.append(Segment(start, stop, owners))
    return segments


def disjoint_rounds(groups: Sequence[Tuple[int, ...]]) -> List[List[Tuple[int, ...]]]:
    """
    Pack groups of ranks into rounds of pairwise disjoint groups (first fit, in order).

    Examples
    --------
    >>> disjoint_rounds([(0, 2), (1, 2), (1, 3)])
    [[(0, 2), (1, 3)], [(1, 2)]]
    """
    rounds: List[List[Tuple[int, ...]]] = []
    for group in groups:
        for existing in rounds:
            if all(not set(group) & set(other) for other in existing):
                existing.append(group)
                break
        else:
            rounds.append([group])
    return rounds


def ring_allreduce_bytes(nbytes: int, processes: int) -> int:
    """Bytes each process sends in a ring all-reduce of ``nbytes``: ``2 (k-1)/k * nbytes``."""
    return 0 if processes <= 1 else 2 * (processes - 1) * nbytes // processes


def _start(collective, *args, **kwargs):
    """A non-blocking torch.distributed collective (its work handle)."""
    return collective(*args, async_op=True, **kwargs)


# ------------------------------------------------------------------------------------------------
# groups
# ------------------------------------------------------------------------------------------------


class NodeGroups:
    """
    The torch.distributed groups of hierarchical data-parallel training over ``comm``.

    Collective over ``MPI.COMM_WORLD`` (torch creates every group on every process): every
    process passes its own ``comm`` at the same time, and these communicators partition the world
    (all processes on everybody, or the pieces of one ``Split``, e.g. the replicas of each stage of
    a hybrid pipeline: each piece gets groups of its own). Nodes are the communication layer's
    (shared memory, or ``HEAT_RANKS_PER_NODE`` consecutive world ranks to emulate them); their
    sizes may differ.

    Attributes
    ----------
    comm : MPICommunication
    topology : NodeTopology
    node_sizes : list of int
        Processes per node, in node order.
    world_group : torch.distributed.ProcessGroup
        All processes of ``comm``.
    node_group : torch.distributed.ProcessGroup or None
        This node's processes (None on a node of one process).
    """

    def __init__(self, comm: MPICommunication):
        self.comm = comm
        # first: raises on every process unless the communicators partition the world
        self.world_group = torch_process_group(comm)
        self.topology = topology = comm.node_topology()
        node_group = torch_process_group(topology.node_comm)  # collective: every node at once
        self.node_group = node_group if topology.local_size > 1 else None
        members = dict(comm.allgather((topology.node_index, topology.node_comm.world_ranks())))
        self.node_ranks: List[List[int]] = [members[k] for k in range(topology.num_nodes)]
        self.node_sizes = [len(ranks) for ranks in self.node_ranks]
        self._segment_groups: Dict[Tuple[int, ...], Any] = {}
        self._create_segment_groups()  # collective over the world: every piece's at once

    @property
    def num_nodes(self) -> int:
        return self.topology.num_nodes

    @property
    def node_index(self) -> int:
        return self.topology.node_index

    @property
    def local_rank(self) -> int:
        return self.topology.local_rank

    @property
    def local_size(self) -> int:
        return self.topology.local_size

    def _world_ranks_of(self, owners: Tuple[int, ...]) -> Tuple[int, ...]:
        return tuple(sorted(self.node_ranks[k][j] for k, j in enumerate(owners)))

    def _create_segment_groups(self) -> None:
        # every owner combination of any vector length appears on the grid of lcm(sizes) cells
        owner_sets = []
        if self.num_nodes > 1:
            grid = cross_node_segments(math.lcm(*self.node_sizes), self.node_sizes)
            owner_sets = [s.owners for s in grid]
        by_ranks = {self._world_ranks_of(owners): owners for owners in owner_sets}
        world = MPI.COMM_WORLD
        me = world.Get_rank()
        world_comm = MPICommunication(world)
        # torch creates groups in one order on every process: the groups of every piece of the
        # partition (``comm`` is one), in the same rounds everywhere
        pieces = world.allgather(sorted(by_ranks)) if world.Get_size() > 1 else [list(by_ranks)]
        everyone = sorted({ranks for piece in pieces for ranks in piece})
        for groups in disjoint_rounds(everyone):
            # torch creates groups collectively from a partition of the world: this round's
            # groups, everybody else alone
            mine = [i for i, ranks in enumerate(groups) if me in ranks]
            color = mine[0] if mine else len(groups) + me
            piece = world_comm.Split(color, me)
            group = torch_process_group(piece)
            if mine:
                self._segment_groups[by_ranks[groups[mine[0]]]] = group
            piece.Free()

    def my_segments(self, length: int) -> List[Tuple[int, int, Any, int]]:
        """
        ``(start, stop, group, rank in group)`` of the cross-node segments this process reduces.
        """
        if self.num_nodes == 1:
            return []
        node, rank = self.node_index, self.local_rank
        me = self.node_ranks[node][rank]
        return [
            (
                s.start,
                s.stop,
                self._segment_groups[s.owners],
                self._world_ranks_of(s.owners).index(me),
            )
            for s in cross_node_segments(length, self.node_sizes)
            if s.owners[node] == rank
        ]

    def my_slice(self, length: int) -> Tuple[int, int]:
        """This process's slice ``[start, stop)`` of a flat vector of ``length`` elements."""
        return slice_bounds(length, self.local_size, self.local_rank)

    # -- node-local operations -------------------------------------------------------------------

    def gather_width(self, length: int) -> int:
        """Elements per process in a node-local all-gather of ``length`` (slices padded to it)."""
        return max(-(-length // self.local_size), 1)

    def node_all_gather_slices(
        self, piece: torch.Tensor, length: int, received: Optional[torch.Tensor] = None
    ) -> Tuple[List[Tuple[int, int, torch.Tensor]], int]:
        """
        The slices of the node's processes of a flat vector of ``length`` elements; blocking.

        ``piece`` is this process's slice (:meth:`my_slice`), or a tensor of
        :meth:`gather_width` elements that starts with it (no copy is made then). The slices
        arrive in ``received`` (``local_size * gather_width`` elements; allocated when not
        given), so a caller that keeps it avoids reallocating the vector every time.

        Returns
        -------
        slices : list of (start, stop, values)
            ``values`` holds elements ``[start, stop)`` of the vector (a view of ``received``).
        sent : int
            Bytes this process sent.
        """
        size = self.local_size
        if size == 1:
            return [(0, length, piece[:length])], 0
        import torch.distributed as dist

        width = self.gather_width(length)
        if piece.numel() == width and piece.is_contiguous():
            padded = piece
        else:  # slices differ by one element: pad to equal sizes
            padded = torch.zeros(width, dtype=piece.dtype, device=piece.device)
            padded[: piece.numel()].copy_(piece)
        if received is None:
            received = torch.empty(size * width, dtype=piece.dtype, device=piece.device)
        parts = list(received[: size * width].view(size, width))
        dist.all_gather(parts, padded, group=self.node_group)
        slices = []
        for j, values in enumerate(parts):
            start, stop = slice_bounds(length, size, j)
            slices.append((start, stop, values[: stop - start]))
        return slices, (size - 1) * width * padded.element_size()

    def node_all_gather(self, piece: torch.Tensor, length: int, out: torch.Tensor) -> int:
        """
        Reassemble a flat vector of ``length`` elements from the slices of the node's processes
        (``piece`` is this process's, :meth:`my_slice`) into ``out``; blocking.

        Returns
        -------
        int
            Bytes this process sent.
        """
        if self.local_size == 1:
            out.copy_(piece)
            return 0
        slices, sent = self.node_all_gather_slices(piece, length)
        for start, stop, values in slices:
            out[start:stop].copy_(values)
        return sent


@dataclass
class _Chunk:
    """One chunk of a cross-node sum in flight."""

    lo: int  # elements [lo, hi) of the slice
    hi: int
    group: Any
    group_rank: int
    work: Any = None
    buffer: Any = None
    phase: int = 1  # the reduce-scatter algorithm has a second phase (all-gather of the sums)


@dataclass
class _PendingSum:
    """A cross-node sum in flight."""

    chunks: List[_Chunk] = field(default_factory=list)
    local: Optional[torch.Tensor] = None
    bytes_sent: int = 0


class CrossNodeSum:
    """
    The sum over nodes of this process's slice of a flat vector, non-blocking.

    Each segment of the slice (see :func:`cross_node_segments`) is cut into chunks of at most
    ``chunk_size`` elements; each chunk is reduced on its segment's group of ``P`` processes (one
    per node). The algorithm depends on the wire type:

    * the slice's own type (full precision): one all-reduce per chunk;
    * a reduced type with ``P <= 2``: the chunks are all-gathered in that type and summed in the
      slice's precision (float32) in node order — the same bits on every node, and as many bytes
      as a ring all-reduce;
    * a reduced type with ``P >= 3``: reduce-scatter (an all-to-all in the reduced type; each
      process sums its part of the chunk in float32) then all-gather of the sums in the reduced
      type: ``2 (P-1)/P`` of the chunk per process, half of a float32 all-reduce. The second phase
      needs the first one's result: :meth:`progress` starts it without blocking once the first is
      complete (DASO calls it every batch), :meth:`finish` at the latest.

    Parameters
    ----------
    groups : NodeGroups
    length : int
        Length of the flat vector.
    chunk_size : int
        Largest number of elements per collective.
    wire_dtype : torch.dtype
        Type on the wire.

    Examples
    --------
    >>> exchange = CrossNodeSum(groups, length=1000, chunk_size=256, wire_dtype=torch.bfloat16)
    >>> pending = exchange.start(my_slice_values)  # returns at once
    >>> total = exchange.finish(pending)           # the sum over nodes of my slice
    """

    def __init__(self, groups: NodeGroups, length: int, chunk_size: int, wire_dtype: torch.dtype):
        self.groups = groups
        self.length = length
        self.wire_dtype = wire_dtype
        self.start_index, self.stop_index = groups.my_slice(length)
        self._plan: List[Tuple[int, int, Any, int]] = []
        for start, stop, group, group_rank in groups.my_segments(length):
            for lo, hi in chunk_bounds(start, stop, chunk_size):
                self._plan.append((lo - self.start_index, hi - self.start_index, group, group_rank))

    @property
    def slice_length(self) -> int:
        return self.stop_index - self.start_index

    def algorithm(self, dtype: torch.dtype) -> str:
        """``"all_reduce"``, ``"all_gather"`` or ``"reduce_scatter"`` for values of ``dtype``."""
        if self.wire_dtype == dtype:
            return "all_reduce"
        return "all_gather" if self.groups.num_nodes <= 2 else "reduce_scatter"

    def start(self, values: torch.Tensor) -> _PendingSum:
        """Start summing ``values`` (this process's slice) over the nodes; non-blocking."""
        import torch.distributed as dist

        pending = _PendingSum(local=values)
        nodes = self.groups.num_nodes
        if nodes == 1:
            return pending
        algorithm = self.algorithm(values.dtype)
        wire_size = torch.empty(0, dtype=self.wire_dtype).element_size()
        for lo, hi, group, group_rank in self._plan:
            chunk = _Chunk(lo, hi, group, group_rank)
            if algorithm == "all_reduce":
                chunk.buffer = values[lo:hi].clone()
                chunk.work = _start(dist.all_reduce, chunk.buffer, group=group)
                chunk.phase = 2
                pending.bytes_sent += ring_allreduce_bytes(
                    chunk.buffer.numel() * values.element_size(), nodes
                )
            elif algorithm == "all_gather":
                packed = values[lo:hi].to(self.wire_dtype)
                chunk.buffer = [torch.empty_like(packed) for _ in range(nodes)]
                chunk.work = _start(dist.all_gather, chunk.buffer, packed, group=group)
                chunk.phase = 2
                pending.bytes_sent += (nodes - 1) * packed.numel() * wire_size
            else:
                parts = [b - a for a, b in (slice_bounds(hi - lo, nodes, j) for j in range(nodes))]
                mine = parts[group_rank]
                packed = values[lo:hi].to(self.wire_dtype)
                chunk.buffer = torch.empty(
                    nodes * mine, dtype=self.wire_dtype, device=values.device
                )
                chunk.work = _start(
                    dist.all_to_all_single, chunk.buffer, packed, [mine] * nodes, parts, group=group
                )
                width = -(-(hi - lo) // nodes)
                pending.bytes_sent += (hi - lo - mine + (nodes - 1) * width) * wire_size
            pending.chunks.append(chunk)
        return pending

    def _second_phase(self, chunk: _Chunk, dtype: torch.dtype) -> None:
        """Sum this process's part of a reduce-scattered chunk; start the all-gather of the sums."""
        import torch.distributed as dist

        nodes = self.groups.num_nodes
        mine = chunk.buffer.numel() // nodes
        width = -(-(chunk.hi - chunk.lo) // nodes)  # parts differ by one element: pad
        summed = sum_packed(
            list(chunk.buffer.view(nodes, mine)),
            torch.empty(mine, dtype=dtype, device=chunk.buffer.device),
        )
        packed = torch.zeros(width, dtype=self.wire_dtype, device=summed.device)
        packed[:mine].copy_(summed)
        chunk.buffer = [torch.empty_like(packed) for _ in range(nodes)]
        chunk.work = _start(dist.all_gather, chunk.buffer, packed, group=chunk.group)
        chunk.phase = 2

    def progress(self, pending: _PendingSum) -> None:
        """Start second phases whose first phase is complete (in chunk order); never blocks."""
        dtype = pending.local.dtype
        for chunk in pending.chunks:
            if chunk.phase == 2:
                continue
            if not chunk.work.is_completed():
                break  # keep chunk order, so every process issues the same sequence per group
            chunk.work.wait()
            self._second_phase(chunk, dtype)

    def finish(self, pending: _PendingSum, out: Optional[torch.Tensor] = None) -> torch.Tensor:
        """Wait for ``pending`` and return the sum over nodes (in ``out`` when given)."""
        values = pending.local
        if out is None:
            out = torch.empty_like(values)
        if self.groups.num_nodes == 1:
            return out.copy_(values)
        nodes = self.groups.num_nodes
        for chunk in pending.chunks:
            if chunk.phase == 1:
                chunk.work.wait()
                self._second_phase(chunk, values.dtype)
        for chunk in pending.chunks:
            chunk.work.wait()
            target = out[chunk.lo : chunk.hi]
            if not isinstance(chunk.buffer, list):
                target.copy_(chunk.buffer)
            elif chunk.buffer[0].numel() == chunk.hi - chunk.lo:  # all-gathered chunks: add up
                sum_packed(chunk.buffer, target)
            else:  # all-gathered sums of the parts: place them
                for j, part in enumerate(chunk.buffer):
                    a, b = slice_bounds(chunk.hi - chunk.lo, nodes, j)
                    target[a:b].copy_(part[: b - a])
        pending.chunks.clear()
        return out


@torch.no_grad()
def broadcast_training_state(
    module: torch.nn.Module,
    optimizer: Optional[Any],
    group: Any,
    comm: MPICommunication,
) -> None:
    """
    Make every process of ``comm`` start from the parameters, buffers and optimizer state of its
    rank 0 (collective on ``comm``; ``group`` is its torch.distributed group). ``optimizer``:
    None, a torch optimizer, or a sequence of them (the same number on every process).
    """
    if comm.size == 1:
        return
    tensors, seen = [], set()
    for tensor in list(module.parameters()) + list(module.buffers()):
        if id(tensor) not in seen:
            seen.add(id(tensor))
            tensors.append(tensor)
    broadcast_tensors(tensors, comm, group)
    optimizers = (
        []
        if optimizer is None
        else (list(optimizer) if isinstance(optimizer, (list, tuple)) else [optimizer])
    )
    if optimizers:  # hyperparameters and state (e.g. momentum of a loaded checkpoint), one bcast
        # every process asks its optimizers for their state, not rank 0 alone: an optimizer's
        # state_dict may be collective over the optimizer's own processes (a
        # ZeroRedundancyOptimizer with state all-gathers its shards), and a call on rank 0 alone
        # would wait forever for the others (for torch's optimizers the call is cheap: the dict
        # refers to the state, it copies nothing)
        own_states = [o.state_dict() for o in optimizers]
        states = comm.bcast(own_states if comm.rank == 0 else None, root=0)
        if comm.rank != 0:
            for one, state in zip(optimizers, states):
                one.load_state_dict(state)
