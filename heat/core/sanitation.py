"""
Argument validation shared by every family.

Everything here works from information that every process holds (global shapes, dtypes, split
axes), so a bad call raises the same exception on every rank before any communication happens.
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence, Tuple, Union

import torch

from .dndarray import DNDarray

__all__ = [
    "broadcast_shapes",
    "sanitize_axis",
    "sanitize_in",
    "sanitize_shape",
    "sanitize_split",
]


def sanitize_in(x, name: str = "x") -> None:
    """
    Raise a ``TypeError`` naming ``name`` unless ``x`` is a DNDarray.

    Examples
    --------
    >>> sanitize_in(ht.zeros(3))
    """
    if type(x) is not DNDarray and not isinstance(x, DNDarray):
        raise TypeError(f"{name} must be a DNDarray, but was {type(x).__name__}")


def sanitize_axis(
    shape: Sequence[int], axis: Union[None, int, Iterable[int]], name: str = "axis"
) -> Union[None, int, Tuple[int, ...]]:
    """
    Normalize ``axis`` for an array of ``shape``: negative values wrap, tuples are checked for
    duplicates. ``None`` passes through.

    Raises
    ------
    TypeError
        If ``axis`` is not None, an integer or a sequence of integers.
    ValueError
        If an axis is out of range or repeated (NumPy raises ``AxisError``, a ``ValueError``).

    Examples
    --------
    >>> sanitize_axis((3, 4), -1)
    1
    >>> sanitize_axis((3, 4), (0, -1))
    (0, 1)
    """
    if axis is None:
        return None
    ndim = len(shape)
    if isinstance(axis, (tuple, list)):
        normalized = tuple(_normalize_one_axis(a, ndim, name) for a in axis)
        if len(set(normalized)) != len(normalized):
            raise ValueError(f"{name} contains repeated axes: {tuple(axis)}")
        return normalized
    return _normalize_one_axis(axis, ndim, name)


def _normalize_one_axis(axis, ndim: int, name: str) -> int:
    if isinstance(axis, bool) or not hasattr(axis, "__index__"):
        raise TypeError(f"{name} must be an integer or a tuple of integers, but was {axis!r}")
    axis = axis.__index__()
    # a 0-d array accepts axis 0 / -1 in some NumPy functions; keep NumPy's rule: range [-ndim, ndim)
    if not -max(ndim, 1) <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise ValueError(f"{name} {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def sanitize_split(shape: Sequence[int], split, name: str = "split") -> Optional[int]:
    """
    Normalize a split axis: None, or an integer in ``[-ndim, ndim)``.

    Examples
    --------
    >>> sanitize_split((4, 5), -1)
    1
    """
    if split is None:
        return None
    if isinstance(split, bool) or not hasattr(split, "__index__"):
        raise TypeError(f"{name} must be None or an integer, but was {type(split).__name__}")
    split = split.__index__()
    ndim = len(shape)
    if not -ndim <= split < ndim:
        raise ValueError(f"{name} {split} is out of bounds for array of dimension {ndim}")
    return split % ndim


def sanitize_shape(shape, name: str = "shape") -> Tuple[int, ...]:
    """
    Turn an int or a sequence of ints into a shape tuple, rejecting negative sizes.

    Examples
    --------
    >>> sanitize_shape(3)
    (3,)
    >>> sanitize_shape((2, 4))
    (2, 4)
    """
    if isinstance(shape, torch.Size):
        return tuple(shape)
    if hasattr(shape, "__index__") and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(
            f"{name} must be an integer or a sequence of integers, but was {type(shape).__name__}"
        ) from None
    result = []
    for d in dims:
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise TypeError(f"{name} must contain integers, but contained {d!r}")
        d = d.__index__()
        if d < 0:
            raise ValueError(f"negative dimensions are not allowed in {name}: {dims}")
        result.append(d)
    return tuple(result)


def broadcast_shapes(*shapes: Sequence[int]) -> Tuple[int, ...]:
    """
    The shape that NumPy's broadcasting gives for ``shapes``.

    Raises
    ------
    ValueError
        If the shapes cannot be broadcast together.

    Examples
    --------
    >>> broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    ndim = max((len(s) for s in shapes), default=0)
    result = [1] * ndim
    for shape in shapes:
        offset = ndim - len(shape)
        for i, d in enumerate(shape):
            current = result[offset + i]
            if d == current or d == 1:
                continue
            if current == 1:
                result[offset + i] = d
            else:
                raise ValueError(
                    "operands could not be broadcast together with shapes "
                    + " ".join(str(tuple(s)) for s in shapes)
                )
    return tuple(result)
