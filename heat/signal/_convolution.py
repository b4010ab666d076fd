"""
Distributed linear convolution: :func:`convolve` (1-D, as :func:`numpy.convolve`) and
:func:`convolve2d` (2-D with zero boundaries, as :func:`scipy.signal.convolve2d`).

How the work is distributed
---------------------------
The longer operand is the *signal*, the other the *kernel*; the kernel is small and every process
gets all of it (one all-gather if it is split). Let the signal be split along axis ``s`` and the
kernel have length ``k`` along it. Entry ``i`` of the full convolution along ``s`` needs the signal
rows ``i - k + 1 .. i``, so each process

1. fetches the ``k - 1`` rows before its block from the processes that hold them
   (:meth:`DNDarray.get_halo` with ``next=False``: one all-to-all; empty blocks are skipped and a
   halo longer than a neighbour's block collects rows from several processes),
2. computes the entries of the full convolution whose last signal row it holds (the last
   non-empty block also computes the ``k - 1`` entries past the end of the signal), keeping only
   those the mode and the stride select: one local ``torch`` convolution, with zeros outside the
   signal along every axis,
3. and the result, whose blocks are as uneven as the work was, is balanced (one all-to-all; the
   local lengths are known to every process without communication).

Along axes that are not split, everything is local. A signal that is not split, convolved with a
split kernel, is first cut into blocks along the kernel's split axis (local slicing, no
communication), so the work is still shared; if neither input is split, every process convolves
the whole signal.

Batches (:func:`convolve` with an input of more than one dimension, as HeAT 1.8): every row along
the last axis is convolved on its own, so a batch split along a batch axis needs no halo: each
process convolves its own rows (a batched kernel is first brought to the same rows). A batch
split along its last axis is first resplit along axis 0 (one all-to-all).
"""

from __future__ import annotations

import itertools
import math
import operator
from typing import Optional, Sequence, Tuple, Union

import torch

from ..core import types
from ..core.dndarray import DNDarray
from ..core.factories import array
from ..core.layout import resplit

__all__ = ["convolve", "convolve2d"]

_MODES = ("full", "same", "valid")
# the types torch's convolutions take on GPUs
_CONV_TYPES_GPU = (
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
)
# elements of the windows copied at a time on CPUs
_WINDOW_BUDGET = 1 << 22


# ------------------------------------------------------------------------------------------------
# argument checks (all from information every process shares, before any communication)
# ------------------------------------------------------------------------------------------------
def _operand(x, name: str, ndim: Optional[int], like: Optional[DNDarray]) -> DNDarray:
    """
    ``x`` as a DNDarray of ``ndim`` dimensions (None: at least one); a scalar is a 1-element
    1-D array.
    """
    if not isinstance(x, DNDarray):
        kwargs = {} if like is None else {"device": like.device, "comm": like.comm}
        try:
            x = array(x, **kwargs)
        except (TypeError, ValueError, RuntimeError) as error:
            raise TypeError(
                f"{name} must be a DNDarray or array_like, but was {type(x).__name__}: {error}"
            ) from None
        if ndim in (1, None) and x.ndim == 0:
            x = x.reshape((1,))
    if ndim is None and x.ndim == 0:
        raise ValueError(f"{name} must be at least 1-dimensional, but is 0-dimensional")
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, but has {x.ndim} dimensions")
    if x.size == 0:
        raise ValueError(f"{name} cannot be empty, but has shape {x.gshape}")
    return x


def _check_mode(mode) -> str:
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, but was {mode!r}")
    return mode


def _check_strides(stride, ndim: int) -> Tuple[int, ...]:
    values = stride if isinstance(stride, (tuple, list)) and ndim > 1 else (stride,) * ndim
    if len(values) != ndim:
        raise ValueError(f"stride must be an int or a tuple of {ndim} ints, but was {stride!r}")
    strides = []
    for value in values:
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            kind = "an int" if ndim == 1 else f"an int or a tuple of {ndim} ints"
            raise TypeError(f"stride must be {kind}, but was {stride!r}")
        value = operator.index(value)
        if value < 1:
            raise ValueError(f"stride must be positive, but was {stride!r}")
        strides.append(value)
    return tuple(strides)


# ------------------------------------------------------------------------------------------------
# the local work
# ------------------------------------------------------------------------------------------------
def _window(n: int, k: int, mode: str) -> Tuple[int, int]:
    """Offset and length of the mode's part of the full convolution (length ``n + k - 1``)."""
    if mode == "full":
        return 0, n + k - 1
    if mode == "same":
        return (k - 1) // 2, n
    return k - 1, n - k + 1


def _selected(lo: int, hi: int, offset: int, length: int, stride: int) -> Tuple[int, int]:
    """
    The output indices ``[first, stop)`` whose full-convolution entry ``offset + t * stride``
    lies in ``[lo, hi)``.
    """
    count = (length - 1) // stride + 1
    first = max(0, -(-(lo - offset) // stride))
    stop = min(count, max(0, -(-(hi - offset) // stride)))
    return first, max(first, stop)


def _correlate(segment: torch.Tensor, flipped: torch.Tensor, strides, counts) -> torch.Tensor:
    """
    The valid correlation of ``segment`` with ``flipped`` at ``strides``, ``counts`` entries per
    axis (``segment`` holds exactly the rows they need).

    On GPUs torch's convolution; on CPUs, where torch's convolution costs milliseconds even for
    small inputs, the windows (a strided view) times the kernel, in chunks of rows that bound the
    memory of the copied windows. Integers and bool on GPUs, and bool anywhere, by a loop over
    the kernel's taps, which is exact in every type.
    """
    ndim = flipped.ndim
    if segment.is_cuda and segment.dtype in _CONV_TYPES_GPU:
        conv = torch.nn.functional.conv1d if ndim == 1 else torch.nn.functional.conv2d
        result = conv(segment[None, None], flipped[None, None], stride=tuple(strides))
        return result[0, 0]
    if segment.is_cuda or segment.dtype is torch.bool:
        result = torch.zeros(tuple(counts), dtype=segment.dtype, device=segment.device)
        taps = itertools.product(*(range(k) for k in flipped.shape))
        for tap in taps:
            window = tuple(
                slice(j, j + (c - 1) * s + 1, s) for j, c, s in zip(tap, counts, strides)
            )
            result += flipped[tap] * segment[window]
        return result
    windows = segment
    for dim, (k, s) in enumerate(zip(flipped.shape, strides)):
        windows = windows.unfold(dim, k, s)
    weights = flipped.reshape(-1)
    per_row = max(1, math.prod(counts[1:]) * weights.numel())
    rows = max(1, _WINDOW_BUDGET // per_row)
    parts = [
        (windows[i : i + rows].reshape(-1, weights.numel()) @ weights)
        for i in range(0, counts[0], rows)
    ]
    return torch.cat(parts).reshape(tuple(counts))


def _convolve(
    signal: DNDarray,
    kernel: torch.Tensor,
    mode: str,
    strides: Tuple[int, ...],
    dtype,
    split: Optional[int],
) -> DNDarray:
    """The convolution of ``signal`` with the (whole, local) ``kernel``, split along ``split``."""
    if signal.split is None and split is not None:
        # a result that is to be split is computed split: the signal's blocks are local slices
        signal = resplit(signal, split)
    torch_type = dtype.torch_type()
    block = signal.larray.to(torch_type)
    kernel = kernel.to(device=block.device, dtype=torch_type)
    flipped = torch.flip(kernel, tuple(range(kernel.ndim)))
    ndim, shape, sizes = signal.ndim, signal.gshape, tuple(kernel.shape)
    windows = [_window(n, k, mode) for n, k in zip(shape, sizes)]
    out_shape = tuple((length - 1) // s + 1 for (_, length), s in zip(windows, strides))
    axis = signal.split if signal.is_distributed() else None

    # the full-convolution rows each process computes along the split axis
    if axis is not None:
        k = sizes[axis]
        counts, displs = signal.counts_displs()
        last = max(r for r, c in enumerate(counts) if c > 0)
        full = shape[axis] + k - 1
        owned = [
            (d, d + c if r != last else full) if c > 0 else (d, d)
            for r, (c, d) in enumerate(zip(counts, displs))
        ]
        offset, length = windows[axis]
        selected = [_selected(lo, hi, offset, length, strides[axis]) for lo, hi in owned]
        # the halo is fetched for a view of the signal, so the caller's array keeps its own
        view = DNDarray(
            signal.larray, shape, signal.dtype, axis, signal.device, signal.comm, signal.balanced
        )
        view.get_halo(k - 1, prev=True, next=False)
        halo = view.halo_prev
        if halo is not None:
            halo = halo.to(torch_type)
    me = signal.comm.rank

    # zeros around the signal: k - 1 before and after along every local axis; along the split
    # axis the k - 1 rows before the block (halo, then zeros before the start of the signal)
    # and, on the last non-empty block, k - 1 zeros after it
    padded_shape, places = [], []
    for dim in range(ndim):
        k, n = sizes[dim], block.shape[dim]
        if dim == axis:
            after = k - 1 if me == last and counts[me] > 0 else 0
            padded_shape.append(k - 1 + n + after)
        else:
            padded_shape.append(n + 2 * (k - 1))
        places.append(slice(k - 1, k - 1 + n))
    segment = torch.zeros(padded_shape, dtype=torch_type, device=block.device)
    segment[tuple(places)] = block
    if axis is not None and halo is not None:
        before = list(places)
        before[axis] = slice(sizes[axis] - 1 - halo.shape[axis], sizes[axis] - 1)
        segment[tuple(before)] = halo

    # the entries the mode and the stride select, and the segment rows they need
    cut, counts_out = [], []
    for dim in range(ndim):
        offset, length = windows[dim]
        if dim == axis:
            lo = owned[me][0]
            first, stop = selected[me]
        else:
            lo = 0
            first, stop = _selected(0, shape[dim] + sizes[dim] - 1, offset, length, strides[dim])
        count = stop - first
        counts_out.append(count)
        start = offset + first * strides[dim] - lo
        cut.append(
            slice(start, start + (count - 1) * strides[dim] + sizes[dim]) if count else slice(0, 0)
        )
    if all(counts_out):
        local = _correlate(segment[tuple(cut)], flipped, strides, counts_out)
    else:
        local = torch.zeros(counts_out, dtype=torch_type, device=block.device)

    if axis is None:
        result = DNDarray(
            local.contiguous(), out_shape, dtype, None, signal.device, signal.comm, True
        )
        return result if split is None else resplit(result, split)
    result = DNDarray(local.contiguous(), out_shape, dtype, axis, signal.device, signal.comm, None)
    lshape_map = torch.tensor([out_shape] * signal.comm.size, dtype=torch.int64)
    lshape_map[:, axis] = torch.tensor([stop - first for first, stop in selected])
    result.redistribute_(lshape_map=lshape_map)
    return result


def _whole(kernel: DNDarray) -> torch.Tensor:
    """The whole kernel on every process (one all-gather if it is distributed)."""
    if kernel.is_distributed():
        return resplit(kernel, None).larray
    return kernel.larray


# ------------------------------------------------------------------------------------------------
# batches of 1-D convolutions (every row along the last axis on its own)
# ------------------------------------------------------------------------------------------------
def _rows_correlate(
    segment: torch.Tensor, flipped: torch.Tensor, stride: int, count: int
) -> torch.Tensor:
    """
    Row ``b`` of the result: the valid correlation of ``segment[b]`` with ``flipped[b]`` (a
    kernel per row, or one row broadcast), every ``stride``-th entry, ``count`` of them; rows in
    chunks that bound the memory of the copied windows.
    """
    rows, taps = segment.shape[0], flipped.shape[-1]
    result = torch.empty((rows, count), dtype=segment.dtype, device=segment.device)
    chunk = max(1, _WINDOW_BUDGET // max(1, count * taps))
    for start in range(0, rows, chunk):
        windows = segment[start : start + chunk].unfold(1, taps, stride)[:, :count]
        kernel = flipped if flipped.shape[0] == 1 else flipped[start : start + chunk]
        if segment.dtype is torch.bool:
            part = (windows & kernel[:, None, :]).any(-1)
        elif segment.is_floating_point() or segment.is_complex():
            part = torch.matmul(windows, kernel.expand(windows.shape[0], taps)[:, :, None])[..., 0]
        else:  # integers: exact, and on GPUs too
            part = (windows * kernel[:, None, :]).sum(-1, dtype=segment.dtype)
        result[start : start + chunk] = part
    return result


def _aligned(x: DNDarray, split: Optional[int], like: Optional[DNDarray]) -> DNDarray:
    """``x`` split along ``split`` with the rows of ``like`` (when given) on every process."""
    copied = x.split != split
    if copied:
        x = resplit(x, split)
    if split is not None and like is not None and x.comm.size > 1:
        target_map = like.lshape_map
        if not torch.equal(x.lshape_map, target_map):  # the same verdict on every process
            if not copied:  # redistribute_ works in place: the caller's array stays as it is
                x = resplit(x, split)
            x.redistribute_(lshape_map=x.lshape_map, target_map=target_map)
    return x


def _convolve_batch(a: DNDarray, v: DNDarray, mode: str, stride: int) -> DNDarray:
    """
    ``a`` of shape (..., N) convolved row by row with ``v`` of shape (M,) or (..., M) (the same
    batch shape); the checks are done.
    """
    dtype = types.promote_types(a.dtype, v.dtype)
    n, m = a.gshape[-1], v.gshape[-1]
    last = a.ndim - 1
    # the rows stay where they are when a batch axis is split; a split along the last axis
    # (of either input) is replaced by axis 0
    if a.split is not None and a.split != last:
        split = a.split
    elif v.ndim > 1 and v.split is not None and v.split != last:
        split = v.split
    elif a.split is not None or v.split is not None:
        split = 0
    else:
        split = None
    a = _aligned(a, split, None)
    v = _aligned(v, split, a) if v.ndim > 1 else v
    kernel_rows = v.larray.reshape(-1, m) if v.ndim > 1 else _whole(v).reshape(1, m)

    offset, length = _window(max(n, m), min(n, m), mode)
    count = (length - 1) // stride + 1
    torch_type = dtype.torch_type()
    block = a.larray.to(torch_type)
    rows = block.reshape(-1, n)
    flipped = torch.flip(kernel_rows.to(device=block.device, dtype=torch_type), (1,))
    # the full convolution of a row is the correlation of the row, with m - 1 zeros on each
    # side, with the flipped kernel; keep the entries offset + t * stride, t < count
    segment = torch.zeros((rows.shape[0], n + 2 * (m - 1)), dtype=torch_type, device=block.device)
    segment[:, m - 1 : m - 1 + n] = rows
    segment = segment[:, offset : offset + (count - 1) * stride + m]
    local = _rows_correlate(segment, flipped, stride, count)
    out_shape = a.gshape[:-1] + (count,)
    local = local.reshape(tuple(block.shape[:-1]) + (count,))
    balanced = True if split is None else None
    return DNDarray(local.contiguous(), out_shape, dtype, split, a.device, a.comm, balanced)


# ------------------------------------------------------------------------------------------------
# the public functions
# ------------------------------------------------------------------------------------------------
def convolve(a, v, mode: str = "full", stride: int = 1) -> DNDarray:
    """
    The discrete linear convolution of two 1-D arrays, as :func:`numpy.convolve`, optionally
    strided; distributed by halo exchange (see :mod:`heat.signal`). An input of more than one
    dimension is a batch of 1-D inputs along its last axis (as HeAT 1.8).

    As NumPy, the longer of ``a`` and ``v`` is the signal and the other the kernel (they are
    swapped if ``v`` is longer). The kernel is gathered on every process if it is split; the
    signal stays distributed.

    Batches: ``a`` of shape (..., N) and ``v`` of shape (M,) (one kernel for every row) or
    (..., M) (a kernel per row, the same batch shape); row ``i`` of the result is
    ``numpy.convolve(a[i], v[i], mode)[::stride]``. (A 1-D ``a`` with a batched ``v`` is the same
    as the swapped call.) Distribute a batch along a batch axis (e.g. ``split=0``): every process
    then convolves its own rows without communication (a batched ``v`` is first brought to the
    same rows). A batch split along its last axis is first resplit along axis 0 (one
    all-to-all).

    Parameters
    ----------
    a : DNDarray or array_like
        First input: 1-D of length N, split along 0 or not split (a scalar is one element), or a
        batch of shape (..., N).
    v : DNDarray or array_like
        Second input: 1-D of length M, usually a short kernel, split or not; or a batch of shape
        (..., M) with the batch shape of ``a``.
    mode : {"full", "same", "valid"}
        ``"full"`` (default): every point of overlap, length ``N + M - 1``.
        ``"same"``: length ``max(N, M)``, centred on the full result as NumPy does.
        ``"valid"``: only where the inputs overlap completely, length
        ``max(N, M) - min(N, M) + 1``.
    stride : int
        Keep every ``stride``-th entry of the mode's result, starting with the first
        (``convolve(a, v, mode, stride) == convolve(a, v, mode)[::stride]``). Default 1.

    Returns
    -------
    DNDarray
        The convolution, in the promoted type of ``a`` and ``v`` (as NumPy). 1-D inputs: split
        along 0 in the balanced layout if either input is split, otherwise not split. Batches:
        of shape (..., L) (L the length of the mode's 1-D result), split along the batch axis
        an input was split along, with the rows where that input had them; else split along 0
        if any input is split (along its last axis); else not split.

    Raises
    ------
    TypeError
        If an input is not array_like, or ``stride`` is not an int.
    ValueError
        If an input is 0-dimensional (as a DNDarray) or empty, both inputs are batches of
        different batch shapes, ``mode`` is unknown or ``stride`` is not positive.

    See Also
    --------
    convolve2d : 2-D convolution.

    Examples
    --------
    >>> a = ht.ones(5, split=0)
    >>> v = ht.array([0.0, 1.0, 2.0])
    >>> ht.signal.convolve(a, v)
    DNDarray([0., 1., 3., 3., 3., 3., 2.], dtype=ht.float32, device=cpu:0, split=0)
    >>> ht.signal.convolve(a, v, mode="same")
    DNDarray([1., 3., 3., 3., 3.], dtype=ht.float32, device=cpu:0, split=0)
    >>> ht.signal.convolve(a, v, mode="valid")
    DNDarray([3., 3., 3.], dtype=ht.float32, device=cpu:0, split=0)
    >>> ht.signal.convolve(a, v, stride=2)
    DNDarray([0., 3., 3., 2.], dtype=ht.float32, device=cpu:0, split=0)

    A batch of three signals, split along the batch axis, each with its own kernel:

    >>> batch = ht.ones((3, 10), split=0)
    >>> kernels = ht.arange(6).reshape((3, 2)).astype(ht.float32)
    >>> ht.convolve(batch, kernels, mode="valid")[:, 0]
    DNDarray([1., 5., 9.], dtype=ht.float32, device=cpu:0, split=0)
    >>> ht.convolve(batch, ht.array([0.0, 1.0]), mode="full").shape
    (3, 11)
    """
    a = _operand(a, "a", None, None)
    v = _operand(v, "v", None, a)
    mode = _check_mode(mode)
    strides = _check_strides(stride, 1)
    if a.ndim > 1 or v.ndim > 1:
        if a.ndim == 1:  # convolution commutes: the batch goes first
            a, v = v, a
        if v.ndim > 1 and v.gshape[:-1] != a.gshape[:-1]:
            raise ValueError(
                "a and v must have the same batch shape (all but the last axis) or one of them "
                f"must be 1-D, but their shapes are {a.gshape} and {v.gshape}"
            )
        return _convolve_batch(a, v, mode, strides[0])
    dtype = types.promote_types(a.dtype, v.dtype)
    signal, kernel = (v, a) if v.gshape[0] > a.gshape[0] else (a, v)
    split = 0 if a.split is not None or v.split is not None else None
    return _convolve(signal, _whole(kernel), mode, strides, dtype, split)


def convolve2d(a, v, mode: str = "full", stride: Union[int, Sequence[int]] = 1) -> DNDarray:
    """
    The discrete linear convolution of two 2-D arrays with zeros outside their bounds, as
    :func:`scipy.signal.convolve2d` with ``boundary="fill"`` and ``fillvalue=0``, optionally
    strided; distributed by halo exchange (see :mod:`heat.signal`).

    ``a`` is the signal and ``v`` the kernel, which every process gets whole (one all-gather if
    it is split). As SciPy, in mode ``"valid"`` the two are swapped if ``v`` is at least as large
    as ``a`` along both axes (and larger along one).

    Parameters
    ----------
    a : DNDarray or array_like
        The 2-D signal of shape (N0, N1), split along 0 or 1, or not split.
    v : DNDarray or array_like
        The 2-D kernel of shape (M0, M1), split or not.
    mode : {"full", "same", "valid"}
        ``"full"`` (default): shape ``(N0 + M0 - 1, N1 + M1 - 1)``.
        ``"same"``: the shape of ``a``, centred on the full result as SciPy does.
        ``"valid"``: only where the inputs overlap completely; one input must be at least as
        large as the other along both axes.
    stride : int or tuple of two ints
        Keep every ``stride[0]``-th row and ``stride[1]``-th column of the mode's result,
        starting with the first (an int is the same for both axes). Default 1.

    Returns
    -------
    DNDarray
        The convolution, in the promoted type of ``a`` and ``v``, split along the split axis of
        the signal (else of the kernel, else not split), balanced.

    Raises
    ------
    TypeError
        If an input is not array_like, or ``stride`` is not an int or a pair of ints.
    ValueError
        If an input is not 2-D or is empty, ``mode`` is unknown, ``stride`` is not positive, or
        in mode ``"valid"`` neither input is at least as large as the other along both axes.

    See Also
    --------
    convolve : 1-D convolution.

    Examples
    --------
    >>> a = ht.ones((4, 5), split=0)
    >>> v = ht.ones((3, 3))
    >>> ht.signal.convolve2d(a, v, mode="valid")
    DNDarray([[9., 9., 9.],
              [9., 9., 9.]], dtype=ht.float32, device=cpu:0, split=0)
    >>> ht.signal.convolve2d(a, v, mode="same", stride=(2, 2))
    DNDarray([[4., 6., 4.],
              [6., 9., 6.]], dtype=ht.float32, device=cpu:0, split=0)
    """
    a = _operand(a, "a", 2, None)
    v = _operand(v, "v", 2, a)
    mode = _check_mode(mode)
    strides = _check_strides(stride, 2)
    dtype = types.promote_types(a.dtype, v.dtype)
    signal, kernel = a, v
    if mode == "valid":
        a_fits = all(n >= m for n, m in zip(a.gshape, v.gshape))
        v_fits = all(m >= n for n, m in zip(a.gshape, v.gshape))
        if not (a_fits or v_fits):
            raise ValueError(
                "in mode 'valid' one of a and v must be at least as large as the other along "
                f"both axes, but their shapes are {a.gshape} and {v.gshape}"
            )
        if not a_fits:
            signal, kernel = v, a
    split = signal.split if signal.split is not None else kernel.split
    return _convolve(signal, _whole(kernel), mode, strides, dtype, split)
