"""
Norms of vectors and matrices: ``vector_norm``, ``matrix_norm`` and ``norm`` (NumPy's dispatch
between the two).

Vector norms and the Frobenius, 1- and inf-norms of matrices are reductions: one local pass over
the block (the magnitude and its power fused into the partial sum or extremum) and one Allreduce
when the reduced axes include the split axis. The spectral norms (``2``, ``-2``, ``"nuc"``) need
singular values; see :func:`matrix_norm` for what moves there.
"""

from __future__ import annotations

import math
import numbers
from typing import Optional, Tuple, Union

import torch

from .. import types
from .._operations import reduce_op
from .._redistribution import resplit_tensor
from ..communication import MPI
from ..dndarray import DNDarray
from ..manipulations import expand_dims, moveaxis
from ..sanitation import sanitize_axis, sanitize_in

__all__ = ["matrix_norm", "norm", "vector_norm"]

_INF = math.inf


def _norm_type(dtype):
    """NumPy's result type of a norm: floats keep their precision (complex: the real part's),
    booleans and integers give float64."""
    if types.heat_type_is_inexact(dtype):
        return types.real_type_of(dtype)
    return types.float64


def _magnitude(t: torch.Tensor, torch_type: torch.dtype) -> torch.Tensor:
    if t.is_complex():
        t = t.abs()
        return t if t.dtype == torch_type else t.to(torch_type)
    return t.to(torch_type).abs() if t.dtype != torch_type else t.abs()


def _check_ord_number(ord, what: str):
    """``ord`` if it is a real number (not a bool or a string), else NumPy's ValueError."""
    if isinstance(ord, (bool, str)) or not isinstance(ord, numbers.Real):
        raise ValueError(f"Invalid norm order {ord!r} for {what}")
    return ord


def _vector_reduction(x: DNDarray, ord, axis, keepdims: bool) -> DNDarray:
    """The vector norm of order ``ord`` over ``axis`` (None: all axes) as one reduce_op."""
    result_type = _norm_type(x.dtype)
    torch_type = result_type.torch_type()
    finish = None
    if ord == _INF:

        def partial(t, dims, keepdim):
            return _magnitude(t, torch_type).amax(dim=dims, keepdim=keepdim)

        op, neutral = MPI.MAX, 0.0
    elif ord == -_INF:

        def partial(t, dims, keepdim):
            return _magnitude(t, torch_type).amin(dim=dims, keepdim=keepdim)

        op, neutral = MPI.MIN, _INF
    elif ord == 0:

        def partial(t, dims, keepdim):
            return (t != 0).sum(dim=dims, keepdim=keepdim).to(torch_type)

        op, neutral = MPI.SUM, 0.0
    elif ord == 1:

        def partial(t, dims, keepdim):
            return _magnitude(t, torch_type).sum(dim=dims, keepdim=keepdim)

        op, neutral = MPI.SUM, 0.0
    elif ord == 2:

        def partial(t, dims, keepdim):
            m = _magnitude(t, torch_type)
            return (m * m).sum(dim=dims, keepdim=keepdim)

        op, neutral, finish = MPI.SUM, 0.0, torch.sqrt
    else:
        power = float(ord)

        def partial(t, dims, keepdim):
            return _magnitude(t, torch_type).pow(power).sum(dim=dims, keepdim=keepdim)

        op, neutral = MPI.SUM, 0.0

        def finish(t):
            return t.pow(1.0 / power)

    reduced = axis if axis is not None else tuple(range(x.ndim))
    if reduced == ():
        # nothing to reduce: the norm of each element is its magnitude (as NumPy)
        local = partial(x.larray.unsqueeze(-1), (-1,), False)
        result = DNDarray(local, x.gshape, result_type, x.split, x.device, x.comm, x._balanced)
    else:
        result = reduce_op(x, partial, op, axis=reduced, keepdims=keepdims, neutral=neutral)
    if finish is not None:
        result.larray = finish(result.larray)
    return result


def vector_norm(
    x: DNDarray,
    axis: Union[None, int, Tuple[int, ...]] = None,
    keepdims: bool = False,
    ord: Union[None, int, float] = None,
) -> DNDarray:
    """
    The vector norm of ``x`` over ``axis``, as :func:`numpy.linalg.vector_norm` (array API).

    ``ord``: ``2`` (default) the Euclidean norm, ``1`` the sum of magnitudes, ``inf`` / ``-inf``
    the largest / smallest magnitude, ``0`` the number of nonzero elements, any other number
    ``p`` the sum of magnitudes to the ``p``-th power, to the ``1/p``-th. One local pass and at
    most one Allreduce.

    Parameters
    ----------
    x : DNDarray
    axis : int or tuple of int, optional
        The axes of the vectors; None (default) takes all elements as one vector.
    keepdims : bool, optional
        Keep the reduced axes with length one.
    ord : int or float, optional
        The order of the norm (default 2).

    Returns
    -------
    DNDarray
        Real floating point (float64 for integer input; the precision of the input's real part
        otherwise).

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray or ``axis`` is not an integer or tuple of integers.
    ValueError
        If ``ord`` is not a number or an axis is out of range or repeated.

    Examples
    --------
    >>> ht.linalg.vector_norm(ht.array([3.0, 4.0], split=0))
    DNDarray(5., dtype=ht.float32, device=cpu:0, split=None)
    >>> ht.linalg.vector_norm(ht.ones((2, 3)), axis=1, ord=1)
    DNDarray([3., 3.], dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(x, "x")
    ord = 2 if ord is None else _check_ord_number(ord, "vectors")
    axis = sanitize_axis(x.gshape, axis)
    if isinstance(axis, int):
        axis = (axis,)
    return _vector_reduction(x, ord, axis, bool(keepdims))


def _matrix_axes(x: DNDarray, axis) -> Tuple[int, int]:
    if axis is None:
        axis = (-2, -1)
    if not isinstance(axis, (tuple, list)) or len(axis) != 2:
        raise ValueError(f"axis must be a pair of axes for a matrix norm, but was {axis!r}")
    if x.ndim < 2:
        raise ValueError(f"a matrix norm needs at least two dimensions, but x is {x.ndim}-D")
    rows, cols = sanitize_axis(x.gshape, tuple(axis))
    return rows, cols


def _singular_values(x: DNDarray, rows: int, cols: int) -> Tuple[torch.Tensor, DNDarray]:
    """
    The singular values of every matrix of ``x`` (axes ``rows``, ``cols``), as a local tensor
    of this process's matrices, and an array whose layout the result takes (``x`` moved so
    that the matrix axes are last, with whole matrices on every process).
    """
    moved = moveaxis(x, (rows, cols), (-2, -1))
    local = moved.larray
    layout = moved
    if moved.split is not None and moved.split >= moved.ndim - 2 and moved.comm.size > 1:
        if moved.ndim > 2:
            # whole matrices per process: split along the first batch axis (one all-to-all)
            local, balanced = resplit_tensor(moved, 0)
            layout = DNDarray(
                local, moved.gshape, moved.dtype, 0, moved.device, moved.comm, balanced
            )
        else:
            # a single distributed matrix: every process gathers it (one allgather)
            local = resplit_tensor(moved, None)[0]
            layout = DNDarray(
                local, moved.gshape, moved.dtype, None, moved.device, moved.comm, True
            )
    torch_type = _norm_type(x.dtype).torch_type()
    matrices = local if local.is_complex() or local.is_floating_point() else local.to(torch_type)
    if matrices.dtype in (torch.float16, torch.bfloat16):
        matrices = matrices.float()
    values = (
        torch.linalg.svdvals(matrices)
        if matrices.numel()
        else matrices.new_zeros(matrices.shape[:-2] + (min(matrices.shape[-2:]),)).real
    )
    return values.to(torch_type), layout


def matrix_norm(
    x: DNDarray,
    axis: Optional[Tuple[int, int]] = None,
    keepdims: bool = False,
    ord: Union[None, int, float, str] = None,
) -> DNDarray:
    """
    The matrix norm of each matrix of ``x`` (axes ``axis``, default the last two), as
    :func:`numpy.linalg.matrix_norm` (array API).

    ``ord``: ``"fro"`` (default) the Frobenius norm; ``1`` / ``-1`` the largest / smallest
    column sum of magnitudes; ``inf`` / ``-inf`` the largest / smallest row sum; ``2`` / ``-2``
    the largest / smallest singular value; ``"nuc"`` the sum of the singular values.

    The Frobenius, 1- and inf-norms are reductions (one local pass and at most two Allreduces).
    The singular values need whole matrices: an array split along a matrix axis is resplit along
    its first batch axis (one all-to-all), and a single distributed matrix is gathered on every
    process (one allgather; memory: the whole matrix per process), then each process computes
    the singular values of its matrices.

    Parameters
    ----------
    x : DNDarray
        At least 2-D.
    axis : pair of int, optional
        The row and column axes (HeAT's extension; NumPy's ``matrix_norm`` uses the last two).
    keepdims : bool, optional
        Keep the two reduced axes with length one.
    ord : {"fro", "nuc", 1, -1, 2, -2, inf, -inf}, optional

    Returns
    -------
    DNDarray
        Real floating point, as :func:`vector_norm`.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray.
    ValueError
        If ``x`` has fewer than two dimensions, ``axis`` is not a pair of distinct axes, or
        ``ord`` is not one of the above.

    Examples
    --------
    >>> ht.linalg.matrix_norm(ht.array([[1.0, -2.0], [3.0, 4.0]], split=0), ord=1)
    DNDarray(6., dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(x, "x")
    ord = "fro" if ord is None else ord
    if isinstance(ord, str):
        valid = ord in ("fro", "nuc")
    else:
        valid = (
            not isinstance(ord, bool)
            and isinstance(ord, numbers.Real)
            and ord in (1, -1, 2, -2, _INF, -_INF)
        )
    if not valid:
        raise ValueError(f"Invalid norm order {ord!r} for matrices")
    rows, cols = _matrix_axes(x, axis)
    keepdims = bool(keepdims)
    if ord == "fro":
        return _vector_reduction(x, 2, (rows, cols), keepdims)
    if ord in (1, -1, _INF, -_INF):
        # sums of magnitudes along one axis, then the extremum along the other
        summed, extreme = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = _vector_reduction(x, 1, (summed,), True)
        return _vector_reduction(sums, _INF if ord > 0 else -_INF, (rows, cols), keepdims)
    values, layout = _singular_values(x, rows, cols)
    if ord == 2:
        local = values.amax(dim=-1) if values.shape[-1] else values.new_zeros(values.shape[:-1])
    elif ord == -2:
        local = values.amin(dim=-1) if values.shape[-1] else values.new_zeros(values.shape[:-1])
    else:
        local = values.sum(dim=-1)
    gshape = layout.gshape[:-2]
    split = layout.split if layout.split is not None and layout.split < len(gshape) else None
    result = DNDarray(
        local,
        gshape,
        _norm_type(x.dtype),
        split,
        x.device,
        x.comm,
        layout._balanced if split is not None else True,
    )
    if keepdims:
        for axis_kept in sorted((rows, cols)):
            result = expand_dims(result, axis_kept)
    return result


def norm(
    x: DNDarray,
    ord: Union[None, int, float, str] = None,
    axis: Union[None, int, Tuple[int, int]] = None,
    keepdims: bool = False,
) -> DNDarray:
    """
    A vector or matrix norm, as :func:`numpy.linalg.norm`.

    With ``axis`` None: ``ord`` None gives the 2-norm of all elements (for a matrix its
    Frobenius norm); any other ``ord`` needs a 1-D (vector norm) or 2-D (matrix norm) array.
    An integer ``axis`` gives vector norms along it, a pair of axes matrix norms. See
    :func:`vector_norm` and :func:`matrix_norm` for the orders and what moves.

    Parameters
    ----------
    x : DNDarray
    ord : int, float, inf, -inf, "fro" or "nuc", optional
    axis : int or pair of int, optional
    keepdims : bool, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    ValueError
        For an ``ord`` invalid for the kind of norm, more than two axes, or ``axis`` None with
        an ``ord`` and an array of more than two dimensions.

    Notes
    -----
    The positional order is NumPy's (``x, ord, axis, keepdims``); HeAT 1.8 has
    ``norm(x, axis, keepdims, ord)``, so pass these by keyword to be safe with both.

    Examples
    --------
    >>> ht.norm(ht.array([[1.0, 2.0], [2.0, 4.0]], split=1))
    DNDarray(5., dtype=ht.float32, device=cpu:0, split=None)
    >>> ht.norm(ht.array([1.0, -3.0]), ord=ht.inf)
    DNDarray(3., dtype=ht.float32, device=cpu:0, split=None)
    """
    sanitize_in(x, "x")
    keepdims = bool(keepdims)
    if axis is None:
        if ord is None:
            return _vector_reduction(x, 2, None, keepdims)
        if x.ndim == 1:
            return vector_norm(x, None, keepdims, ord)
        if x.ndim == 2:
            return matrix_norm(x, (0, 1), keepdims, ord)
        raise ValueError(f"Improper number of dimensions to norm: x is {x.ndim}-D and ord is given")
    if isinstance(axis, (tuple, list)):
        if len(axis) == 1:
            axis = axis[0]
        elif len(axis) == 2:
            return matrix_norm(x, tuple(axis), keepdims, ord)
        else:
            raise ValueError(f"Improper number of dimensions to norm: axis {tuple(axis)}")
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order {ord!r} for vectors")
    return vector_norm(x, axis, keepdims, ord)
