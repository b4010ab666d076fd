"""
Moving a round's rows between processes: one all-to-all per round (after a small one of counts).

Each process holds the window it read; the plan (:mod:`.plan`) says which of its rows go to which
process and in which order. A round's exchange is

1. one small ``Alltoall`` of (row count, "my read failed") per pair of processes: every process
   learns how many rows arrive from each other one, and whether a read failed anywhere (then no
   rows move and every process raises);
2. one ``Alltoallw`` of the rows: the rows for the other processes are gathered into a buffer
   leased from the loader's pool (:mod:`.buffers`; per dataset, grouped by destination, and
   their global numbers), and MPI moves each
   peer's parts of all datasets in one go straight where the caller wants them -- typically the
   free rows behind the window in the reader's buffer, so that the round's rows (the window's and
   the received ones) lie in one array and the yield order is ONE gather out of it. The parts are
   large contiguous blocks (MPI describes them over absolute addresses); describing single rows to
   MPI by derived datatypes instead of gathering them would be several times slower.

A process's own rows never travel: they stay in its window.

The loader runs the exchange on a background thread over a duplicate of its communicator
(:mod:`.rounds`), so a round's exchange overlaps the consumer's work on the round before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np
import torch

from heat.core.communication import verdicts

from .buffers import Buffer, BufferPool

__all__ = ["Exchanger", "Received"]

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

    def __init__(self, comm, pool: BufferPool, poll: bool = False, gate=None):
        self.comm = comm
        self.pool = pool
        self.poll = bool(poll)
        self.gate = gate
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
        """The rows for the others, gathered, and ONE all-to-all of them into ``land``."""
        comm, me, p = self.comm, self.comm.rank, self.comm.size

        # 2. the rows for the others, gathered per dataset into a leased buffer
        send = np.asarray(send_counts, dtype=np.int64).copy()
        send[me] = 0
        send_displs = np.concatenate([[0], np.cumsum(send_counts)]).astype(np.int64)
        outgoing = np.concatenate(
            [send_offsets[send_displs[q] : send_displs[q + 1]] for q in range(p) if q != me]
            or [np.zeros(0, np.int64)]
        ).astype(np.int64)
        count_out = len(outgoing)
        # wide rows travel straight from the window (MPI reads the runs of consecutive rows
        # itself); narrow ones are gathered first, a row is too little for a block of MPI's
        direct = [windows is not None and b >= DIRECT_ROW_BYTES for b in self._row_bytes]
        staging = self.pool.take(count_out) if not all(direct) else None
        index = torch.from_numpy(outgoing)
        outgoing_parts = []
        for d, items in enumerate(self._items):
            source = None
            if windows is not None:
                source = _row_bytes_view(torch.from_numpy(windows[d]), len(windows[d]), items)
            if direct[d]:
                outgoing_parts.append((source, outgoing))
                continue
            part = _row_bytes_view(torch.from_numpy(staging.arrays[d]), count_out, items)
            if source is not None and count_out:
                torch.index_select(source, 0, index, out=part)
            outgoing_parts.append(part)
        numbers = index + int(window_start)
        outgoing_parts.append(numbers.view(torch.uint8).view(count_out, 8))

        # 3. ONE all-to-all of the rows: per peer, its part of every dataset and of the numbers,
        # moved by MPI straight from the send buffer into ``land`` (no staging, no unpacking)
        received_numbers = torch.empty(total, dtype=torch.int64)
        incoming_parts = [_row_bytes_view(t, total, k) for t, k in zip(land, self._items)]
        incoming_parts.append(received_numbers.view(torch.uint8).view(total, 8))
        out_at = np.concatenate([[0], np.cumsum(send)]).tolist()
        in_at = np.concatenate([[0], np.cumsum(recv_counts)]).tolist()
        sends = [
            [piece for part in outgoing_parts for piece in _pieces(part, out_at[q], out_at[q + 1])]
            for q in range(p)
        ]
        recvs = [
            [part[in_at[q] : in_at[q + 1]] for part in incoming_parts if in_at[q + 1] > in_at[q]]
            for q in range(p)
        ]
        # zero-byte pieces (rows without elements) carry nothing: leave them out on both sides
        sends = [[t for t in pieces if t.numel()] for pieces in sends]
        recvs = [[t for t in pieces if t.numel()] for pieces in recvs]
        try:  # blocking: every process is here once the counts arrived, and MPI moves the rows
            if self.gate is None:
                comm.Alltoallw(sends, recvs)
            else:
                with self.gate:
                    comm.Alltoallw(sends, recvs)
        finally:
            self.pool.release(staging)
        return received_numbers


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
