"""
Moving a round's rows between processes: one all-to-all per round, through the communicator.

Each process holds the window it read; the plan (:mod:`.plan`) says which of its rows go to which
process, in which order, and how many rows arrive from each process. The rows for other processes
are gathered into one send buffer per dataset, grouped by destination; all datasets and the rows'
global numbers travel in ONE ``Alltoallw`` (a list of blocks per peer, described to MPI without
packing); the rows a process keeps are gathered straight into its receive buffers.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

__all__ = ["Exchanger"]


def _grow(buffer: Optional[torch.Tensor], rows: int, like: torch.Tensor) -> torch.Tensor:
    """``buffer`` if it holds ``rows`` rows, else a new one with some headroom."""
    if buffer is not None and buffer.shape[0] >= rows:
        return buffer
    return torch.empty((max(rows, rows + rows // 8),) + tuple(like.shape[1:]), dtype=like.dtype)


class Exchanger:
    """
    Exchange the rows of rounds; keeps the send buffers and a small pool of receive buffers.

    Parameters
    ----------
    comm : MPICommunication
    row_shapes : sequence of tuple
        The row shape of each dataset.
    dtypes : sequence of torch.dtype

    Examples
    --------
    >>> exchanger = Exchanger(ht.MPI_WORLD, [(3,)], [torch.float32])  # doctest: +SKIP
    >>> received, rows, handle = exchanger.exchange(windows, 0, offsets, send, recv)  # doctest: +SKIP
    >>> exchanger.give_back(handle)  # doctest: +SKIP
    """

    def __init__(self, comm, row_shapes: Sequence[Tuple[int, ...]], dtypes: Sequence[torch.dtype]):
        self.comm = comm
        self._likes = [torch.empty((0,) + tuple(s), dtype=t) for s, t in zip(row_shapes, dtypes)]
        self._likes.append(torch.empty(0, dtype=torch.int64))  # the global row numbers
        self._send: List[Optional[torch.Tensor]] = [None] * len(self._likes)
        self._pool: List[List[torch.Tensor]] = []
        self.seconds = 0.0

    def _receive_buffers(self, rows: int) -> List[torch.Tensor]:
        for i, buffers in enumerate(self._pool):
            if buffers[0].shape[0] >= rows:
                return self._pool.pop(i)
        return [_grow(None, rows, like) for like in self._likes]

    def give_back(self, buffers: List[torch.Tensor]) -> None:
        """Return the receive buffers of a round whose rows were all consumed."""
        self._pool.append(buffers)
        del self._pool[:-2]  # two rounds in flight at most, normally

    def exchange(
        self,
        windows: Optional[Sequence[np.ndarray]],
        window_start: int,
        send_offsets: np.ndarray,
        send_counts: np.ndarray,
        recv_counts: np.ndarray,
    ) -> Tuple[List[torch.Tensor], torch.Tensor, List[torch.Tensor]]:
        """
        One round's all-to-all.

        Parameters
        ----------
        windows : sequence of numpy.ndarray or None
            The rows this process read, one array per dataset (None: it read no window).
        window_start : int
            The global number of the window's first row.
        send_offsets : numpy.ndarray
            Offsets in the window of the rows to send, grouped by destination process.
        send_counts, recv_counts : numpy.ndarray
            Rows to each / from each process.

        Returns
        -------
        received : list of torch.Tensor
            One tensor per dataset with the received rows, grouped by source process.
        rows : torch.Tensor
            Their global row numbers.
        handle : list of torch.Tensor
            The buffers behind them, for :meth:`give_back`.
        """
        comm, me = self.comm, self.comm.rank
        total = int(recv_counts.sum())
        buffers = self._receive_buffers(total)
        received = [b[:total] for b in buffers]
        send_displs = np.concatenate([[0], np.cumsum(send_counts)]).astype(np.int64)
        recv_displs = np.concatenate([[0], np.cumsum(recv_counts)]).astype(np.int64)

        offsets = torch.from_numpy(np.ascontiguousarray(send_offsets, dtype=np.int64))
        if windows is None:  # this process read no window in this round: it sends nothing
            sources = [like for like in self._likes[:-1]]
        else:
            sources = [torch.from_numpy(w) for w in windows]
        keep = slice(int(send_displs[me]), int(send_displs[me + 1]))
        land = slice(int(recv_displs[me]), int(recv_displs[me + 1]))
        others = torch.cat([offsets[: keep.start], offsets[keep.stop :]])
        outgoing = []
        for d, source in enumerate(sources):
            if keep.stop > keep.start:  # own rows: straight into the receive buffer
                torch.index_select(source, 0, offsets[keep], out=received[d][land])
            self._send[d] = _grow(self._send[d], len(others), self._likes[d])
            part = self._send[d][: len(others)]
            if len(others):
                torch.index_select(source, 0, others, out=part)
            outgoing.append(part)
        # the rows' global numbers travel as one more dataset
        numbers = offsets + int(window_start)
        received[-1][land] = numbers[keep]
        outgoing.append(torch.cat([numbers[: keep.start], numbers[keep.stop :]]))

        # the send buffers hold the other processes' rows in destination order (own block removed)
        sends, recvs, at = [], [], 0
        for peer in range(comm.size):
            if peer == me:
                sends.append([])
                recvs.append([])
                continue
            n = int(send_counts[peer])
            sends.append([part[at : at + n] for part in outgoing])
            at += n
            a, b = int(recv_displs[peer]), int(recv_displs[peer + 1])
            recvs.append([r[a:b] for r in received])
        comm.Alltoallw(sends, recvs)
        return received[:-1], received[-1], buffers
