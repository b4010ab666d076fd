"""
How parameters and gradients are combined: pure tensor math, no communication.

* :func:`blend` — DASO's merge of stale global and fresh local parameters,
  ``x_new = (2 S x_local + sum_p x_p) / (2 S + P)``;
* :func:`pack` / :func:`sum_packed` — reduced precision on the wire, summation in float32
  (``sum_packed``, ``slice_bounds`` and ``chunk_bounds`` live beside the transport, in
  :mod:`heat.core.communication.node_groups`, and are re-exported here);
* :class:`FlatLayout` — many tensors seen as one flat vector (buckets, slices, chunks of it);
* :func:`bucket_bounds`, :func:`chunk_bounds`, :func:`slice_bounds` — how a flat vector is cut.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

import torch

# how a flat vector is cut and how wire-type pieces are summed are shared with the transport
from ..core.communication.node_groups import chunk_bounds, slice_bounds, sum_packed

__all__ = [
    "blend",
    "blend_average_",
    "pack",
    "sum_packed",
    "FlatLayout",
    "bucket_bounds",
    "chunk_bounds",
    "slice_bounds",
    "WIRE_DTYPES",
]

#: Data types parameters and gradients may travel in.
WIRE_DTYPES = (torch.bfloat16, torch.float16, torch.float32, torch.float64)


@torch.no_grad()
def blend(
    local: torch.Tensor,
    node_sum: torch.Tensor,
    num_nodes: int,
    batches_waited: int,
    out: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """
    DASO's merge of parameters received ``batches_waited`` batches after they were sent.

    ``x_new = (2 S * x_local + sum_p x_p) / (2 S + P)`` with ``S = batches_waited`` and ``P =
    num_nodes``: the local parameters, trained ``S`` batches further, count double per batch
    waited; with ``S = 0`` it is the plain average of the nodes' parameters.

    Parameters
    ----------
    local : torch.Tensor
        This node's current parameters ``x_local``.
    node_sum : torch.Tensor
        The sum over the ``P`` nodes of their parameters when they were sent.
    num_nodes : int
        ``P`` (>= 1).
    batches_waited : int
        ``S`` (>= 0).
    out : torch.Tensor, optional
        Where to write the result (may be ``local`` or ``node_sum``).

    Returns
    -------
    torch.Tensor

    Examples
    --------
    >>> blend(torch.tensor([5.0]), torch.tensor([2.0 + 6.0]), num_nodes=2, batches_waited=1)
    tensor([4.5000])
    >>> blend(torch.tensor([4.0]), torch.tensor([8.0]), num_nodes=2, batches_waited=0)
    tensor([4.])
    """
    if out is None:
        out = torch.empty_like(node_sum)
    average = torch.div(node_sum, num_nodes) if out is node_sum else node_sum / num_nodes
    if out is not local:
        out.copy_(local)
    return blend_average_(out, average, num_nodes, batches_waited)


@torch.no_grad()
def blend_average_(
    local: torch.Tensor, average: torch.Tensor, num_nodes: int, batches_waited: int
) -> torch.Tensor:
    """
    :func:`blend` in place, from the nodes' *average* when they sent (what DASO keeps as its
    reference): ``local <- local + P / (2 S + P) * (average - local)``, one pass over memory.

    Examples
    --------
    >>> x = torch.tensor([5.0])
    >>> blend_average_(x, torch.tensor([4.0]), num_nodes=2, batches_waited=1)
    tensor([4.5000])
    """
    if num_nodes < 1 or batches_waited < 0:
        raise ValueError(
            f"need num_nodes >= 1 and batches_waited >= 0, got {num_nodes} and {batches_waited}"
        )
    return local.lerp_(average, num_nodes / (2.0 * batches_waited + num_nodes))


def pack(
    values: torch.Tensor, wire_dtype: torch.dtype, scale: Optional[float] = None
) -> torch.Tensor:
    """
    ``values`` (times ``scale``) in the data type they travel in; a fresh tensor.

    Examples
    --------
    >>> pack(torch.tensor([1.0, 3.0]), torch.bfloat16, scale=0.5)
    tensor([0.5000, 1.5000], dtype=torch.bfloat16)
    """
    if scale is not None:
        scaled = values * scale
        return scaled if scaled.dtype == wire_dtype else scaled.to(wire_dtype)
    return values.to(wire_dtype, copy=True)


def bucket_bounds(sizes: Sequence[int], capacity: int) -> List[Tuple[int, int]]:
    """
    Consecutive tensors grouped into buckets of at most ``capacity`` elements (a larger tensor
    is a bucket by itself): ``[(first, stop), ...]`` indices into ``sizes``.

    Examples
    --------
    >>> bucket_bounds([3, 3, 5, 1], capacity=6)
    [(0, 2), (2, 4)]
    """
    bounds, first, filled = [], 0, 0
    for i, size in enumerate(sizes):
        if i > first and filled + size > capacity:
            bounds.append((first, i))
            first, filled = i, 0
        filled += size
    if first < len(sizes):
        bounds.append((first, len(sizes)))
    return bounds


class FlatLayout:
    """
    Many tensors seen as one flat vector: tensor ``i`` occupies ``[offsets[i], offsets[i+1])``.

    Parameters
    ----------
    tensors : iterable of torch.Tensor
        The tensors (e.g. a model's parameters); only their shapes are kept.

    Examples
    --------
    >>> a, b = torch.zeros(2, 2), torch.zeros(3)
    >>> layout = FlatLayout([a, b])
    >>> layout.numel
    7
    >>> flat = torch.arange(7.0)
    >>> layout.scatter(flat, [a, b])
    >>> b
    tensor([4., 5., 6.])
    >>> layout.gather([a, b], 3, 5)
    tensor([3., 4.])
    """

    def __init__(self, tensors: Iterable[torch.Tensor]):
        self.shapes = [tuple(t.shape) for t in tensors]
        self.offsets = [0]
        for shape in self.shapes:
            self.offsets.append(self.offsets[-1] + int(torch.Size(shape).numel()))

    @property
    def numel(self) -> int:
        """Length of the flat vector."""
        return self.offsets[-1]

    def _overlaps(self, start: int, stop: int):
        """``(i, lo, hi)``: elements ``[lo, hi)`` of tensor ``i`` lie in ``[start, stop)``."""
        for i in range(len(self.shapes)):
            first, last = self.offsets[i], self.offsets[i + 1]
            if last <= start or first == last:
                continue
            if first >= stop:
                break
            yield i, max(start, first) - first, min(stop, last) - first

    @torch.no_grad()
    def gather(
        self,
        tensors: Sequence[torch.Tensor],
        start: int = 0,
        stop: Optional[int] = None,
        out: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        """Elements ``[start, stop)`` of the flat vector of ``tensors``, copied into ``out``."""
        stop = self.numel if stop is None else stop
        if out is None:
            out = torch.empty(stop - start, dtype=tensors[0].dtype, device=tensors[0].device)
        for i, lo, hi in self._overlaps(start, stop):
            where = self.offsets[i] + lo - start
            out[where : where + hi - lo].copy_(tensors[i].reshape(-1)[lo:hi])
        return out

    @torch.no_grad()
    def scatter(self, flat: torch.Tensor, tensors: Sequence[torch.Tensor], start: int = 0) -> None:
        """Write ``flat``, the flat vector's elements from ``start`` on, into ``tensors``."""
        stop = start + flat.numel()
        for i, lo, hi in self._overlaps(start, stop):
            where = self.offsets[i] + lo - start
            target = tensors[i]
            if target.is_contiguous():
                target.view(-1)[lo:hi].copy_(flat[where : where + hi - lo])
            else:  # rare (e.g. a transposed parameter): write through a contiguous copy
                values = target.reshape(-1).clone()
                values[lo:hi] = flat[where : where + hi - lo]
                target.copy_(values.view_as(target))
