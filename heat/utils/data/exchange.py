"""
Moving a round's rows between processes: one all-to-all per round, through the communicator.

Each process holds the window it read; the plan (:mod:`.plan`) says which of its rows go to which
process, in which order, and how many rows arrive from each process. The rows for each other
process are gathered into one block of a byte buffer -- a header, then the rows of every dataset,
then the rows' global numbers, each part 8-byte aligned -- and all blocks travel in ONE
``Alltoallv`` of bytes (a plain byte exchange is several times faster than describing the
datasets' separate buffers to MPI by derived datatypes). The header carries a "my read failed"
flag, so a failure on one process is known to all after the exchange and no one waits forever.
The rows a process keeps are gathered straight into its receive buffers; the received blocks are
unpacked into them by sequential copies.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

__all__ = ["Exchanger"]

_HEADER = 8  # bytes: the int64 "read failed" flag of the sender


def _aligned(nbytes: int) -> int:
    return -(-nbytes // 8) * 8


class Exchanger:
    """
    Exchange the rows of rounds; keeps the byte buffers and a small pool of receive buffers.

    Parameters
    ----------
    comm : MPICommunication
    row_shapes : sequence of tuple
        The row shape of each dataset.
    dtypes : sequence of torch.dtype

    Examples
    --------
    >>> exchanger = Exchanger(ht.MPI_WORLD, [(3,)], [torch.float32])  # doctest: +SKIP
    >>> received, rows, handle, failed = exchanger.exchange(windows, 0, offsets, send, recv)  # doctest: +SKIP
    >>> exchanger.give_back(handle)  # doctest: +SKIP
    """

    def __init__(self, comm, row_shapes: Sequence[Tuple[int, ...]], dtypes: Sequence[torch.dtype]):
        self.comm = comm
        # the datasets, then the global row numbers as one more int64 "dataset"
        self._shapes = [tuple(s) for s in row_shapes] + [()]
        self._dtypes = list(dtypes) + [torch.int64]
        self._items = [int(np.prod(s, dtype=np.int64)) for s in self._shapes]  # per row
        self._row_bytes = [
            int(np.prod(s, dtype=np.int64)) * torch.empty(0, dtype=t).element_size()
            for s, t in zip(self._shapes, self._dtypes)
        ]
        self._send_bytes: Optional[torch.Tensor] = None
        self._recv_bytes: Optional[torch.Tensor] = None
        self._pool: List[List[torch.Tensor]] = []
        self.seconds = 0.0

    # -- buffers -----------------------------------------------------------------------------------

    def _bytes(self, which: str, nbytes: int) -> torch.Tensor:
        buffer = getattr(self, which)
        if buffer is None or buffer.numel() < nbytes:
            buffer = torch.empty(nbytes + nbytes // 8, dtype=torch.uint8)
            setattr(self, which, buffer)
        return buffer

    def _receive_buffers(self, rows: int) -> List[torch.Tensor]:
        for i, buffers in enumerate(self._pool):
            if buffers[0].shape[0] >= rows:
                return self._pool.pop(i)
        rows = max(rows, 1)
        return [torch.empty((rows + rows // 8,) + s, dtype=t) for s, t in zip(self._shapes, self._dtypes)]

    def give_back(self, buffers: List[torch.Tensor]) -> None:
        """Return the receive buffers of a round once its rows were taken out of them."""
        self._pool.append(buffers)
        del self._pool[:-2]

    def _layout(self, rows: int) -> Tuple[List[int], int]:
        """Offsets of the parts of a block of ``rows`` rows (after the header), and its size."""
        offsets, at = [], _HEADER
        for row_bytes in self._row_bytes:
            offsets.append(at)
            at += _aligned(rows * row_bytes)
        return offsets, at

    def _part(self, buffer: torch.Tensor, start: int, rows: int, d: int) -> torch.Tensor:
        """Dataset ``d``'s ``rows`` rows at byte ``start`` of ``buffer``, as a (rows, -1) tensor."""
        nbytes = rows * self._row_bytes[d]
        return buffer[start : start + nbytes].view(self._dtypes[d]).view(rows, self._items[d])

    # -- the exchange ------------------------------------------------------------------------------

    def exchange(
        self,
        windows: Optional[Sequence[np.ndarray]],
        window_start: int,
        send_offsets: np.ndarray,
        send_counts: np.ndarray,
        recv_counts: Optional[np.ndarray] = None,
        failed: bool = False,
        copy_own: bool = True,
    ) -> Tuple[List[torch.Tensor], torch.Tensor, List[torch.Tensor], bool]:
        """
        One round's all-to-all.

        Parameters
        ----------
        windows : sequence of numpy.ndarray or None
            The rows this process read, one array per dataset (None: it read no window, or the
            read failed).
        window_start : int
            The global number of the window's first row.
        send_offsets : numpy.ndarray
            Offsets in the window of the rows to send, grouped by destination process.
        send_counts, recv_counts : numpy.ndarray
            Rows to each / from each process. Without ``recv_counts`` the processes tell each
            other their counts first (one small all-to-all: cheaper than working them out from
            the plan, which takes the round's permutation of this process's share).
        failed : bool
            This process's read failed: it still takes part (with meaningless rows) and tells
            the others.
        copy_own : bool
            Copy the rows this process keeps into ``received`` (False: their places there are
            left unfilled, for a caller that takes them from its window; their global numbers
            are filled in either way).

        Returns
        -------
        received : list of torch.Tensor
            One tensor per dataset with the received rows, grouped by source process.
        rows : torch.Tensor
            Their global row numbers.
        handle : list of torch.Tensor
            The buffers behind them, for :meth:`give_back`.
        failed : bool
            Whether the read failed on any process (the rows are then meaningless).
        """
        comm, me, p = self.comm, self.comm.rank, self.comm.size
        if recv_counts is None:
            counts = torch.from_numpy(np.ascontiguousarray(send_counts, dtype=np.int64))
            recv_counts = comm.Alltoall(counts, torch.empty(p, dtype=torch.int64)).numpy()
        total = int(recv_counts.sum())
        buffers = self._receive_buffers(total)
        received = [b[:total].view(total, k) for b, k in zip(buffers, self._items)]
        send_displs = np.concatenate([[0], np.cumsum(send_counts)]).astype(np.int64)
        recv_displs = np.concatenate([[0], np.cumsum(recv_counts)]).astype(np.int64)

        offsets = torch.from_numpy(np.ascontiguousarray(send_offsets, dtype=np.int64))
        if windows is None:  # nothing read: rows of zeros stand in (only counts matter then)
            rows = int(send_offsets.max()) + 1 if len(send_offsets) else 0
            sources = [
                torch.zeros((rows,) + shape, dtype=dtype)
                for shape, dtype in zip(self._shapes[:-1], self._dtypes[:-1])
            ]
        else:
            sources = [torch.from_numpy(w) for w in windows]
        sources = [s.reshape(s.shape[0], k) for s, k in zip(sources, self._items)]
        sources.append((offsets + int(window_start)).view(len(offsets), 1))  # global numbers

        # own rows: straight into the receive buffers
        keep = slice(int(send_displs[me]), int(send_displs[me + 1]))
        land = slice(int(recv_displs[me]), int(recv_displs[me + 1]))
        if keep.stop > keep.start:
            if copy_own:
                own = offsets[keep]
                for d, source in enumerate(sources[:-1]):
                    torch.index_select(source, 0, own, out=received[d][land])
            received[-1][land] = sources[-1][keep]

        # the other processes' rows: one block each in the send bytes
        send_sizes = [0 if q == me else self._layout(int(send_counts[q]))[1] for q in range(p)]
        recv_sizes = [0 if q == me else self._layout(int(recv_counts[q]))[1] for q in range(p)]
        send_bytes = self._bytes("_send_bytes", sum(send_sizes))
        recv_bytes = self._bytes("_recv_bytes", sum(recv_sizes))
        at = 0
        for q in range(p):
            if q == me:
                continue
            parts, _ = self._layout(int(send_counts[q]))
            send_bytes[at : at + _HEADER].view(torch.int64).fill_(int(failed))
            rows = slice(int(send_displs[q]), int(send_displs[q + 1]))
            n = rows.stop - rows.start
            for d, source in enumerate(sources):
                part = self._part(send_bytes, at + parts[d], n, d)
                if d < len(sources) - 1:
                    torch.index_select(source, 0, offsets[rows], out=part)
                else:
                    part.copy_(source[rows])
            at += send_sizes[q]
        comm.Alltoallv(
            (send_bytes, send_sizes, np.concatenate([[0], np.cumsum(send_sizes)[:-1]]).tolist()),
            (recv_bytes, recv_sizes, np.concatenate([[0], np.cumsum(recv_sizes)[:-1]]).tolist()),
        )

        # unpack: sequential copies into the receive buffers
        any_failed, at = bool(failed), 0
        for q in range(p):
            if q == me:
                continue
            any_failed |= bool(recv_bytes[at : at + _HEADER].view(torch.int64).item())
            parts, _ = self._layout(int(recv_counts[q]))
            n = int(recv_counts[q])
            if n:
                rows = slice(int(recv_displs[q]), int(recv_displs[q + 1]))
                for d in range(len(self._shapes)):
                    received[d][rows].copy_(self._part(recv_bytes, at + parts[d], n, d))
            at += recv_sizes[q]
        shaped = [r.view((total,) + s) for r, s in zip(received, self._shapes)]
        return shaped[:-1], shaped[-1], buffers, any_failed
