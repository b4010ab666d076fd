"""
Buffers: what one MPI call may be handed, and how tensors become such memory.

* limits: the largest element count of one MPI call (``_MAX_COUNT``; tests lower it to exercise
  the large-count paths, so modules read it as ``buffers._MAX_COUNT`` at call time);
* CUDA awareness: whether device memory goes to MPI directly or is staged through the host;
* argument checks shared by every collective;
* staging: contiguous host copies of send tensors, receive stages that are copied back into
  non-contiguous, lazily conjugated or device tensors on completion;
* derived datatypes: messages longer than ``_MAX_COUNT`` and strided views described in place.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import torch
from mpi4py import MPI

from .datatypes import _TRANSPORT_TYPES

# ------------------------------------------------------------------------------------------------
# limits
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


# ------------------------------------------------------------------------------------------------
# CUDA awareness
# ------------------------------------------------------------------------------------------------

_TRUE_WORDS = ("1", "true", "yes", "on")
_FALSE_WORDS = ("0", "false", "no", "off")


def _loaded_mpi_libraries() -> List[str]:
    """Paths of the MPI shared libraries mapped into this process (Linux; empty elsewhere)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/libmpi" in line}
    except OSError:
        return []
    return sorted(path for path in paths if os.path.isfile(path))


def query_cuda_support() -> Tuple[Optional[bool], str]:
    """
    The MPI library's own answer to whether it accepts CUDA device memory, and where it came from.

    Asked in this order: mpi4py's ``MPI.Query_cuda_support`` where mpi4py has it, then the
    library's ``MPIX_Query_cuda_support`` (Open MPI, MPICH >= 4) looked up in the loaded library
    through ctypes. ``(None, reason)`` when the library cannot be asked.

    Examples
    --------
    >>> supported, how = query_cuda_support()
    >>> supported in (True, False, None)
    True
    """
    query = getattr(MPI, "Query_cuda_support", None)
    if query is not None:
        try:
            return bool(query()), "MPI.Query_cuda_support()"
        except Exception:  # pragma: no cover - depends on the MPI build
            pass
    import ctypes

    for path in _loaded_mpi_libraries():
        try:
            function = getattr(ctypes.CDLL(path), "MPIX_Query_cuda_support", None)
        except OSError:  # pragma: no cover - a mapped library that cannot be opened again
            continue
        if function is not None:
            function.restype, function.argtypes = ctypes.c_int, []
            return bool(function()), f"MPIX_Query_cuda_support() of {os.path.basename(path)}"
    return None, "the MPI library cannot be asked"


def _detect_cuda_aware() -> bool:
    """
    Whether device pointers may be handed to MPI directly.

    ``HEAT_CUDA_AWARE_MPI=0/1`` decides when set. Otherwise ask the library
    (:func:`query_cuda_support`), then look for well-known hints; when in doubt, stage through
    host memory (always correct).
    """
    setting = os.environ.get("HEAT_CUDA_AWARE_MPI", "").strip().lower()
    if setting in _TRUE_WORDS:
        return True
    if setting in _FALSE_WORDS:
        return False
    supported, _ = query_cuda_support()
    if supported is not None:
        return supported
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
# arguments, staging, raw memory, derived datatypes
# ------------------------------------------------------------------------------------------------


def _is_in_place(buf: Any) -> bool:
    return buf is MPI.IN_PLACE or (isinstance(buf, type(MPI.IN_PLACE)) and buf == MPI.IN_PLACE)


def _local_block(buf: Any) -> Any:
    """
    The tensor a buffer stands for: the local block (``x.larray``) of a DNDarray; for a NumPy
    array a tensor sharing its memory (so a receive fills the array in place, as mpi4py's
    buffer collectives do); any other ``buf`` unchanged (the checks then name its type).
    Duck-typed for DNDarrays: this package sits below ``dndarray.py`` and does not import it.
    """
    if isinstance(buf, torch.Tensor):
        return buf
    if isinstance(buf, np.ndarray):
        return _numpy_buffer(buf)
    block = getattr(buf, "larray", None)
    return block if isinstance(block, torch.Tensor) else buf


def _numpy_buffer(array: np.ndarray) -> torch.Tensor:
    """A tensor sharing the memory of ``array`` (any layout torch can view)."""
    try:
        with warnings.catch_warnings():
            # a read-only array is fine as a send buffer; torch warns about writing into it
            warnings.simplefilter("ignore", UserWarning)
            return torch.from_numpy(array)
    except (TypeError, ValueError, RuntimeError) as error:
        raise TypeError(
            f"a NumPy buffer must have a dtype torch can hold and non-negative strides, got "
            f"{array.dtype} with strides {array.strides} ({error})"
        ) from None


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
                [1] * len(tensors),
                [t.data_ptr() for t in tensors],
                [_strided_type(t, _TRANSPORT_TYPES[t.dtype]) for t in tensors],
            )
        elif len(tensors) == 1:
            if first.is_contiguous() and first.numel() <= _MAX_COUNT:
                return first.numel(), first.data_ptr(), wire
            dt = _strided_type(first, wire)
        else:
            dt = MPI.Datatype.Create_struct(
                [1] * len(tensors),
                [t.data_ptr() - first.data_ptr() for t in tensors],
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
