"""
Argument validation shared by every family.

Everything here works from information that every process holds (global shapes, dtypes, split
axes), so a bad call raises the same exception on every rank before any communication happens.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Iterable, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from .dndarray import DNDarray

__all__ = [
    "broadcast_shapes",
    "check_bool",
    "check_choice",
    "check_int",
    "check_type",
    "warn_ignored",
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


# ---------------------------------------------------------------------------------------------
# scalar arguments: one vocabulary and one message style for every module
# ---------------------------------------------------------------------------------------------
def check_int(
    value: Any,
    name: str,
    minimum: Optional[int] = None,
    *,
    maximum: Optional[int] = None,
    allow_none: bool = False,
) -> Optional[int]:
    """
    ``value`` as a Python int: a Python or NumPy integer (not a bool), within ``[minimum,
    maximum]`` where given; None passes when ``allow_none``.

    Raises
    ------
    TypeError
        ``"{name} must be an int, got {type}"``.
    ValueError
        ``"{name} must be >= {minimum}, got {value}"`` (or ``<=`` the maximum).

    Examples
    --------
    >>> check_int(np.int64(10), "batch_size", 1)
    10
    >>> check_int(0, "batch_size", 1)
    Traceback (most recent call last):
    ValueError: batch_size must be >= 1, got 0
    """
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        expected = "None or an int" if allow_none else "an int"
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_bool(value: Any, name: str) -> bool:
    """
    ``value`` as a Python bool: a Python or NumPy bool.

    Raises
    ------
    TypeError
        ``"{name} must be a bool, got {type}"``.

    Examples
    --------
    >>> check_bool(np.bool_(True), "shuffle")
    True
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_type(value: Any, name: str, kinds: Any, description: str) -> Any:
    """
    ``value`` unchanged if it is an instance of ``kinds`` (a bool is no int here unless ``kinds``
    names bool).

    Raises
    ------
    TypeError
        ``"{name} must be {description}, got {type}"``.

    Examples
    --------
    >>> check_type(torch.float32, "dtype", torch.dtype, "a torch.dtype")
    torch.float32
    """
    kinds_tuple = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, (bool, np.bool_)) and bool not in kinds_tuple:
        raise TypeError(f"{name} must be {description}, got bool")
    if not isinstance(value, kinds):
        raise TypeError(f"{name} must be {description}, got {type(value).__name__}")
    return value


def check_choice(value: Any, name: str, choices: Sequence[Any]) -> Any:
    """
    ``value`` unchanged if it is one of ``choices``.

    Raises
    ------
    ValueError
        ``"{name} must be one of {choices}, got {value!r}"``.

    Examples
    --------
    >>> check_choice("1f1b", "schedule", ("gpipe", "1f1b", "pipedream"))
    '1f1b'
    """
    try:
        found = value in choices
    except TypeError:  # an unhashable value against a set
        found = False
    if not found:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def warn_ignored(value: Any, name: str, default: Any, reason: str, stacklevel: int = 3) -> None:
    """
    Warn (a ``UserWarning``, once per calling line, as Python's default filter shows it) that
    the compatibility parameter ``name`` has no effect, when ``value`` is not its ``default``.

    Examples
    --------
    >>> warn_ignored(4, "procs_to_merge", 2, "TSQR merges all factors at once")
    UserWarning: procs_to_merge=4 has no effect: TSQR merges all factors at once
    """
    if value is default or value == default:
        return
    warnings.warn(f"{name}={value!r} has no effect: {reason}", UserWarning, stacklevel=stacklevel)
