"""
Python data, NumPy arrays and torch tensors as torch tensors of a heat type: the conversion under
``ht.array`` (:mod:`heat.core.factories`) and under the engines, which turn array-like operands
(lists, NumPy arrays) into arrays (:mod:`heat.core._operations`).

No communication: every process converts the data it was given.
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
import torch

from . import types
from .dndarray import DNDarray

__all__ = ["to_tensor"]


def to_tensor(obj, dtype) -> Tuple[torch.Tensor, Optional[str]]:
    """
    A torch tensor holding ``obj`` (Python data, NumPy array, tensor), and why it does not share
    ``obj``'s memory (None when it does): ``copy=False`` raises with that reason.
    """
    if isinstance(obj, torch.Tensor):
        return obj.detach(), None
    if isinstance(obj, np.ndarray):
        return _numpy_to_tensor(obj)
    if isinstance(obj, np.generic):
        return _numpy_to_tensor(np.asarray(obj))[0], "obj is a NumPy scalar, not an array"
    if isinstance(obj, (list, tuple)) and _contains_dndarray(obj):
        obj = _resolve_nested(obj)
    inferred = dtype is None
    if inferred:
        dtype = types.heat_type_of(obj)
    if isinstance(obj, (list, tuple)) and _contains_array(obj):
        # arrays among the elements (0-d ones too, which torch.tensor rejects): stacked
        return (
            _stacked(obj, dtype.torch_type()),
            f"obj is a {type(obj).__name__}, whose values must be copied into an array",
        )
    try:
        tensor = torch.tensor(obj, dtype=dtype.torch_type())
    except (TypeError, ValueError, RuntimeError) as error:
        if inferred and dtype is types.int64 and _fits_uint64(obj):
            # Python ints above int64's range: uint64, as NumPy chooses
            return (
                torch.tensor(obj, dtype=torch.uint64),
                f"obj is a {type(obj).__name__}, whose values must be copied into an array",
            )
        ragged_depth = _ragged_depth(obj)
        if ragged_depth is not None:
            # NumPy's error class for an inhomogeneous nesting
            raise ValueError(
                f"obj is a ragged nested sequence: its shape is inhomogeneous after "
                f"{ragged_depth} dimensions"
            ) from None
        raise TypeError(f"obj could not be converted to an array: {error}") from None
    return tensor, f"obj is a {type(obj).__name__}, whose values must be copied into an array"


def _numpy_to_tensor(array: np.ndarray) -> Tuple[torch.Tensor, Optional[str]]:
    """A tensor on the memory of ``array`` where torch can describe it (see :func:`to_tensor`)."""
    reason = None
    if array.dtype.kind not in "biufc":
        raise TypeError(f"obj has NumPy dtype {array.dtype}, which heat cannot hold")
    if array.dtype.byteorder not in "=|":
        array = array.astype(array.dtype.newbyteorder("="))
        reason = reason or "obj is not in native byte order"
    if not array.flags.writeable:
        # a DNDarray has no read-only flag that could protect obj from writes
        array = array.copy()
        reason = reason or "obj is read-only"
    try:
        return torch.from_numpy(array), reason
    except ValueError:
        # negative strides, which torch tensors cannot describe
        return torch.from_numpy(array.copy()), reason or "obj has negative strides"


def _fits_uint64(obj) -> bool:
    """Whether NumPy reads ``obj`` (Python ints, some above int64's range) as uint64."""
    try:
        return np.asarray(obj).dtype == np.uint64
    except (TypeError, ValueError, OverflowError):
        return False


def _ragged_depth(obj, depth: int = 0) -> Optional[int]:
    """After how many dimensions a nested sequence's elements differ in shape (None: never)."""
    if not isinstance(obj, (list, tuple)):
        return None
    shapes = {_nested_shape(element) for element in obj}
    if len(shapes) > 1 or None in shapes:
        for element in obj:
            inner = _ragged_depth(element, depth + 1)
            if inner is not None:
                return inner
        return depth + 1
    return None


def _nested_shape(obj) -> Optional[Tuple[int, ...]]:
    """The shape of a (nested) sequence or array, None where its elements disagree."""
    if isinstance(obj, (np.ndarray, torch.Tensor)):
        return tuple(obj.shape)
    if not isinstance(obj, (list, tuple)):
        return ()
    shapes = {_nested_shape(element) for element in obj}
    if len(shapes) > 1 or None in shapes:
        return None
    return (len(obj),) + (shapes.pop() if shapes else ())


def _contains_array(obj) -> bool:
    """Whether a nested sequence holds a NumPy array or a tensor (of any dimension) anywhere."""
    return any(
        isinstance(o, (np.ndarray, torch.Tensor))
        or (isinstance(o, (list, tuple)) and _contains_array(o))
        for o in obj
    )


def _stacked(obj, torch_type: torch.dtype) -> torch.Tensor:
    """
    A nested sequence of arrays, tensors and scalars as one tensor of ``torch_type``, as NumPy
    builds an array from it: every element converted, then stacked along a new first axis.
    """
    depth = _ragged_depth(obj)
    if depth is not None:
        raise ValueError(
            f"obj is a ragged nested sequence: its shape is inhomogeneous after {depth} dimensions"
        )

    def convert(element) -> torch.Tensor:
        if isinstance(element, torch.Tensor):
            return element.detach().to(torch_type)
        if isinstance(element, np.ndarray):
            return _numpy_to_tensor(element)[0].to(torch_type)
        if isinstance(element, (list, tuple)):
            parts = [convert(e) for e in element]
            return torch.stack(parts) if parts else torch.empty((0,), dtype=torch_type)
        try:
            return torch.tensor(element, dtype=torch_type)
        except (TypeError, ValueError, RuntimeError) as error:
            raise TypeError(f"obj could not be converted to an array: {error}") from None

    return convert(obj)


def _contains_dndarray(obj) -> bool:
    return any(
        isinstance(o, DNDarray) or (isinstance(o, (list, tuple)) and _contains_dndarray(o))
        for o in obj
    )


def _resolve_nested(obj):
    return [
        o.numpy()
        if isinstance(o, DNDarray)
        else (_resolve_nested(o) if isinstance(o, (list, tuple)) else o)
        for o in obj
    ]
