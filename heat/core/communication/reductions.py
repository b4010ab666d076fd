"""
Reductions of tensors: ``Allreduce``, ``Reduce``, ``Reduce_scatter``, ``Scan``, ``Exscan`` and
their non-blocking forms.

Half types and bool reduce through the operations of :mod:`.datatypes`; messages longer than
``buffers._MAX_COUNT`` elements are reduced piece by piece.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from mpi4py import MPI

from . import buffers
from .buffers import (
    _check_tensor,
    _chunks,
    _int_list,
    _is_in_place,
    _local_block,
    _memory,
    _RecvStage,
    _send_tensor,
)
from .datatypes import _reduction
from .requests import Request, _finish_or_request, _start


class _Reductions:
    """Element-wise reductions of :class:`MPICommunication` (one of its parts)."""

    # set by MPICommunication.__init__
    handle: MPI.Intracomm
    rank: int
    size: int

    def _reduce_like(
        self, kind: str, sendbuf, recvbuf, op, root: int = 0, blocking: bool = True
    ) -> Any:
        """
        Allreduce, Reduce, Scan and Exscan, blocking or not (then a :class:`Request`):
        element-wise, split into pieces of at most ``buffers._MAX_COUNT`` elements.
        """
        sendbuf, recvbuf = _local_block(sendbuf), _local_block(recvbuf)
        is_root = kind != "Reduce" or self.rank == root
        if is_root and sendbuf is recvbuf and sendbuf is not None:
            sendbuf = MPI.IN_PLACE
        in_place = _is_in_place(sendbuf)
        if in_place and not is_root:
            raise ValueError("sendbuf may be MPI.IN_PLACE only on the root of Reduce")
        if is_root:
            _check_tensor(recvbuf, "recvbuf")
        if not in_place:
            _check_tensor(sendbuf, "sendbuf")
            if is_root and (sendbuf.dtype != recvbuf.dtype or sendbuf.numel() != recvbuf.numel()):
                raise ValueError(
                    f"recvbuf ({recvbuf.dtype}, {recvbuf.numel()} elements) does not match "
                    f"sendbuf ({sendbuf.dtype}, {sendbuf.numel()} elements)"
                )
        reference = recvbuf if in_place else sendbuf
        wire, mpi_op, host = _reduction(reference.dtype, op)
        send = None if in_place else _send_tensor(sendbuf, host)
        stage = _RecvStage(recvbuf, preserve=in_place, force_host=host) if is_root else None
        requests = []
        for offset, n in _chunks(reference.numel()):
            sb = MPI.IN_PLACE if in_place else [_memory(send, offset, n), n, wire]
            rb = [_memory(stage.work, offset, n), n, wire] if stage is not None else None
            args = (sb, rb, mpi_op, root) if kind == "Reduce" else (sb, rb, mpi_op)
            requests += _start(self.handle, kind, blocking, *args)
        if stage is None:
            return _finish_or_request(blocking, requests, None, None, (send,))
        return _finish_or_request(blocking, requests, recvbuf, stage.finish, (send, stage))

    def Allreduce(self, sendbuf, recvbuf: torch.Tensor, op: MPI.Op = MPI.SUM) -> torch.Tensor:
        """
        Combine ``sendbuf`` of all processes element-wise with ``op``; all processes get the result.

        Parameters
        ----------
        sendbuf : torch.Tensor or MPI.IN_PLACE
            Local contribution (MPI.IN_PLACE: take it from ``recvbuf``).
        recvbuf : torch.Tensor
            Receives the result; same dtype and number of elements as ``sendbuf``.
        op : MPI.Op
            ``MPI.SUM`` (default), ``PROD``, ``MIN``, ``MAX``, logical and bitwise ops where the
            dtype allows them, or a user-defined op.

        Returns
        -------
        torch.Tensor
            ``recvbuf``.

        Raises
        ------
        TypeError
            If a buffer is not a tensor or ``op`` is not an ``MPI.Op``.
        ValueError
            If the buffers do not match or ``op`` is not defined for the dtype.

        Examples
        --------
        >>> x = torch.full((2,), MPI_WORLD.rank + 1.0, dtype=torch.bfloat16)
        >>> MPI_WORLD.Allreduce(MPI.IN_PLACE, x, MPI.SUM)  # with 2 processes
        tensor([3., 3.], dtype=torch.bfloat16)
        """
        return self._reduce_like("Allreduce", sendbuf, recvbuf, op)

    def Reduce(self, sendbuf, recvbuf: Optional[torch.Tensor], op: MPI.Op = MPI.SUM, root: int = 0):
        """
        Combine ``sendbuf`` of all processes element-wise with ``op`` into ``recvbuf`` on ``root``.

        Parameters
        ----------
        sendbuf : torch.Tensor or MPI.IN_PLACE
            Local contribution (MPI.IN_PLACE only on ``root``).
        recvbuf : torch.Tensor or None
            Receives the result on ``root``; ignored elsewhere.
        op : MPI.Op
        root : int

        Returns
        -------
        torch.Tensor or None
            ``recvbuf`` on ``root``, None elsewhere.

        Examples
        --------
        >>> out = torch.empty(1, dtype=torch.int64)
        >>> MPI_WORLD.Reduce(torch.tensor([MPI_WORLD.rank]), out, MPI.MAX, root=0)  # on rank 0 of 3
        tensor([2])
        """
        root = self._check_root(root)
        return self._reduce_like("Reduce", sendbuf, recvbuf, op, root)

    def Scan(self, sendbuf, recvbuf: torch.Tensor, op: MPI.Op = MPI.SUM) -> torch.Tensor:
        """
        Inclusive prefix reduction: rank r gets ``op`` over the ``sendbuf`` of ranks 0..r.

        Examples
        --------
        >>> out = torch.empty(1)
        >>> MPI_WORLD.Scan(torch.ones(1), out)  # on rank 2
        tensor([3.])
        """
        return self._reduce_like("Scan", sendbuf, recvbuf, op)

    def Exscan(self, sendbuf, recvbuf: torch.Tensor, op: MPI.Op = MPI.SUM) -> torch.Tensor:
        """
        Exclusive prefix reduction: rank r gets ``op`` over ranks 0..r-1; rank 0's result is
        undefined (use ``exscan_tensor`` to get the neutral element there).

        Examples
        --------
        >>> out = torch.zeros(1)
        >>> MPI_WORLD.Exscan(torch.ones(1), out)  # on rank 2
        tensor([2.])
        """
        return self._reduce_like("Exscan", sendbuf, recvbuf, op)

    def Reduce_scatter(
        self, sendbuf, recvbuf: torch.Tensor, counts: Any, op: MPI.Op = MPI.SUM
    ) -> torch.Tensor:
        """
        Combine ``sendbuf`` of all processes element-wise with ``op``; process r receives only
        its block of the result: ``counts[r]`` elements starting at ``sum(counts[:r])``.

        Parameters
        ----------
        sendbuf : torch.Tensor
            Local contribution of ``sum(counts)`` elements.
        recvbuf : torch.Tensor
            Receives this process's block, ``counts[rank]`` elements of the dtype of ``sendbuf``.
        counts : sequence of int
            One block length per process.
        op : MPI.Op

        Returns
        -------
        torch.Tensor
            ``recvbuf``.

        Raises
        ------
        TypeError
            If a buffer is not a tensor or ``counts`` not a sequence of integers.
        ValueError
            If the buffers do not match ``counts`` or each other's dtype.

        Examples
        --------
        >>> out = torch.empty(1)
        >>> MPI_WORLD.Reduce_scatter(torch.arange(2.0), out, [1, 1])  # on rank 1 of 2
        tensor([2.])
        """
        return self._reduce_scatter(sendbuf, recvbuf, counts, op, blocking=True)

    def _reduce_scatter(self, sendbuf, recvbuf, counts, op, blocking: bool) -> Any:
        sendbuf, recvbuf = _local_block(sendbuf), _local_block(recvbuf)
        _check_tensor(sendbuf, "sendbuf")
        _check_tensor(recvbuf, "recvbuf")
        counts = _int_list(counts, "counts", self.size)
        total = sum(counts)
        if sendbuf.numel() != total:
            raise ValueError(
                f"sendbuf must have sum(counts) = {total} elements, got {sendbuf.numel()}"
            )
        if recvbuf.numel() != counts[self.rank] or recvbuf.dtype != sendbuf.dtype:
            raise ValueError(
                f"recvbuf ({recvbuf.dtype}, {recvbuf.numel()} elements) must hold "
                f"counts[{self.rank}] = {counts[self.rank]} elements of {sendbuf.dtype}"
            )
        if total > buffers._MAX_COUNT:
            # longer than one call may carry: reduce everything (in pieces), keep the own block;
            # completed before returning, also in the non-blocking form
            whole = torch.empty(total, dtype=sendbuf.dtype, device=sendbuf.device)
            self._reduce_like("Allreduce", sendbuf.reshape(-1), whole, op)
            with torch.no_grad():
                recvbuf.view(-1).copy_(whole.narrow(0, sum(counts[: self.rank]), counts[self.rank]))
            return _finish_or_request(blocking, [], recvbuf)
        wire, mpi_op, host = _reduction(sendbuf.dtype, op)
        send = _send_tensor(sendbuf, host)
        stage = _RecvStage(recvbuf, force_host=host)
        requests = _start(
            self.handle,
            "Reduce_scatter",
            blocking,
            [_memory(send), total, wire],
            [_memory(stage.work), counts[self.rank], wire],
            counts,
            mpi_op,
        )
        return _finish_or_request(blocking, requests, recvbuf, stage.finish, (send, stage))

    # -- non-blocking forms: the same arguments; the request's Wait() gives the result ----------

    def Ireduce_scatter(
        self, sendbuf, recvbuf: torch.Tensor, counts: Any, op: MPI.Op = MPI.SUM
    ) -> Request:
        """
        Non-blocking :meth:`Reduce_scatter`; ``Wait()`` on the returned request gives
        ``recvbuf``. The request keeps both buffers alive until it completes.

        Examples
        --------
        >>> req = MPI_WORLD.Ireduce_scatter(torch.arange(2.0), torch.empty(1), [1, 1])
        >>> req.Wait()  # on rank 1 of 2
        tensor([2.])
        """
        return self._reduce_scatter(sendbuf, recvbuf, counts, op, blocking=False)

    def Iallreduce(self, sendbuf, recvbuf: torch.Tensor, op: MPI.Op = MPI.SUM) -> Request:
        """
        Non-blocking :meth:`Allreduce`; ``Wait()`` on the returned request gives ``recvbuf``.

        The request keeps every buffer alive until it completes, so the caller may drop its
        references to them; ``recvbuf`` must not be read before ``Wait()`` or a true ``Test()``.

        Examples
        --------
        >>> req = MPI_WORLD.Iallreduce(torch.ones(2), torch.empty(2), MPI.SUM)
        >>> req.Wait()  # with 2 processes
        tensor([2., 2.])
        """
        return self._reduce_like("Allreduce", sendbuf, recvbuf, op, blocking=False)

    def Ireduce(
        self, sendbuf, recvbuf: Optional[torch.Tensor], op: MPI.Op = MPI.SUM, root: int = 0
    ) -> Request:
        """
        Non-blocking :meth:`Reduce`; ``Wait()`` gives ``recvbuf`` on ``root``, None elsewhere.

        Examples
        --------
        >>> out = torch.empty(1, dtype=torch.int64)
        >>> req = MPI_WORLD.Ireduce(torch.tensor([MPI_WORLD.rank]), out, MPI.MAX, root=0)
        >>> req.Wait()  # on rank 0 of 3
        tensor([2])
        """
        root = self._check_root(root)
        return self._reduce_like("Reduce", sendbuf, recvbuf, op, root, blocking=False)

    def Iscan(self, sendbuf, recvbuf: torch.Tensor, op: MPI.Op = MPI.SUM) -> Request:
        """
        Non-blocking :meth:`Scan`; ``Wait()`` on the returned request gives ``recvbuf``.

        Examples
        --------
        >>> MPI_WORLD.Iscan(torch.ones(1), torch.empty(1)).Wait()  # on rank 2
        tensor([3.])
        """
        return self._reduce_like("Scan", sendbuf, recvbuf, op, blocking=False)

    def Iexscan(self, sendbuf, recvbuf: torch.Tensor, op: MPI.Op = MPI.SUM) -> Request:
        """
        Non-blocking :meth:`Exscan` (rank 0's result is undefined); ``Wait()`` gives ``recvbuf``.

        Examples
        --------
        >>> MPI_WORLD.Iexscan(torch.ones(1), torch.zeros(1)).Wait()  # on rank 2
        tensor([2.])
        """
        return self._reduce_like("Exscan", sendbuf, recvbuf, op, blocking=False)
