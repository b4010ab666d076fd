"""
The one door to MPI and to ``torch.distributed``.

Everything in heat that communicates asks an :class:`MPICommunication` object (usually ``x.comm``)
for it. This module provides

* buffer collectives on ``torch.Tensor`` objects of every heat dtype (``Allreduce``, ``Bcast``,
  ``Allgatherv``, ...), contiguous or not, on CPU or GPU (staged through host memory unless the MPI
  library is CUDA-aware), with counts beyond ``2**31`` elements;
* tensor-level conveniences that algorithm code should normally use (``allreduce_tensor``,
  ``allgather_tensors``, ``alltoallv_tensors``, ...): they exchange shapes themselves, accept empty
  and uneven blocks, and raise the same exception on every rank for a bad call;
* the node topology (node-local and cross-node communicators) and ``torch.distributed`` process
  groups created from MPI;
* the default communicator (``get_comm``, ``use_comm``, ``sanitize_comm``);
* per-process setup at import: abort the whole job on an uncaught exception, a fair share of
  compute threads per process, and transparent huge pages for torch's CPU allocator.

Notes
-----
MPI has no ``float16``/``bfloat16`` datatypes: such tensors travel as 16-bit integers and are
reduced by user-defined MPI operations that compute with torch. ``bool`` tensors travel as bytes;
reductions of booleans are logical (``SUM``/``MAX`` mean "any", ``PROD``/``MIN`` mean "all").
"""

from __future__ import annotations

import datetime
import math
import os
import socket
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
from mpi4py import MPI

__all__ = [
    "MPI",
    "Communication",
    "MPICommunication",
    "MPI_WORLD",
    "MPI_SELF",
    "NodeTopology",
    "NodeProcessGroups",
    "Request",
    "CUDA_AWARE_MPI",
    "get_comm",
    "use_comm",
    "sanitize_comm",
    "torch_process_group",
    "node_process_groups",
]

# ------------------------------------------------------------------------------------------------
# limits and datatypes
# ------------------------------------------------------------------------------------------------

#: True when the MPI library implements the MPI-4 large-count ("_c") functions; mpi4py then passes
#: counts beyond 2**31 - 1 straight through (measured with MPICH 5: Bcast, Allreduce with a
#: predefined and a user-defined op, Gatherv with a displacement beyond 2**31).
_LARGE_COUNT: bool = MPI.Get_version() >= (4, 0)
_INT_MAX: int = 2**31 - 1
_NO_LIMIT: int = 2**62

#: The largest element count handed to a single MPI call. Longer messages are described by derived
#: datatypes (data movement), split into several calls (reductions), or moved by an Alltoallw with
#: per-peer datatypes (v-collectives). Tests lower it (it must stay >= 2) to exercise those paths.
_MAX_COUNT: int = _NO_LIMIT if _LARGE_COUNT else _INT_MAX

#: Allgatherv with blocks of at least this many bytes (and at most _BCAST_ALLGATHERV_MAX_PROCS
#: processes) runs as one broadcast per owner; see MPICommunication._allgatherv_by_bcasts.
_BCAST_ALLGATHERV_BYTES: int = 128 * 1024
_BCAST_ALLGATHERV_MAX_PROCS: int = 64

# torch dtype -> MPI datatype used on the wire
_TRANSPORT_TYPES: Dict[torch.dtype, MPI.Datatype] = {
    torch.bool: MPI.UINT8_T,
    torch.uint8: MPI.UINT8_T,
    torch.int8: MPI.INT8_T,
    torch.int16: MPI.INT16_T,
    torch.int32: MPI.INT32_T,
    torch.int64: MPI.INT64_T,
    torch.float16: MPI.UINT16_T,
    torch.bfloat16: MPI.UINT16_T,
    torch.float32: MPI.FLOAT,
    torch.float64: MPI.DOUBLE,
    torch.complex64: MPI.C_FLOAT_COMPLEX,
    torch.complex128: MPI.C_DOUBLE_COMPLEX,
}
for _name, _mpi_type in (
    ("uint16", MPI.UINT16_T),
    ("uint32", MPI.UINT32_T),
    ("uint64", MPI.UINT64_T),
):
    if hasattr(torch, _name):
        _TRANSPORT_TYPES[getattr(torch, _name)] = _mpi_type

_HALF_TYPES = (torch.float16, torch.bfloat16)
_REAL_FLOAT_TYPES = (torch.float32, torch.float64)
_COMPLEX_TYPES = (torch.complex64, torch.complex128)

_PREDEFINED_OPS: Dict[str, MPI.Op] = {
    "SUM": MPI.SUM,
    "PROD": MPI.PROD,
    "MIN": MPI.MIN,
    "MAX": MPI.MAX,
    "LAND": MPI.LAND,
    "LOR": MPI.LOR,
    "LXOR": MPI.LXOR,
    "BAND": MPI.BAND,
    "BOR": MPI.BOR,
    "BXOR": MPI.BXOR,
}
# bool tensors are bytes holding 0/1; every reduction maps to a logical one so results stay 0/1
_BOOL_OPS = {
    "SUM": "LOR",
    "MAX": "LOR",
    "LOR": "LOR",
    "BOR": "LOR",
    "PROD": "LAND",
    "MIN": "LAND",
    "LAND": "LAND",
    "BAND": "LAND",
    "LXOR": "LXOR",
    "BXOR": "LXOR",
}
_HALF_OPS: Dict[Tuple[torch.dtype, str], MPI.Op] = {}


def _op_name(op: Any) -> Optional[str]:
    """Name of a predefined reduction in ``_PREDEFINED_OPS``, or None for any other ``MPI.Op``."""
    if not isinstance(op, MPI.Op):
        raise TypeError(f"op must be an mpi4py MPI.Op such as MPI.SUM, got {type(op).__name__}")
    for name, predefined in _PREDEFINED_OPS.items():
        if op == predefined:
            return name
    return None


def _half_op(dtype: torch.dtype, name: str) -> MPI.Op:
    """The user-defined MPI op (created once) reducing float16/bfloat16 data with torch."""
    key = (dtype, name)
    op = _HALF_OPS.get(key)
    if op is None:
        torch_fn = {
            "SUM": torch.add,
            "PROD": torch.mul,
            "MIN": torch.minimum,
            "MAX": torch.maximum,
        }[name]

        def reduce_halves(inbuf, inoutbuf, datatype, _fn=torch_fn, _dtype=dtype):
            if inoutbuf.nbytes == 0:
                return
            if inbuf.readonly:  # torch.frombuffer warns on read-only buffers; we only read it
                inbuf = MPI.buffer.fromaddress(inbuf.address, inbuf.nbytes)
            incoming = torch.frombuffer(inbuf, dtype=_dtype)
            accumulated = torch.frombuffer(inoutbuf, dtype=_dtype)
            _fn(incoming, accumulated, out=accumulated)

        op = MPI.Op.Create(reduce_halves, commute=True)
        _HALF_OPS[key] = op
    return op


def _reduction(dtype: torch.dtype, op: MPI.Op) -> Tuple[MPI.Datatype, MPI.Op, bool]:
    """
    Resolve ``op`` for tensors of ``dtype``: (wire datatype, MPI op, whether data must be on host).

    User-defined ops are passed through unchanged (they see the wire datatype).
    """
    name = _op_name(op)
    wire = _TRANSPORT_TYPES[dtype]
    if name is None:  # user-defined ops compute on the host
        return wire, op, True
    if dtype == torch.bool:
        return wire, _PREDEFINED_OPS[_BOOL_OPS[name]], False
    if dtype in _HALF_TYPES:
        if name not in ("SUM", "PROD", "MIN", "MAX"):
            raise ValueError(
                f"op MPI.{name} is not supported for {dtype}; use SUM, PROD, MIN or MAX"
            )
        return wire, _half_op(dtype, name), True
    if dtype in _REAL_FLOAT_TYPES:
        if name not in ("SUM", "PROD", "MIN", "MAX"):
            raise ValueError(
                f"op MPI.{name} is not supported for {dtype}; use SUM, PROD, MIN or MAX"
            )
    elif dtype in _COMPLEX_TYPES:
        if name not in ("SUM", "PROD"):
            raise ValueError(f"op MPI.{name} is not supported for {dtype}; use SUM or PROD")
    return wire, op, False


def _neutral(name: Optional[str], dtype: torch.dtype) -> Union[bool, int, float]:
    """Neutral element of the predefined reduction ``name`` for ``dtype`` (0 when unknown)."""
    if name is None:
        return 0
    if dtype == torch.bool:
        return _BOOL_OPS[name] == "LAND"
    floating = dtype.is_floating_point or dtype.is_complex
    if name in ("PROD", "LAND"):
        return 1
    if name == "BAND":
        return -1 if torch.iinfo(dtype).min < 0 else torch.iinfo(dtype).max
    if name == "MIN":
        return float("inf") if floating else torch.iinfo(dtype).max
    if name == "MAX":
        return float("-inf") if floating else torch.iinfo(dtype).min
    return 0


# ------------------------------------------------------------------------------------------------
# CUDA awareness
# ------------------------------------------------------------------------------------------------

_TRUE_WORDS = ("1", "true", "yes", "on")
_FALSE_WORDS = ("0", "false", "no", "off")


def _detect_cuda_aware() -> bool:
    """
    Whether device pointers may be handed to MPI directly.

    ``HEAT_CUDA_AWARE_MPI=0/1`` decides when set. Otherwise ask the library where mpi4py exposes
    ``MPIX_Query_cuda_support``, then look for well-known hints; when in doubt, stage through host
    memory (always correct).
    """
    setting = os.environ.get("HEAT_CUDA_AWARE_MPI", "").strip().lower()
    if setting in _TRUE_WORDS:
        return True
    if setting in _FALSE_WORDS:
        return False
    query = getattr(MPI, "Query_cuda_support", None)
    if query is not None:
        try:
            return bool(query())
        except Exception:  # pragma: no cover - depends on the MPI build
            pass
    version = MPI.Get_library_version().lower()
    if "mvapich2-gdr" in version or "mvapich-plus" in version:
        return True
    if os.environ.get("MPICH_GPU_SUPPORT_ENABLED", "") == "1":  # Cray MPICH
        return True
    if "open mpi" in version:
        return os.environ.get("OMPI_MCA_opal_cuda_support", "").lower() in _TRUE_WORDS
    if "mpich" in version and "--with-cuda" in version:
        return os.environ.get("MPIR_CVAR_ENABLE_GPU", "1") != "0"
    return False


#: Whether CUDA tensors are handed to MPI without staging through host memory.
CUDA_AWARE_MPI: bool = _detect_cuda_aware()

# ------------------------------------------------------------------------------------------------
# buffers: staging, raw memory, derived datatypes
# ------------------------------------------------------------------------------------------------


def _is_in_place(buf: Any) -> bool:
    return buf is MPI.IN_PLACE or (isinstance(buf, type(MPI.IN_PLACE)) and buf == MPI.IN_PLACE)


# allreduce_tensor's direct path: types whose NumPy view mpi4py maps to an MPI type, and the
# predefined operations MPI defines on them
_DIRECT_REDUCE_TYPES = frozenset(
    (torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
)
_DIRECT_REDUCE_OPS = (MPI.SUM, MPI.PROD, MPI.MIN, MPI.MAX)
_DIRECT_REDUCE_MAX = 1 << 20


def _check_tensor(t: Any, name: str) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.layout != torch.strided:
        raise TypeError(f"{name} must be a dense (strided) tensor, got layout {t.layout}")
    if t.dtype not in _TRANSPORT_TYPES:
        raise TypeError(f"{name} has dtype {t.dtype}, which cannot be communicated")
    return t


def _needs_host(t: torch.Tensor, force_host: bool = False) -> bool:
    if t.is_cpu:
        return False
    if force_host:
        return True
    return not (t.is_cuda and CUDA_AWARE_MPI)


def _sync_device(t: torch.Tensor) -> None:
    """Let pending kernels on ``t`` finish before MPI touches its device memory directly."""
    if t.is_cuda:
        torch.cuda.current_stream(t.device).synchronize()


def _send_tensor(t: torch.Tensor, force_host: bool = False) -> torch.Tensor:
    """A contiguous tensor with the values of ``t`` in memory MPI may read."""
    if t.is_cpu and t.is_contiguous() and not t.is_conj() and not t.is_neg():
        return t  # the common case, kept cheap: MPI only reads the memory
    t = t.detach()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    if _needs_host(t, force_host):
        return t.to("cpu").contiguous()
    t = t.contiguous()
    _sync_device(t)
    return t


class _RecvStage:
    """
    Memory MPI may write for the tensor ``target``; ``finish()`` copies it back when it is a stage.

    ``preserve`` initialises a stage with the values of ``target``: MPI.IN_PLACE reads them, and
    elements MPI does not write (gaps between v-collective blocks, the tail behind a short
    message) keep them.
    """

    __slots__ = ("target", "work", "copy_back")

    def __init__(self, target: torch.Tensor, preserve: bool = False, force_host: bool = False):
        self.target = target
        if (
            target.is_cpu
            and target.is_contiguous()
            and not target.is_conj()
            and not target.is_neg()
        ):
            self.work = target  # MPI writes the memory directly (also of tensors requiring grad)
            self.copy_back = False
            return
        t = target.detach()
        host = _needs_host(t, force_host)
        if t.is_contiguous() and not t.is_conj() and not t.is_neg() and not host:
            self.work = t
            self.copy_back = False
            _sync_device(t)
            return
        device = "cpu" if host else t.device
        if preserve:
            self.work = t.resolve_conj().resolve_neg().to(device).contiguous()
            if self.work.data_ptr() == t.data_ptr() and self.work.numel() > 0:
                self.work = self.work.clone()
        else:
            self.work = torch.empty(t.shape, dtype=t.dtype, device=device)
        self.copy_back = True

    def finish(self) -> None:
        if self.copy_back:
            with torch.no_grad():
                self.target.copy_(self.work)


def _memory(t: torch.Tensor, offset: int = 0, count: Optional[int] = None) -> MPI.buffer:
    """Raw memory of ``count`` elements of the contiguous tensor ``t`` from element ``offset``."""
    itemsize = t.element_size()
    if count is None:
        count = t.numel() - offset
    return MPI.buffer.fromaddress(t.data_ptr() + offset * itemsize, count * itemsize)


def _contiguous_type(base: MPI.Datatype, n: int) -> MPI.Datatype:
    """An uncommitted datatype of ``n`` consecutive ``base`` items; every count <= _MAX_COUNT."""
    limit = _MAX_COUNT
    if n <= limit:
        return base.Create_contiguous(n)
    blocks, rest = divmod(n, limit)
    block = base.Create_contiguous(limit)
    all_blocks = _contiguous_type(block, blocks)
    block.Free()
    if rest == 0:
        return all_blocks
    extent = base.Get_extent()[1]
    combined = MPI.Datatype.Create_struct(
        [1, rest], [0, blocks * limit * extent], [all_blocks, base]
    )
    all_blocks.Free()
    resized = combined.Create_resized(0, n * extent)
    combined.Free()
    return resized


class _Types:
    """Derived datatypes of one call; ``free()`` releases them (pending operations still finish)."""

    __slots__ = ("owned",)

    def __init__(self):
        self.owned: List[MPI.Datatype] = []

    def block(self, base: MPI.Datatype, n: int) -> Tuple[int, MPI.Datatype]:
        """(count, datatype) describing ``n`` consecutive ``base`` items."""
        if n <= _MAX_COUNT:
            return n, base
        dt = _contiguous_type(base, n).Commit()
        self.owned.append(dt)
        return 1, dt

    def segment(
        self, t: torch.Tensor, offset: int, n: int, base: MPI.Datatype
    ) -> Tuple[int, MPI.Datatype]:
        """(count, datatype) for ``n`` items of ``t`` from ``offset``, at its absolute address."""
        if n == 0:
            return 0, MPI.BYTE
        inner = _contiguous_type(base, n)
        address = t.data_ptr() + offset * t.element_size()
        dt = MPI.Datatype.Create_struct([1], [address], [inner]).Commit()
        inner.Free()
        self.owned.append(dt)
        return 1, dt

    def pieces(self, tensors: Sequence[torch.Tensor]) -> Tuple[int, int, MPI.Datatype]:
        """
        ``(count, byte displacement from MPI.BOTTOM, datatype)`` of one peer's message made of
        the non-empty host-addressable ``tensors`` (see :func:`_wire_pieces`), one after another.

        With MPI-4 the displacement is the absolute address of the first tensor and the datatype
        is relative to it: a contiguous tensor is just ``count`` items of its wire type, a strided
        one nested vectors. (Measured with MPICH 5: a struct datatype that carries an absolute
        address instead made a 16 MB all-to-all 1.5-3x slower.) Without MPI-4 large counts the
        displacement must fit a C int, so a struct of absolute addresses is used.
        """
        if not tensors:
            return 0, 0, MPI.BYTE
        first = tensors[0]
        wire = _TRANSPORT_TYPES[first.dtype]
        if not _LARGE_COUNT:
            dt = MPI.Datatype.Create_struct(
                [1] * len(tensors), [t.data_ptr() for t in tensors],
                [_strided_type(t, _TRANSPORT_TYPES[t.dtype]) for t in tensors],
            )
        elif len(tensors) == 1:
            if first.is_contiguous() and first.numel() <= _MAX_COUNT:
                return first.numel(), first.data_ptr(), wire
            dt = _strided_type(first, wire)
        else:
            dt = MPI.Datatype.Create_struct(
                [1] * len(tensors), [t.data_ptr() - first.data_ptr() for t in tensors],
                [_strided_type(t, _TRANSPORT_TYPES[t.dtype]) for t in tensors],
            )
        committed = dt.Commit()
        self.owned.append(committed)
        return 1, (first.data_ptr() if _LARGE_COUNT else 0), committed

    def free(self) -> None:
        for dt in self.owned:
            dt.Free()
        self.owned = []


def _collapsed_dims(t: torch.Tensor) -> List[Tuple[int, int]]:
    """
    ``(size, stride)`` of the dimensions of ``t``, outermost first, without length-1 dimensions
    and with neighbours merged where one steps exactly over the other (a contiguous tensor has a
    single dimension).
    """
    dims: List[Tuple[int, int]] = []
    for size, stride in zip(t.shape, t.stride()):
        if size == 1:
            continue
        if dims and dims[-1][1] == size * stride:
            dims[-1] = (dims[-1][0] * size, stride)
        else:
            dims.append((size, stride))
    return dims


def _strided_type(t: torch.Tensor, base: MPI.Datatype) -> MPI.Datatype:
    """
    An uncommitted datatype for the elements of the non-empty strided tensor ``t`` in row-major
    order, relative to ``t.data_ptr()``: nested byte-strided vectors, so MPI reads or writes a
    strided view (a column block, a transposed tensor, an expanded row) without a packing copy.
    ``t`` must be :func:`_describable` (its strided dimensions at most ``_MAX_COUNT`` long).
    """
    itemsize = t.element_size()
    dims = _collapsed_dims(t) or [(1, 1)]
    size, stride = dims[-1]
    if stride == 1:
        dt = _contiguous_type(base, size)
    else:
        dt = base.Create_hvector(size, 1, stride * itemsize)
    for size, stride in reversed(dims[:-1]):
        outer = dt.Create_hvector(size, 1, stride * itemsize)
        dt.Free()
        dt = outer
    return dt


def _is_plain_cpu(t: torch.Tensor) -> bool:
    """Whether MPI may read and write ``t``'s memory as it is (host memory, no lazy conj/neg)."""
    return t.is_cpu and not t.is_conj() and not t.is_neg()


def _same_pieces(sends: Sequence[torch.Tensor], recvs: Sequence[torch.Tensor]) -> bool:
    """Whether a process's message to itself can be a piece-by-piece tensor copy."""
    return len(sends) == len(recvs) and all(
        s.shape == r.shape and s.dtype == r.dtype and s.device == r.device
        for s, r in zip(sends, recvs)
    )


def _describable(t: torch.Tensor) -> bool:
    """Whether :func:`_strided_type` can describe ``t`` in place (MPI may use its memory)."""
    if not _is_plain_cpu(t):
        return False
    dims = _collapsed_dims(t)
    if dims and dims[-1][1] == 1:
        dims = dims[:-1]
    return all(size <= _MAX_COUNT for size, _ in dims)


def _wire_pieces(
    pieces: Sequence[torch.Tensor], keep: List[Any], stages: Optional[List["_RecvStage"]]
) -> List[torch.Tensor]:
    """
    The non-empty ``pieces`` as tensors whose memory MPI may use as they are. Host tensors stay
    themselves (strided views included); others (device memory MPI cannot use, lazily
    conjugated or negated views, strided dimensions beyond ``_MAX_COUNT``) go through a
    contiguous stage: a send copy kept alive in ``keep``, or a receive stage appended to
    ``stages`` (None: the pieces are sent).
    """
    result = []
    for t in pieces:
        if t.numel() == 0:
            continue
        if not _describable(t):
            if stages is None:
                t = _send_tensor(t)
                keep.append(t)
            else:
                stage = _RecvStage(t, preserve=True)
                stages.append(stage)
                t = stage.work
        result.append(t)
    return result


def _chunks(n: int):
    """(offset, count) pieces of at most _MAX_COUNT elements covering ``n`` elements."""
    if n <= _MAX_COUNT:
        yield 0, n
        return
    for offset in range(0, n, _MAX_COUNT):
        yield offset, min(_MAX_COUNT, n - offset)


def _int_list(values: Any, name: str, length: int) -> List[int]:
    try:
        result = [int(v) for v in values]
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be a sequence of integers, got {type(values).__name__}"
        ) from None
    if len(result) != length:
        raise ValueError(f"{name} must have one entry per process ({length}), got {len(result)}")
    if any(v < 0 for v in result):
        raise ValueError(f"{name} must not contain negative values, got {result}")
    return result


def _is_sequence(x: Any) -> bool:
    return isinstance(x, (list, tuple, range)) or getattr(x, "ndim", 0) >= 1


def _displacements(counts: Sequence[int]) -> List[int]:
    displs, total = [], 0
    for c in counts:
        displs.append(total)
        total += c
    return displs


def _normalize_axis(axis: Any, ndim: int, name: str = "axis") -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{name} must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name} {axis} is out of bounds for {ndim} dimension(s)")
    return axis % ndim


# ------------------------------------------------------------------------------------------------
# requests
# ------------------------------------------------------------------------------------------------


class Request:
    """
    A pending non-blocking operation.

    ``Wait()`` completes it, copies staged data into the user's receive tensor and returns that
    tensor (``None`` for sends); ``Test()`` completes it if possible and says whether it is done.
    MPI makes progress on a pending operation mostly while one of its calls runs: code that
    overlaps a long computation with communication should call ``Test()`` now and then.

    Examples
    --------
    >>> req = MPI_WORLD.Iallreduce(torch.ones(3), torch.empty(3))
    >>> req.Wait()  # with 2 processes
    tensor([2., 2., 2.])
    """

    def __init__(
        self,
        requests: Sequence[MPI.Request],
        result: Any = None,
        finish: Optional[Callable[[], None]] = None,
        keepalive: Tuple[Any, ...] = (),
    ):
        self._requests = list(requests)
        self._result = result
        self._finish = finish
        self._keepalive = keepalive  # tensors MPI reads or writes until completion
        self._done = False

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            self._finish()
        self._finish = None
        self._keepalive = ()

    @property
    def done(self) -> bool:
        """Whether the operation has completed (after a successful ``Test()`` or ``Wait()``)."""
        return self._done

    def Wait(self, status: Optional[MPI.Status] = None) -> Any:
        """
        Block until the operation completes; return the received tensor (None for sends).

        Parameters
        ----------
        status : MPI.Status, optional
            Filled in for a single point-to-point receive.
        """
        if not self._done:
            if len(self._requests) == 1:
                self._requests[0].Wait(status)
            else:
                MPI.Request.Waitall(self._requests)
            self._complete()
        return self._result

    def Test(self) -> bool:
        """Complete the operation if it can be completed now; return whether it is complete."""
        if not self._done and MPI.Request.Testall(self._requests):
            self._complete()
        return self._done

    @staticmethod
    def Waitall(requests: Sequence["Request"]) -> List[Any]:
        """Wait for every request; return their results in order."""
        return [request.Wait() for request in requests]

    def __repr__(self) -> str:
        return f"<heat Request {'done' if self._done else 'pending'}>"


# ------------------------------------------------------------------------------------------------
# topology records
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeTopology:
    """
    How the processes of a communicator are placed on nodes.

    Attributes
    ----------
    node_comm : MPICommunication
        The processes on this node (ordered by rank in the parent communicator).
    node_index : int
        This node's number; nodes are numbered by the smallest world rank they contain.
    num_nodes : int
        Number of nodes.
    local_rank, local_size : int
        Rank and size within ``node_comm``.
    cross_node_comm : MPICommunication
        The processes with this ``local_rank`` on every node, ordered by node index.
    leader_comm : MPICommunication or None
        Local rank 0 of every node, ordered by node index; None on other processes.
    ranks_per_node : int or None
        The emulated node size (``HEAT_RANKS_PER_NODE``), None for the shared-memory split.
    """

    node_comm: "MPICommunication"
    node_index: int
    num_nodes: int
    local_rank: int
    local_size: int
    cross_node_comm: "MPICommunication"
    leader_comm: Optional["MPICommunication"]
    ranks_per_node: Optional[int] = None

    def free(self) -> None:
        """Free the communicators of an uncached topology (``node_topology(cached=False)``)."""
        for comm in (self.node_comm, self.cross_node_comm, self.leader_comm):
            if comm is not None:
                comm.Free()


@dataclass(frozen=True)
class NodeProcessGroups:
    """``torch.distributed`` groups of a :class:`NodeTopology` (see ``node_process_groups``)."""

    node_group: Any
    cross_node_group: Any
    topology: NodeTopology


# ------------------------------------------------------------------------------------------------
# communicators
# ------------------------------------------------------------------------------------------------


class Communication:
    """Base class of heat communicators: the distribution layout of arrays."""

    rank: int
    size: int

    def is_distributed(self) -> bool:
        """Whether more than one process takes part."""
        raise NotImplementedError

    def chunk(self, shape, split, rank=None, w_size=None):
        """The part of an array of ``shape`` that a process holds."""
        raise NotImplementedError


def _check_shape(shape: Any) -> Tuple[int, ...]:
    if isinstance(shape, torch.Size):
        return tuple(shape)
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(
            f"shape must be a sequence of integers, got {type(shape).__name__}"
        ) from None
    result = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, int):
            try:
                d = int(d.__index__())
            except Exception:
                raise TypeError(f"shape must contain integers, got {d!r}") from None
        if d < 0:
            raise ValueError(f"shape must not contain negative dimensions, got {dims}")
        result.append(d)
    return tuple(result)


class MPICommunication(Communication):
    """
    A communicator over an mpi4py intracommunicator, speaking torch tensors.

    Parameters
    ----------
    handle : MPI.Intracomm, optional
        The mpi4py communicator (default ``MPI.COMM_WORLD``).

    Attributes
    ----------
    handle : MPI.Intracomm
        The wrapped communicator; attributes not defined here are looked up on it.
    rank, size : int
        This process's rank and the number of processes.

    Notes
    -----
    Buffer collectives (capitalised: ``Allreduce``, ``Bcast``, ...) follow MPI: every process of the
    communicator calls them with matching sizes. Counts and displacements of the vector variants
    count elements of the flattened tensors. Tensors may be non-contiguous and of any heat dtype
    (``bool``, integers, ``float16``, ``bfloat16``, ``float32``, ``float64``, ``complex64``,
    ``complex128``); results are written into the given receive tensors.

    Examples
    --------
    >>> comm = MPICommunication()
    >>> comm.rank, comm.size  # on rank 1 of 2
    (1, 2)
    """

    def __init__(self, handle: MPI.Intracomm = MPI.COMM_WORLD):
        if not isinstance(handle, MPI.Intracomm):
            raise TypeError(f"handle must be an mpi4py MPI.Intracomm, got {type(handle).__name__}")
        if handle == MPI.COMM_NULL:
            raise ValueError("handle must not be MPI.COMM_NULL")
        self.handle = handle
        self.rank: int = handle.Get_rank()
        self.size: int = handle.Get_size()
        self._hash = hash(handle.py2f())
        self._topologies: Dict[Optional[int], NodeTopology] = {}

    # -- basics ----------------------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # only reached for names not defined here: delegate to the mpi4py communicator
        if name.startswith("__") or name in ("handle", "_topologies", "_hash"):
            raise AttributeError(name)
        handle = self.__dict__.get("handle")
        if handle is None:
            raise AttributeError(name)
        return getattr(handle, name)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, MPICommunication) and (
            other is self or self.handle == other.handle
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"MPICommunication(rank={self.rank}, size={self.size})"

    def is_distributed(self) -> bool:
        """
        Whether the communicator has more than one process.

        Examples
        --------
        >>> MPI_SELF.is_distributed()
        False
        """
        return self.size > 1

    def world_ranks(self) -> List[int]:
        """
        The ``MPI.COMM_WORLD`` rank of every process of this communicator, in rank order.

        Examples
        --------
        >>> MPI_WORLD.world_ranks()  # with 3 processes
        [0, 1, 2]
        """
        group, world_group = self.handle.Get_group(), MPI.COMM_WORLD.Get_group()
        try:
            return [int(r) for r in group.Translate_ranks(list(range(self.size)), world_group)]
        finally:
            group.Free()
            world_group.Free()

    # -- layout ----------------------------------------------------------------------------------

    def chunk(
        self,
        shape: Sequence[int],
        split: Optional[int],
        rank: Optional[int] = None,
        w_size: Optional[int] = None,
    ) -> Tuple[int, Tuple[int, ...], Tuple[slice, ...]]:
        """
        The balanced share of an array of global ``shape`` split along ``split`` held by ``rank``.

        Rank r holds ``n // p`` rows, plus one for ``r < n % p``.

        Parameters
        ----------
        shape : sequence of int
            Global shape.
        split : int or None
            The split axis (negative counts from the end); None: every process holds everything.
        rank : int, optional
            The process asked about (default: this one).
        w_size : int, optional
            The number of processes (default: ``self.size``).

        Returns
        -------
        offset : int
            Global index of the first local row along ``split`` (0 for ``split=None``).
        local_shape : tuple of int
        slices : tuple of slice
            Global index of the local block, one slice per dimension.

        Raises
        ------
        TypeError
            If ``shape``, ``split``, ``rank`` or ``w_size`` has a wrong type.
        ValueError
            If ``split`` is out of bounds, ``w_size < 1`` or ``rank`` not in ``[0, w_size)``.

        Examples
        --------
        >>> MPI_WORLD.chunk((5, 4), 0, rank=2, w_size=3)
        (4, (1, 4), (slice(4, 5, None), slice(0, 4, None)))
        """
        dims = _check_shape(shape)
        if split is None:
            return 0, dims, tuple(slice(0, d) for d in dims)
        if len(dims) == 0:
            raise ValueError("split must be None for a 0-dimensional shape")
        split = _normalize_axis(split, len(dims), "split")
        w_size = self.size if w_size is None else w_size
        if isinstance(w_size, bool) or not isinstance(w_size, int):
            raise TypeError(f"w_size must be an int, got {type(w_size).__name__}")
        if w_size < 1:
            raise ValueError(f"w_size must be >= 1, got {w_size}")
        rank = self.rank if rank is None else rank
        if isinstance(rank, bool) or not isinstance(rank, int):
            raise TypeError(f"rank must be an int, got {type(rank).__name__}")
        if not 0 <= rank < w_size:
            raise ValueError(f"rank must be in [0, {w_size}), got {rank}")
        n = dims[split]
        base, remainder = divmod(n, w_size)
        local = base + (1 if rank < remainder else 0)
        offset = rank * base + min(rank, remainder)
        local_shape = dims[:split] + (local,) + dims[split + 1 :]
        slices = tuple(
            slice(offset, offset + local) if i == split else slice(0, d) for i, d in enumerate(dims)
        )
        return offset, local_shape, slices

    def counts_displs_shape(
        self, shape: Sequence[int], split: int
    ) -> Tuple[Tuple[int, ...], Tuple[int, ...], Tuple[int, ...]]:
        """
        Rows per process along ``split`` of the balanced layout, their offsets, and the local shape.

        Parameters
        ----------
        shape : sequence of int
            Global shape.
        split : int
            The split axis.

        Returns
        -------
        counts : tuple of int
            Rows held by each process.
        displs : tuple of int
            Global index of each process's first row.
        chunk_shape : tuple of int
            The shape of this process's block.

        Examples
        --------
        >>> MPI_WORLD.counts_displs_shape((5, 2), 0)  # on rank 0 of 3
        ((2, 2, 1), (0, 2, 4), (2, 2))
        """
        if split is None:
            raise ValueError("split must be an axis, not None")
        dims = _check_shape(shape)
        if len(dims) == 0:
            raise ValueError("split must be None for a 0-dimensional shape")
        split = _normalize_axis(split, len(dims), "split")
        base, remainder = divmod(dims[split], self.size)
        counts = tuple(base + (1 if r < remainder else 0) for r in range(self.size))
        displs = tuple(_displacements(counts))
        chunk_shape = dims[:split] + (counts[self.rank],) + dims[split + 1 :]
        return counts, displs, chunk_shape

    # -- argument checks -------------------------------------------------------------------------

    def _check_root(self, root: Any) -> int:
        if isinstance(root, bool) or not isinstance(root, int):
            raise TypeError(f"root must be an int, got {type(root).__name__}")
        if not 0 <= root < self.size:
            raise ValueError(f"root must be in [0, {self.size}), got {root}")
        return root

    def _vbuf(self, buf: Any, name: str) -> Tuple[torch.Tensor, List[int], List[int]]:
        """Parse ``(t, counts, displs)``, ``(t, (counts, displs))`` or ``(t, counts)``."""
        if not isinstance(buf, (tuple, list)) or not 2 <= len(buf) <= 3:
            raise TypeError(
                f"{name} must be a tuple (tensor, counts, displs), got {type(buf).__name__}"
            )
        tensor = _check_tensor(buf[0], f"{name}[0]")
        pair = buf[1] if len(buf) == 2 else None
        if (
            isinstance(pair, tuple)
            and len(pair) == 2
            and all(_is_sequence(p) or p is None for p in pair)
        ):
            counts, displs = pair
        else:
            counts, displs = buf[1], (buf[2] if len(buf) == 3 else None)
        counts = _int_list(counts, f"{name} counts", self.size)
        displs = (
            _displacements(counts)
            if displs is None
            else _int_list(displs, f"{name} displs", self.size)
        )
        numel = tensor.numel()
        for c, d in zip(counts, displs):
            if c and d + c > numel:
                raise ValueError(
                    f"{name}: counts/displs reach element {d + c}, but the tensor has {numel}"
                )
        return tensor, counts, displs

    def _any_rank(self, flag: bool) -> bool:
        """Whether ``flag`` holds on any rank (one tiny collective)."""
        return bool(self.handle.allreduce(bool(flag), op=MPI.LOR))

    # -- reductions ------------------------------------------------------------------------------

    def _reduce_like(
        self, kind: str, sendbuf, recvbuf, op, root: int = 0
    ) -> Optional[torch.Tensor]:
        """Allreduce, Reduce, Scan and Exscan: element-wise, split into <= _MAX_COUNT pieces."""
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
        call = getattr(self.handle, kind)
        for offset, n in _chunks(reference.numel()):
            sb = MPI.IN_PLACE if in_place else [_memory(send, offset, n), n, wire]
            rb = [_memory(stage.work, offset, n), n, wire] if stage is not None else None
            if kind == "Reduce":
                call(sb, rb, mpi_op, root)
            else:
                call(sb, rb, mpi_op)
        if stage is None:
            return None
        stage.finish()
        return recvbuf

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

    def Iallreduce(self, sendbuf, recvbuf: torch.Tensor, op: MPI.Op = MPI.SUM) -> Request:
        """
        Non-blocking ``Allreduce``; the returned request's ``Wait()`` gives ``recvbuf``.

        Examples
        --------
        >>> req = MPI_WORLD.Iallreduce(torch.ones(2), torch.empty(2), MPI.SUM)
        >>> req.Wait()  # with 2 processes
        tensor([2., 2.])
        """
        if sendbuf is recvbuf and sendbuf is not None:
            sendbuf = MPI.IN_PLACE
        in_place = _is_in_place(sendbuf)
        _check_tensor(recvbuf, "recvbuf")
        if not in_place:
            _check_tensor(sendbuf, "sendbuf")
            if sendbuf.dtype != recvbuf.dtype or sendbuf.numel() != recvbuf.numel():
                raise ValueError("recvbuf does not match sendbuf in dtype or number of elements")
        wire, mpi_op, host = _reduction(recvbuf.dtype, op)
        send = None if in_place else _send_tensor(sendbuf, host)
        stage = _RecvStage(recvbuf, preserve=in_place, force_host=host)
        requests = []
        for offset, n in _chunks(recvbuf.numel()):
            sb = MPI.IN_PLACE if in_place else [_memory(send, offset, n), n, wire]
            requests.append(
                self.handle.Iallreduce(sb, [_memory(stage.work, offset, n), n, wire], mpi_op)
            )
        return Request(requests, recvbuf, stage.finish, (send, stage))

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

    # -- vector variants --------------------------------------------------------------------------

    def _alltoallw_segments(self, sends, recvs) -> None:
        """
        Move segments with one Alltoallw over absolute addresses (the large-count fallback).

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
            self.handle.Alltoallw(
                [MPI.BOTTOM, (scounts, zeros), stypes], [MPI.BOTTOM, (rcounts, zeros), rtypes]
            )
        finally:
            types.free()

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
        tensor, counts, displs = self._vbuf(recvbuf, "recvbuf")
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
        if by_bcasts or max(counts + displs, default=0) > _MAX_COUNT:
            self._allgatherv_by_bcasts(send, stage.work, counts, displs, wire)
        else:
            types = _Types()
            try:
                if in_place:
                    sb = MPI.IN_PLACE
                else:
                    count, dt = types.block(wire, send.numel())
                    sb = [_memory(send), count, dt]
                self.handle.Allgatherv(sb, [_memory(stage.work), (counts, displs), wire])
            finally:
                types.free()
        stage.finish()
        return tensor

    def _allgatherv_by_bcasts(self, send, work, counts, displs, wire) -> None:
        """
        Allgatherv as one non-blocking broadcast per owner, all in flight together.

        Measured here (MPICH 5, 2-4 processes on 2 cores): MPICH's Allgatherv is 15-90x slower
        than this for blocks of 256 KiB and more (its pipelined ring suffers from
        oversubscription); for small blocks the native call is faster. Each broadcast uses its own
        pointer, so displacements beyond the per-call limit need no special care either.
        """
        types = _Types()
        requests = []
        flat = work.view(-1)
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
            MPI.Request.Waitall(requests)
        finally:
            types.free()
        if send is not None and counts[self.rank]:
            own = slice(displs[self.rank], displs[self.rank] + counts[self.rank])
            flat[own].copy_(send.reshape(-1))

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
        root = self._check_root(root)
        is_root = self.rank == root
        in_place = _is_in_place(sendbuf)
        if in_place and not is_root:
            raise ValueError("sendbuf may be MPI.IN_PLACE only on the root of Gatherv")
        if is_root:
            tensor, counts, displs = self._vbuf(recvbuf, "recvbuf")
        if not in_place:
            _check_tensor(sendbuf, "sendbuf")
            if is_root and (sendbuf.numel() != counts[self.rank] or sendbuf.dtype != tensor.dtype):
                raise ValueError(
                    f"sendbuf must have counts[{self.rank}] = {counts[self.rank]} "
                    f"elements of {tensor.dtype}"
                )
        wire = _TRANSPORT_TYPES[(tensor if is_root else sendbuf).dtype]
        send = None if in_place else _send_tensor(sendbuf)
        stage = _RecvStage(tensor, preserve=True) if is_root else None
        need_big = (max(counts + displs, default=0) if is_root else send.numel()) > _MAX_COUNT
        if _MAX_COUNT < _NO_LIMIT and self._any_rank(need_big):
            sends = [None] * self.size
            recvs = [None] * self.size
            if not in_place:
                sends[root] = (send, 0, send.numel(), wire)
            if is_root:
                recvs = [(stage.work, d, c, wire) for c, d in zip(counts, displs)]
                if in_place:
                    recvs[root] = None
            self._alltoallw_segments(sends, recvs)
        else:
            types = _Types()
            try:
                if in_place:
                    sb = MPI.IN_PLACE
                else:
                    count, dt = types.block(wire, send.numel())
                    sb = [_memory(send), count, dt]
                rb = [_memory(stage.work), (counts, displs), wire] if is_root else None
                self.handle.Gatherv(sb, rb, root)
            finally:
                types.free()
        if not is_root:
            return None
        stage.finish()
        return tensor

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
        root = self._check_root(root)
        is_root = self.rank == root
        in_place = _is_in_place(recvbuf)
        if in_place and not is_root:
            raise ValueError("recvbuf may be MPI.IN_PLACE only on the root of Scatterv")
        if is_root:
            tensor, counts, displs = self._vbuf(sendbuf, "sendbuf")
        if not in_place:
            _check_tensor(recvbuf, "recvbuf")
            if is_root and (recvbuf.numel() != counts[self.rank] or recvbuf.dtype != tensor.dtype):
                raise ValueError(
                    f"recvbuf must have counts[{self.rank}] = {counts[self.rank]} "
                    f"elements of {tensor.dtype}"
                )
        wire = _TRANSPORT_TYPES[(tensor if is_root else recvbuf).dtype]
        send = _send_tensor(tensor) if is_root else None
        stage = None if in_place else _RecvStage(recvbuf)
        need_big = (max(counts + displs, default=0) if is_root else stage.work.numel()) > _MAX_COUNT
        if _MAX_COUNT < _NO_LIMIT and self._any_rank(need_big):
            sends = [None] * self.size
            recvs = [None] * self.size
            if is_root:
                sends = [(send, d, c, wire) for c, d in zip(counts, displs)]
                if in_place:
                    sends[root] = None
            if not in_place:
                recvs[root] = (stage.work, 0, stage.work.numel(), wire)
            self._alltoallw_segments(sends, recvs)
        else:
            types = _Types()
            try:
                sb = [_memory(send), (counts, displs), wire] if is_root else None
                if in_place:
                    rb = MPI.IN_PLACE
                else:
                    count, dt = types.block(wire, stage.work.numel())
                    rb = [_memory(stage.work), count, dt]
                self.handle.Scatterv(sb, rb, root)
            finally:
                types.free()
        if in_place:
            return None
        stage.finish()
        return recvbuf

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
        need_big = max(scounts + sdispls + rcounts + rdispls, default=0) > _MAX_COUNT
        if _MAX_COUNT < _NO_LIMIT and self._any_rank(need_big):
            sends = [(send, d, c, wire) for c, d in zip(scounts, sdispls)]
            recvs = [(stage.work, d, c, wire) for c, d in zip(rcounts, rdispls)]
            self._alltoallw_segments(sends, recvs)
        else:
            self.handle.Alltoallv(
                [_memory(send), (scounts, sdispls), wire],
                [_memory(stage.work), (rcounts, rdispls), wire],
            )
        stage.finish()
        return tensor

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
            ``recvbufs``.

        Examples
        --------
        >>> p, r = MPI_WORLD.size, MPI_WORLD.rank
        >>> sends = [torch.full((q + 1,), r) for q in range(p)]
        >>> recvs = [torch.empty(r + 1, dtype=torch.int64) for q in range(p)]
        >>> MPI_WORLD.Alltoallw(sends, recvs)  # on rank 1 of 2
        [tensor([0, 0]), tensor([1, 1])]
        """
        sends = self._peer_pieces(sendbufs, "sendbufs")
        recvs = self._peer_pieces(recvbufs, "recvbufs")
        me = self.rank
        if _same_pieces(sends[me], recvs[me]):
            with torch.no_grad():
                for source, target in zip(sends[me], recvs[me]):
                    target.copy_(source)
            sends[me], recvs[me] = [], []
        types, stages, keep = _Types(), [], []
        try:
            specs = []
            for peers, peer_stages in ((sends, None), (recvs, stages)):
                counts, displs, dtypes = zip(
                    *(types.pieces(_wire_pieces(pieces, keep, peer_stages)) for pieces in peers)
                )
                specs.append([MPI.BOTTOM, (list(counts), list(displs)), list(dtypes)])
            self.handle.Alltoallw(*specs)
        finally:
            types.free()
        for stage in stages:
            stage.finish()
        return list(recvbufs)

    def _peer_pieces(self, bufs: Any, name: str) -> List[List[torch.Tensor]]:
        """One list of tensors per process from the entries of ``bufs`` (tensor or list)."""
        if not isinstance(bufs, (list, tuple)) or len(bufs) != self.size:
            raise ValueError(f"{name} must be a list of {self.size} tensors")
        result = []
        for i, entry in enumerate(bufs):
            pieces = list(entry) if isinstance(entry, (list, tuple)) else [entry]
            for t in pieces:
                _check_tensor(t, f"{name}[{i}]")
            result.append(pieces)
        return result

    # -- tensor-level conveniences -----------------------------------------------------------------

    def allreduce_tensor(self, t: torch.Tensor, op: MPI.Op = MPI.SUM) -> torch.Tensor:
        """
        A new tensor: ``op`` over ``t`` of all processes, element-wise.

        Parameters
        ----------
        t : torch.Tensor
            Same shape and dtype on every process; any heat dtype (bool reduces logically).
        op : MPI.Op
            ``MPI.SUM`` (default), ``MIN``, ``MAX``, ``PROD``, ``LAND``, ``LOR``, ``BAND``, ``BOR``,
            ``BXOR`` (as the dtype allows).

        Returns
        -------
        torch.Tensor
            Same shape, dtype and device as ``t``.

        Examples
        --------
        >>> MPI_WORLD.allreduce_tensor(torch.tensor([MPI_WORLD.rank, 1]), MPI.MAX)  # 3 processes
        tensor([2, 1])
        """
        if (
            type(t) is torch.Tensor
            and t.dtype in _DIRECT_REDUCE_TYPES
            and op in _DIRECT_REDUCE_OPS
            and t.is_cpu
            and t.numel() <= _DIRECT_REDUCE_MAX
            and t.is_contiguous()
            and not (t.requires_grad or t.is_conj() or t.is_neg())
        ):
            # the common small case (partial reductions): NumPy views of the tensors are MPI
            # buffers as they are, ~10 us less than the general path per call; the wire type is
            # the general path's, so processes taking either path still match
            out = torch.empty(t.shape, dtype=t.dtype)
            wire = _TRANSPORT_TYPES[t.dtype]
            self.handle.Allreduce([t.numpy(), wire], [out.numpy(), wire], op)
            return out
        _check_tensor(t, "t")
        out = torch.empty(t.shape, dtype=t.dtype, device=t.device)
        return self.Allreduce(t, out, op)

    def bcast_tensor(
        self, t: Optional[torch.Tensor] = None, root: int = 0, device: Any = None
    ) -> torch.Tensor:
        """
        Broadcast a tensor whose shape and dtype only ``root`` needs to know.

        Parameters
        ----------
        t : torch.Tensor or None
            The data on ``root``; ignored elsewhere (pass None).
        root : int
        device : torch.device or str, optional
            Where non-root processes create the result (default: the device of their ``t`` if
            given, else the current CUDA device when the root's data is on CUDA, else CPU).

        Returns
        -------
        torch.Tensor
            ``t`` itself on ``root``; a new tensor elsewhere.

        Raises
        ------
        TypeError
            On every process, if ``t`` on ``root`` is not a tensor.

        Examples
        --------
        >>> x = torch.arange(3.0) if MPI_WORLD.rank == 0 else None
        >>> MPI_WORLD.bcast_tensor(x)
        tensor([0., 1., 2.])
        """
        root = self._check_root(root)
        if self.rank == root:
            try:
                _check_tensor(t, "t")
                meta = ("ok", tuple(t.shape), t.dtype, t.device.type)
            except TypeError as error:
                meta = ("error", str(error))
        else:
            meta = None
        meta = self.handle.bcast(meta, root)
        if meta[0] == "error":
            raise TypeError(meta[1])
        _, shape, dtype, device_type = meta
        if self.rank == root:
            self.Bcast(t, root)
            return t
        if device is None:
            if isinstance(t, torch.Tensor):
                device = t.device
            elif device_type == "cuda" and torch.cuda.is_available():
                device = torch.device("cuda", torch.cuda.current_device())
            else:
                device = "cpu"
        out = torch.empty(shape, dtype=dtype, device=device)
        return self.Bcast(out, root)

    def _block_metadata(self, t: Any, axis: Any) -> Tuple:
        """("ok", dtype, shape, axis) or ("error", exception class name, message) for one block."""
        try:
            _check_tensor(t, "t")
            if t.ndim == 0:
                raise ValueError("t must have at least one dimension")
            axis = _normalize_axis(axis, t.ndim)
            return ("ok", t.dtype, tuple(t.shape), axis)
        except (TypeError, ValueError) as error:
            return ("error", type(error).__name__, str(error))

    @staticmethod
    def _raise_first_error(metas: Sequence[Tuple], what: str) -> None:
        for rank, meta in enumerate(metas):
            if meta[0] == "error":
                exception = TypeError if meta[1] == "TypeError" else ValueError
                raise exception(f"{what} on rank {rank}: {meta[2]}")

    @staticmethod
    def _check_blocks_agree(metas: Sequence[Tuple], name: str) -> None:
        """Blocks agree in dtype, ndim and every dimension but the axis."""
        _, dtype, shape, axis = metas[0]
        rest = shape[:axis] + shape[axis + 1 :]
        for rank, (_, other_dtype, other_shape, other_axis) in enumerate(metas):
            if other_dtype != dtype:
                raise ValueError(f"{name}: dtype {other_dtype} on rank {rank} differs from {dtype}")
            other_rest = other_shape[:other_axis] + other_shape[other_axis + 1 :]
            if len(other_shape) != len(shape) or other_rest != rest:
                raise ValueError(
                    f"{name}: shape {other_shape} on rank {rank} does not match {shape} "
                    f"outside axis {axis}"
                )

    def _gather_along(
        self, t: torch.Tensor, axis: int, root: Optional[int]
    ) -> Optional[torch.Tensor]:
        metas = self.handle.allgather(self._block_metadata(t, axis))
        self._raise_first_error(metas, "t")
        self._check_blocks_agree(metas, "t")
        _, dtype, shape, axis = metas[self.rank]
        rows = [meta[2][axis] for meta in metas]
        rest = shape[:axis] + shape[axis + 1 :]
        row_numel = math.prod(rest)
        counts = [r * row_numel for r in rows]
        front = t.movedim(axis, 0)
        if root is not None and self.rank != root:
            self.Gatherv(front, None, root)
            return None
        out = torch.empty((sum(rows),) + rest, dtype=dtype, device=t.device)
        if root is None:
            self.Allgatherv(front, (out, counts))
        else:
            self.Gatherv(front, (out, counts), root)
        return out if axis == 0 else out.movedim(0, axis).contiguous()

    def allgather_tensors(self, t: torch.Tensor, axis: int = 0) -> torch.Tensor:
        """
        Concatenate the tensors of all processes along ``axis``, in rank order, on every process.

        Parameters
        ----------
        t : torch.Tensor
            The local block; its length along ``axis`` may differ between processes (also 0), its
            other dimensions and dtype must agree.
        axis : int

        Returns
        -------
        torch.Tensor
            A new contiguous tensor on the device of ``t``.

        Raises
        ------
        TypeError, ValueError
            On every process, if any process passed a bad block.

        Examples
        --------
        >>> r = MPI_WORLD.rank
        >>> MPI_WORLD.allgather_tensors(torch.full((1, r + 1), r), axis=1)  # with 2 processes
        tensor([[0, 1, 1]])
        """
        return self._gather_along(t, axis, None)

    def gather_tensors(
        self, t: torch.Tensor, root: int = 0, axis: int = 0
    ) -> Optional[torch.Tensor]:
        """
        Concatenate the tensors of all processes along ``axis`` on ``root``.

        Parameters
        ----------
        t : torch.Tensor
            As in ``allgather_tensors``.
        root : int
        axis : int

        Returns
        -------
        torch.Tensor or None
            The concatenation on ``root``, None elsewhere.

        Examples
        --------
        >>> MPI_WORLD.gather_tensors(torch.tensor([MPI_WORLD.rank]), root=0)  # rank 0 of 3
        tensor([0, 1, 2])
        """
        root = self._check_root(root)
        return self._gather_along(t, axis, root)

    def alltoallv_tensors(
        self, blocks: Sequence[torch.Tensor], axis: int = 0
    ) -> List[torch.Tensor]:
        """
        Exchange blocks: ``blocks[r]`` goes to rank r; ``result[r]`` is what rank r sent here.

        Shapes travel in one small all-to-all, the data in one ``Alltoallw`` straight from the
        blocks (strided views are not packed first) into the returned tensors.

        Parameters
        ----------
        blocks : sequence of torch.Tensor
            One block per process; all blocks (of all processes) agree in dtype and in every
            dimension but ``axis``, whose length may differ (also 0).
        axis : int

        Returns
        -------
        list of torch.Tensor
            Contiguous tensors on the device of the blocks.

        Raises
        ------
        TypeError, ValueError
            On every process, if any process passed bad blocks.

        Examples
        --------
        >>> r, p = MPI_WORLD.rank, MPI_WORLD.size
        >>> out = MPI_WORLD.alltoallv_tensors([torch.full((q + 1, 2), r) for q in range(p)])
        >>> [o.shape for o in out]  # on rank 1 of 2
        [torch.Size([2, 2]), torch.Size([2, 2])]
        """
        outgoing = self._outgoing_block_metadata(blocks, axis)
        metas = self.handle.alltoall(outgoing)
        self._raise_first_error(metas, "blocks")
        self._check_blocks_agree(metas, "blocks")
        _, dtype, shape, axis = metas[self.rank]
        device = blocks[0].device
        received = []
        for meta in metas:
            block_shape = list(shape)
            block_shape[axis] = meta[2][axis]
            received.append(torch.empty(block_shape, dtype=dtype, device=device))
        return self.Alltoallw(list(blocks), received)

    def _outgoing_block_metadata(self, blocks: Any, axis: Any) -> List[Tuple]:
        """The metadata each destination gets; an error marker for all when blocks are bad."""
        try:
            if not isinstance(blocks, (list, tuple)):
                raise TypeError(f"blocks must be a list of tensors, got {type(blocks).__name__}")
            if len(blocks) != self.size:
                raise ValueError(
                    f"blocks must hold one tensor per process ({self.size}), got {len(blocks)}"
                )
            metas = [self._block_metadata(b, axis) for b in blocks]
            for meta in metas:
                if meta[0] == "error":
                    raise (TypeError if meta[1] == "TypeError" else ValueError)(meta[2])
            self._check_blocks_agree(metas, "blocks")
            devices = {b.device for b in blocks}
            if len(devices) > 1:
                raise ValueError(f"blocks must be on one device, got {sorted(map(str, devices))}")
            return metas
        except (TypeError, ValueError) as error:
            return [("error", type(error).__name__, str(error))] * self.size

    def exscan_tensor(self, t: torch.Tensor, op: MPI.Op = MPI.SUM) -> torch.Tensor:
        """
        A new tensor: ``op`` over ``t`` of ranks 0..r-1; rank 0 gets the neutral element.

        The neutral element is 0 for SUM (False for bool), 1 for PROD, +inf / the largest integer
        for MIN, -inf / the smallest integer for MAX, all bits set for BAND (0 for user ops).

        Examples
        --------
        >>> MPI_WORLD.exscan_tensor(torch.tensor([1, 2]))  # on rank 2
        tensor([2, 4])
        """
        _check_tensor(t, "t")
        out = torch.empty(t.shape, dtype=t.dtype, device=t.device)
        self.Exscan(t, out, op)
        if self.rank == 0:
            out.fill_(_neutral(_op_name(op), t.dtype))
        return out

    def scan_tensor(self, t: torch.Tensor, op: MPI.Op = MPI.SUM) -> torch.Tensor:
        """
        A new tensor: ``op`` over ``t`` of ranks 0..r (inclusive prefix).

        Examples
        --------
        >>> MPI_WORLD.scan_tensor(torch.tensor([1, 2]))  # on rank 2
        tensor([3, 6])
        """
        _check_tensor(t, "t")
        out = torch.empty(t.shape, dtype=t.dtype, device=t.device)
        return self.Scan(t, out, op)

    # -- small Python objects ----------------------------------------------------------------------

    def allreduce(self, obj: Any, op: MPI.Op = MPI.SUM) -> Any:
        """
        Reduce picklable objects with ``op`` (for small metadata).

        Examples
        --------
        >>> MPI_WORLD.allreduce(1)  # with 3 processes
        3
        """
        return self.handle.allreduce(obj, op=op)

    def bcast(self, obj: Any = None, root: int = 0) -> Any:
        """
        Broadcast a picklable object from ``root``.

        Examples
        --------
        >>> MPI_WORLD.bcast({"n": 5} if MPI_WORLD.rank == 0 else None)
        {'n': 5}
        """
        return self.handle.bcast(obj, root=root)

    def allgather(self, obj: Any) -> List[Any]:
        """
        The picklable objects of all processes, in rank order.

        Examples
        --------
        >>> MPI_WORLD.allgather(MPI_WORLD.rank)  # with 3 processes
        [0, 1, 2]
        """
        return self.handle.allgather(obj)

    def gather(self, obj: Any, root: int = 0) -> Optional[List[Any]]:
        """
        The picklable objects of all processes on ``root`` (None elsewhere).

        Examples
        --------
        >>> MPI_WORLD.gather(MPI_WORLD.rank)  # rank 0 of 2
        [0, 1]
        """
        return self.handle.gather(obj, root=root)

    def alltoall(self, objs: Sequence[Any]) -> List[Any]:
        """
        ``objs[r]`` goes to rank r; result[r] came from rank r.

        Examples
        --------
        >>> MPI_WORLD.alltoall([(MPI_WORLD.rank, q) for q in range(MPI_WORLD.size)])  # rank 1 of 2
        [(0, 1), (1, 1)]
        """
        return self.handle.alltoall(objs)

    # -- sub-communicators -------------------------------------------------------------------------

    def Split(self, color: int = 0, key: int = 0) -> Optional["MPICommunication"]:
        """
        Partition the processes by ``color``, ordered by ``key`` (ties: by rank).

        Returns
        -------
        MPICommunication or None
            None for ``color=MPI.UNDEFINED``.

        Examples
        --------
        >>> halves = MPI_WORLD.Split(MPI_WORLD.rank % 2, MPI_WORLD.rank)
        """
        handle = self.handle.Split(color, key)
        if handle == MPI.COMM_NULL:
            return None
        return MPICommunication(handle)

    def Dup(self) -> "MPICommunication":
        """A duplicate communicator (same processes, separate message space)."""
        return MPICommunication(self.handle.Dup())

    def Free(self) -> None:
        """
        Free the communicator (and its cached node topology); no-op for COMM_WORLD and COMM_SELF.
        """
        if self.handle in (MPI.COMM_WORLD, MPI.COMM_SELF, MPI.COMM_NULL):
            return
        for topology in self._topologies.values():
            topology.free()
        self._topologies.clear()
        self.handle.Free()

    # -- node topology -----------------------------------------------------------------------------

    def node_topology(
        self, ranks_per_node: Optional[int] = None, cached: bool = True
    ) -> NodeTopology:
        """
        How this communicator's processes sit on nodes (collective on this communicator).

        Parameters
        ----------
        ranks_per_node : int, optional
            Emulate nodes of this many consecutive world ranks. Default: ``HEAT_RANKS_PER_NODE``
            when set, else the shared-memory split (``MPI.COMM_TYPE_SHARED``).
        cached : bool
            Reuse (and store) the topology computed for the same ``ranks_per_node``. With False a
            fresh topology is computed; the caller may ``free()`` it.

        Returns
        -------
        NodeTopology

        Raises
        ------
        ValueError
            If ``ranks_per_node`` (or ``HEAT_RANKS_PER_NODE``) is not a positive integer.

        Examples
        --------
        >>> topo = MPI_WORLD.node_topology(ranks_per_node=2)  # with 4 processes
        >>> topo.num_nodes, topo.local_size
        (2, 2)
        """
        if ranks_per_node is None:
            setting = os.environ.get("HEAT_RANKS_PER_NODE", "").strip()
            if setting:
                try:
                    ranks_per_node = int(setting)
                except ValueError:
                    raise ValueError(
                        f"HEAT_RANKS_PER_NODE must be a positive integer, got {setting!r}"
                    ) from None
                if ranks_per_node < 1:
                    raise ValueError(
                        f"HEAT_RANKS_PER_NODE must be a positive integer, got {setting!r}"
                    )
        else:
            if isinstance(ranks_per_node, bool) or not isinstance(ranks_per_node, int):
                raise TypeError(
                    f"ranks_per_node must be an int, got {type(ranks_per_node).__name__}"
                )
            if ranks_per_node < 1:
                raise ValueError(f"ranks_per_node must be positive, got {ranks_per_node}")
        if cached and ranks_per_node in self._topologies:
            return self._topologies[ranks_per_node]
        topology = self._compute_topology(ranks_per_node)
        if cached:
            self._topologies[ranks_per_node] = topology
        return topology

    def _compute_topology(self, ranks_per_node: Optional[int]) -> NodeTopology:
        world_rank = MPI.COMM_WORLD.Get_rank()
        if ranks_per_node is None:
            node_handle = self.handle.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        else:
            node_handle = self.handle.Split(world_rank // ranks_per_node, self.rank)
        node_comm = MPICommunication(node_handle)
        node_min = node_handle.allreduce(world_rank, op=MPI.MIN)
        node_mins = sorted(set(self.handle.allgather(node_min)))
        node_index = node_mins.index(node_min)
        cross_node_comm = self.Split(node_comm.rank, node_index)
        leader_comm = self.Split(0 if node_comm.rank == 0 else MPI.UNDEFINED, node_index)
        return NodeTopology(
            node_comm=node_comm,
            node_index=node_index,
            num_nodes=len(node_mins),
            local_rank=node_comm.rank,
            local_size=node_comm.size,
            cross_node_comm=cross_node_comm,
            leader_comm=leader_comm,
            ranks_per_node=ranks_per_node,
        )

    def torch_process_group(
        self, backend: Optional[str] = None, timeout: Optional[datetime.timedelta] = None
    ):
        """The ``torch.distributed`` group of this communicator; see :func:`torch_process_group`."""
        return torch_process_group(self, backend=backend, timeout=timeout)


# ------------------------------------------------------------------------------------------------
# default communicator
# ------------------------------------------------------------------------------------------------

#: All processes of the job.
MPI_WORLD = MPICommunication(MPI.COMM_WORLD)
#: This process alone.
MPI_SELF = MPICommunication(MPI.COMM_SELF)

__default_comm = MPI_WORLD


def get_comm() -> MPICommunication:
    """
    The default communicator of new arrays.

    Examples
    --------
    >>> get_comm() is MPI_WORLD
    True
    """
    return __default_comm


def sanitize_comm(comm: Any) -> MPICommunication:
    """
    Turn ``comm`` into an :class:`MPICommunication`.

    Parameters
    ----------
    comm : MPICommunication, MPI.Intracomm or None
        None gives the default communicator; an mpi4py communicator is wrapped.

    Raises
    ------
    TypeError
        If ``comm`` is anything else.
    ValueError
        If ``comm`` is ``MPI.COMM_NULL``.

    Examples
    --------
    >>> sanitize_comm(MPI.COMM_WORLD) is MPI_WORLD
    True
    """
    if comm is None:
        return get_comm()
    if isinstance(comm, MPICommunication):
        return comm
    if isinstance(comm, MPI.Comm):
        if comm == MPI.COMM_NULL:
            raise ValueError("comm must not be MPI.COMM_NULL")
        if comm == MPI.COMM_WORLD:
            return MPI_WORLD
        if comm == MPI.COMM_SELF:
            return MPI_SELF
        if isinstance(comm, MPI.Intracomm):
            return MPICommunication(comm)
    raise TypeError(
        "comm must be an MPICommunication, an mpi4py intracommunicator or None, "
        f"got {type(comm).__name__}"
    )


def use_comm(comm: Any = None) -> None:
    """
    Set the default communicator (None: ``MPI_WORLD``).

    Raises
    ------
    TypeError
        If ``comm`` is not a communicator.

    Examples
    --------
    >>> use_comm(MPI_SELF)
    >>> get_comm() is MPI_SELF
    True
    >>> use_comm()
    """
    global __default_comm
    __default_comm = MPI_WORLD if comm is None else sanitize_comm(comm)


# ------------------------------------------------------------------------------------------------
# torch.distributed
# ------------------------------------------------------------------------------------------------

_TORCH_STORE: Any = None  # the rendezvous store; kept alive for the default process group
_TORCH_GROUPS: Dict[Tuple[int, ...], Any] = {}


def _default_backend() -> str:
    import torch.distributed as dist

    if torch.cuda.is_available() and dist.is_nccl_available():
        return "cpu:gloo,cuda:nccl"
    return "gloo"


def _rendezvous_address(single_node: bool) -> str:
    address = os.environ.get("MASTER_ADDR", "").strip()
    if address:
        return address
    if single_node:
        return "127.0.0.1"
    try:
        address = socket.gethostbyname(socket.gethostname())
    except OSError:
        address = ""
    if not address or address.startswith("127."):
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:  # no packet is sent: this only asks the kernel which interface routes outwards
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
        except OSError:
            address = "127.0.0.1"
        finally:
            probe.close()
    return address


def _init_torch_distributed(backend: Optional[str], timeout: Optional[datetime.timedelta]) -> None:
    """Initialise the default process group over MPI.COMM_WORLD (collective on the world)."""
    global _TORCH_STORE
    import torch.distributed as dist

    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    if dist.is_initialized():
        consistent = dist.get_world_size() == size and dist.get_rank() == rank
        if not world.allreduce(consistent, op=MPI.LAND):
            raise RuntimeError(
                "torch.distributed was initialised with ranks that differ from MPI.COMM_WORLD"
            )
        return
    store_timeout = timeout or datetime.timedelta(minutes=30)
    single_node = len(set(world.allgather(MPI.Get_processor_name()))) == 1
    store, info = None, None
    if rank == 0:
        try:
            address = _rendezvous_address(single_node)
            port = int(os.environ.get("MASTER_PORT", "0") or 0)
            # port 0: the store binds to a free port, so no other process can take it in between
            store = dist.TCPStore(
                address, port, size, is_master=True, timeout=store_timeout, wait_for_workers=False
            )
            info = ("ok", address, store.port)
        except Exception as error:  # report to everybody instead of leaving them waiting
            info = ("error", f"{type(error).__name__}: {error}")
    info = world.bcast(info, root=0)
    if info[0] == "error":
        raise RuntimeError(f"could not start the torch.distributed rendezvous on rank 0: {info[1]}")
    _, address, port = info
    if rank != 0:
        store = dist.TCPStore(address, port, size, is_master=False, timeout=store_timeout)
    kwargs = {} if timeout is None else {"timeout": timeout}
    hook = sys.excepthook
    dist.init_process_group(
        backend=backend or _default_backend(), store=store, rank=rank, world_size=size, **kwargs
    )
    _TORCH_STORE = store
    if getattr(hook, "_heat_abort_hook", False):
        # torch wraps sys.excepthook to prefix ranks and captures its output in a buffer; ours
        # prefixes ranks already and must print before it aborts
        sys.excepthook = hook


def torch_process_group(
    comm: Any = None, backend: Optional[str] = None, timeout: Optional[datetime.timedelta] = None
):
    """
    The ``torch.distributed`` process group holding the processes of ``comm``.

    Initialises ``torch.distributed`` from MPI when needed (rank 0 opens a rendezvous store on a
    free port and broadcasts its address over MPI; gloo on CPU, NCCL for CUDA tensors when
    available), so users never call ``init_process_group`` themselves.

    **Collective over MPI.COMM_WORLD:** ``torch.distributed.new_group`` must be entered by every
    process in the same order. So every world process calls this function at the same time, each
    with *its own* communicator, and those communicators must partition the world (e.g. the pieces
    of one ``Split``, or ``MPI_WORLD`` on everybody). All groups of the partition are created on
    every process, in the order of their smallest world rank, and cached.

    Parameters
    ----------
    comm : MPICommunication, MPI.Intracomm or None
        This process's piece of the partition (default: the default communicator).
    backend : str, optional
        Backend for initialisation and new groups (default ``"gloo"`` on CPU,
        ``"cpu:gloo,cuda:nccl"`` with CUDA).
    timeout : datetime.timedelta, optional

    Returns
    -------
    torch.distributed.ProcessGroup
        ``torch.distributed.group.WORLD`` when ``comm`` holds all processes. Group ranks follow the
        world ranks (ascending), which is the rank order of ``comm`` when it was split with
        ``key=rank``.

    Raises
    ------
    ValueError
        On every process, if the communicators passed do not partition the world.

    Examples
    --------
    >>> import torch.distributed as dist
    >>> group = torch_process_group(MPI_WORLD)
    >>> x = torch.ones(2)
    >>> dist.all_reduce(x, group=group)
    >>> x  # with 2 processes
    tensor([2., 2.])
    """
    import torch.distributed as dist

    if not dist.is_available():
        raise RuntimeError("torch.distributed is not available in this torch build")
    comm = sanitize_comm(comm)
    _init_torch_distributed(backend, timeout)
    world_size = MPI.COMM_WORLD.Get_size()
    pieces = MPI.COMM_WORLD.allgather(tuple(sorted(comm.world_ranks())))
    distinct = sorted(set(pieces))
    members = sorted(r for piece in distinct for r in piece)
    if members != list(range(world_size)):
        raise ValueError(
            "comm: the communicators passed by the processes must partition MPI.COMM_WORLD, got "
            f"{distinct}"
        )
    mine = pieces[MPI.COMM_WORLD.Get_rank()]
    if len(mine) == world_size:
        return dist.group.WORLD
    kwargs = {}
    if backend is not None:
        kwargs["backend"] = backend
    if timeout is not None:
        kwargs["timeout"] = timeout
    for piece in distinct:  # same order everywhere
        if piece not in _TORCH_GROUPS:
            _TORCH_GROUPS[piece] = dist.new_group(ranks=list(piece), **kwargs)
    return _TORCH_GROUPS[mine]


def node_process_groups(
    comm: Any = None,
    backend: Optional[str] = None,
    timeout: Optional[datetime.timedelta] = None,
    ranks_per_node: Optional[int] = None,
) -> NodeProcessGroups:
    """
    ``torch.distributed`` groups for hierarchical communication: this node's processes, and the
    processes with this local rank on every node (for local rank 0: the node leaders).

    Collective over MPI.COMM_WORLD (see :func:`torch_process_group`); normally every process
    passes ``MPI_WORLD``.

    Parameters
    ----------
    comm : MPICommunication, optional
    backend : str, optional
    timeout : datetime.timedelta, optional
    ranks_per_node : int, optional
        Passed to ``comm.node_topology``.

    Returns
    -------
    NodeProcessGroups
        ``node_group``, ``cross_node_group`` and the ``topology`` they come from.

    Examples
    --------
    >>> groups = node_process_groups(ranks_per_node=2)  # 4 processes: 2 emulated nodes
    >>> x = torch.ones(1)
    >>> torch.distributed.all_reduce(x, group=groups.cross_node_group)
    >>> x
    tensor([2.])
    """
    comm = sanitize_comm(comm)
    topology = comm.node_topology(ranks_per_node=ranks_per_node)
    node_group = torch_process_group(topology.node_comm, backend=backend, timeout=timeout)
    cross_group = torch_process_group(topology.cross_node_comm, backend=backend, timeout=timeout)
    return NodeProcessGroups(node_group=node_group, cross_node_group=cross_group, topology=topology)


# ------------------------------------------------------------------------------------------------
# per-process setup at import
# ------------------------------------------------------------------------------------------------

_SETUP_DONE = False
_ABORT_HOOK_INSTALLED = False  # whether sys.excepthook aborts the job (set by _setup_process)


def _local_process_count() -> int:
    """Processes on this node: from the launcher's environment, else a shared-memory split."""
    for variable in ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE"):
        value = os.environ.get(variable, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    if MPI.COMM_WORLD.Get_size() == 1:
        return 1
    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_size()
    finally:
        node.Free()


def _configure_threads() -> None:
    """
    Give each process a fair share of the node's cores.

    Skipped when OMP_NUM_THREADS or MKL_NUM_THREADS is set, or when torch's thread count was
    changed to something other than one of its own defaults (1 under an MPI launcher, where MKL
    picks 1 itself; the CPU count otherwise).
    """
    if os.environ.get("OMP_NUM_THREADS") or os.environ.get("MKL_NUM_THREADS"):
        return
    cpus = os.cpu_count() or 1
    try:
        available = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        available = cpus
    target = max(1, min(available, cpus // _local_process_count()))
    current = torch.get_num_threads()
    if current in (1, cpus, available) and current != target:
        torch.set_num_threads(target)


def _abort_on_exception_hook(previous: Callable) -> Callable:
    def heat_abort_excepthook(exc_type, exc_value, exc_traceback):
        try:
            world = MPI.COMM_WORLD
            prefix = f"[rank {world.Get_rank()}/{world.Get_size()}] "
            text = "".join(traceback.format_exception(exc_type, exc_value, exc_traceback))
            lines = [prefix + line for line in text.splitlines(True)]
            lines.append(
                prefix
                + "uncaught exception: aborting the MPI job (HEAT_ABORT_ON_EXCEPTION=0 disables)\n"
            )
            report = "".join(lines)
            streams = [sys.stderr]
            # someone (torch.distributed wraps the hook) may capture sys.stderr in a buffer that
            # is never printed once we abort: then also write to the process's real stderr
            if sys.__stderr__ is not None and sys.stderr is not sys.__stderr__:
                streams.append(sys.__stderr__)
            for stream in streams:
                try:
                    stream.write(report)
                    stream.flush()
                except Exception:
                    pass
            if previous is not None and previous is not sys.__excepthook__:
                previous(exc_type, exc_value, exc_traceback)
        finally:
            if MPI.Is_initialized() and not MPI.Is_finalized():
                MPI.COMM_WORLD.Abort(1)

    heat_abort_excepthook._heat_abort_hook = True
    return heat_abort_excepthook


def _wants_abort_hook(world_size: int) -> bool:
    """Abort on uncaught exceptions with more than one process, unless HEAT_ABORT_ON_EXCEPTION=0."""
    setting = os.environ.get("HEAT_ABORT_ON_EXCEPTION", "1").strip().lower()
    return world_size > 1 and setting not in _FALSE_WORDS


def _setup_process() -> None:
    """
    Once per process, at import: huge pages for torch's allocator, threads per process, and (with
    more than one process) abort the whole job on an uncaught exception.
    """
    global _SETUP_DONE, _ABORT_HOOK_INSTALLED
    if _SETUP_DONE:
        return
    _SETUP_DONE = True
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    _configure_threads()
    if _wants_abort_hook(MPI.COMM_WORLD.Get_size()):
        if not getattr(sys.excepthook, "_heat_abort_hook", False):  # not by an earlier copy
            sys.excepthook = _abort_on_exception_hook(sys.excepthook)
        _ABORT_HOOK_INSTALLED = True


_setup_process()
