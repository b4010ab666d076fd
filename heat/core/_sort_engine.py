"""
The sort engine under :mod:`heat.core.sorting` and :mod:`heat.core.sets` (private): order-preserving
integer keys for every sortable dtype, the local kernels (NumPy's on CPU blocks, torch's on GPU
blocks), the exchanges, and the parallel sample sort (``_distributed_sort``: regular samples,
splitters as (value, global index) pairs, one all-to-all of the pieces, a merge, and a rebalance
to the default layout). sorting.py's docstring describes the algorithm and the order of ties;
this module is what both sorting.py and sets.py build on.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np
import torch

from . import types
from ._operations import _UNSIGNED_COMPUTE, from_order_key, order_key, signed_view
from .dndarray import DNDarray
from .parallel import piece_bounds, run_pieces, worker_count

# =============================================================================================
# order-preserving integer keys
# =============================================================================================
_FLOAT_KEY_TYPES = {
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.float32: torch.int32,
    torch.float64: torch.int64,
}
_COMPLEX_TORCH = (torch.complex64, torch.complex128)


def _check_sortable(x: DNDarray, name: str) -> None:
    """Raise a TypeError for dtypes without an order (complex)."""
    if types.heat_type_is_complexfloating(x.dtype):
        raise TypeError(f"{name} has the complex dtype {x.dtype.__name__}, which cannot be sorted")


def _to_keys(t: torch.Tensor, merge_zero: bool = True) -> torch.Tensor:
    """
    Integer keys whose (signed) integer order is the sort order of ``t``'s values.

    NaNs (of any sign and payload) become the largest key. With ``merge_zero``, ``-0.0`` gets the
    key of ``0.0`` (needed wherever equality matters: ties, unique values, searching); without it
    the keys can be turned back into the exact values (except NaN payloads).
    Integer tensors are their own keys (the same tensor is returned: do not modify it in place).
    """
    if t.dtype == torch.bool:
        return t.to(torch.uint8)
    key_type = _FLOAT_KEY_TYPES.get(t.dtype)
    if key_type is None:
        return order_key(t)  # signed keys of uint16/32/64 (torch only stores those)
    t = t.contiguous()
    width = 8 * t.element_size()
    low = (1 << (width - 1)) - 1
    bits = t.view(key_type)
    if t.device.type == "cpu":
        # NumPy, in place on one new array (fewer temporaries than torch on CPU)
        array = bits.reshape(-1).numpy()
        keys_np = array >> (width - 1)
        keys_np &= low
        keys_np ^= array
        keys = torch.from_numpy(keys_np).reshape(t.shape)
    else:
        keys = bits ^ ((bits >> (width - 1)) & low)
    nan = torch.isnan(t)
    if bool(nan.any()):
        canonical = torch.full((), float("nan"), dtype=t.dtype).view(key_type).item()
        keys.masked_fill_(nan, canonical)  # positive NaN: its key is its bit pattern
    if merge_zero:
        keys.masked_fill_(keys == -1, 0)  # -1 is the key of -0.0 only
    return keys


def _from_keys(keys: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The values of ``dtype`` whose keys are ``keys`` (inverse of :func:`_to_keys`)."""
    if dtype == torch.bool:
        return keys.to(torch.bool)
    if dtype in _FLOAT_KEY_TYPES:
        keys = keys.contiguous()
        width = 8 * keys.element_size()
        low = (1 << (width - 1)) - 1
        if keys.device.type == "cpu":
            array = keys.reshape(-1).numpy()
            bits = array >> (width - 1)
            bits &= low
            bits ^= array
            return torch.from_numpy(bits).view(dtype).reshape(keys.shape)
        return (keys ^ ((keys >> (width - 1)) & low)).view(dtype)
    if dtype in _UNSIGNED_COMPUTE:
        return from_order_key(keys, dtype)
    return keys


# elements per step of the in-place key transforms: bounds their temporaries to a few MB
_KEY_CHUNK = 1 << 16


def _flip_negative_(
    bits: torch.Tensor, floats: torch.dtype, nan_fill: Optional[int], merge_zero: bool
) -> None:
    """
    In place on the 1-D integer view ``bits`` of ``floats`` values: flip every bit but the sign
    of the negative ones (the key transform, an involution), chunk by chunk. ``nan_fill``
    (forward transform only) replaces NaNs of any sign and payload by that key, ``merge_zero``
    gives ``-0.0`` the key of ``0.0``.
    """
    width = 8 * bits.element_size()
    low = (1 << (width - 1)) - 1
    if bits.device.type != "cpu" or floats == torch.bfloat16:
        for start in range(0, bits.shape[0], _KEY_CHUNK):
            chunk = bits[start : start + _KEY_CHUNK]
            nan = torch.isnan(chunk.view(floats)) if nan_fill is not None else None
            flip = chunk >> (width - 1)
            flip &= low
            chunk ^= flip
            if nan is not None and bool(nan.any()):
                chunk.masked_fill_(nan, nan_fill)
            if merge_zero:
                chunk.masked_fill_(chunk == -1, 0)  # -1 is the key of -0.0 only
        return
    # NumPy on the CPU: single-threaded kernels into reused buffers (many small torch calls
    # cost far more, above all with several threads on a busy machine)
    array = bits.numpy()
    float_view = array.view(_NUMPY_FLOATS[floats])
    flip = np.empty(min(_KEY_CHUNK, array.shape[0]), dtype=array.dtype)
    mask = np.empty(flip.shape[0], dtype=bool)
    for start in range(0, array.shape[0], _KEY_CHUNK):
        chunk = array[start : start + _KEY_CHUNK]
        size = chunk.shape[0]
        if nan_fill is not None:
            np.isnan(float_view[start : start + size], out=mask[:size])
            has_nan = bool(mask[:size].any())
        np.right_shift(chunk, width - 1, out=flip[:size])
        np.bitwise_and(flip[:size], low, out=flip[:size])
        np.bitwise_xor(chunk, flip[:size], out=chunk)
        if nan_fill is not None and has_nan:
            chunk[mask[:size]] = nan_fill
        if merge_zero:
            np.equal(chunk, -1, out=mask[:size])
            chunk[mask[:size]] = 0  # -1 is the key of -0.0 only


_NUMPY_FLOATS = {torch.float16: np.float16, torch.float32: np.float32, torch.float64: np.float64}


def _to_keys_(t: torch.Tensor, merge_zero: bool, invert: bool) -> torch.Tensor:
    """
    In-place :func:`_to_keys` of the contiguous tensor ``t``, which the caller owns: ``t``'s
    memory, viewed with the key dtype, is returned. ``invert`` complements the keys (the
    descending order). No temporaries beyond a chunk.
    """
    if t.dtype == torch.bool:
        keys = t.view(torch.uint8)
    elif t.dtype in _FLOAT_KEY_TYPES:
        keys = t.view(_FLOAT_KEY_TYPES[t.dtype])
        nan = torch.full((), float("nan"), dtype=t.dtype).view(keys.dtype).item()
        _flip_negative_(keys.reshape(-1), t.dtype, nan, merge_zero)
    else:
        keys = t
    if invert:
        _invert_(keys)
    return keys


def _invert_(keys: torch.Tensor) -> None:
    """Complement integer keys in place (reverses their order)."""
    if keys.device.type == "cpu":
        array = keys.numpy()
        np.invert(array, out=array)
    else:
        signed_view(keys).bitwise_not_()  # the same bits; CUDA has no uint16/32/64 kernel


def _from_keys_(keys: torch.Tensor, dtype: torch.dtype, invert: bool) -> torch.Tensor:
    """In-place inverse of :func:`_to_keys_` (without ``merge_zero``): the values, same memory."""
    if invert:
        _invert_(keys)
    if dtype in _FLOAT_KEY_TYPES:
        _flip_negative_(keys.reshape(-1), dtype, None, False)
    if keys.dtype != dtype:
        return keys.view(dtype)
    return keys


# =============================================================================================
# local kernels (NumPy on CPU, torch on GPU); all work along the last dimension
# =============================================================================================
def _torch_sort(keys: torch.Tensor, dim: int = -1, stable: bool = False):
    """
    ``torch.sort``, also of uint16/32/64 keys, which torch has no CUDA kernel for: their order
    keys (:func:`order_key`) are sorted and mapped back.
    """
    if keys.dtype not in _UNSIGNED_COMPUTE:
        return torch.sort(keys, dim=dim, stable=stable)
    result = torch.sort(order_key(keys), dim=dim, stable=stable)
    return torch.return_types.sort((from_order_key(result.values, keys.dtype), result.indices))


def _sort_last(keys: torch.Tensor) -> torch.Tensor:
    """``keys`` sorted along the last dimension (a new tensor)."""
    if keys.device.type == "cpu":
        return torch.from_numpy(np.sort(keys.contiguous().numpy(), axis=-1))
    return _torch_sort(keys, dim=-1).values


def _sort_(values: torch.Tensor, dim: int) -> None:
    """
    Sort the contiguous ``values`` (keys, or real numbers: NaN last) in place along ``dim``;
    NumPy's kernels on the CPU (no temporaries, much faster than ``torch.sort``).
    """
    if values.device.type == "cpu" and values.dtype != torch.bfloat16:
        array = values.numpy()
        # lanes are independent: split along the longest other axis, one piece per thread
        others = [d for d in range(array.ndim) if d != dim % array.ndim]
        along = max(others, key=lambda d: array.shape[d]) if others else None
        workers = 1 if along is None else worker_count(array.shape[along], array.size)
        if workers == 1:
            array.sort(axis=dim)
            return
        bounds = piece_bounds(array.shape[along], workers)
        key = [slice(None)] * array.ndim

        def sort_piece(piece: int) -> None:
            start, stop = bounds[piece]
            piece_key = list(key)
            piece_key[along] = slice(start, stop)
            array[tuple(piece_key)].sort(axis=dim)

        run_pieces(sort_piece, workers)
    else:
        values.copy_(_torch_sort(values, dim=dim).values)


def _packed_sort(array: np.ndarray, dim: int) -> Optional[np.ndarray]:
    """
    (key, position) packed into int64 and sorted along ``dim``: one fast (SIMD) sort instead of
    a slow stable argsort. The position in the low 32 bits breaks ties, so the order is the
    stable one. Built in place (the int64 array is the only new one); None for keys wider than
    32 bits or lanes of 2**31 or more elements.
    """
    n = array.shape[dim]
    if array.itemsize > 4 or array.dtype == np.uint32 or n >= 2**31:
        return None  # (uint32 keys would reach the sign bit of the packed int64)
    packed = np.empty(array.shape, dtype=np.int64)
    packed[...] = array
    packed <<= 32
    shape = [1] * array.ndim
    shape[dim] = n
    packed |= np.arange(n, dtype=np.int64).reshape(shape)
    packed.sort(axis=dim)
    return packed


def _argsort_(keys: torch.Tensor, dim: int) -> torch.Tensor:
    """The stable sorting permutation (int64) of ``keys`` along ``dim``; ``keys`` is not modified."""
    if keys.device.type != "cpu":
        return _torch_sort(keys, dim=dim, stable=True).indices
    array = keys.contiguous().numpy()
    packed = _packed_sort(array, dim)
    if packed is not None:
        packed &= 0xFFFFFFFF
        return torch.from_numpy(packed)
    order = np.argsort(array, axis=dim, kind="stable")
    return torch.from_numpy(order.astype(np.int64, copy=False))


def _argsort_last(keys: torch.Tensor) -> torch.Tensor:
    """The stable sorting permutation (int64) of ``keys`` along the last dimension."""
    return _argsort_(keys, -1)


def _sort_with_order(keys: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """``keys`` sorted stably along the last dimension, and the permutation (int64)."""
    if keys.device.type != "cpu":
        result = _torch_sort(keys, dim=-1, stable=True)
        return result.values, result.indices
    array = keys.contiguous().numpy()
    packed = _packed_sort(array, -1)
    if packed is None:
        order = torch.from_numpy(np.argsort(array, axis=-1, kind="stable").astype(np.int64))
        return torch.take_along_dim(keys, order, dim=-1), order
    sorted_keys = (packed >> 32).astype(array.dtype)
    packed &= 0xFFFFFFFF
    return torch.from_numpy(sorted_keys), torch.from_numpy(packed)


def _argsort_grouped(lanes: torch.Tensor, keys: torch.Tensor, m: int) -> torch.Tensor:
    """The stable permutation that sorts 1-D ``keys`` by (lane, key)."""
    if m <= 1:
        return _argsort_last(keys)
    if keys.device.type == "cpu":
        if keys.element_size() <= 4 and m < 2**31:
            # one stable sort of (lane, key) packed into int64 (timsort merges the sorted runs
            # the exchange delivered; several times faster than a two-key lexsort)
            combined = keys.numpy().astype(np.int64)
            combined -= torch.iinfo(keys.dtype).min  # non-negative, below 2**32
            combined |= lanes.numpy() << 32
            order = np.argsort(combined, kind="stable")
        else:
            order = np.lexsort((keys.numpy(), lanes.numpy()))
        return torch.from_numpy(order.astype(np.int64, copy=False))
    perm = _torch_sort(keys, stable=True).indices
    return perm[_torch_sort(lanes[perm], stable=True).indices]


def _topk_last(keys: torch.Tensor, k: int) -> torch.Tensor:
    """
    Positions (int64, shape ``(..., k)``) of the ``k`` smallest keys along the last dimension,
    in stable sorted order (ties: lower position first).
    """
    n = keys.shape[-1]
    if k == 0:
        return torch.empty(keys.shape[:-1] + (0,), dtype=torch.int64, device=keys.device)
    if k >= n or keys.device.type != "cpu":
        return _argsort_last(keys)[..., :k]
    # O(n) selection: everything below the k-th key, plus the first ties at the k-th key
    array = keys.contiguous().numpy().reshape(-1, n)
    if array.shape[0] == 1:
        lane = array[0]
        kth = np.partition(lane, k - 1)[k - 1]
        below = np.flatnonzero(lane < kth)
        ties = np.flatnonzero(lane == kth)[: k - below.shape[0]]
        positions = np.concatenate([below, ties])
        # keys below kth cannot tie with kth: a stable sort keeps both lists in index order
        order = _argsort_last(torch.from_numpy(lane[positions])).numpy()
        positions = positions[order].astype(np.int64, copy=False)
        return torch.from_numpy(positions).reshape(keys.shape[:-1] + (k,))
    kth = np.partition(array, k - 1, axis=-1)[:, k - 1 : k]
    below = array < kth
    ties = array == kth
    need = k - below.sum(axis=-1, keepdims=True)
    chosen = below | (ties & (np.cumsum(ties, axis=-1) <= need))
    positions = np.nonzero(chosen)[1].reshape(-1, k)
    order = _argsort_last(torch.from_numpy(np.take_along_axis(array, positions, axis=-1)))
    positions = np.take_along_axis(positions, order.numpy(), axis=-1)
    return torch.from_numpy(positions.astype(np.int64, copy=False)).reshape(keys.shape[:-1] + (k,))


def _ragged_indices(starts: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Concatenation of ``arange(starts[i], starts[i] + lengths[i])`` over i (int64)."""
    lengths = lengths.to(torch.int64)
    total = int(lengths.sum())
    if total == 0:
        return torch.empty(0, dtype=torch.int64, device=starts.device)
    offsets = torch.cumsum(lengths, 0) - lengths
    return torch.repeat_interleave(starts.to(torch.int64) - offsets, lengths) + torch.arange(
        total, dtype=torch.int64, device=starts.device
    )


def _as_bytes(t: torch.Tensor) -> torch.Tensor:
    """The bytes of ``t`` as a uint8 tensor of shape ``t.shape + (itemsize,)``."""
    width = t.element_size()
    if t.numel() == 0:
        return torch.empty(tuple(t.shape) + (width,), dtype=torch.uint8, device=t.device)
    return t.contiguous().view(torch.uint8).view(tuple(t.shape) + (width,))


def _from_bytes(b: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Inverse of :func:`_as_bytes`: ``b`` of shape ``shape + (itemsize,)`` (any strides)."""
    shape = tuple(b.shape[:-1])
    if b.numel() == 0:
        return torch.empty(shape, dtype=dtype, device=b.device)
    return b.clone(memory_format=torch.contiguous_format).view(dtype).reshape(shape)


def _exclusive_cumsum(t: torch.Tensor, dim: int = 0) -> torch.Tensor:
    return torch.cumsum(t, dim) - t


# =============================================================================================
# communication helpers
# =============================================================================================
def _alltoallv_columns(
    comm,
    columns: Sequence[torch.Tensor],
    send_counts: Sequence[int],
    recv_counts: Sequence[int],
    separate: bool = False,
) -> List[torch.Tensor]:
    """
    Exchange rows made of 1-D columns: ``send_counts[r]`` consecutive rows go to rank r,
    ``recv_counts[r]`` rows arrive from it (both known). By default the columns travel together
    as bytes in ONE ``Alltoallv``; with ``separate`` (for large data, where packing would copy
    everything twice) one ``Alltoallv`` per column. ``separate`` must be the same on every
    process (decide it from global information).
    """
    send_counts = [int(c) for c in send_counts]
    recv_counts = [int(c) for c in recv_counts]
    total = sum(recv_counts)
    if len(columns) == 1 or separate:
        result = []
        for column in columns:
            column = column.contiguous()
            received = torch.empty(total, dtype=column.dtype, device=column.device)
            comm.Alltoallv((column, send_counts), (received, recv_counts))
            result.append(received)
        return result
    widths = [c.element_size() for c in columns]
    width = sum(widths)
    rows = torch.cat([_as_bytes(c.reshape(-1)) for c in columns], 1)
    received = torch.empty((total, width), dtype=torch.uint8, device=rows.device)
    comm.Alltoallv(
        (rows, [c * width for c in send_counts]), (received, [c * width for c in recv_counts])
    )
    result, start = [], 0
    for column, w in zip(columns, widths):
        result.append(_from_bytes(received[:, start : start + w], column.dtype))
        start += w
    return result


def _allgather_fixed(comm, t: torch.Tensor) -> torch.Tensor:
    """``t`` (same shape on every process) of all processes, stacked: ``(p,) + t.shape``."""
    t = t.contiguous()
    received = torch.empty((comm.size,) + tuple(t.shape), dtype=t.dtype, device=t.device)
    comm.Allgather(t, received)
    return received


def _alltoall_counts(comm, send: torch.Tensor) -> torch.Tensor:
    """``send[r]`` (an int64 row) goes to rank r; row r of the result came from rank r."""
    send = send.to(torch.int64).contiguous()
    received = torch.empty_like(send)
    comm.Alltoall(send, received)
    return received


def _route(
    comm,
    dest: torch.Tensor,
    columns: Sequence[torch.Tensor],
    answer: Callable[[List[torch.Tensor]], List[torch.Tensor]],
) -> List[torch.Tensor]:
    """
    Ask other processes: element i (its ``columns`` entries) travels to rank ``dest[i]``, which
    computes ``answer(received_columns) -> list of 1-D tensors`` (one entry per received row,
    same order); the answers travel back and are returned in the original element order.
    One small ``Alltoall`` and two ``Alltoallv``.
    """
    p = comm.size
    dest = dest.to(torch.int64)
    order = torch.sort(dest, stable=True).indices
    send_counts = torch.bincount(dest.cpu(), minlength=p)
    recv_counts = _alltoall_counts(comm, send_counts.view(p, 1)).view(p)
    received = _alltoallv_columns(
        comm, [c[order] for c in columns], send_counts.tolist(), recv_counts.tolist()
    )
    answers = answer(received)
    returned = _alltoallv_columns(comm, answers, recv_counts.tolist(), send_counts.tolist())
    result = []
    for back in returned:
        out = torch.empty_like(back)
        out[order] = back
        result.append(out)
    return result


# =============================================================================================
# the distributed sample sort
# =============================================================================================
def _splitters(comm, keys: torch.Tensor) -> torch.Tensor:
    """
    ``p - 1`` global splitters per lane, an int64 tensor ``(m, p - 1, 3)`` of
    (key, rank, position in that rank's sorted lane), identical on every process.
    ``keys`` is this process's ``(m, n)`` block, sorted along the lanes. One allgather.
    """
    p, rank = comm.size, comm.rank
    m, n = keys.shape
    samples = torch.full((m, p - 1, 3), -1, dtype=torch.int64)  # rank -1: no sample (n == 0)
    if n > 0:
        positions = torch.tensor([(i + 1) * n // p for i in range(p - 1)], dtype=torch.int64)
        samples[:, :, 0] = keys[:, positions.to(keys.device)].cpu().to(torch.int64)
        samples[:, :, 1] = rank
        samples[:, :, 2] = positions
    # fixed size: one Allgather; (p, m, p - 1, 3) -> (m, p * (p - 1), 3) in (rank, position) order
    samples = _allgather_fixed(comm, samples).permute(1, 0, 2, 3).reshape(m, p * (p - 1), 3)
    if m:
        samples = samples[:, samples[0, :, 1] >= 0, :]
    count = samples.shape[1]
    # gathered in (rank, position) order, so a stable sort by key gives the (key, rank, position)
    # order, i.e. the (value, global index) order of the sampled elements
    order = torch.sort(samples[:, :, 0], dim=1, stable=True).indices
    samples = torch.take_along_dim(samples, order.unsqueeze(-1), dim=1)
    chosen = torch.tensor([(i + 1) * count // p for i in range(p - 1)], dtype=torch.int64)
    return samples[:, chosen, :]


def _partition_bounds(
    comm, keys: torch.Tensor, splitters: torch.Tensor, tie_break: bool
) -> torch.Tensor:
    """
    Cut points ``(m, p + 1)`` (int64, CPU) of the sorted local lanes: elements
    ``[bounds[j, d], bounds[j, d + 1])`` of lane j belong to rank d.

    With ``tie_break`` the elements are ordered by (key, global index), so runs of equal keys may
    be cut (balanced buckets even for constant data); without it equal keys stay together.
    """
    p, rank = comm.size, comm.rank
    m, n = keys.shape
    bounds = torch.zeros((m, p + 1), dtype=torch.int64)
    bounds[:, p] = n
    if n == 0 or p == 1:
        return bounds
    split_keys = splitters[:, :, 0].to(keys.dtype).to(keys.device).contiguous()
    keys = keys.contiguous()
    left = torch.searchsorted(keys, split_keys, side="left").cpu()
    if tie_break:
        right = torch.searchsorted(keys, split_keys, side="right").cpu()
        owner = splitters[:, :, 1]
        # a splitter from a lower rank precedes our equal keys (their global indices are larger),
        # one from a higher rank follows them; our own splitter sits at its sorted position
        cut = torch.where(owner < rank, left, torch.where(owner > rank, right, splitters[:, :, 2]))
    else:
        cut = left
    bounds[:, 1:p] = cut
    return bounds


def _sample_exchange(
    comm,
    keys: torch.Tensor,
    payloads: Sequence[torch.Tensor],
    tie_break: bool,
    separate: bool = False,
):
    """
    Steps 2-3 of the sample sort for sorted ``(m, n)`` lanes ``keys`` (payloads: same shape).

    Returns ``(columns, recv_matrix, send_counts, recv_counts)``: ``columns`` are the received
    1-D keys and payloads, ordered by (sender, lane), each sender's piece of a lane sorted;
    ``recv_matrix[s, j]`` is the number of lane-j rows from rank s; ``send_counts`` /
    ``recv_counts`` are the per-rank row totals (for sending answers back along the same route).
    """
    m, n = keys.shape
    bounds = _partition_bounds(comm, keys, _splitters(comm, keys), tie_break)
    counts = bounds[:, 1:] - bounds[:, :-1]  # (m, p)
    recv_matrix = _alltoall_counts(comm, counts.t())  # (p, m)
    send_counts = counts.sum(0).tolist()
    recv_counts = recv_matrix.sum(1).tolist()
    columns = [keys] + list(payloads)
    if m == 1:
        flat = [c.reshape(-1) for c in columns]
    else:
        starts = (bounds[:, :-1] + torch.arange(m).unsqueeze(1) * n).t().reshape(-1)
        index = _ragged_indices(starts, counts.t().reshape(-1)).to(keys.device)
        flat = [c.reshape(-1)[index] for c in columns]
    received = _alltoallv_columns(comm, flat, send_counts, recv_counts, separate)
    return received, recv_matrix, send_counts, recv_counts


def _merge_received(columns: List[torch.Tensor], recv_matrix: torch.Tensor, need_order: bool):
    """
    Sort what :func:`_sample_exchange` delivered by (lane, key), stably (ties by sender, then
    by sender position, i.e. by global index). Returns the lane-major columns and the lane
    lengths ``(m,)``.
    """
    keys = columns[0]
    m = recv_matrix.shape[1]
    lane_counts = recv_matrix.sum(0)
    if m == 1:
        if not need_order and len(columns) == 1:
            return [_sort_last(keys)], lane_counts
        keys, order = _sort_with_order(keys)
        return [keys] + [c[order] for c in columns[1:]], lane_counts
    lanes = None
    if m > 1:
        lanes = torch.repeat_interleave(
            torch.arange(m, dtype=torch.int64).repeat(recv_matrix.shape[0]), recv_matrix.reshape(-1)
        ).to(keys.device)
    order = _argsort_grouped(lanes, keys, m)
    return [c[order] for c in columns], lane_counts


def _rebalance(
    comm,
    columns: List[torch.Tensor],
    lane_counts: torch.Tensor,
    out_counts: Sequence[int],
    all_lane_counts: Optional[torch.Tensor] = None,
    separate: bool = False,
) -> List[torch.Tensor]:
    """
    Move lane-major rows to the layout where rank t holds global positions
    ``[displ_t, displ_t + out_counts[t])`` of every lane (positions beyond ``sum(out_counts)``
    are dropped). Rows of rank d's lane j hold the positions that follow those of ranks < d.
    Returns the columns as ``(m, out_counts[rank])`` tensors. One allgather of the lane lengths
    (unless given) and one ``Alltoallv`` (skipped when nothing has to move).
    """
    p, rank = comm.size, comm.rank
    m = lane_counts.shape[0]
    if all_lane_counts is None:
        all_lane_counts = _allgather_fixed(comm, lane_counts.to(torch.int64).cpu())
    all_lane_counts = all_lane_counts.to(torch.int64).cpu()  # (p, m)
    targets = torch.tensor(list(out_counts), dtype=torch.int64)
    target_displs = _exclusive_cumsum(targets)
    mine = int(targets[rank])
    if torch.equal(all_lane_counts, targets.unsqueeze(1).expand(p, m)):
        return [c.view(m, mine) for c in columns]
    starts_global = _exclusive_cumsum(all_lane_counts)  # (p, m): first position of each piece
    ends_global = starts_global + all_lane_counts
    target_ends = target_displs + targets
    # what this rank sends: (lane, target) overlaps
    my_start, my_end = starts_global[rank].unsqueeze(1), ends_global[rank].unsqueeze(1)
    low = torch.maximum(my_start, target_displs.unsqueeze(0))
    high = torch.minimum(my_end, target_ends.unsqueeze(0))
    send_lengths = (high - low).clamp(min=0)  # (m, p)
    lane_base = _exclusive_cumsum(all_lane_counts[rank]).unsqueeze(1)
    send_starts = lane_base + low - my_start
    # what this rank receives: (sender, lane) overlaps with its own target range
    low_r = torch.maximum(starts_global, target_displs[rank])
    high_r = torch.minimum(ends_global, target_ends[rank])
    recv_lengths = (high_r - low_r).clamp(min=0)  # (p, m)
    send_counts = send_lengths.sum(0).tolist()
    recv_counts = recv_lengths.sum(1).tolist()
    device = columns[0].device
    if m == 1:
        first = int(send_starts[0][send_lengths[0] > 0][0]) if sum(send_counts) else 0
        outgoing = [c[first : first + sum(send_counts)] for c in columns]
    else:
        index = _ragged_indices(send_starts.t().reshape(-1), send_lengths.t().reshape(-1))
        outgoing = [c[index.to(device)] for c in columns]
    received = _alltoallv_columns(comm, outgoing, send_counts, recv_counts, separate)
    if m > 1:
        offsets = _exclusive_cumsum(recv_lengths.reshape(-1)).view(p, m)
        index = _ragged_indices(offsets.t().reshape(-1), recv_lengths.t().reshape(-1)).to(device)
        received = [c[index] for c in received]
    return [c.view(m, mine) for c in received]


# above this many elements (global) the sample sort sends each column in its own Alltoallv
# instead of packing all columns into one byte buffer (packing copies everything twice)
_PACK_LIMIT = 1 << 16


def _distributed_sort(
    comm,
    keys: torch.Tensor,
    payloads: Sequence[torch.Tensor],
    out_counts: Sequence[int],
    global_size: int,
    index_offset: Optional[int] = None,
) -> List[torch.Tensor]:
    """
    Sample sort of ``(m, n)`` lanes of ``keys`` (rows of this process; the lanes continue on
    the other processes in rank order) with ``payloads`` riding along. Ties keep the order of
    the global positions. Returns ``[keys, *payloads]`` as ``(m, out_counts[rank])`` tensors:
    rank t gets the sorted positions ``[displ_t, displ_t + out_counts[t])`` of every lane.

    ``index_offset`` adds one more payload without building it first: the global position
    (local position + ``index_offset``). ``global_size`` (the number of elements on all
    processes, an upper bound is fine) chooses how the columns travel; it must be the same
    everywhere.
    """
    payloads = list(payloads)
    if payloads or index_offset is not None:
        keys, order = _sort_with_order(keys)
        payloads = [torch.take_along_dim(pl, order.to(pl.device), dim=-1) for pl in payloads]
        if index_offset is not None:
            payloads.append(order.to(keys.device) + index_offset)
    else:
        keys = _sort_last(keys)
    separate = global_size > _PACK_LIMIT
    columns, recv_matrix, _, _ = _sample_exchange(comm, keys, payloads, True, separate)
    columns, lane_counts = _merge_received(columns, recv_matrix, need_order=bool(payloads))
    return _rebalance(comm, columns, lane_counts, out_counts, separate=separate)
