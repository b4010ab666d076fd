"""
Moving a round's rows between processes: an all-to-all of counts, then the rows -- between the
processes of a node through shared memory, between nodes in one ``Alltoallw``.

Each process holds the window it read; the plan (:mod:`.plan`) says which of its rows go to which
process and in which order. A round's exchange is

1. one small ``Alltoall`` of (row count, "my read failed") per pair of processes: every process
   learns how many rows arrive from each other one, and whether a read failed anywhere (then no
   rows move and every process raises);
2. to the processes of its node (:class:`NodeRoute`): each process gathers the rows for each
   node mate, and their global numbers, straight into its slot of the node's shared memory
   (:mod:`heat.core.communication.node_slots`); after a barrier each process copies its part out
   of every mate's slot into the landing area. Each copies at its own pace -- MPI's transfer
   inside a node pipelines through shared-memory cells that both processes must drain at once,
   which crawled beside busy consumers on a node with few cores (0.5-1.5 s for 9 MB instead of
   25 ms) -- and the bytes are copied once less;
3. to the other nodes (or everywhere, where memory is not shared: ``HEAT_NODE_SHARED_MEMORY=0``)
   one ``Alltoallw``: the rows are gathered into a buffer leased from the loader's pool
   (:mod:`.buffers`; per dataset, grouped by destination, and their global numbers), and MPI
   moves each peer's parts of all datasets in one go straight where the caller wants them. The
   parts are large contiguous blocks (MPI describes them over absolute addresses); describing
   single rows to MPI by derived datatypes instead of gathering them would be several times
   slower.

The landing area is typically the free rows behind the window in the reader's buffer, so that
the round's rows (the window's and the received ones) lie in one array and the yield order is
ONE gather out of it. A process's own rows never travel: they stay in its window.

The loader runs the exchange on a background thread over a duplicate of its communicator
(:mod:`.rounds`), so a round's exchange overlaps the consumer's work on the round before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np
import torch

from heat.core.communication import verdicts
from heat.core.communication.node_slots import node_slots

from .buffers import Buffer, BufferPool

__all__ = ["Exchanger", "NodeRoute", "Received", "node_route"]

#: rows of at least this many bytes travel straight from the window (one MPI block per run of
#: consecutive rows); narrower rows are gathered into the send buffer first
DIRECT_ROW_BYTES = 16384


def _aligned(nbytes: int) -> int:
    return -(-nbytes // 8) * 8


def _row_bytes_view(tensor: torch.Tensor, rows: int, items: int) -> torch.Tensor:
    """The first ``rows`` rows of a contiguous tensor as a (rows, row bytes) uint8 tensor."""
    return tensor[:rows].reshape(rows, items).view(torch.uint8)


@dataclass
class Received:
    """
    What arrived in one round.

    Attributes
    ----------
    rows : list of torch.Tensor
        Per dataset, the ``n`` rows received from the other processes (grouped by source rank,
        each group in the sender's order): views of the landing area the caller gave, or of a
        buffer leased from the pool (then ``buffer`` is set).
    numbers : numpy.ndarray
        Their global row numbers.
    counts : numpy.ndarray
        Rows from each process (the own entry: the rows this process keeps).
    buffer : Buffer or None
        The leased buffer the rows landed in (rows ``reserve:reserve + n``; the first
        ``reserve`` rows are free for the caller), which the caller releases to the pool; None
        if they landed in the caller's area.
    failed : bool
        Whether the read failed on any process (then no rows moved).
    """

    rows: List[torch.Tensor]
    numbers: np.ndarray
    counts: np.ndarray
    buffer: Optional[Buffer]
    failed: bool


class Exchanger:
    """
    Exchange the rows of rounds; the rows to send and those received (where the caller gives
    no room for them) go through buffers leased from the loader's pool.

    Parameters
    ----------
    comm : MPICommunication
    pool : BufferPool
        Buffers with the datasets' row shapes and types.
    poll : bool
        Wait for the other processes to arrive (the all-to-all of counts) by tests with short
        sleeps between them instead of a blocking call: MPICH busy-polls, and a process that
        waits on a background thread would take the core of the consumer or of the process it
        waits for. The rows then move in a blocking call (everyone is there).

    Examples
    --------
    >>> exchanger = Exchanger(ht.MPI_WORLD, pool)  # doctest: +SKIP
    >>> received = exchanger.exchange(windows, 0, offsets, send_counts)  # doctest: +SKIP
    >>> pool.release(received.buffer)  # doctest: +SKIP
    """

    def __init__(self, comm, pool: BufferPool, poll: bool = False, gate=None, node=None):
        self.comm = comm
        self.pool = pool
        self.poll = bool(poll)
        self.gate = gate
        self.node: Optional[NodeRoute] = node
        self._shapes = list(pool.row_shapes)
        self._items = [int(np.prod(s, dtype=np.int64)) for s in self._shapes]  # per row
        self._row_bytes = [k * d.itemsize for k, d in zip(self._items, pool.dtypes)]

    # -- the exchange ------------------------------------------------------------------------------

    def exchange(
        self,
        windows: Optional[Sequence[np.ndarray]],
        window_start: int,
        send_offsets: np.ndarray,
        send_counts: np.ndarray,
        failed: bool = False,
        land: Optional[Sequence[torch.Tensor]] = None,
        reserve: int = 0,
    ) -> Received:
        """
        One round's exchange.

        Parameters
        ----------
        windows : sequence of numpy.ndarray or None
            The rows this process read, one array per dataset (None: it read no window, or the
            read failed).
        window_start : int
            The global number of the window's first row.
        send_offsets : numpy.ndarray
            Offsets in the window of the rows to send, grouped by destination process (the own
            group: the rows this process keeps, which do not move).
        send_counts : numpy.ndarray
            Rows to each process.
        failed : bool
            This process's read failed: it still takes part and tells the others.
        land : sequence of torch.Tensor, optional
            Per dataset, contiguous rows where the received rows should arrive (from its first
            row on); used if they fit, else they arrive in pooled buffers.
        reserve : int
            Rows left free at the start of pooled buffers (for the caller's own rows).

        Returns
        -------
        Received
        """
        comm, me, p = self.comm, self.comm.rank, self.comm.size
        # 1. how many rows go where, and whether a read failed anywhere
        mine = np.zeros((p, 2), dtype=np.int64)
        mine[:, 0] = send_counts
        mine[:, 1] = int(failed)
        told = torch.empty((p, 2), dtype=torch.int64)
        if self.poll:
            verdicts.wait_without_spinning(comm.Ialltoall(torch.from_numpy(mine), told))
        else:
            comm.Alltoall(torch.from_numpy(mine), told)
        told = told.numpy()
        counts = told[:, 0].copy()
        if told[:, 1].any():
            return Received([], np.zeros(0, np.int64), counts, None, True)
        recv_counts = counts.copy()
        recv_counts[me] = 0  # own rows stay
        total = int(recv_counts.sum())
        buffer = None
        if land is None or any(t.shape[0] < total for t in land):
            buffer = self.pool.take(reserve + total)
            land = [torch.from_numpy(a[reserve:]) for a in buffer.arrays]
        try:
            received_numbers = self._move(
                windows, window_start, send_offsets, send_counts, recv_counts, land, total
            )
        except BaseException:
            self.pool.release(buffer)
            raise
        rows = [t[:total].view((total,) + s) for t, s in zip(land, self._shapes)]
        return Received(rows, received_numbers.numpy(), counts, buffer, False)

    def _move(self, windows, window_start, send_offsets, send_counts, recv_counts, land, total):
        """The rows for the others, and their numbers, into the others' ``land``."""
        me, p = self.comm.rank, self.comm.size
        send = np.asarray(send_counts, dtype=np.int64).copy()
        send[me] = 0
        send_displs = np.concatenate([[0], np.cumsum(send_counts)]).astype(np.int64)
        outgoing = np.concatenate(
            [send_offsets[send_displs[q] : send_displs[q + 1]] for q in range(p) if q != me]
            or [np.zeros(0, np.int64)]
        ).astype(np.int64)
        out_at = np.concatenate([[0], np.cumsum(send)]).tolist()
        in_at = np.concatenate([[0], np.cumsum(recv_counts)]).tolist()
        received_numbers = torch.empty(total, dtype=torch.int64)
        incoming = [_row_bytes_view(t, total, k) for t, k in zip(land, self._items)]
        incoming.append(received_numbers.view(torch.uint8).view(total, 8))
        sources = []
        if windows is not None:
            sources = [
                _row_bytes_view(torch.from_numpy(w), len(w), k)
                for w, k in zip(windows, self._items)
            ]
        numbers = torch.from_numpy(outgoing) + int(window_start)
        if self.node is not None:  # the node's processes: through the slots
            self.node.move(sources, outgoing, numbers, out_at, incoming, in_at, self._row_bytes)
        if self.node is None or not self.node.holds_everyone:  # the others: one Alltoallw
            remote = [self.node is None or q not in self.node.index for q in range(p)]
            self._alltoallw(sources, outgoing, numbers, out_at, incoming, in_at, remote)
        return received_numbers

    def _alltoallw(self, sources, outgoing, numbers, out_at, incoming, in_at, remote) -> None:
        """ONE all-to-all of the rows for the peers marked ``remote`` (collective)."""
        count_out = len(outgoing)
        # wide rows travel straight from the window (MPI reads the runs of consecutive rows
        # itself); narrow ones are gathered into a leased buffer first, a row is too little for
        # a block of MPI's
        direct = [bool(sources) and b >= DIRECT_ROW_BYTES for b in self._row_bytes]
        staging = self.pool.take(count_out) if not all(direct) else None
        try:
            index = torch.from_numpy(outgoing)
            outgoing_parts = []
            for d, items in enumerate(self._items):
                if direct[d]:
                    outgoing_parts.append((sources[d], outgoing))
                    continue
                part = _row_bytes_view(torch.from_numpy(staging.arrays[d]), count_out, items)
                if sources and count_out:
                    torch.index_select(sources[d], 0, index, out=part)
                outgoing_parts.append(part)
            outgoing_parts.append(numbers.view(torch.uint8).view(count_out, 8))
            # per peer, its part of every dataset and of the numbers, moved by MPI straight from
            # the window or the staging into ``land`` (no unpacking)
            sends = [
                [
                    piece
                    for part in outgoing_parts
                    for piece in _pieces(part, out_at[q], out_at[q + 1])
                ]
                if remote[q]
                else []
                for q in range(self.comm.size)
            ]
            recvs = [
                [part[in_at[q] : in_at[q + 1]] for part in incoming if in_at[q + 1] > in_at[q]]
                if remote[q]
                else []
                for q in range(self.comm.size)
            ]
            # zero-byte pieces (rows without elements) carry nothing: leave them out on both sides
            sends = [[t for t in pieces if t.numel()] for pieces in sends]
            recvs = [[t for t in pieces if t.numel()] for pieces in recvs]
            if self.gate is None:
                self.comm.Alltoallw(sends, recvs)
            else:
                with self.gate:
                    self.comm.Alltoallw(sends, recvs)
        finally:
            self.pool.release(staging)


class NodeRoute:
    """
    The exchange's way to the processes of its node: through :class:`NodeSlots` (the rows for
    each node mate gathered straight into this process's slot, read out by the mate after a
    barrier) -- no MPI transfer, no process waits for another's copy.

    Parameters
    ----------
    slots : NodeSlots
        Over the node's processes (``slots.comm``).
    ranks : sequence of int
        The rank in the exchange's communicator of each process of the node, in node order.
    holds_everyone : bool
        Whether the node holds every process of the exchange (then no Alltoallw is needed).
    """

    def __init__(self, slots, ranks: Sequence[int], holds_everyone: bool):
        self.slots, self.holds_everyone = slots, bool(holds_everyone)
        self.index = {int(rank): i for i, rank in enumerate(ranks)}  # exchange rank -> node rank

    def _layout(self, count: int, row_bytes: Sequence[int]) -> List[int]:
        """Where each dataset's part (and then the numbers) begins in a peer's region."""
        offsets, at = [], 0
        for nbytes in list(row_bytes) + [8]:
            offsets.append(at)
            at += _aligned(count * nbytes)
        return offsets + [at]

    def move(self, sources, outgoing, numbers, out_at, incoming, in_at, row_bytes) -> None:
        """Write the parts for the node's processes into this process's slot; read ours."""
        slots = self.slots
        mine = slots.data(slots.comm.rank)
        header = slots.header(slots.comm.rank)
        at = 0
        for rank, node_rank in self.index.items():
            a, b = out_at[rank], out_at[rank + 1]
            header[node_rank] = at
            layout = self._layout(b - a, row_bytes)
            if layout[-1] and at + layout[-1] > slots.capacity:
                raise RuntimeError(
                    "the rows of a round exceed the node's slots"
                )  # pragma: no cover
            if b > a:
                index = torch.from_numpy(outgoing[a:b])
                for d, source in enumerate(sources):
                    region = mine[at + layout[d] : at + layout[d] + (b - a) * row_bytes[d]]
                    torch.index_select(source, 0, index, out=region.view(b - a, row_bytes[d]))
                region = mine[at + layout[-2] : at + layout[-2] + 8 * (b - a)]
                region.view(torch.int64).copy_(numbers[a:b])
            at += layout[-1]
        slots.barrier()  # every slot written
        me = slots.comm.rank
        for rank, node_rank in self.index.items():
            a, b = in_at[rank], in_at[rank + 1]
            if b <= a or node_rank == me:
                continue
            start = int(slots.header(node_rank)[me])
            theirs = slots.data(node_rank)
            layout = self._layout(b - a, row_bytes)
            for part, nbytes, offset in zip(incoming, list(row_bytes) + [8], layout):
                region = theirs[start + offset : start + offset + (b - a) * nbytes]
                # a plain memcpy (torch's copies wait for its thread pool on a busy machine)
                np.copyto(part[a:b].numpy(), region.view(b - a, nbytes).numpy())


def node_route(comm, capacity: int, reuse: Optional[NodeRoute] = None) -> Optional[NodeRoute]:
    """
    The :class:`NodeRoute` of this process over ``comm``, with slots of at least ``capacity``
    bytes (the most a process sends in a round), or None where the node's processes cannot share
    memory (they then exchange through MPI; a pair of processes always takes the same way).
    ``reuse``: a route over a communicator with the same processes, whose slots serve again if
    large enough (the decision is the same on every process). Collective over ``comm``.
    """
    topology = comm.node_topology()
    ranks = topology.node_comm.allgather(comm.rank)
    if reuse is not None and reuse.slots.capacity >= capacity:
        reuse.slots.comm = topology.node_comm  # the slots' barrier on this communicator's node
        return NodeRoute(reuse.slots, ranks, topology.num_nodes == 1)
    slots = node_slots(topology.node_comm, int(capacity))
    return None if slots is None else NodeRoute(slots, ranks, topology.num_nodes == 1)


def _pieces(part, begin: int, end: int) -> List[torch.Tensor]:
    """
    Rows ``begin:end`` of an outgoing part: a slice of a packed tensor, or of a window given as
    ``(rows, offsets)``, one view per run of consecutive rows.
    """
    if end <= begin:
        return []
    if isinstance(part, torch.Tensor):
        return [part[begin:end]]
    rows, offsets = part
    wanted = offsets[begin:end]
    breaks = np.flatnonzero(np.diff(wanted) != 1) + 1
    starts = np.concatenate([[0], breaks]).tolist()
    stops = np.concatenate([breaks, [len(wanted)]]).tolist()
    return [rows[int(wanted[a]) : int(wanted[a]) + b - a] for a, b in zip(starts, stops)]
