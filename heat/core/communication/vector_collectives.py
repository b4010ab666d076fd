"""
Data movement with blocks of different sizes: ``Allgatherv``, ``Gatherv``, ``Scatterv``,
``Alltoallv``, ``Alltoallw`` and their non-blocking forms.

Without MPI-4 large counts, counts or displacements beyond ``buffers._MAX_COUNT`` go through one
``Alltoallw`` over absolute addresses. ``Alltoallw`` describes strided CPU tensors by derived
datatypes, so blocks move straight out of and into the final tensors. As in :mod:`.collectives`,
each operation is one implementation with a ``blocking`` switch.
"""

from __future__ import annotations

from typing import Any, List, Sequence

import torch
from mpi4py import MPI

from . import buffers as _buffers
from .buffers import (
    _check_tensor,
    _is_in_place,
    _local_block,
    _memory,
    _RecvStage,
    _same_pieces,
    _send_tensor,
    _Types,
    _wire_pieces,
)
from .collectives import _rooted_buffers
from .datatypes import _TRANSPORT_TYPES
from .requests import Request, _finish_or_request, _start

#: Allgatherv with blocks of at least this many bytes (and at most _BCAST_ALLGATHERV_MAX_PROCS
#: processes) runs as one broadcast per owner; see MPICommunication._allgatherv_by_bcasts.
_BCAST_ALLGATHERV_BYTES: int = 128 * 1024
_BCAST_ALLGATHERV_MAX_PROCS: int = 64


class _VectorCollectives:
    """Vector collectives and Alltoallw of :class:`MPICommunication` (one of its parts)."""

    # set by MPICommunication.__init__
    handle: MPI.Intracomm
    rank: int
    size: int

    def _large_count_fallback(self, need_big: bool) -> bool:
        """
        Whether a v-collective must move its data by :meth:`_alltoallw_segments` because counts
        or displacements on some rank exceed ``buffers._MAX_COUNT`` (never with MPI-4 large
        counts; one small blocking collective otherwise, also before a non-blocking call).
        """
        return _buffers._MAX_COUNT < _buffers._NO_LIMIT and self._any_rank(need_big)

    def _alltoallw_segments(self, sends, recvs, blocking: bool) -> List[MPI.Request]:
        """
        Move segments with one Alltoallw over absolute addresses (the large-count fallback);
        return the requests still to complete.

        ``sends[r]`` / ``recvs[r]`` are ``(tensor, offset, count, wire)`` or None.
        """
        types = _Types()
        try:
            scounts, stypes, rcounts, rtypes = [], [], [], []
            for segments, counts, dtypes in ((sends, scounts, stypes), (recvs, rcounts, rtypes)):
                for segment in segments:
                    count, dt = (0, MPI.BYTE) if segment is None else types.segment(*segment)
                    counts.append(count)
                    dtypes.append(dt)
            zeros = [0] * self.size
            sb = [MPI.BOTTOM, (scounts, zeros), stypes]
            rb = [MPI.BOTTOM, (rcounts, zeros), rtypes]
            return _start(self.handle, "Alltoallw", blocking, sb, rb)
        finally:
            types.free()

    # -- Allgatherv --------------------------------------------------------------------------------

    def Allgatherv(self, sendbuf, recvbuf) -> torch.Tensor:
        """
        Concatenate blocks of different sizes: rank r's ``sendbuf`` lands at ``displs[r]``.

        Parameters
        ----------
        sendbuf : torch.Tensor or MPI.IN_PLACE
            ``counts[rank]`` elements (MPI.IN_PLACE: already in place in the receive tensor).
        recvbuf : tuple (torch.Tensor, counts, displs)
            Receive tensor, elements from each rank, and where they start (default: packed).

        Returns
        -------
        torch.Tensor
            The receive tensor.

        Examples
        --------
        >>> r, p = MPI_WORLD.rank, MPI_WORLD.size
        >>> counts = list(range(1, p + 1))
        >>> out = torch.empty(sum(counts), dtype=torch.int64)
        >>> MPI_WORLD.Allgatherv(torch.full((r + 1,), r), (out, counts))  # with 2 processes
        tensor([0, 1, 1])
        """
        return self._allgatherv(sendbuf, recvbuf, blocking=True)

    def Iallgatherv(self, sendbuf, recvbuf) -> Request:
        """
        Non-blocking :meth:`Allgatherv`; ``Wait()`` on the returned request gives the receive
        tensor.

        The request keeps every buffer alive until it completes, so the caller may drop its
        references to them; the receive tensor must not be read before ``Wait()`` or a true
        ``Test()``.

        Examples
        --------
        >>> r, p = MPI_WORLD.rank, MPI_WORLD.size
        >>> out = torch.empty(p * (p + 1) // 2, dtype=torch.int64)
        >>> req = MPI_WORLD.Iallgatherv(torch.full((r + 1,), r), (out, list(range(1, p + 1))))
        >>> req.Wait()  # with 2 processes
        tensor([0, 1, 1])
        """
        return self._allgatherv(sendbuf, recvbuf, blocking=False)

    def _allgatherv(self, sendbuf, recvbuf, blocking):
        tensor, counts, displs = self._vbuf(recvbuf, "recvbuf")
        sendbuf = _local_block(sendbuf)
        in_place = _is_in_place(sendbuf)
        if not in_place:
            _check_tensor(sendbuf, "sendbuf")
            if sendbuf.numel() != counts[self.rank] or sendbuf.dtype != tensor.dtype:
                raise ValueError(
                    f"sendbuf must have counts[{self.rank}] = {counts[self.rank]} "
                    f"elements of {tensor.dtype}"
                )
        wire = _TRANSPORT_TYPES[tensor.dtype]
        stage = _RecvStage(tensor, preserve=True)
        send = None if in_place else _send_tensor(sendbuf)
        # counts/displs are known on every rank, so every rank takes the same path
        largest = max(counts, default=0) * tensor.element_size()
        by_bcasts = self.size <= _BCAST_ALLGATHERV_MAX_PROCS and largest >= _BCAST_ALLGATHERV_BYTES
        if by_bcasts or max(counts + displs, default=0) > _buffers._MAX_COUNT:
            requests = self._allgatherv_by_bcasts(send, stage.work, counts, displs, wire)
        else:
            types = _Types()
            try:
                if in_place:
                    sb = MPI.IN_PLACE
                else:
                    count, dt = types.block(wire, send.numel())
                    sb = [_memory(send), count, dt]
                rb = [_memory(stage.work), (counts, displs), wire]
                requests = _start(self.handle, "Allgatherv", blocking, sb, rb)
            finally:
                types.free()
        return _finish_or_request(blocking, requests, tensor, stage.finish, (send, stage))

    def _allgatherv_by_bcasts(self, send, work, counts, displs, wire) -> List[MPI.Request]:
        """
        Allgatherv as one non-blocking broadcast per owner, all in flight together; returns
        their requests.

        Measured here (MPICH 5, 2-4 processes on 2 cores): MPICH's Allgatherv is 15-90x slower
        than this for blocks of 256 KiB and more (its pipelined ring suffers from
        oversubscription); for small blocks the native call is faster. Each broadcast uses its own
        pointer, so displacements beyond the per-call limit need no special care either.
        """
        types = _Types()
        requests = []
        try:
            for owner, (count, displ) in enumerate(zip(counts, displs)):
                if count == 0:
                    continue
                if owner == self.rank and send is not None:
                    source, offset = send, 0  # the owner broadcasts straight from its send buffer
                else:
                    source, offset = work, displ
                n, dt = types.block(wire, count)
                requests.append(
                    self.handle.Ibcast([_memory(source, offset, count), n, dt], root=owner)
                )
        finally:
            types.free()
        if send is not None and counts[self.rank]:
            # the own block: no broadcast writes there, so it may be copied while they run
            own = slice(displs[self.rank], displs[self.rank] + counts[self.rank])
            work.view(-1)[own].copy_(send.reshape(-1))
        return requests

    # -- Gatherv and Scatterv ----------------------------------------------------------------------

    def Gatherv(self, sendbuf, recvbuf, root: int = 0):
        """
        Gather blocks of different sizes on ``root``: rank r's ``sendbuf`` lands at ``displs[r]``.

        Parameters
        ----------
        sendbuf : torch.Tensor or MPI.IN_PLACE
            Local block (MPI.IN_PLACE only on ``root``).
        recvbuf : tuple (torch.Tensor, counts, displs) or None
            On ``root``; ignored elsewhere.
        root : int

        Returns
        -------
        torch.Tensor or None
            The receive tensor on ``root``, None elsewhere.

        Examples
        --------
        >>> r, p = MPI_WORLD.rank, MPI_WORLD.size
        >>> out = (torch.empty(p * (p + 1) // 2), list(range(1, p + 1))) if r == 0 else None
        >>> MPI_WORLD.Gatherv(torch.full((r + 1,), float(r)), out)  # on rank 0 of 2
        tensor([0., 1., 1.])
        """
        return self._rootedv("Gatherv", recvbuf, sendbuf, root, blocking=True)

    def Igatherv(self, sendbuf, recvbuf, root: int = 0) -> Request:
        """
        Non-blocking :meth:`Gatherv`; ``Wait()`` gives the receive tensor on ``root``, None
        elsewhere.

        Examples
        --------
        >>> r, p = MPI_WORLD.rank, MPI_WORLD.size
        >>> out = (torch.empty(p * (p + 1) // 2), list(range(1, p + 1))) if r == 0 else None
        >>> MPI_WORLD.Igatherv(torch.full((r + 1,), float(r)), out).Wait()  # on rank 0 of 2
        tensor([0., 1., 1.])
        """
        return self._rootedv("Gatherv", recvbuf, sendbuf, root, blocking=False)

    def Scatterv(self, sendbuf, recvbuf, root: int = 0):
        """
        Scatter blocks of different sizes from ``root``: rank r gets ``counts[r]`` elements from
        ``displs[r]``.

        Parameters
        ----------
        sendbuf : tuple (torch.Tensor, counts, displs) or None
            On ``root``; ignored elsewhere.
        recvbuf : torch.Tensor or MPI.IN_PLACE
            ``counts[rank]`` elements (MPI.IN_PLACE only on ``root``).
        root : int

        Returns
        -------
        torch.Tensor or None
            ``recvbuf`` (None for MPI.IN_PLACE).

        Examples
        --------
        >>> r, p = MPI_WORLD.rank, MPI_WORLD.size
        >>> data = (torch.arange(p * (p + 1) // 2), list(range(1, p + 1))) if r == 0 else None
        >>> MPI_WORLD.Scatterv(data, torch.empty(r + 1, dtype=torch.int64))  # on rank 1 of 2
        tensor([1, 2])
        """
        return self._rootedv("Scatterv", sendbuf, recvbuf, root, blocking=True)

    def Iscatterv(self, sendbuf, recvbuf, root: int = 0) -> Request:
        """
        Non-blocking :meth:`Scatterv`; ``Wait()`` gives ``recvbuf`` (None for MPI.IN_PLACE).

        Examples
        --------
        >>> r, p = MPI_WORLD.rank, MPI_WORLD.size
        >>> data = (torch.arange(p * (p + 1) // 2), list(range(1, p + 1))) if r == 0 else None
        >>> MPI_WORLD.Iscatterv(data, torch.empty(r + 1, dtype=torch.int64)).Wait()  # rank 1 of 2
        tensor([1, 2])
        """
        return self._rootedv("Scatterv", sendbuf, recvbuf, root, blocking=False)

    def _rootedv(self, kind: str, whole, part, root, blocking) -> Any:
        """
        Gatherv (``whole`` is the ``(tensor, counts, displs)`` receive buffer of ``root``,
        ``part`` every send block) or Scatterv (``whole`` is the send buffer of ``root``, ``part``
        every receive block). ``part`` may be MPI.IN_PLACE on ``root``.
        """
        gather = kind == "Gatherv"
        whole_name, part_name = ("recvbuf", "sendbuf") if gather else ("sendbuf", "recvbuf")
        root = self._check_root(root)
        is_root = self.rank == root
        part = _local_block(part)
        in_place = _is_in_place(part)
        if in_place and not is_root:
            raise ValueError(f"{part_name} may be MPI.IN_PLACE only on the root of {kind}")
        if is_root:
            tensor, counts, displs = self._vbuf(whole, whole_name)
        if not in_place:
            _check_tensor(part, part_name)
            if is_root and (part.numel() != counts[self.rank] or part.dtype != tensor.dtype):
                raise ValueError(
                    f"{part_name} must have counts[{self.rank}] = {counts[self.rank]} "
                    f"elements of {tensor.dtype}"
                )
        wire = _TRANSPORT_TYPES[(tensor if is_root else part).dtype]
        # the gaps between blocks keep their values
        stage, whole_work, part_work, result = _rooted_buffers(
            gather, is_root, in_place, tensor if is_root else None, part, preserve_whole=True
        )
        need_big = (
            max(counts + displs, default=0) if is_root else part_work.numel()
        ) > _buffers._MAX_COUNT
        if self._large_count_fallback(need_big):
            # one segment per block of the root's tensor, and every part from or to the root
            whole_segments = [None] * self.size
            part_segments = [None] * self.size
            if is_root:
                whole_segments = [(whole_work, d, c, wire) for c, d in zip(counts, displs)]
                if in_place:
                    whole_segments[root] = None
            if not in_place:
                part_segments[root] = (part_work, 0, part_work.numel(), wire)
            if gather:
                requests = self._alltoallw_segments(part_segments, whole_segments, blocking)
            else:
                requests = self._alltoallw_segments(whole_segments, part_segments, blocking)
        else:
            types = _Types()
            try:
                if in_place:
                    part_spec = MPI.IN_PLACE
                else:
                    count, dt = types.block(wire, part_work.numel())
                    part_spec = [_memory(part_work), count, dt]
                whole_spec = [_memory(whole_work), (counts, displs), wire] if is_root else None
                specs = (part_spec, whole_spec) if gather else (whole_spec, part_spec)
                requests = _start(self.handle, kind, blocking, *specs, root)
            finally:
                types.free()
        finish = stage.finish if stage is not None else None
        keepalive = (whole_work, part_work, stage)
        return _finish_or_request(blocking, requests, result, finish, keepalive)

    # -- Alltoallv and Alltoallw -------------------------------------------------------------------

    def Alltoallv(self, sendbuf, recvbuf) -> torch.Tensor:
        """
        All-to-all with blocks of different sizes.

        Parameters
        ----------
        sendbuf : tuple (torch.Tensor, counts, displs) or MPI.IN_PLACE
            ``counts[r]`` elements from ``displs[r]`` go to rank r (MPI.IN_PLACE: send from the
            receive tensor, with the receive counts and displacements).
        recvbuf : tuple (torch.Tensor, counts, displs)
            ``counts[r]`` elements from rank r land at ``displs[r]``.

        Returns
        -------
        torch.Tensor
            The receive tensor.

        Examples
        --------
        >>> r, p = MPI_WORLD.rank, MPI_WORLD.size
        >>> send = (torch.full((p,), float(r)), [1] * p)
        >>> MPI_WORLD.Alltoallv(send, (torch.empty(p), [1] * p))  # with 2 processes
        tensor([0., 1.])
        """
        return self._alltoallv(sendbuf, recvbuf, blocking=True)

    def Ialltoallv(self, sendbuf, recvbuf) -> Request:
        """
        Non-blocking :meth:`Alltoallv`; ``Wait()`` on the returned request gives the receive
        tensor.

        Examples
        --------
        >>> r, p = MPI_WORLD.rank, MPI_WORLD.size
        >>> send = (torch.full((p,), float(r)), [1] * p)
        >>> MPI_WORLD.Ialltoallv(send, (torch.empty(p), [1] * p)).Wait()  # with 2 processes
        tensor([0., 1.])
        """
        return self._alltoallv(sendbuf, recvbuf, blocking=False)

    def _alltoallv(self, sendbuf, recvbuf, blocking):
        tensor, rcounts, rdispls = self._vbuf(recvbuf, "recvbuf")
        in_place = _is_in_place(sendbuf)
        if in_place:
            stensor, scounts, sdispls = tensor, rcounts, rdispls
        else:
            stensor, scounts, sdispls = self._vbuf(sendbuf, "sendbuf")
            if stensor.dtype != tensor.dtype:
                raise ValueError(
                    f"sendbuf dtype {stensor.dtype} differs from recvbuf dtype {tensor.dtype}"
                )
        wire = _TRANSPORT_TYPES[tensor.dtype]
        stage = _RecvStage(tensor, preserve=True)
        # in place: MPI would need a copy of the outgoing data anyway
        send = stage.work.clone() if in_place else _send_tensor(stensor)
        need_big = max(scounts + sdispls + rcounts + rdispls, default=0) > _buffers._MAX_COUNT
        if self._large_count_fallback(need_big):
            sends = [(send, d, c, wire) for c, d in zip(scounts, sdispls)]
            recvs = [(stage.work, d, c, wire) for c, d in zip(rcounts, rdispls)]
            requests = self._alltoallw_segments(sends, recvs, blocking)
        else:
            sb = [_memory(send), (scounts, sdispls), wire]
            rb = [_memory(stage.work), (rcounts, rdispls), wire]
            requests = _start(self.handle, "Alltoallv", blocking, sb, rb)
        return _finish_or_request(blocking, requests, tensor, stage.finish, (send, stage))

    def Alltoallw(self, sendbufs: Sequence[Any], recvbufs: Sequence[Any]) -> List[Any]:
        """
        All-to-all of separate tensors: ``sendbufs[r]`` goes to rank r; ``recvbufs[r]`` is from r.

        Each pair may have its own dtype and shape (only the number of elements and the dtype of
        ``sendbufs[r]`` on rank q and ``recvbufs[q]`` on rank r must match). An entry may also be
        a list of tensors, sent or filled one after the other. Strided CPU tensors (column
        blocks, transposed or expanded views) are described to MPI by derived datatypes, so
        nothing is packed or unpacked by a copy: this is the way to move blocks straight out of
        and into the final tensors. The part a process sends to itself is a plain tensor copy
        when the send and receive lists agree piece by piece in shape and dtype.

        Parameters
        ----------
        sendbufs, recvbufs : sequence of torch.Tensor or of lists of torch.Tensor
            One entry per process.

        Returns
        -------
        list
            ``recvbufs`` (a DNDarray entry replaced by its local block).

        Examples
        --------
        >>> p, r = MPI_WORLD.size, MPI_WORLD.rank
        >>> sends = [torch.full((q + 1,), r) for q in range(p)]
        >>> recvs = [torch.empty(r + 1, dtype=torch.int64) for q in range(p)]
        >>> MPI_WORLD.Alltoallw(sends, recvs)  # on rank 1 of 2
        [tensor([0, 0]), tensor([1, 1])]
        """
        return self._alltoallw(sendbufs, recvbufs, blocking=True)

    def Ialltoallw(self, sendbufs: Sequence[Any], recvbufs: Sequence[Any]) -> Request:
        """
        Non-blocking :meth:`Alltoallw`; ``Wait()`` on the returned request gives ``recvbufs``.

        The part a process sends to itself may already be copied when this returns; the other
        receive tensors are complete after ``Wait()`` or a true ``Test()``.

        Examples
        --------
        >>> p, r = MPI_WORLD.size, MPI_WORLD.rank
        >>> sends = [torch.full((q + 1,), r) for q in range(p)]
        >>> recvs = [torch.empty(r + 1, dtype=torch.int64) for q in range(p)]
        >>> MPI_WORLD.Ialltoallw(sends, recvs).Wait()  # on rank 1 of 2
        [tensor([0, 0]), tensor([1, 1])]
        """
        return self._alltoallw(sendbufs, recvbufs, blocking=False)

    def _alltoallw(self, sendbufs, recvbufs, blocking):
        sends = self._peer_pieces(sendbufs, "sendbufs")
        recvs = self._peer_pieces(recvbufs, "recvbufs")
        result = [_local_block(entry) for entry in recvbufs]
        # every tensor handed in stays alive until completion (the lists change below)
        keep: List[Any] = [tuple(sends), tuple(recvs)]
        me = self.rank
        if _same_pieces(sends[me], recvs[me]):
            with torch.no_grad():
                for source, target in zip(sends[me], recvs[me]):
                    target.copy_(source)
            sends[me], recvs[me] = [], []
        types, stages = _Types(), []
        try:
            specs = []
            for peers, peer_stages in ((sends, None), (recvs, stages)):
                counts, displs, dtypes = zip(
                    *(types.pieces(_wire_pieces(pieces, keep, peer_stages)) for pieces in peers)
                )
                specs.append([MPI.BOTTOM, (list(counts), list(displs)), list(dtypes)])
            requests = _start(self.handle, "Alltoallw", blocking, *specs)
        finally:
            types.free()

        def finish() -> None:
            for stage in stages:
                stage.finish()

        return _finish_or_request(blocking, requests, result, finish, (keep, stages))

    def _peer_pieces(self, bufs: Any, name: str) -> List[List[torch.Tensor]]:
        """
        One list of tensors per process from the entries of ``bufs`` (tensor, DNDarray or list
        of them).
        """
        if not isinstance(bufs, (list, tuple)) or len(bufs) != self.size:
            raise ValueError(f"{name} must be a list of {self.size} tensors")
        result = []
        for i, entry in enumerate(bufs):
            pieces = list(entry) if isinstance(entry, (list, tuple)) else [entry]
            pieces = [_check_tensor(_local_block(t), f"{name}[{i}]") for t in pieces]
            result.append(pieces)
        return result
