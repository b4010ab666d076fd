"""
NumPy's and PyTorch's dispatch protocols for DNDarray: ``np.multiply(x, 3)``, ``np.mean(x)``,
``np.concatenate([x, y])`` and ``torch.add(x, y)`` call heat's function of the same name, so the
result is a distributed DNDarray and nothing is gathered.

* ``__array_ufunc__`` (NEP 13): a NumPy ufunc called on a DNDarray is heat's function of the
  ufunc's name (``np.add`` -> :func:`heat.add`), with ``out=`` and ``where=``; ``np.add.reduce``
  is :func:`heat.sum`, ``np.add.accumulate`` :func:`heat.cumsum` (and likewise for the other
  ufuncs that have a heat reduction or scan); other ufunc methods (``outer``, ``at``, ...) raise
  TypeError.
* ``__array_function__`` (NEP 18): ``np.<name>(...)`` with a DNDarray among its array arguments
  is ``heat.<name>(...)`` (``numpy.linalg`` and ``numpy.fft`` likewise), with the arguments
  passed on unchanged. A function heat lacks raises TypeError: a silent gather of a distributed
  array to every process is never what a script on thousands of cores wants.
* ``__torch_function__``: ``torch.<name>(...)`` and ``tensor.<name>(...)`` with a DNDarray
  argument is ``heat.<name>(...)`` where heat has a function of the same meaning (torch's
  ``dim``/``keepdim`` become ``axis``/``keepdims``; ``torch.cat`` is :func:`heat.concatenate`,
  ``torch.clamp`` :func:`heat.clip`, ...); anything else makes torch raise its TypeError.

``np.asarray(x)`` and ``np.array(x)`` are not dispatched: they keep returning the global array as
a NumPy array through ``DNDarray.__array__`` (collective: every process gets all of it).
"""

from __future__ import annotations

import importlib
import numbers
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np
import torch

from .dndarray import DNDarray

__all__ = []

# NumPy ufuncs whose heat function has another name
_UFUNC_NAMES = {"true_divide": "divide", "absolute": "abs", "conjugate": "conj"}
# ufunc method -> {ufunc name: heat function}; np.add.reduce(x) is heat.sum(x, axis=0)
_UFUNC_METHODS = {
    "reduce": {
        "add": "sum",
        "multiply": "prod",
        "maximum": "max",
        "minimum": "min",
        "logical_and": "all",
        "logical_or": "any",
    },
    "accumulate": {"add": "cumsum", "multiply": "cumprod"},
}
# submodules of numpy whose functions heat mirrors in its own submodule of the same name
_NUMPY_MODULES = {"numpy": "", "numpy.linalg": "linalg", "numpy.fft": "fft"}
# NumPy functions answered from the array's metadata, without heat having them as functions
_NUMPY_METADATA = {
    "ndim": lambda a: a.ndim if isinstance(a, DNDarray) else np.ndim(a),
    "size": lambda a, axis=None: (
        (a.size if axis is None else a.gshape[axis])
        if isinstance(a, DNDarray)
        else np.size(a, axis)
    ),
}
# torch functions whose heat function has another name (same meaning)
_TORCH_NAMES = {
    "cat": "concatenate",
    "concat": "concatenate",
    "clamp": "clip",
    "clip": "clip",
    "mm": "matmul",
    "true_divide": "divide",
    "acos": "arccos",
    "asin": "arcsin",
    "atan": "arctan",
    "atan2": "arctan2",
    "acosh": "arccosh",
    "asinh": "arcsinh",
    "atanh": "arctanh",
    "eq": "equal",
    "ne": "not_equal",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
    "unsqueeze": "expand_dims",
    "amax": "max",
    "amin": "min",
    "fix": "trunc",
    "arctan2": "arctan2",
}
# torch functions whose meaning differs from heat's function of the same name (torch.std is
# unbiased, torch.median the lower median, torch.sort/max(dim) return indices too, ...)
_TORCH_DIFFERENT = frozenset(
    "std var median nanmedian sort max min transpose flatten unique split chunk topk mode "
    "kthvalue norm dist".split()
)
_TORCH_KEYWORDS = {"dim": "axis", "keepdim": "keepdims"}


def _heat():
    """The heat package (imported when first needed: heat.core is imported by it)."""
    return importlib.import_module(__name__.rsplit(".", 2)[0])


def _heat_function(module: str, name: str) -> Optional[Callable]:
    namespace = _heat()
    if module:
        namespace = getattr(namespace, module, None)
    function = getattr(namespace, name, None) if namespace is not None else None
    return function if callable(function) and not isinstance(function, type) else None


def _handled(value) -> bool:
    """The operand types heat's functions take besides DNDarrays."""
    return isinstance(value, (DNDarray, np.ndarray, np.generic, numbers.Number, torch.Tensor))


# ------------------------------------------------------------------------------------------------
# NumPy ufuncs
# ------------------------------------------------------------------------------------------------
def _ufunc_out(out: Tuple, ufunc: np.ufunc) -> Any:
    """NumPy passes ``out`` as a tuple of one entry per output; heat's functions want DNDarrays."""
    for array in out:
        if array is not None and not isinstance(array, DNDarray):
            raise TypeError(
                f"numpy.{ufunc.__name__} on DNDarrays writes its result into DNDarrays only, but "
                f"out held a {type(array).__name__}"
            )
    return out[0] if len(out) == 1 else out


def array_ufunc(self, ufunc: np.ufunc, method: str, *inputs, **kwargs):
    """
    NumPy's ufunc protocol (NEP 13): ``np.<ufunc>(x, ...)`` on DNDarrays is heat's function of the
    same name, distributed (no gather).

    ``out=`` (DNDarrays only) and ``where=`` are passed on; ``np.<ufunc>.reduce`` and
    ``.accumulate`` are heat's reduction and scan where one exists (``np.add.reduce`` is
    :func:`heat.sum`, ``np.maximum.reduce`` :func:`heat.max`, ``np.add.accumulate``
    :func:`heat.cumsum`), with ``axis`` (default 0, as NumPy), ``keepdims`` and ``dtype`` where
    heat's function takes them.

    Raises
    ------
    TypeError
        For a ufunc or method heat has no equivalent of, an ``out`` that is not a DNDarray, or a
        keyword heat's function does not take (``casting``, ``order``, ``signature``, ...).

    Examples
    --------
    >>> x = ht.arange(4, split=0)
    >>> np.multiply(x, 3)
    DNDarray([0, 3, 6, 9], dtype=ht.int64, device=cpu:0, split=0)
    >>> np.add.reduce(x)
    DNDarray(6, dtype=ht.int64, device=cpu:0, split=None)
    """
    if not all(_handled(value) for value in inputs):
        return NotImplemented
    if "out" in kwargs:
        out = kwargs.pop("out")
        if not all(a is None or isinstance(a, (DNDarray, np.ndarray)) for a in out):
            return NotImplemented
        if any(a is not None for a in out):
            kwargs["out"] = _ufunc_out(out, ufunc)
    if kwargs.get("where", None) is True:
        del kwargs["where"]
    if method == "__call__":
        name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
        allowed = {"out", "where"}
        args = inputs
    elif method in _UFUNC_METHODS and ufunc.__name__ in _UFUNC_METHODS[method]:
        name = _UFUNC_METHODS[method][ufunc.__name__]
        allowed = {"axis", "dtype", "out", "keepdims"}
        if len(inputs) != 1:
            raise TypeError(f"numpy.{ufunc.__name__}.{method} takes one array")
        args = inputs
        kwargs.setdefault("axis", 0)
    else:
        raise TypeError(
            f"heat has no equivalent of numpy.{ufunc.__name__}.{method} for DNDarrays; call it "
            f"on x.numpy() to work on a gathered NumPy copy"
        )
    function = _heat_function("", name)
    if function is None:
        raise TypeError(
            f"heat has no function for numpy.{ufunc.__name__} on DNDarrays; call it on "
            f"x.numpy() to work on a gathered NumPy copy"
        )
    if kwargs.get("dtype", None) is None:
        kwargs.pop("dtype", None)
    unsupported = sorted(set(kwargs) - allowed)
    if unsupported:
        raise TypeError(
            f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method} on DNDarrays "
            f"does not support the keyword(s) {', '.join(unsupported)}"
        )
    return function(*args, **kwargs)


# ------------------------------------------------------------------------------------------------
# NumPy's other functions
# ------------------------------------------------------------------------------------------------
def array_function(self, func: Callable, types: Tuple[type, ...], args: Tuple, kwargs: Dict):
    """
    NumPy's function protocol (NEP 18): ``np.<name>(...)`` with a DNDarray argument is
    ``heat.<name>(...)`` with the same arguments (``np.linalg.<name>`` is ``heat.linalg.<name>``,
    ``np.fft.<name>`` ``heat.fft.<name>``), so the work stays distributed.

    Raises
    ------
    TypeError
        If heat has no function of that name: the array is never gathered silently (use
        ``np.<name>(x.numpy())`` for a NumPy copy).

    Examples
    --------
    >>> x = ht.arange(6.0, split=0)
    >>> np.mean(x)
    DNDarray(2.5, dtype=ht.float32, device=cpu:0, split=None)
    >>> np.concatenate([x, x]).split
    0
    """
    if not all(issubclass(t, (DNDarray, np.ndarray, torch.Tensor)) for t in types):
        return NotImplemented
    module = _NUMPY_MODULES.get(getattr(func, "__module__", None) or "")
    name = func.__name__
    function = None
    if module is not None:
        function = _heat_function(module, name)
        if function is None and not module:
            function = _NUMPY_METADATA.get(name)
    if function is None:
        raise TypeError(
            f"heat has no function for {getattr(func, '__module__', 'numpy')}.{name} on "
            f"DNDarrays; call it on x.numpy() to work on a gathered NumPy copy"
        )
    return function(*args, **kwargs)


# ------------------------------------------------------------------------------------------------
# torch
# ------------------------------------------------------------------------------------------------
def torch_function(cls, func: Callable, types: Tuple[type, ...], args=(), kwargs=None):
    """
    PyTorch's function protocol: ``torch.<name>(...)`` (or ``tensor.<name>(...)``) with a DNDarray
    argument is heat's function of the same meaning, distributed: ``torch.add(x, y)`` is
    :func:`heat.add`, ``torch.sum(x, dim=0)`` ``heat.sum(x, axis=0)``, ``torch.cat`` heat's
    ``concatenate``. Functions heat lacks, or whose torch meaning differs from heat's function of
    that name (``torch.std`` is unbiased, ``torch.sort`` returns indices too, ...), make torch
    raise TypeError; operators (``tensor + x``) fall back to the DNDarray's reflected operator.

    Examples
    --------
    >>> x = ht.arange(4.0, split=0)
    >>> torch.add(x, 1)
    DNDarray([1., 2., 3., 4.], dtype=ht.float32, device=cpu:0, split=0)
    """
    kwargs = dict(kwargs or {})
    name = getattr(func, "__name__", "")
    if name.startswith("_") or name.endswith("_") or name in _TORCH_DIFFERENT:
        return NotImplemented
    function = _heat_function("", _TORCH_NAMES.get(name, name))
    if function is None:
        return NotImplemented
    if "input" in kwargs:
        args = (kwargs.pop("input"),) + tuple(args)
    if "other" in kwargs:
        args = tuple(args) + (kwargs.pop("other"),)
    for torch_name, heat_name in _TORCH_KEYWORDS.items():
        if torch_name in kwargs:
            kwargs[heat_name] = kwargs.pop(torch_name)
    return function(*args, **kwargs)
