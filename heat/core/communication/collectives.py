"""
Data movement with equal blocks: ``Bcast``, point-to-point, ``Allgather``, ``Gather``, ``Scatter``,
``Alltoall`` and their non-blocking forms.

Each operation is one private implementation with a ``blocking`` switch (see :mod:`.requests`),
so a non-blocking call checks its arguments and stages its buffers exactly as the blocking one.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from mpi4py import MPI

from .buffers import (
    _check_tensor,
    _is_in_place,
    _local_block,
    _memory,
    _RecvStage,
    _send_tensor,
    _Types,
)
from .datatypes import _TRANSPORT_TYPES
from .requests import Request, _finish_or_request, _start


def _rooted_buffers(gather: bool, is_root: bool, in_place: bool, whole, part, preserve_whole: bool):
    """
    The memory MPI uses in a Gather(v) or Scatter(v), as ``(stage, whole_work, part_work,
    result)``. Gather: the root receives ``whole`` (a stage that keeps what MPI does not write
    when ``preserve_whole``); every process sends ``part``. Scatter: the root sends ``whole``;
    every process receives ``part``. ``part`` is MPI.IN_PLACE on the root when ``in_place``.
    """
    if gather:
        stage = _RecvStage(whole, preserve=preserve_whole) if is_root else None
        whole_work = stage.work if is_root else None
        part_work = None if in_place else _send_tensor(part)
        return stage, whole_work, part_work, (whole if is_root else None)
    stage = None if in_place else _RecvStage(part)
    whole_work = _send_tensor(whole) if is_root else None
    part_work = None if in_place else stage.work
    return stage, whole_work, part_work, (None if in_place else part)


class _Collectives:
    """Broadcast, point-to-point and equal-block collectives of :class:`MPICommunication`."""

    # set by MPICommunication.__init__
    handle: MPI.Intracomm
    rank: int
    size: int

    # -- broadcast and point-to-point ------------------------------------------------------------

    def Bcast(self, buf: torch.Tensor, root: int = 0) -> torch.Tensor:
        """
        Copy ``buf`` of ``root`` into ``buf`` of every process.

        Parameters
        ----------
        buf : torch.Tensor
            Data on ``root``; receive tensor (same dtype and number of elements) elsewhere.
        root : int

        Returns
        -------
        torch.Tensor
            ``buf``.

        Examples
        --------
        >>> x = torch.arange(3) if MPI_WORLD.rank == 0 else torch.empty(3, dtype=torch.int64)
        >>> MPI_WORLD.Bcast(x, root=0)
        tensor([0, 1, 2])
        """
        return self._bcast(buf, root, blocking=True)

    def Ibcast(self, buf: torch.Tensor, root: int = 0) -> Request:
        """
        Non-blocking ``Bcast``; the returned request's ``Wait()`` gives ``buf``.

        Examples
        --------
        >>> x = torch.ones(2) if MPI_WORLD.rank == 0 else torch.zeros(2)
        >>> MPI_WORLD.Ibcast(x).Wait()
        tensor([1., 1.])
        """
        return self._bcast(buf, root, blocking=False)

    def _bcast(self, buf, root, blocking):
        root = self._check_root(root)
        buf = _check_tensor(_local_block(buf), "buf")
        wire = _TRANSPORT_TYPES[buf.dtype]
        if self.rank == root:
            stage, work = None, _send_tensor(buf)
        else:
            stage = _RecvStage(buf)
            work = stage.work
        types = _Types()
        try:
            count, dt = types.block(wire, work.numel())
            requests = _start(self.handle, "Bcast", blocking, [_memory(work), count, dt], root)
        finally:
            types.free()
        finish = stage.finish if stage is not None else None
        return _finish_or_request(blocking, requests, buf, finish, (work, stage))

    def Send(self, buf: torch.Tensor, dest: int, tag: int = 0) -> None:
        """
        Blocking send of ``buf`` to process ``dest``.

        Examples
        --------
        >>> if MPI_WORLD.rank == 0:
        ...     MPI_WORLD.Send(torch.arange(4), dest=1, tag=7)
        """
        self._send(buf, dest, tag, blocking=True)

    def Isend(self, buf: torch.Tensor, dest: int, tag: int = 0) -> Request:
        """
        Non-blocking send; ``Wait()`` on the returned request gives None.

        Examples
        --------
        >>> req = MPI_WORLD.Isend(torch.ones(2), dest=(MPI_WORLD.rank + 1) % MPI_WORLD.size)
        """
        return self._send(buf, dest, tag, blocking=False)

    def _send(self, buf, dest, tag, blocking):
        buf = _check_tensor(_local_block(buf), "buf")
        work = _send_tensor(buf)
        types = _Types()
        try:
            count, dt = types.block(_TRANSPORT_TYPES[buf.dtype], work.numel())
            requests = _start(self.handle, "Send", blocking, [_memory(work), count, dt], dest, tag)
        finally:
            types.free()
        return _finish_or_request(blocking, requests, None, None, (work,))

    def Recv(
        self,
        buf: torch.Tensor,
        source: int = MPI.ANY_SOURCE,
        tag: int = MPI.ANY_TAG,
        status: Optional[MPI.Status] = None,
    ) -> torch.Tensor:
        """
        Blocking receive into ``buf`` from ``source``; returns ``buf``.

        Examples
        --------
        >>> if MPI_WORLD.rank == 1:
        ...     MPI_WORLD.Recv(torch.empty(4, dtype=torch.int64), source=0, tag=7)
        tensor([0, 1, 2, 3])
        """
        return self._recv(buf, source, tag, status, blocking=True)

    def Irecv(
        self, buf: torch.Tensor, source: int = MPI.ANY_SOURCE, tag: int = MPI.ANY_TAG
    ) -> Request:
        """
        Non-blocking receive; ``Wait()`` on the returned request gives ``buf`` filled.

        Examples
        --------
        >>> req = MPI_WORLD.Irecv(torch.empty(2), source=(MPI_WORLD.rank - 1) % MPI_WORLD.size)
        >>> req.Wait()
        tensor([1., 1.])
        """
        return self._recv(buf, source, tag, None, blocking=False)

    def _recv(self, buf, source, tag, status, blocking):
        buf = _check_tensor(_local_block(buf), "buf")
        stage = _RecvStage(buf, preserve=True)
        types = _Types()
        try:
            count, dt = types.block(_TRANSPORT_TYPES[buf.dtype], stage.work.numel())
            # the status of a non-blocking receive is given to the request's Wait()
            args = (source, tag, status) if blocking else (source, tag)
            spec = [_memory(stage.work), count, dt]
            requests = _start(self.handle, "Recv", blocking, spec, *args)
        finally:
            types.free()
        return _finish_or_request(blocking, requests, buf, stage.finish, (stage,))

    def Barrier(self) -> None:
        """
        Wait until every process of the communicator has reached this call.

        Examples
        --------
        >>> MPI_WORLD.Barrier()
        """
        self.handle.Barrier()

    def Ibarrier(self) -> Request:
        """
        Start a barrier without blocking; the returned request completes once every process
        of the communicator has started it.

        Examples
        --------
        >>> request = MPI_WORLD.Ibarrier()
        >>> ...                 # work that needs no other process
        >>> request.Wait()
        """
        return Request([self.handle.Ibarrier()])

    # -- gathers, scatters, all-to-all with equal blocks ------------------------------------------

    def Allgather(self, sendbuf, recvbuf: torch.Tensor) -> torch.Tensor:
        """
        Concatenate the (flattened) ``sendbuf`` of all processes, in rank order, into ``recvbuf``.

        Parameters
        ----------
        sendbuf : torch.Tensor or MPI.IN_PLACE
            n elements (MPI.IN_PLACE: this process's block is already at its place in ``recvbuf``).
        recvbuf : torch.Tensor
            ``n * size`` elements.

        Examples
        --------
        >>> out = torch.empty(MPI_WORLD.size, 2)
        >>> MPI_WORLD.Allgather(torch.full((2,), float(MPI_WORLD.rank)), out)  # with 2 processes
        tensor([[0., 0.],
                [1., 1.]])
        """
        return self._allgather(sendbuf, recvbuf, blocking=True)

    def Iallgather(self, sendbuf, recvbuf: torch.Tensor) -> Request:
        """
        Non-blocking :meth:`Allgather`; ``Wait()`` on the returned request gives ``recvbuf``.

        The request keeps every buffer alive until it completes, so the caller may drop its
        references to them; ``recvbuf`` must not be read before ``Wait()`` or a true ``Test()``.

        Examples
        --------
        >>> out = torch.empty(MPI_WORLD.size, dtype=torch.int64)
        >>> MPI_WORLD.Iallgather(torch.tensor([MPI_WORLD.rank]), out).Wait()  # with 2 processes
        tensor([0, 1])
        """
        return self._allgather(sendbuf, recvbuf, blocking=False)

    def _equal_blocks(self, sendbuf, recvbuf, send_blocks: int):
        """
        The checked buffers of Allgather (``send_blocks=1``) and Alltoall (``send_blocks=size``):
        ``(sendbuf, recvbuf, in_place, n)`` with ``n`` elements per block.
        """
        sendbuf, recvbuf = _local_block(sendbuf), _local_block(recvbuf)
        in_place = _is_in_place(sendbuf)
        _check_tensor(recvbuf, "recvbuf")
        n, remainder = divmod(recvbuf.numel(), self.size)
        if remainder:
            raise ValueError(
                f"recvbuf must have a multiple of {self.size} elements, got {recvbuf.numel()}"
            )
        if not in_place:
            _check_tensor(sendbuf, "sendbuf")
            if sendbuf.numel() != n * send_blocks or sendbuf.dtype != recvbuf.dtype:
                raise ValueError(f"sendbuf must have {n * send_blocks} elements of {recvbuf.dtype}")
        return sendbuf, recvbuf, in_place, n

    def _allgather(self, sendbuf, recvbuf, blocking):
        sendbuf, recvbuf, in_place, n = self._equal_blocks(sendbuf, recvbuf, 1)
        wire = _TRANSPORT_TYPES[recvbuf.dtype]
        send = None if in_place else _send_tensor(sendbuf)
        stage = _RecvStage(recvbuf, preserve=in_place)
        types = _Types()
        try:
            count, dt = types.block(wire, n)
            sb = MPI.IN_PLACE if in_place else [_memory(send), count, dt]
            rb = [_memory(stage.work), count, dt]
            requests = _start(self.handle, "Allgather", blocking, sb, rb)
        finally:
            types.free()
        return _finish_or_request(blocking, requests, recvbuf, stage.finish, (send, stage))

    def Gather(self, sendbuf, recvbuf: Optional[torch.Tensor], root: int = 0):
        """
        Concatenate the (flattened) ``sendbuf`` of all processes into ``recvbuf`` on ``root``.

        Parameters
        ----------
        sendbuf : torch.Tensor or MPI.IN_PLACE
            n elements (MPI.IN_PLACE only on ``root``).
        recvbuf : torch.Tensor or None
            ``n * size`` elements on ``root``; ignored elsewhere.
        root : int

        Returns
        -------
        torch.Tensor or None
            ``recvbuf`` on ``root``, None elsewhere.

        Examples
        --------
        >>> out = torch.empty(MPI_WORLD.size, dtype=torch.int64) if MPI_WORLD.rank == 0 else None
        >>> MPI_WORLD.Gather(torch.tensor([MPI_WORLD.rank]), out)  # on rank 0 of 3
        tensor([0, 1, 2])
        """
        return self._rooted("Gather", recvbuf, sendbuf, root, blocking=True)

    def Igather(self, sendbuf, recvbuf: Optional[torch.Tensor], root: int = 0) -> Request:
        """
        Non-blocking :meth:`Gather`; ``Wait()`` gives ``recvbuf`` on ``root``, None elsewhere.

        Examples
        --------
        >>> out = torch.empty(MPI_WORLD.size, dtype=torch.int64) if MPI_WORLD.rank == 0 else None
        >>> MPI_WORLD.Igather(torch.tensor([MPI_WORLD.rank]), out).Wait()  # on rank 0 of 3
        tensor([0, 1, 2])
        """
        return self._rooted("Gather", recvbuf, sendbuf, root, blocking=False)

    def Scatter(self, sendbuf: Optional[torch.Tensor], recvbuf, root: int = 0):
        """
        Split the (flattened) ``sendbuf`` of ``root`` into ``size`` blocks; rank r gets block r.

        Parameters
        ----------
        sendbuf : torch.Tensor or None
            ``n * size`` elements on ``root``; ignored elsewhere.
        recvbuf : torch.Tensor or MPI.IN_PLACE
            n elements (MPI.IN_PLACE only on ``root``: its block stays in ``sendbuf``).
        root : int

        Returns
        -------
        torch.Tensor or None
            ``recvbuf`` (None for MPI.IN_PLACE).

        Examples
        --------
        >>> data = torch.arange(2.0 * MPI_WORLD.size) if MPI_WORLD.rank == 0 else None
        >>> MPI_WORLD.Scatter(data, torch.empty(2), root=0)  # on rank 1
        tensor([2., 3.])
        """
        return self._rooted("Scatter", sendbuf, recvbuf, root, blocking=True)

    def Iscatter(self, sendbuf: Optional[torch.Tensor], recvbuf, root: int = 0) -> Request:
        """
        Non-blocking :meth:`Scatter`; ``Wait()`` gives ``recvbuf`` (None for MPI.IN_PLACE).

        Examples
        --------
        >>> data = torch.arange(2.0 * MPI_WORLD.size) if MPI_WORLD.rank == 0 else None
        >>> MPI_WORLD.Iscatter(data, torch.empty(2), root=0).Wait()  # on rank 1
        tensor([2., 3.])
        """
        return self._rooted("Scatter", sendbuf, recvbuf, root, blocking=False)

    def _rooted(self, kind: str, whole, part, root, blocking) -> Any:
        """
        Gather (``whole`` is the receive tensor of ``root``, ``part`` every send block) or Scatter
        (``whole`` is the send tensor of ``root``, ``part`` every receive block). ``part`` may be
        MPI.IN_PLACE on ``root``: its block stays where it is in ``whole``.
        """
        gather = kind == "Gather"
        whole_name, part_name = ("recvbuf", "sendbuf") if gather else ("sendbuf", "recvbuf")
        root = self._check_root(root)
        whole, part = _local_block(whole), _local_block(part)
        is_root = self.rank == root
        in_place = _is_in_place(part)
        if in_place and not is_root:
            raise ValueError(f"{part_name} may be MPI.IN_PLACE only on the root of {kind}")
        if is_root:
            _check_tensor(whole, whole_name)
            n, remainder = divmod(whole.numel(), self.size)
            if remainder:
                raise ValueError(f"{whole_name} must have a multiple of {self.size} elements")
        if not in_place:
            _check_tensor(part, part_name)
            if is_root and (part.numel() != n or part.dtype != whole.dtype):
                raise ValueError(f"{part_name} must have {n} elements of {whole.dtype}")
            n = part.numel()
        wire = _TRANSPORT_TYPES[(whole if is_root else part).dtype]
        stage, whole_work, part_work, result = _rooted_buffers(
            gather, is_root, in_place, whole, part, preserve_whole=in_place
        )
        types = _Types()
        try:
            count, dt = types.block(wire, n)
            part_spec = MPI.IN_PLACE if in_place else [_memory(part_work), count, dt]
            whole_spec = [_memory(whole_work), count, dt] if is_root else None
            specs = (part_spec, whole_spec) if gather else (whole_spec, part_spec)
            requests = _start(self.handle, kind, blocking, *specs, root)
        finally:
            types.free()
        finish = stage.finish if stage is not None else None
        keepalive = (whole_work, part_work, stage)
        return _finish_or_request(blocking, requests, result, finish, keepalive)

    def Alltoall(self, sendbuf, recvbuf: torch.Tensor) -> torch.Tensor:
        """
        Block r of the (flattened) ``sendbuf`` goes to rank r; block r of ``recvbuf`` comes from it.

        Parameters
        ----------
        sendbuf : torch.Tensor or MPI.IN_PLACE
            ``n * size`` elements.
        recvbuf : torch.Tensor
            ``n * size`` elements.

        Examples
        --------
        >>> p, r = MPI_WORLD.size, MPI_WORLD.rank
        >>> out = torch.empty(p, dtype=torch.int64)
        >>> MPI_WORLD.Alltoall(torch.arange(p) + 10 * r, out)  # on rank 1 of 2
        tensor([ 1, 11])
        """
        return self._alltoall(sendbuf, recvbuf, blocking=True)

    def Ialltoall(self, sendbuf, recvbuf: torch.Tensor) -> Request:
        """
        Non-blocking :meth:`Alltoall`; ``Wait()`` on the returned request gives ``recvbuf``.

        Examples
        --------
        >>> p, r = MPI_WORLD.size, MPI_WORLD.rank
        >>> req = MPI_WORLD.Ialltoall(torch.arange(p) + 10 * r, torch.empty(p, dtype=torch.int64))
        >>> req.Wait()  # on rank 1 of 2
        tensor([ 1, 11])
        """
        return self._alltoall(sendbuf, recvbuf, blocking=False)

    def _alltoall(self, sendbuf, recvbuf, blocking):
        sendbuf, recvbuf, in_place, n = self._equal_blocks(sendbuf, recvbuf, self.size)
        wire = _TRANSPORT_TYPES[recvbuf.dtype]
        stage = _RecvStage(recvbuf, preserve=in_place)
        send = stage.work.clone() if in_place else _send_tensor(sendbuf)
        types = _Types()
        try:
            count, dt = types.block(wire, n)
            sb, rb = [_memory(send), count, dt], [_memory(stage.work), count, dt]
            requests = _start(self.handle, "Alltoall", blocking, sb, rb)
        finally:
            types.free()
        return _finish_or_request(blocking, requests, recvbuf, stage.finish, (send, stage))
