"""
The distributed matrix product behind :func:`heat.linalg.matmul` (and ``@``, ``dot``, ...).

Every call is planned from global information alone (shapes, split axes, sizes), so all processes
take the same path and a bad call raises alike everywhere before any communication. The operands
are first put into the result's frame: a 1-D operand is promoted to a matrix (``(k,) -> (1, k)``
on the left, ``(k, 1)`` on the right; the promoted axis is removed from the result again), and
batch axes are prepended until both have as many dimensions as the result. In that frame ``A``
is ``(..., m, k)`` and ``B`` is ``(..., k, n)``, and each operand is split along nothing, a batch
axis ``b``, a free axis (``m`` of A, ``n`` of B) or the contracted axis ``k``.

Four executions cover every combination:

* **local** -- no communication: both operands replicated, or one split along a free or batch
  axis while the other is replicated or can be aligned with it (a batch axis of the other operand
  is sliced, redistributed or resplit to the same rows: one all-to-all at most).
* **ring** -- the leading operand stays where it is and defines the result's layout; the other
  circulates around the processes in its own blocks. Each process sends the block it holds to its
  left neighbour and receives the next one from its right neighbour (``Isend``/``Irecv``) while it
  multiplies the block it holds, in two chunks with a ``Test`` of the transfers in between (MPI
  progresses mostly inside its calls); the chunks are rows of the result as it lies in memory
  (columns in the transposed frame below). A process holds its share of the result, its own block
  and at most two blocks of the circulating operand.
* **reduce** -- both operands split along ``k`` and a result no larger than the data that
  resplitting one operand and circulating the other would move: every process computes the
  partial products of the other processes' blocks of the result first (the next rank's first),
  in row pieces that it sends (``Isend``) as soon as each is computed, and its own block last,
  while they travel. The previous rank's pieces are received straight into the result, onto
  which BLAS accumulates the own partial product (no separate addition); pieces from farther
  ranks (three or more processes) are added one product later, when they have arrived. With a
  larger result, the smaller operand is instead resplit along its free axis (one all-to-all)
  and the other circulates in a ring.
* **allreduce** -- the same for a 0-d result (the dot product of two vectors): one Allreduce.

When the leading operand is ``B`` the product is computed as ``C^T = B^T A^T`` on transposed views
(no copies), writing into a transposed view of the result.

One case falls outside the memory bound: an operand split along a batch axis over which it is
broadcast (length 1 there, longer in the other operand) is gathered first, since its one block
is needed by every process.
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

from .. import _redistribution, types
from .._operations import align_local
from .._redistribution import balanced_counts, displacements, redistribute_tensor
from ..communication import MPI
from ..dndarray import DNDarray
from ..sanitation import broadcast_shapes

__all__ = ["distributed_matmul", "matmul_result_layout"]

_RING_TAG = 0x6D6D  # tag of the ring's messages ("mm")
_REDUCE_TAG = 0x6D72  # first tag of the partial products' pieces ("mr" + piece)
_CHUNK_ROWS = 64  # products with fewer rows per chunk are not split to poll the transfers
# row chunks of a product while transfers are pending, with a Test after each: one Test in the
# middle lets MPI move the block during the product (MPICH progresses mostly inside its calls);
# more chunks measured slower here (2000 x 2000 at 2 and 3 processes: 4 chunks 5-10% slower
# than 1, 2 chunks within noise of 1), since on one node a block's transfer takes a few ms
_PIECES = 2


class _Operand:
    """
    One operand in the result's frame: ``local`` is this process's block (a view), ``gshape``
    and ``split`` are global, ``counts`` are the block lengths along ``split`` (None if not
    split). ``transposed``: ``local`` is the ``.mT`` view of the natural orientation, the one in
    which blocks travel. ``array`` and ``lead`` (the number of prepended axes) lead back to the
    DNDarray for aligning a batch axis.
    """

    __slots__ = ("local", "gshape", "split", "counts", "transposed", "array", "lead")

    def __init__(self, local, gshape, split, counts, transposed, array, lead):
        self.local = local
        self.gshape = gshape
        self.split = split
        self.counts = counts
        self.transposed = transposed
        self.array = array
        self.lead = lead

    @property
    def size(self) -> int:
        return math.prod(self.gshape)

    def T(self) -> "_Operand":
        ndim = len(self.gshape)
        gshape = self.gshape[:-2] + (self.gshape[-1], self.gshape[-2])
        split = self.split
        if split is not None and split >= ndim - 2:
            split = 2 * ndim - 3 - split  # ndim-2 <-> ndim-1
        return _Operand(
            self.local.mT, gshape, split, self.counts, not self.transposed, self.array, self.lead
        )

    def has_axis(self, axis: int, c_shape: Tuple[int, ...]) -> bool:
        """Whether batch axis ``axis`` of the result is an axis of this operand, not broadcast."""
        return axis >= self.lead and self.gshape[axis] == c_shape[axis]


# ---------------------------------------------------------------------------------------------
# planning (global information only)
# ---------------------------------------------------------------------------------------------
def _kind(op: _Operand, role: str) -> Optional[str]:
    """None, "b" (batch axis), or for role "A" "m"/"k", for role "B" "k"/"n"."""
    if op.split is None:
        return None
    ndim = len(op.gshape)
    if op.split == ndim - 2:
        return "m" if role == "A" else "k"
    if op.split == ndim - 1:
        return "k" if role == "A" else "n"
    return "b"


def _plan(a: _Operand, b: _Operand, c_shape, removed, nprocs: int) -> Tuple:
    """
    How to compute ``a @ b`` (operands in the result's frame). One of
    ``("local", lead)`` with lead None, "A" or "B" (whose layout the result takes; the other is
    aligned to it), ``("ring", transposed)``, ``("reduce", axis)``, ``("allreduce",)``.
    ``transposed``: B leads, computed as ``C^T = B^T A^T``.
    """
    R = len(c_shape)
    ka, kb = _kind(a, "A"), _kind(b, "B")
    if ka is None and kb is None:
        return ("local", None)
    if ka == "b" and (kb is None or b.has_axis(a.split, c_shape)):
        if not (kb == "b" and a.has_axis(b.split, c_shape) and b.size > a.size):
            return ("local", "A")
    if kb == "b" and (ka is None or a.has_axis(b.split, c_shape)):
        return ("local", "B")
    if ka == "m" and kb is None:
        return ("local", "A")
    if kb == "n" and ka is None:
        return ("local", "B")
    a_leads, b_leads = ka in ("m", "b"), kb in ("n", "b")
    if a_leads and b_leads:
        # both could stay: circulate the smaller one
        return ("ring", a.size < b.size)
    if a_leads:
        return ("ring", False)
    if b_leads:
        return ("ring", True)
    if ka == "k" and kb == "k":
        # both split along k: sum partial products onto their owners (each process sends the
        # others' blocks of the result, (p-1)/p of it, while it multiplies its own), or resplit
        # the smaller operand along its free axis (a blocking all-to-all of (p-1)/p of its
        # block) and circulate the other ((p-1)/p of it); the latter only when it moves less
        small, large = min(a.size, b.size), max(a.size, b.size)
        if nprocs * math.prod(c_shape) > small + nprocs * large:
            can_a = (R - 2) not in removed and c_shape[R - 2] >= nprocs
            can_b = (R - 1) not in removed and c_shape[R - 1] >= nprocs
            if can_a and (not can_b or a.size <= b.size):
                return ("ring", False, "resplit")
            if can_b:
                return ("ring", True, "resplit")
        return _reduce_plan(c_shape, removed)
    # one operand split along k, the other replicated: circulate the split one (the replicated
    # one is sliced to the rows or columns this process owns), or reduce partial products,
    # whichever moves less; the ring needs a free axis to slice that survives 1-D removal and
    # at least a row per process
    c_size = math.prod(c_shape)
    if kb == "k":  # A replicated
        if (R - 2) not in removed and c_shape[R - 2] >= nprocs and b.size <= c_size:
            return ("ring", False)
    else:  # A split along k, B replicated
        if (R - 1) not in removed and c_shape[R - 1] >= nprocs and a.size <= c_size:
            return ("ring", True)
    return _reduce_plan(c_shape, removed)


def _reduce_plan(c_shape, removed) -> Tuple:
    """Partial products summed onto their owners along the result's longest surviving axis."""
    R = len(c_shape)
    candidates = [ax for ax in (R - 2, R - 1) if ax not in removed] + list(range(R - 2))
    if not candidates:
        return ("allreduce",)
    axis = max(candidates, key=lambda ax: c_shape[ax])  # first of equals: rows before columns
    return ("reduce", axis)


# ---------------------------------------------------------------------------------------------
# local products
# ---------------------------------------------------------------------------------------------
_EXACT_IN_FLOAT64 = 2.0**52  # float64 sums integers exactly below 2**53; one bit of margin
_INTEGER_PRODUCT_ELEMENTS = 2**24  # temporary elements per step of the exact integer product


def _as_int64(t: torch.Tensor) -> torch.Tensor:
    return t.view(torch.int64) if t.dtype == torch.uint64 else t.to(torch.int64)


def _integer_matmul(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """
    ``a @ b`` of integer tensors in ``dtype``, wrapping modulo 2**bits as NumPy's, for devices
    where torch has no integer matrix product (CUDA: no addmm/baddbmm for integer types).

    When ``k * max|a| * max|b|`` stays below 2**52 every partial sum is exact in float64, so the
    product runs on the float64 units; otherwise it is summed exactly in ``dtype`` (integer
    arithmetic wraps as NumPy's), a block of the contracted axis at a time.
    """
    vector_a, vector_b = a.dim() == 1, b.dim() == 1
    a = a.unsqueeze(0) if vector_a else a
    b = b.unsqueeze(-1) if vector_b else b
    k = a.shape[-1]
    largest = float(a.double().abs().amax()) * float(b.double().abs().amax())
    if largest * k < _EXACT_IN_FLOAT64:
        # through int64: a float outside the range of a narrow type does not convert defined
        result = torch.matmul(a.double(), b.double()).to(torch.int64)
    else:
        # int64 arithmetic wraps modulo 2**64, so every narrower type's result is its low bits
        a, b = _as_int64(a), _as_int64(b)
        batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        rows, columns = a.shape[-2], b.shape[-1]
        result = torch.zeros(batch + (rows, columns), dtype=torch.int64, device=a.device)
        per_k = max(1, math.prod(batch) * rows * columns)
        step = max(1, _INTEGER_PRODUCT_ELEMENTS // per_k)
        for start in range(0, k, step):
            block_a = a[..., start : start + step].unsqueeze(-1)  # (..., m, s, 1)
            block_b = b[..., start : start + step, :].unsqueeze(-3)  # (..., 1, s, n)
            result += (block_a * block_b).sum(-2)
    if dtype == torch.bool:
        result = result != 0
    else:
        result = result.view(dtype) if dtype == torch.uint64 else result.to(dtype)
    if vector_b:
        result = result.squeeze(-1)
    if vector_a:
        result = result.squeeze(-2)
    return result


def _product_into(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, accumulate: bool) -> None:
    """``out = a @ b`` or ``out += a @ b``, straight into ``out`` (a view) where BLAS can."""
    if out.numel() == 0:
        return
    if a.shape[-1] == 0:
        if not accumulate:
            out.zero_()
        return
    if out.dtype == torch.int64 and out.device.type == "cpu":
        # torch's CPU kernel for int64 is ~2.5x slower than NumPy's (no BLAS for either)
        product = torch.from_numpy(np.matmul(a.numpy(), b.numpy()))
        out.add_(product) if accumulate else out.copy_(product)
    elif out.device.type != "cpu" and not (out.is_floating_point() or out.is_complex()):
        product = _integer_matmul(a, b, out.dtype)
        out.add_(product) if accumulate else out.copy_(product)
    elif out.dim() == 2 and a.dim() == 2 and b.dim() == 2:
        if accumulate:
            out.addmm_(a, b)
        else:
            torch.mm(a, b, out=out)
    elif not accumulate and out.is_contiguous():
        torch.matmul(a, b, out=out)
    else:
        product = torch.matmul(a, b)
        out.add_(product) if accumulate else out.copy_(product)


def _product_polling(out, a, b, accumulate: bool, pending: Sequence) -> None:
    """
    :func:`_product_into` in chunks, testing the pending transfers in between. The chunks are
    rows of ``out`` as it lies in memory: a transposed ``out`` (the ``C^T = B^T A^T`` frame) is
    cut along its columns, so that every chunk stays one tall product; cutting it along its rows
    gives BLAS narrow strided products (2000 x 2000 float32, 2 processes: 14 ms of 46 slower).
    """
    axis = -2
    if out.dim() >= 2 and out.stride(-2) == 1 and out.stride(-1) != 1:
        axis = -1
    rows = out.shape[axis] if out.dim() >= 2 else 0
    live = [request for request in pending if not request.done]
    pieces = min(_PIECES, rows // _CHUNK_ROWS) if live else 1
    if pieces <= 1:
        _product_into(out, a, b, accumulate)
        for request in live:
            request.Test()
        return
    step = -(-rows // pieces)
    for start in range(0, rows, step):
        length = min(step, rows - start)
        if axis == -2:
            a_part, b_part = a.narrow(-2, start, length), b
        else:
            a_part, b_part = a, b.narrow(-1, start, length)
        _product_into(out.narrow(axis, start, length), a_part, b_part, accumulate)
        for request in live:
            request.Test()


# ---------------------------------------------------------------------------------------------
# executions
# ---------------------------------------------------------------------------------------------
def _aligned(op: _Operand, axis: int, counts: Sequence[int], c_shape) -> torch.Tensor:
    """This process's block of ``op`` for rows ``counts`` of batch axis ``axis`` of the result."""
    array = op.array
    local = align_local(array, tuple(c_shape[op.lead :]), axis - op.lead, list(counts))
    local = local.to(op.local.dtype) if local.dtype != op.local.dtype else local
    local = local.reshape((1,) * op.lead + tuple(local.shape)) if op.lead else local
    return local.mT if op.transposed else local


def _natural(t: torch.Tensor, transposed: bool) -> torch.Tensor:
    return t.mT if transposed else t


def _ring(a_local: torch.Tensor, b: _Operand, out: torch.Tensor, comm) -> None:
    """
    ``out = a_local @ B``, B circulating in its blocks: along k the block products accumulate,
    along a free or batch axis each fills its own slice of ``out``.
    """
    R = out.dim()
    j = b.split
    counts = b.counts
    displs = displacements(counts)
    p, me = comm.size, comm.rank
    # blocks travel in the operand's natural orientation, contiguous
    natural = _natural(b.local, b.transposed).contiguous()
    nat_axis = j if not (b.transposed and j >= R - 2) else 2 * R - 3 - j
    nat_shape = list(natural.shape)
    block_numel = max(
        (math.prod(nat_shape[:nat_axis] + [c] + nat_shape[nat_axis + 1 :]) for c in counts),
        default=0,
    )
    buffers = (
        [torch.empty(block_numel, dtype=natural.dtype, device=natural.device) for _ in range(2)]
        if p > 1
        else []
    )
    left, right = (me - 1) % p, (me + 1) % p
    current_natural = natural
    for step in range(p):
        source = (me + step) % p
        pending = []
        if step < p - 1:
            following = (me + step + 1) % p
            shape = nat_shape[:nat_axis] + [counts[following]] + nat_shape[nat_axis + 1 :]
            incoming = buffers[step % 2][: math.prod(shape)].view(shape)
            pending.append(comm.Irecv(incoming, source=right, tag=_RING_TAG))
            pending.append(comm.Isend(current_natural, dest=left, tag=_RING_TAG))
        block = _natural(current_natural, b.transposed)
        start, length = displs[source], counts[source]
        if j == R - 2:  # k: accumulate
            _product_polling(out, a_local.narrow(-1, start, length), block, step > 0, pending)
        else:
            a_part = a_local
            if j < R - 2 and a_local.shape[j] != 1:
                a_part = a_local.narrow(j, start, length)
            _product_polling(out.narrow(j, start, length), a_part, block, False, pending)
        for request in pending:
            request.Wait()
        if step < p - 1:
            current_natural = incoming


def _pieces(length: int) -> List[Tuple[int, int]]:
    """(offset, length) of the row pieces a block is computed and sent in."""
    if length == 0:
        return [(0, 0)]
    count = max(1, min(_PIECES, length // _CHUNK_ROWS))
    step = -(-length // count)
    return [(start, min(step, length - start)) for start in range(0, length, step)]


def _reduce(a_local, b_local, out, axis: int, c_shape, comm) -> None:
    """
    Partial products of each owner's block along ``axis``, summed onto it with point-to-point
    messages. Every process computes the other processes' blocks first (the next rank's first,
    so that each block's first partial comes from the previous rank), in row pieces that are
    sent as soon as they are computed, and its own block last: the transfers travel while it
    multiplies. The previous rank's pieces are received straight into ``out``; the own partial
    product is then accumulated onto them by BLAS (no separate addition), and the pieces from
    farther ranks (three or more processes) are added one product later, when they have arrived.
    """
    R = len(c_shape)
    p, me = comm.size, comm.rank
    counts = balanced_counts(comm, c_shape[axis])
    displs = displacements(counts)

    def operands(root: int, offset: int, length: int):
        start = displs[root] + offset
        a_part, b_part = a_local, b_local
        if axis == R - 2:
            a_part = a_local.narrow(-2, start, length)
        elif axis == R - 1:
            b_part = b_local.narrow(-1, start, length)
        else:
            if a_local.shape[axis] != 1:
                a_part = a_local.narrow(axis, start, length)
            if b_local.shape[axis] != 1:
                b_part = b_local.narrow(axis, start, length)
        return a_part, b_part

    def piece_shape(length: int) -> List[int]:
        shape = list(out.shape)
        shape[axis] = length
        return shape

    def temporary(length: int) -> torch.Tensor:
        return torch.empty(piece_shape(length), dtype=out.dtype, device=out.device)

    def poll(requests) -> None:
        for request in requests:
            if not request.done:
                request.Test()

    own_pieces = _pieces(counts[me])
    # the previous rank's partial pieces land in out (or in a contiguous temporary)
    first: List = []
    for piece, (offset, length) in enumerate(own_pieces):
        target = out.narrow(axis, offset, length)
        buffer = target if target.is_contiguous() else temporary(length)
        request = comm.Irecv(buffer, source=(me - 1) % p, tag=_REDUCE_TAG + piece)
        first.append((request, target, buffer))
    first_done = [False] * len(own_pieces)

    def complete_first(piece: int) -> None:
        if not first_done[piece]:
            request, target, buffer = first[piece]
            request.Wait()
            if buffer is not target:
                target.copy_(buffer)
            first_done[piece] = True

    later: List = []  # (request, piece, buffer) of ranks at distance >= 2, one rank at a time

    def add_later() -> None:
        while later:
            request, piece, buffer = later.pop(0)
            request.Wait()
            complete_first(piece)
            out.narrow(axis, own_pieces[piece][0], own_pieces[piece][1]).add_(buffer)

    sends: List[List] = []
    for distance in range(1, p):
        dest, source = (me + distance) % p, (me - distance) % p
        if len(sends) == 2:  # at most two destinations' partial blocks in flight
            for request in sends.pop(0):
                request.Wait()
        arriving = []
        if distance >= 2:
            for piece, (offset, length) in enumerate(own_pieces):
                buffer = temporary(length)
                request = comm.Irecv(buffer, source=source, tag=_REDUCE_TAG + piece)
                arriving.append((request, piece, buffer))
        outgoing = []
        for piece, (offset, length) in enumerate(_pieces(counts[dest])):
            partial = temporary(length)
            _product_into(partial, *operands(dest, offset, length), False)
            outgoing.append(comm.Isend(partial, dest=dest, tag=_REDUCE_TAG + piece))
            poll([r for r, _, _ in first] + [r for r, _, _ in arriving] + outgoing)
        sends.append(outgoing)
        add_later()  # the previous distance's pieces have had a whole block's product to travel
        later.extend(arriving)
    pending = [request for group in sends for request in group]
    for piece, (offset, length) in enumerate(own_pieces):
        complete_first(piece)
        target = out.narrow(axis, offset, length)
        _product_into(target, *operands(me, offset, length), p > 1)
        poll(pending + [r for r, _, _ in first] + [r for r, _, _ in later])
    add_later()  # the last distance's pieces travelled during the own product
    for request in pending:
        request.Wait()


def _slice_rows(t: torch.Tensor, axis: int, counts, rank: int) -> torch.Tensor:
    return t.narrow(axis, displacements(counts)[rank], counts[rank])


# ---------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------
def _operand(x: DNDarray, role: str, R: int, torch_type, need_counts: bool) -> _Operand:
    local = x.larray
    if local.dtype != torch_type:
        local = local.to(torch_type)
    gshape, split = tuple(x.gshape), x.split
    if x.ndim == 1:
        # A: (k,) -> (1, k); B: (k,) -> (k, 1)
        axis = 0 if role == "A" else 1
        local = local.unsqueeze(axis)
        gshape = gshape[:axis] + (1,) + gshape[axis:]
        if split is not None:
            split = 1 if role == "A" else 0
    lead = R - len(gshape)
    if lead:
        local = local.reshape((1,) * lead + tuple(local.shape))
        gshape = (1,) * lead + gshape
        split = None if split is None else split + lead
    counts = x.counts_displs()[0] if (split is not None and need_counts) else None
    return _Operand(local, gshape, split, counts, False, x, lead)


def matmul_result_layout(a_shape, b_shape):
    """
    The result's frame of ``a @ b`` for global shapes: ``(c_shape, removed, R)``, where
    ``c_shape`` has both matrix axes (``removed`` lists those that 1-D operands drop).

    Raises
    ------
    ValueError
        For a 0-d operand, a mismatch of the contracted dimension, or batch shapes that do not
        broadcast (NumPy's conditions).
    """
    if len(a_shape) == 0 or len(b_shape) == 0:
        which = 0 if len(a_shape) == 0 else 1
        raise ValueError(
            f"matmul: Input operand {which} does not have enough dimensions (has 0, the "
            f"matrix product needs at least 1)"
        )
    a2 = (1,) + tuple(a_shape) if len(a_shape) == 1 else tuple(a_shape)
    b2 = tuple(b_shape) + (1,) if len(b_shape) == 1 else tuple(b_shape)
    if a2[-1] != b2[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size {b2[-2]} is "
            f"different from {a2[-1]}): shapes {tuple(a_shape)} and {tuple(b_shape)} are not "
            f"aligned"
        )
    try:
        batch = broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        raise ValueError(
            f"matmul: the batch dimensions of shapes {tuple(a_shape)} and {tuple(b_shape)} "
            f"cannot be broadcast together"
        ) from None
    c_shape = tuple(batch) + (a2[-2], b2[-1])
    R = len(c_shape)
    removed = []
    if len(a_shape) == 1:
        removed.append(R - 2)
    if len(b_shape) == 1:
        removed.append(R - 1)
    return c_shape, tuple(removed), R


def distributed_matmul(x1: DNDarray, x2: DNDarray, result_type) -> DNDarray:
    """
    ``x1 @ x2`` computed in ``result_type`` (validated operands of one communicator; see the
    module docstring for the executions).
    """
    c_shape, removed, R = matmul_result_layout(x1.gshape, x2.gshape)
    comm = x1.comm
    p = comm.size
    compute_type = result_type.torch_type()
    if result_type is types.bool:
        compute_type = torch.float64  # counts of true products, exact; nonzero at the end
    distributed = p > 1 and (x1.split is not None or x2.split is not None)
    a = _operand(x1, "A", R, compute_type, distributed)
    b = _operand(x2, "B", R, compute_type, distributed)
    # an operand split along an axis it broadcasts over cannot lead or circulate: gather it
    for op in (a, b):
        if op.split is not None and op.split < R - 2 and op.gshape[op.split] != c_shape[op.split]:
            full = _gathered(op)
            op.local, op.split, op.counts = full, None, None
    plan = _plan(a, b, c_shape, removed, p)
    kind = plan[0]
    if kind == "ring" and len(plan) > 2:
        # the leading operand is split along k: move it to its free axis first (on one process
        # nothing moves, but the result's layout is the same)
        _resplit_free_axis(b if plan[1] else a, plan[1], c_shape, comm)

    split, counts = None, None
    if kind == "local":
        lead = plan[1]
        if lead == "A":
            split, counts = a.split, a.counts
        elif lead == "B":
            split, counts = b.split, b.counts
    elif kind == "ring":
        leader = b.T() if plan[1] else a
        if leader.split is not None:
            split, counts = leader.split, leader.counts
            if plan[1] and split >= R - 2:
                split = 2 * R - 3 - split
        else:
            split = R - 1 if plan[1] else R - 2
            counts = balanced_counts(comm, c_shape[split])
    elif kind == "reduce":
        split = plan[1]
        counts = balanced_counts(comm, c_shape[split])
    if p == 1 and counts is None and split is not None:
        counts = (c_shape[split],)

    local_shape = list(c_shape)
    if split is not None:
        local_shape[split] = counts[comm.rank]
    out = torch.empty(local_shape, dtype=compute_type, device=a.local.device)

    if not distributed:
        _product_into(out, a.local, b.local, False)
    elif kind == "local":
        lead = plan[1]
        a_local, b_local = a.local, b.local
        if lead == "A" and split < R - 2:
            b_local = _aligned(b, split, counts, c_shape) if b.has_axis(split, c_shape) else b_local
        elif lead == "B" and split < R - 2:
            a_local = _aligned(a, split, counts, c_shape) if a.has_axis(split, c_shape) else a_local
        _product_into(out, a_local, b_local, False)
    elif kind == "ring":
        lhs, rhs, target = (b.T(), a.T(), out.mT) if plan[1] else (a, b, out)
        lhs_local = lhs.local
        if lhs.split is None:
            lhs_local = _slice_rows(lhs_local, R - 2, counts, comm.rank)
        _ring(lhs_local, rhs, target, comm)
    elif kind == "reduce":
        a_local, b_local = _contracted_blocks(a, b, R, comm)
        _reduce(a_local, b_local, out, split, c_shape, comm)
    else:  # allreduce
        a_local, b_local = _contracted_blocks(a, b, R, comm)
        _product_into(out, a_local, b_local, False)
        comm.Allreduce(MPI.IN_PLACE, out, MPI.SUM)

    if result_type is types.bool:
        out = out != 0
    elif out.dtype != result_type.torch_type():
        out = out.to(result_type.torch_type())
    # drop the axes of 1-D operands
    gshape = list(c_shape)
    for axis in sorted(removed, reverse=True):
        out = out.squeeze(axis)
        del gshape[axis]
        if split is not None and split > axis:
            split -= 1
    balanced = True
    if split is not None:
        balanced = tuple(counts) == balanced_counts(comm, gshape[split])
    return DNDarray(out, tuple(gshape), result_type, split, x1.device, comm, balanced)


def _resplit_free_axis(op: _Operand, is_b: bool, c_shape, comm) -> None:
    """Resplit ``op`` (at least 2-D) along its free axis: m for A, n for B (one all-to-all)."""
    array = op.array
    R = len(c_shape)
    local, _ = _redistribution.resplit_tensor(array, array.ndim - 1 if is_b else array.ndim - 2)
    local = local.to(op.local.dtype) if local.dtype != op.local.dtype else local
    op.local = local.reshape((1,) * op.lead + tuple(local.shape)) if op.lead else local
    op.split = R - 1 if is_b else R - 2
    op.counts = balanced_counts(comm, c_shape[op.split])


def _gathered(op: _Operand) -> torch.Tensor:
    """The whole of an operand split along an axis it broadcasts over (one allgather)."""
    array = op.array
    full = array.comm.allgather_tensors(array.larray, axis=array.split).reshape(array.gshape)
    full = full.to(op.local.dtype) if full.dtype != op.local.dtype else full
    if array.ndim == 1:
        full = full.unsqueeze(0 if op.split == len(op.gshape) - 1 else 1)
    full = full.reshape((1,) * op.lead + tuple(full.shape)) if op.lead else full
    return full.mT if op.transposed else full


def _contracted_blocks(a: _Operand, b: _Operand, R: int, comm):
    """Both operands restricted to the same k rows on this process (one may be replicated)."""
    a_local, b_local = a.local, b.local
    if a.split is None:
        a_local = _slice_rows(a_local, R - 1, b.counts, comm.rank)
    elif b.split is None:
        b_local = _slice_rows(b_local, R - 2, a.counts, comm.rank)
    elif tuple(a.counts) != tuple(b.counts):
        # both split along k with different counts: move B's rows to A's layout
        b_local = _aligned_k(b, a.counts, comm)
    return a_local, b_local


def _aligned_k(b: _Operand, counts, comm) -> torch.Tensor:
    """B's rows (k) redistributed to ``counts`` (one all-to-all)."""
    array = b.array
    local = redistribute_tensor(array, counts)
    local = local.to(b.local.dtype) if local.dtype != b.local.dtype else local
    if array.ndim == 1:
        local = local.unsqueeze(1)
    return local.reshape((1,) * b.lead + tuple(local.shape)) if b.lead else local
