"""
Data movement with equal blocks: ``Bcast``, point-to-point, ``Allgather``, ``Gather``, ``Scatter``,
``Alltoall`` and their non-blocking forms.
"""

from __future__ import annotations

from typing import Optional

import torch
from mpi4py import MPI

from .buffers import (
    _check_tensor,
    _is_in_place,
    _memory,
    _RecvStage,
    _send_tensor,
    _Types,
)
from .datatypes import _TRANSPORT_TYPES
from .requests import Request


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
        _check_tensor(buf, "buf")
        wire = _TRANSPORT_TYPES[buf.dtype]
        if self.rank == root:
            stage, work = None, _send_tensor(buf)
        else:
            stage = _RecvStage(buf)
            work = stage.work
        types = _Types()
        try:
            count, dt = types.block(wire, work.numel())
            spec = [_memory(work), count, dt]
            if blocking:
                self.handle.Bcast(spec, root)
            else:
                request = self.handle.Ibcast(spec, root)
        finally:
            types.free()
        if blocking:
            if stage is not None:
                stage.finish()
            return buf
        return Request([request], buf, stage.finish if stage is not None else None, (work, stage))

    def Send(self, buf: torch.Tensor, dest: int, tag: int = 0) -> None:
        """
        Blocking send of ``buf`` to process ``dest``.

        Examples
        --------
        >>> if MPI_WORLD.rank == 0:
        ...     MPI_WORLD.Send(torch.arange(4), dest=1, tag=7)
        """
        _check_tensor(buf, "buf")
        work = _send_tensor(buf)
        types = _Types()
        try:
            count, dt = types.block(_TRANSPORT_TYPES[buf.dtype], work.numel())
            self.handle.Send([_memory(work), count, dt], dest, tag)
        finally:
            types.free()

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
        _check_tensor(buf, "buf")
        stage = _RecvStage(buf, preserve=True)
        types = _Types()
        try:
            count, dt = types.block(_TRANSPORT_TYPES[buf.dtype], stage.work.numel())
            self.handle.Recv([_memory(stage.work), count, dt], source, tag, status)
        finally:
            types.free()
        stage.finish()
        return buf

    def Isend(self, buf: torch.Tensor, dest: int, tag: int = 0) -> Request:
        """
        Non-blocking send; ``Wait()`` on the returned request gives None.

        Examples
        --------
        >>> req = MPI_WORLD.Isend(torch.ones(2), dest=(MPI_WORLD.rank + 1) % MPI_WORLD.size)
        """
        _check_tensor(buf, "buf")
        work = _send_tensor(buf)
        types = _Types()
        try:
            count, dt = types.block(_TRANSPORT_TYPES[buf.dtype], work.numel())
            request = self.handle.Isend([_memory(work), count, dt], dest, tag)
        finally:
            types.free()
        return Request([request], None, None, (work,))

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
        _check_tensor(buf, "buf")
        stage = _RecvStage(buf, preserve=True)
        types = _Types()
        try:
            count, dt = types.block(_TRANSPORT_TYPES[buf.dtype], stage.work.numel())
            request = self.handle.Irecv([_memory(stage.work), count, dt], source, tag)
        finally:
            types.free()
        return Request([request], buf, stage.finish, (stage,))

    def Barrier(self) -> None:
        """
        Wait until every process of the communicator has reached this call.

        Examples
        --------
        >>> MPI_WORLD.Barrier()
        """
        self.handle.Barrier()

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
        in_place = _is_in_place(sendbuf)
        _check_tensor(recvbuf, "recvbuf")
        n, remainder = divmod(recvbuf.numel(), self.size)
        if remainder:
            raise ValueError(
                f"recvbuf must have a multiple of {self.size} elements, got {recvbuf.numel()}"
            )
        if not in_place:
            _check_tensor(sendbuf, "sendbuf")
            if sendbuf.numel() != n or sendbuf.dtype != recvbuf.dtype:
                raise ValueError(f"sendbuf must have {n} elements of {recvbuf.dtype}")
        wire = _TRANSPORT_TYPES[recvbuf.dtype]
        send = None if in_place else _send_tensor(sendbuf)
        stage = _RecvStage(recvbuf, preserve=in_place)
        types = _Types()
        try:
            count, dt = types.block(wire, n)
            sb = MPI.IN_PLACE if in_place else [_memory(send), count, dt]
            self.handle.Allgather(sb, [_memory(stage.work), count, dt])
        finally:
            types.free()
        stage.finish()
        return recvbuf

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
        root = self._check_root(root)
        is_root = self.rank == root
        in_place = _is_in_place(sendbuf)
        if in_place and not is_root:
            raise ValueError("sendbuf may be MPI.IN_PLACE only on the root of Gather")
        if is_root:
            _check_tensor(recvbuf, "recvbuf")
            n, remainder = divmod(recvbuf.numel(), self.size)
            if remainder:
                raise ValueError(f"recvbuf must have a multiple of {self.size} elements")
        if not in_place:
            _check_tensor(sendbuf, "sendbuf")
            if is_root and (sendbuf.numel() != n or sendbuf.dtype != recvbuf.dtype):
                raise ValueError(f"sendbuf must have {n} elements of {recvbuf.dtype}")
            n = sendbuf.numel()
        wire = _TRANSPORT_TYPES[(recvbuf if in_place else sendbuf).dtype]
        send = None if in_place else _send_tensor(sendbuf)
        stage = _RecvStage(recvbuf, preserve=in_place) if is_root else None
        types = _Types()
        try:
            count, dt = types.block(wire, n)
            sb = MPI.IN_PLACE if in_place else [_memory(send), count, dt]
            rb = [_memory(stage.work), count, dt] if is_root else None
            self.handle.Gather(sb, rb, root)
        finally:
            types.free()
        if not is_root:
            return None
        stage.finish()
        return recvbuf

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
        root = self._check_root(root)
        is_root = self.rank == root
        in_place = _is_in_place(recvbuf)
        if in_place and not is_root:
            raise ValueError("recvbuf may be MPI.IN_PLACE only on the root of Scatter")
        if is_root:
            _check_tensor(sendbuf, "sendbuf")
            n, remainder = divmod(sendbuf.numel(), self.size)
            if remainder:
                raise ValueError(f"sendbuf must have a multiple of {self.size} elements")
        if not in_place:
            _check_tensor(recvbuf, "recvbuf")
            if is_root and (recvbuf.numel() != n or recvbuf.dtype != sendbuf.dtype):
                raise ValueError(f"recvbuf must have {n} elements of {sendbuf.dtype}")
            n = recvbuf.numel()
        wire = _TRANSPORT_TYPES[(sendbuf if is_root else recvbuf).dtype]
        send = _send_tensor(sendbuf) if is_root else None
        stage = None if in_place else _RecvStage(recvbuf)
        types = _Types()
        try:
            count, dt = types.block(wire, n)
            sb = [_memory(send), count, dt] if is_root else None
            rb = MPI.IN_PLACE if in_place else [_memory(stage.work), count, dt]
            self.handle.Scatter(sb, rb, root)
        finally:
            types.free()
        if in_place:
            return None
        stage.finish()
        return recvbuf

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
        in_place = _is_in_place(sendbuf)
        _check_tensor(recvbuf, "recvbuf")
        n, remainder = divmod(recvbuf.numel(), self.size)
        if remainder:
            raise ValueError(
                f"recvbuf must have a multiple of {self.size} elements, got {recvbuf.numel()}"
            )
        if not in_place:
            _check_tensor(sendbuf, "sendbuf")
            if sendbuf.numel() != recvbuf.numel() or sendbuf.dtype != recvbuf.dtype:
                raise ValueError(
                    "sendbuf and recvbuf must have the same dtype and number of elements"
                )
        wire = _TRANSPORT_TYPES[recvbuf.dtype]
        stage = _RecvStage(recvbuf, preserve=in_place)
        send = stage.work.clone() if in_place else _send_tensor(sendbuf)
        types = _Types()
        try:
            count, dt = types.block(wire, n)
            self.handle.Alltoall([_memory(send), count, dt], [_memory(stage.work), count, dt])
        finally:
            types.free()
        stage.finish()
        return recvbuf
