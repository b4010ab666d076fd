"""
Pairwise distances between the rows of two distributed matrices: :func:`cdist` (euclidean),
:func:`rbf` (the Gaussian kernel of the euclidean distance) and :func:`manhattan`.

How the work is distributed (``X`` is ``n x f``, ``Y`` is ``m x f``, the result ``n x m``):

- ``X`` split along the rows, ``Y`` not split: every process computes its rows of the result
  from its rows of ``X``; no communication.
- ``X`` not split, ``Y`` split along the rows: every process computes its columns of the result
  (split=1); no communication.
- both split along the rows: a ring exchange. Process ``r`` keeps its rows of ``X`` and, in
  ``p`` steps, sees every block of ``Y``: it computes the result columns of the block it holds
  while it passes that block on to process ``r + 1`` and receives the next one from ``r - 1``
  (non-blocking), so the transfers hide behind the computation and no process holds more than
  two blocks of ``Y``. The result is split along the rows, like ``X``.
- data split along the features (split=1) is first redistributed along the rows (one
  all-to-all), since every distance needs all features of its two rows.
"""

from __future__ import annotations

from typing import Callable, Optional, Tuple

import torch

import heat as ht
from heat.utils.validation import validate_samples

__all__ = ["cdist", "manhattan", "rbf"]

# elements of the broadcast difference tensor that manhattan(expand=True) builds at a time
_EXPAND_BUDGET = 1 << 22
# result entries the ring computes per kernel call (bounds the kernels' temporaries): 4 MiB of
# float32, so that the pieces and temporaries of the processes of a node stay in the shared
# last-level cache while the kernel's passes (product, norms, clamp, root) run over them. 10000 x
# 16 samples, 2 processes on this 2-core machine (32 MiB L3): 112 ms per cdist vs 165 ms with
# pieces of 16 MiB; no change at 1 process
_PIECE_ENTRIES = 1 << 20


def _check_operands(X, Y, name: str) -> Tuple["ht.DNDarray", "ht.DNDarray"]:
    """Validate and align ``X`` and ``Y``: 2-D, the same features, one floating type, no split=1."""
    X = validate_samples(X, name="X", ensure_finite=False)
    symmetric = Y is None
    Y = X if symmetric else validate_samples(Y, name="Y", ensure_finite=False)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"{name}: X and Y must have the same number of features (columns), but X has "
            f"{X.shape[1]} and Y has {Y.shape[1]}"
        )
    dtype = ht.promote_types(X.dtype, Y.dtype)
    if X.dtype is not dtype:
        X = X.astype(dtype)
    if Y.dtype is not dtype:
        Y = Y.astype(dtype)
    # every distance needs all features of its two rows: rows must be whole on a process
    if X.split == 1:
        X = ht.resplit(X, 0)
    if Y.split == 1:
        Y = X if symmetric else ht.resplit(Y, 0)
    return X, Y


def _pairwise(X, Y, kernel: Callable[..., torch.Tensor], name: str):
    """
    ``kernel(x_rows, y_rows, out)`` applied to all row pairs of ``X`` and ``Y``, distributed as
    the module docstring says. Collective. A kernel writes its ``(len(x_rows), len(y_rows))``
    values into ``out`` (a view of the result) or, for ``out=None``, returns a new tensor.
    """
    X, Y = _check_operands(X, Y, name)
    shape = (X.shape[0], Y.shape[0])
    if X.split == 0 and Y.split == 0 and X.comm.size > 1:
        result = _ring(X.larray, Y, kernel)
    else:
        result = kernel(X.larray, Y.larray, None)
    # the result's rows are X's rows, its columns Y's rows
    if X.split == 0:
        split, balanced = 0, X.balanced
    elif Y.split == 0:
        split, balanced = 1, Y.balanced
    else:
        split, balanced = None, True
    return ht.DNDarray(result, shape, X.dtype, split, X.device, X.comm, balanced)


def _ring(x_rows: torch.Tensor, Y: "ht.DNDarray", kernel) -> torch.Tensor:
    """The local rows of the result, the blocks of the row-split ``Y`` passed around a ring."""
    comm = Y.comm
    rank, size = comm.rank, comm.size
    counts, displs = Y.counts_displs()
    result = torch.empty((x_rows.shape[0], Y.shape[0]), dtype=x_rows.dtype, device=x_rows.device)
    block, owner = Y.larray.contiguous(), rank
    send_to, receive_from = (rank + 1) % size, (rank - 1) % size
    for step in range(size):
        requests = []
        incoming = None
        if step < size - 1:
            # start passing the block on before computing with it: the transfer overlaps
            next_owner = (owner - 1) % size
            incoming = block.new_empty((counts[next_owner], block.shape[1]))
            if counts[next_owner]:
                requests.append(comm.Irecv(incoming, source=receive_from, tag=step))
            if counts[owner]:
                requests.append(comm.Isend(block, dest=send_to, tag=step))
        if counts[owner] and x_rows.shape[0]:
            columns = result[:, displs[owner] : displs[owner] + counts[owner]]
            # in pieces of rows: a kernel's temporaries stay small next to the result
            rows = max(1, _PIECE_ENTRIES // counts[owner])
            for first in range(0, x_rows.shape[0], rows):
                kernel(x_rows[first : first + rows], block, columns[first : first + rows])
        for request in requests:
            request.Wait()
        if incoming is not None:
            block, owner = incoming, next_owner
    return result


# ---------------------------------------------------------------------------------------------
# local kernels: (x, y, out) -> out, or a new tensor for out=None
# ---------------------------------------------------------------------------------------------
def _into(out: Optional[torch.Tensor], values: torch.Tensor) -> torch.Tensor:
    """``values`` written into ``out`` (if given)."""
    if out is None:
        return values
    return out.copy_(values)


def _squared_euclidean_expanded(
    x: torch.Tensor, y: torch.Tensor, out: Optional[torch.Tensor]
) -> torch.Tensor:
    """
    ``||x||^2 - 2 x.y + ||y||^2``: one matrix product, written straight into ``out`` (a
    column block of the result is a strided view that the product can fill without a copy),
    clamped at 0 against rounding.
    """
    y_norms = (y * y).sum(dim=1).unsqueeze(0)
    if out is None:
        squared = torch.addmm(y_norms, x, y.T, alpha=-2.0)
    else:
        squared = torch.addmm(y_norms, x, y.T, alpha=-2.0, out=out)
    squared += (x * x).sum(dim=1, keepdim=True)
    return squared.clamp_(min=0.0)


def _squared_euclidean_centred(
    x: torch.Tensor, y: torch.Tensor, out: Optional[torch.Tensor]
) -> torch.Tensor:
    """
    Squared distances from torch's ``cdist`` (for more than 25 rows a matrix-product
    formulation too) of ``x`` and ``y`` shifted by a common centre, the mean of ``x``:
    distances do not change under a shift, and the norms that the product formulation
    subtracts shrink to the spread of the data.
    """
    centre = x.mean(0) if x.shape[0] else x.new_zeros(x.shape[1])
    return _into(out, torch.cdist(x - centre, y - centre).square_())


def _euclidean_centred(
    x: torch.Tensor, y: torch.Tensor, out: Optional[torch.Tensor]
) -> torch.Tensor:
    """Distances, as :func:`_squared_euclidean_centred` without the square."""
    centre = x.mean(0) if x.shape[0] else x.new_zeros(x.shape[1])
    return _into(out, torch.cdist(x - centre, y - centre))


def _manhattan_pairwise(
    x: torch.Tensor, y: torch.Tensor, out: Optional[torch.Tensor]
) -> torch.Tensor:
    """torch's pairwise L1 kernel."""
    return _into(out, torch.cdist(x, y, p=1.0))


def _manhattan_expanded(
    x: torch.Tensor, y: torch.Tensor, out: Optional[torch.Tensor]
) -> torch.Tensor:
    """``sum(|x_i - y_j|)`` from the broadcast differences, a bounded number of rows at a time."""
    result = out if out is not None else x.new_empty((x.shape[0], y.shape[0]))
    rows = max(1, _EXPAND_BUDGET // max(1, y.shape[0] * y.shape[1]))
    for start in range(0, x.shape[0], rows):
        differences = x[start : start + rows].unsqueeze(1) - y.unsqueeze(0)
        result[start : start + rows] = differences.abs_().sum(dim=2)
    return result


# ---------------------------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------------------------
def cdist(X, Y=None, quadratic_expansion: bool = False) -> "ht.DNDarray":
    """
    Euclidean distances between every row of ``X`` and every row of ``Y``, as
    :func:`scipy.spatial.distance.cdist` with ``metric="euclidean"``. Collective.

    Parameters
    ----------
    X : DNDarray
        ``n x f`` samples, split along any axis (rows, split=0, is the common case). NumPy
        arrays and tensors are taken as replicated data.
    Y : DNDarray, optional
        ``m x f`` samples; ``X`` itself if None.
    quadratic_expansion : bool
        True: compute ``||x||^2 - 2 x.y + ||y||^2`` with one matrix product written straight
        into the result, the fastest way; it loses precision for distances much smaller than
        the norms of the rows (cancellation). False (default): torch's ``cdist`` of the rows
        shifted by a common centre (the mean of the local rows of ``X``), which keeps the norms
        small and the cancellation with them (torch itself also uses a matrix product for
        more than 25 rows, differences for fewer).

    Returns
    -------
    DNDarray
        ``n x m`` distances in the floating type of ``X`` and ``Y`` (integers become floating
        point). Split along the rows if ``X`` is split, else along the columns if ``Y`` is,
        else not split.

    Raises
    ------
    TypeError
        If ``X`` or ``Y`` is not an array of real numbers.
    ValueError
        If they are not 2-D or have different numbers of features.

    Examples
    --------
    >>> import heat as ht
    >>> X = ht.array([[0.0, 0.0], [3.0, 4.0]], split=0)
    >>> ht.spatial.cdist(X)
    DNDarray([[0., 5.],
              [5., 0.]], dtype=ht.float32, device=cpu:0, split=0)
    """
    if quadratic_expansion:

        def expanded(x, y, out):
            return _squared_euclidean_expanded(x, y, out).sqrt_()

        return _pairwise(X, Y, expanded, "cdist")
    return _pairwise(X, Y, _euclidean_centred, "cdist")


def rbf(X, Y=None, sigma: float = 1.0, quadratic_expansion: bool = False) -> "ht.DNDarray":
    """
    The Gaussian (radial basis function) kernel ``exp(-||x - y||^2 / (2 sigma^2))`` between
    every row of ``X`` and every row of ``Y``. Collective; distributed as :func:`cdist`.

    Parameters
    ----------
    X : DNDarray
        ``n x f`` samples.
    Y : DNDarray, optional
        ``m x f`` samples; ``X`` itself if None.
    sigma : float
        The kernel width, > 0.
    quadratic_expansion : bool
        As in :func:`cdist`.

    Returns
    -------
    DNDarray
        ``n x m`` kernel values in ``(0, 1]``, laid out as :func:`cdist`'s result.

    Raises
    ------
    TypeError
        If ``sigma`` is not a real number, or ``X`` or ``Y`` is not an array of real numbers.
    ValueError
        If ``sigma <= 0``, or ``X`` and ``Y`` are not 2-D with the same number of features.

    Examples
    --------
    >>> import heat as ht
    >>> X = ht.array([[0.0], [1.0]], split=0)
    >>> ht.spatial.rbf(X, sigma=1.0)
    DNDarray([[1.        , 0.60653067],
              [0.60653067, 1.        ]], dtype=ht.float32, device=cpu:0, split=0)
    """
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float)):
        raise TypeError(f"sigma must be a real number, but was {type(sigma).__name__}")
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, but was {sigma}")
    factor = -1.0 / (2.0 * float(sigma) ** 2)

    squared_distances = (
        _squared_euclidean_expanded if quadratic_expansion else _squared_euclidean_centred
    )

    def kernel(x, y, out):
        return squared_distances(x, y, out).mul_(factor).exp_()

    return _pairwise(X, Y, kernel, "rbf")


def manhattan(X, Y=None, expand: bool = False) -> "ht.DNDarray":
    """
    Manhattan (city-block, L1) distances ``sum(|x_i - y_i|)`` between every row of ``X`` and
    every row of ``Y``, as :func:`scipy.spatial.distance.cdist` with ``metric="cityblock"``.
    Collective; distributed as :func:`cdist`.

    Parameters
    ----------
    X : DNDarray
        ``n x f`` samples.
    Y : DNDarray, optional
        ``m x f`` samples; ``X`` itself if None.
    expand : bool
        Compute from broadcast differences of several rows at once (``x[:, None] - y[None]``,
        in pieces of bounded size) instead of torch's pairwise kernel; faster for few features
        on some devices.

    Returns
    -------
    DNDarray
        ``n x m`` distances, laid out as :func:`cdist`'s result.

    Raises
    ------
    TypeError
        If ``X`` or ``Y`` is not an array of real numbers.
    ValueError
        If they are not 2-D or have different numbers of features.

    Examples
    --------
    >>> import heat as ht
    >>> X = ht.array([[0.0, 0.0], [3.0, 4.0]], split=0)
    >>> ht.spatial.manhattan(X)
    DNDarray([[0., 7.],
              [7., 0.]], dtype=ht.float32, device=cpu:0, split=0)
    """
    if expand:
        return _pairwise(X, Y, _manhattan_expanded, "manhattan")
    return _pairwise(X, Y, _manhattan_pairwise, "manhattan")
