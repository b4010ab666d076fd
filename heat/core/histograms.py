"""
Histograms and binning: histogram, histc and bincount count the elements of a distributed array
per bin (local counts, then one Allreduce; the result is not split); digitize and bucketize give
every element the index of its bin (elementwise, no communication; the bin edges are small and
needed whole on every process).
"""

from __future__ import annotations

import builtins
import math
from typing import Optional, Sequence, Tuple, Union

import numpy as np
import torch

from . import types
from ._operations import _TORCH_TO_HEAT, _check_out, align_local, local_op
from .communication import MPI
from .dndarray import DNDarray
from .sanitation import sanitize_in
from .statistics import _FLOATING, _as_dndarray, _finish, _is_distributed, _reject_complex

__all__ = [
    "bincount",
    "bucketize",
    "digitize",
    "histc",
    "histogram",
]


def _replicated_tensor(value, like: DNDarray, name: str) -> torch.Tensor:
    """The whole of a small array (bins, edges) as a local tensor on every process."""
    if isinstance(value, DNDarray):
        if _is_distributed(value):
            from .layout import resplit

            value = resplit(value, None)
        return value.larray
    if isinstance(value, torch.Tensor):
        return value.detach().to(like.larray.device)
    try:
        data = np.asarray(value)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be array-like, but was {type(value).__name__}") from error
    if data.dtype.kind not in "biuf":
        raise TypeError(f"{name} must contain real numbers, but has dtype {data.dtype}")
    return torch.from_numpy(np.ascontiguousarray(data)).to(like.larray.device)


def _global_range(x: DNDarray) -> Tuple[float, float]:
    """(min, max) of all elements as Python numbers (NaN makes them infinite); one Allreduce."""
    tensor = x.larray.reshape(-1)
    if tensor.numel():
        if tensor.dtype == torch.bool:
            tensor = tensor.to(torch.uint8)
        elif tensor.dtype in (torch.uint16, torch.uint32, torch.uint64):
            tensor = tensor.to(torch.float64)  # torch has no min/max of these
        extremes = torch.stack([tensor.min(), tensor.max()]).to(torch.float64)
        extremes[1] = -extremes[1]
        # NaN anywhere: a range of [-inf, inf], rejected as not finite
        extremes = extremes.masked_fill(torch.isnan(extremes).any(), -math.inf)
    else:
        extremes = torch.full((2,), math.inf, dtype=torch.float64, device=tensor.device)
    if _is_distributed(x):
        extremes = x.comm.allreduce_tensor(extremes, MPI.MIN)
    low, high = float(extremes[0]), -float(extremes[1])
    if (
        math.isfinite(low)
        and math.isfinite(high)
        and types.heat_type_is_exact(x.dtype)
        and high < 2**63  # (uint64 beyond: float bounds, as NumPy's Python ints would overflow)
    ):
        return int(low), int(high)
    return low, high


def histogram(
    a: DNDarray,
    bins: Union[int, Sequence[float], DNDarray] = 10,
    range: Optional[Tuple[float, float]] = None,
    density: Optional[bool] = None,
    weights: Optional[DNDarray] = None,
) -> Tuple[DNDarray, DNDarray]:
    """
    Histogram of the values of ``a``, as :func:`numpy.histogram`.

    Each process counts its own elements; one Allreduce sums the counts (plus one for the
    data range if ``bins`` is an integer and ``range`` is not given).

    Parameters
    ----------
    a : DNDarray
        Real input; flattened.
    bins : int or sequence of scalars or DNDarray
        Number of equal-width bins, or the monotonically increasing bin edges (all bins are
        half-open ``[left, right)`` except the last, which includes its right edge).
    range : (float, float), optional
        Lower and upper edge for equal-width bins; default ``(a.min(), a.max())``. Values
        outside are ignored.
    density : bool, optional
        Return the probability density (the integral over the range is 1).
    weights : DNDarray or array-like, optional
        One weight per element of ``a``; each element counts with its weight.

    Returns
    -------
    hist : DNDarray
        The counts (int64), the summed weights (weights' dtype) or the density (float64);
        not split.
    bin_edges : DNDarray
        ``len(hist) + 1`` edges (float64 for integer data, else the data's float type).

    Raises
    ------
    TypeError
        If ``a`` is complex, or ``bins`` is neither an integer nor a sequence.
    ValueError
        If ``bins`` is not positive or its edges do not increase, ``range`` is invalid, the
        automatic range is not finite, or ``weights`` do not have the shape of ``a``.

    Examples
    --------
    >>> hist, edges = ht.histogram(ht.array([1, 2, 1], split=0), bins=[0, 1, 2, 3])
    >>> hist
    DNDarray([0, 2, 1], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(a, "a")
    _reject_complex(a, "histogram")
    uniform = isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_))
    if isinstance(bins, str):
        raise TypeError(
            f"bins must be an integer or a sequence of edges; estimators such as {bins!r} are "
            "not supported"
        )
    if uniform and bins < 1:
        raise ValueError(f"bins must be a positive integer, but was {bins}")
    w = None
    if weights is not None:
        w = _as_dndarray(weights, a, "weights")
        if w.gshape != a.gshape:
            raise ValueError(
                f"weights must have the shape of a ({a.gshape}), but had shape {w.gshape}"
            )
        _reject_complex(w, "histogram weights")
    data_type = a.dtype.torch_type()
    if data_type == torch.bool:
        data_type = torch.uint8
    if uniform:
        if range is not None:
            try:
                first, last = (float(v) for v in range)
            except (TypeError, ValueError) as error:
                raise ValueError(f"range must be a pair (min, max), but was {range!r}") from error
            if first > last:
                raise ValueError(f"max must be larger than min in range, but range was {range!r}")
            if not (math.isfinite(first) and math.isfinite(last)):
                raise ValueError(f"range must be finite, but was {range!r}")
            first, last = range
        elif a.size == 0:
            first, last = 0, 1
        else:
            first, last = _global_range(a)
            if not (math.isfinite(first) and math.isfinite(last)):
                raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
        if first == last:
            first, last = first - 0.5, last + 0.5
        numpy_type = a.dtype.numpy_type() if a.dtype is not types.bfloat16 else np.float32
        edge_type = np.result_type(first, last, np.empty(0, dtype=numpy_type))
        if edge_type.kind in "biu":
            edge_type = np.result_type(edge_type, float)
        edges = torch.from_numpy(np.linspace(first, last, bins + 1, endpoint=True, dtype=edge_type))
        if a.dtype is types.bfloat16:
            edges = edges.to(torch.bfloat16)
        n_bins = bins
    else:
        edges = _replicated_tensor(bins, a, "bins")
        if edges.ndim != 1 or edges.numel() < 1:
            raise ValueError(
                f"bins must be a 1-D sequence of edges, but had shape {tuple(edges.shape)}"
            )
        if builtins.bool((edges[1:] < edges[:-1]).any()):
            raise ValueError("bins must increase monotonically, when an array")
        n_bins = edges.numel() - 1
    edges = edges.to(a.larray.device)
    compare_type = types.promote_types(
        _TORCH_TO_HEAT[data_type], _TORCH_TO_HEAT[edges.dtype]
    ).torch_type()
    values = a.larray.reshape(-1).to(compare_type)
    boundaries = edges.to(compare_type)
    local_weights = None
    if w is not None:
        local_weights = align_local(
            w, a.gshape, a.split, a if a.split is not None else None
        ).reshape(-1)
    if not (uniform and range is None):
        # values outside the edges are dropped (with an automatic range, none are outside)
        inside = (values >= boundaries[0]) & (values <= boundaries[-1])
        values = values[inside]
        if local_weights is not None:
            local_weights = local_weights[inside]
    if uniform:
        # NumPy's arithmetic guess of the bin, then corrected by comparing with the edges, so
        # that bin i holds exactly edges[i] <= v < edges[i + 1] (the last bin also its right edge)
        scale = n_bins / (float(last) - float(first))
        index = (
            ((values.to(torch.float64) - float(first)) * scale)
            .to(torch.int64)
            .clamp_(0, n_bins - 1)
        )
        index -= (values < boundaries[index]).to(torch.int64)
        index += ((values >= boundaries[index + 1]) & (index != n_bins - 1)).to(torch.int64)
    else:
        index = torch.searchsorted(boundaries, values, right=True) - 1
        index = torch.where(values == boundaries[-1], n_bins - 1, index)
    if local_weights is None:
        counts = torch.bincount(index, minlength=n_bins)
    else:
        counts = torch.zeros(n_bins, dtype=local_weights.dtype, device=values.device)
        counts.index_add_(0, index, local_weights)
    if _is_distributed(a):
        counts = a.comm.allreduce_tensor(counts, MPI.SUM)
    if density:
        widths = torch.diff(edges.to(torch.float64))
        counts = counts.to(torch.float64) / widths / counts.sum()
    hist = DNDarray(counts, (n_bins,), _TORCH_TO_HEAT[counts.dtype], None, a.device, a.comm, True)
    edge_array = DNDarray(
        edges, (n_bins + 1,), _TORCH_TO_HEAT[edges.dtype], None, a.device, a.comm, True
    )
    return hist, edge_array


def histc(
    input: DNDarray,
    bins: int = 100,
    min: Union[int, float] = 0,
    max: Union[int, float] = 0,
    out: Optional[DNDarray] = None,
) -> DNDarray:
    """
    Histogram with equal-width bins between ``min`` and ``max``, as :func:`torch.histc`.

    If ``min`` equals ``max`` (default: both zero), the data's minimum and maximum are used
    (one extra Allreduce); if these are equal, the range is widened by one on each side.
    Elements outside ``[min, max]`` are ignored.

    Parameters
    ----------
    input : DNDarray
        Floating-point input; flattened.
    bins : int
        Number of bins.
    min, max : scalar
        The range.
    out : DNDarray, optional

    Returns
    -------
    DNDarray
        ``bins`` counts of the input's dtype, not split.

    Raises
    ------
    TypeError
        If ``input`` is not floating point or ``bins`` is not an integer.
    ValueError
        If ``bins`` is not positive or ``min > max``.

    Examples
    --------
    >>> ht.histc(ht.array([1.0, 2.0, 1.0], split=0), bins=4, min=0, max=3)
    DNDarray([0., 2., 1., 0.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(input, "input")
    if input.larray.dtype not in _FLOATING:
        raise TypeError(
            f"histc needs floating-point input, but input has dtype {input.dtype.__name__}"
        )
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"bins must be an integer, but was {type(bins).__name__}")
    if bins < 1:
        raise ValueError(f"bins must be positive, but was {bins}")
    low, high = float(min), float(max)
    if low > high:
        raise ValueError(f"max must be larger than min, but min={min} and max={max}")
    _check_out(out, (int(bins),))
    if low == high and input.size > 0:
        low, high = _global_range(input)
    if low == high:
        low, high = low - 1, high + 1
    local = torch.histc(input.larray.reshape(-1), bins=int(bins), min=low, max=high)
    if _is_distributed(input):
        local = input.comm.allreduce_tensor(local, MPI.SUM)
    result = DNDarray(local, (int(bins),), input.dtype, None, input.device, input.comm, True)
    return _finish(result, out)


def bincount(x: DNDarray, weights=None, minlength: int = 0) -> DNDarray:
    """
    Number of occurrences of each value in an array of non-negative integers, as
    :func:`numpy.bincount`.

    The result has ``max(x.max() + 1, minlength)`` entries; the global maximum and minimum are
    found with one Allreduce, the counts summed with a second.

    Parameters
    ----------
    x : DNDarray
        1-D, non-negative integers (or bool).
    weights : DNDarray or array-like, optional
        One weight per element; the result then sums weights (float64).
    minlength : int
        Minimum number of bins.

    Returns
    -------
    DNDarray
        int64 counts (float64 with weights), not split.

    Raises
    ------
    TypeError
        If ``x`` is not of an integer type or ``minlength`` not an integer.
    ValueError
        If ``x`` is not 1-D, contains negative values (on every process), ``minlength`` is
        negative, or ``weights`` has another shape.

    Examples
    --------
    >>> ht.bincount(ht.array([0, 1, 1, 3], split=0))
    DNDarray([1, 2, 0, 1], dtype=ht.int64, device=cpu:0, split=None)
    """
    sanitize_in(x)
    if not (types.issubdtype(x.dtype, types.integer) or x.dtype is types.bool):
        raise TypeError(f"x must contain integers, but had dtype {x.dtype.__name__}")
    if x.ndim != 1:
        raise ValueError(f"x must be 1-dimensional, but had {x.ndim} dimensions")
    if isinstance(minlength, bool) or not isinstance(minlength, (int, np.integer)):
        raise TypeError(f"minlength must be an integer, but was {type(minlength).__name__}")
    if minlength < 0:
        raise ValueError(f"minlength must be non-negative, but was {minlength}")
    w = None
    if weights is not None:
        w = _as_dndarray(weights, x, "weights")
        if w.gshape != x.gshape:
            raise ValueError(
                f"weights must have the shape of x ({x.gshape}), but had shape {w.gshape}"
            )
    values = x.larray.to(torch.int64)
    if values.numel():
        # max and the bitwise complement of min (order reversing, no overflow): one MAX
        extremes = torch.stack([values.max(), ~values.min()])
    else:
        extremes = torch.tensor(
            [-1, torch.iinfo(torch.int64).min], dtype=torch.int64, device=values.device
        )
    if _is_distributed(x):
        extremes = x.comm.allreduce_tensor(extremes, MPI.MAX)
    highest, lowest = int(extremes[0]), ~int(extremes[1])
    if x.size and lowest < 0:
        raise ValueError(f"x must contain only non-negative values, but contained {lowest}")
    length = builtins.max(highest + 1, int(minlength))
    if w is None or x.size == 0:
        # NumPy gives int64 zeros for empty input, with weights or not
        counts = torch.bincount(values, minlength=length)
    else:
        local_weights = align_local(w, x.gshape, x.split, x if x.split is not None else None)
        # (torch.bincount returns int64 for empty input even with weights)
        counts = torch.zeros(length, dtype=torch.float64, device=values.device)
        counts.index_add_(0, values, local_weights.reshape(-1).to(torch.float64))
    if _is_distributed(x):
        counts = x.comm.allreduce_tensor(counts, MPI.SUM)
    return DNDarray(counts, (length,), _TORCH_TO_HEAT[counts.dtype], None, x.device, x.comm, True)


def digitize(x: DNDarray, bins, right: bool = False) -> DNDarray:
    """
    Indices of the bins each value of ``x`` belongs to, as :func:`numpy.digitize`.

    For increasing ``bins``: ``i`` with ``bins[i-1] <= x < bins[i]`` (``right=False``) or
    ``bins[i-1] < x <= bins[i]`` (``right=True``); decreasing bins reverse the inequalities.
    Elementwise; no communication (``bins`` is small and needed whole on every process).

    Parameters
    ----------
    x : DNDarray
        Real input.
    bins : array-like or DNDarray
        1-D, monotonically increasing or decreasing.
    right : bool
        Whether the intervals include their right edge.

    Returns
    -------
    DNDarray
        int64 indices with the layout of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is complex or ``bins`` not array-like.
    ValueError
        If ``bins`` is not 1-D or not monotonic.

    Examples
    --------
    >>> ht.digitize(ht.array([0.2, 6.4, 3.0, 1.6], split=0), [0.0, 1.0, 2.5, 4.0, 10.0])
    DNDarray([1, 4, 3, 2], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(x)
    _reject_complex(x, "digitize")
    if x.dtype in (types.uint16, types.uint32):
        x = x.astype(types.int64)  # holds every value; torch cannot search uint16/32
    edges = _replicated_tensor(bins, x, "bins")
    if edges.ndim != 1:
        raise ValueError(f"bins must be 1-dimensional, but had shape {tuple(edges.shape)}")
    if edges.is_complex():
        raise TypeError("bins must be real")
    steps = (
        edges[1:] - edges[:-1] if edges.dtype != torch.bool else edges[1:].int() - edges[:-1].int()
    )
    increasing = builtins.bool((steps >= 0).all())
    if not increasing and not builtins.bool((steps <= 0).all()):
        raise ValueError("bins must be monotonically increasing or decreasing")
    compare = types.promote_types(x.dtype, _TORCH_TO_HEAT[edges.dtype]).torch_type()
    if compare == torch.bool:
        compare = torch.uint8
    edges = edges.to(compare)
    if not increasing:
        edges = edges.flip(0)
    count = edges.numel()

    def locate(tensor):
        index = torch.searchsorted(edges, tensor.to(compare), right=not right)
        return index if increasing else count - index

    return local_op(locate, x, no_cast=True)


def bucketize(
    input: DNDarray,
    boundaries,
    out_int32: bool = False,
    right: bool = False,
    out: Optional[DNDarray] = None,
) -> DNDarray:
    """
    Indices of the buckets the values of ``input`` fall into, as :func:`torch.bucketize`.

    With increasing ``boundaries``: ``i`` with ``boundaries[i-1] < x <= boundaries[i]``
    (``right=False``) or ``boundaries[i-1] <= x < boundaries[i]`` (``right=True``).
    Elementwise; no communication.

    Parameters
    ----------
    input : DNDarray
    boundaries : array-like or DNDarray
        1-D, monotonically increasing.
    out_int32 : bool
        Return int32 instead of int64 indices.
    right : bool
        See above.
    out : DNDarray, optional

    Returns
    -------
    DNDarray
        Indices with the layout of ``input``.

    Raises
    ------
    TypeError
        If ``input`` is complex.
    ValueError
        If ``boundaries`` is not 1-D.

    Examples
    --------
    >>> ht.bucketize(ht.array([1, 5, 9], split=0), [1, 3, 5, 7, 9])
    DNDarray([0, 2, 4], dtype=ht.int64, device=cpu:0, split=0)
    """
    sanitize_in(input, "input")
    _reject_complex(input, "bucketize")
    edges = _replicated_tensor(boundaries, input, "boundaries")
    if edges.ndim != 1:
        raise ValueError(f"boundaries must be 1-dimensional, but had shape {tuple(edges.shape)}")
    compare = types.promote_types(input.dtype, _TORCH_TO_HEAT[edges.dtype]).torch_type()
    if compare == torch.bool:
        compare = torch.uint8
    edges = edges.to(compare)

    def locate(tensor):
        return torch.bucketize(
            tensor.to(compare),
            edges,
            out_int32=builtins.bool(out_int32),
            right=builtins.bool(right),
        )

    return local_op(locate, input, out=out, no_cast=True)
