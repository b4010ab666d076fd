"""
DNDarray's methods and operators that are heat functions in disguise.

``dndarray.py`` defines the array's metadata and the methods that need nothing but torch and the
communicator. Everything that calls a function family — ``x + y``, ``x.sum()``, ``x[key]``,
``repr(x)``, ``x.T``, ``x.resplit_(1)``, ``ht.float32(3)`` — is installed here, once, by
:func:`install` (called from ``heat/core/__init__.py`` after every family is imported). That keeps
the arrows of the import graph pointing down: ``dndarray.py``, ``types.py`` and the engines in
``_operations.py`` import no family (``tests/core/test_import_structure.py`` checks it).

Methods are installed as plain class attributes, so a call costs no more than one defined in the
class body. The most frequent operators (``+ - * / == != < <= > >=``) get a shortcut for the calls
that need no promotion, alignment or communication (see :func:`_fast_operator`).
"""

from __future__ import annotations

import importlib
from typing import Callable, Dict, Optional

import torch

from . import (
    _interop,
    arithmetics,
    complex_math,
    factories,
    halos,
    indexing,
    layout,
    manipulations,
    partition,
    printing,
    relational,
    rounding,
    types,
)
from .dndarray import DNDarray
from .linalg import products

__all__ = ["install"]

# the versions of the array API standard heat implements (newest last: heat.__array_api_version__)
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")

# names of heat functions that are also DNDarray methods (as on numpy.ndarray)
_METHOD_NAMES = (
    "all any allclose isclose argmax argmin clip conj cumprod cumsum diagonal expand_dims "
    "flatten flip max mean median min nonzero prod ptp ravel repeat reshape round sort argsort "
    "squeeze std sum swapaxes tril triu unique var average abs absolute exp log sqrt ceil floor "
    "trunc square sin cos tan tanh nan_to_num fill_diagonal moveaxis roll rot90 tile pad "
    "percentile quantile isnan isinf isfinite angle trace save"
).split()

_COMPLEX = frozenset((types.complex64, types.complex128))
# the operators' shortcut calls torch directly: uint16/uint32/uint64, which torch only stores,
# take the engines' path
_REAL_NUMERIC = frozenset(
    (
        types.uint8,
        types.int8,
        types.int16,
        types.int32,
        types.int64,
        types.float16,
        types.bfloat16,
        types.float32,
        types.float64,
    )
)
_NUMERIC = _REAL_NUMERIC | _COMPLEX
_FLOATING = frozenset((types.float16, types.bfloat16, types.float32, types.float64))
_BOOL = frozenset((types.bool,))
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_new_dndarray = object.__new__


# ------------------------------------------------------------------------------------------------
# operators
# ------------------------------------------------------------------------------------------------
def _fast_operator(
    dunder: str,
    function: Callable,
    torch_operation: Callable,
    fast_types: frozenset,
    result_type=None,
    reflected: bool = False,
) -> Callable:
    """
    The method ``x <op> y`` (or ``y <op> x`` when ``reflected``): ``function(x, y)``, with a
    shortcut for the most common calls, where the result is ``torch_operation`` of the local
    blocks (no alignment, no promotion, no communication) and has type ``result_type`` (None: the
    operands' type):

    * two arrays of one type in ``fast_types`` with the same shape and layout;
    * an array of a floating type in ``fast_types`` and a Python float or int, which NumPy (NEP 50)
      and torch both compute in the array's type (reflected operations only for commutative
      ``torch_operation``).

    Everything else goes through ``function``, which checks, promotes and aligns its operands.
    """
    scalar_types = fast_types & _FLOATING

    def method(self, other):
        kind = type(other)
        if kind is DNDarray:
            if not (
                self._dtype is other._dtype
                and self._dtype in fast_types
                and self._gshape == other._gshape
                and self._split == other._split
                and self._comm is other._comm
                and self._device is other._device
                and (self._split is None or (self._balanced and other._balanced))
            ):
                return function(other, self) if reflected else function(self, other)
            array = torch_operation(self._array, other._array)
        elif (
            kind is float or (kind is int and _INT64_MIN <= other <= _INT64_MAX)
        ) and self._dtype in scalar_types:
            array = torch_operation(self._array, other)
        else:
            return function(other, self) if reflected else function(self, other)
        result = _new_dndarray(DNDarray)
        result._array = array
        result._gshape = self._gshape
        result._dtype = self._dtype if result_type is None else result_type
        result._split = self._split
        result._device = self._device
        result._comm = self._comm
        result._balanced = self._balanced
        result._lshape_map = None
        return result

    operands = "other, self" if reflected else "self, other"
    return _named(
        method,
        dunder,
        f"``heat.{function.__name__}({operands})``, with a shortcut for common calls.",
    )


def _named(method: Callable, name: str, doc: str) -> Callable:
    method.__name__ = name
    method.__qualname__ = f"DNDarray.{name}"
    method.__doc__ = doc
    return method


def _plain_operators(name: str, function: Callable, kinds: str) -> Dict[str, Callable]:
    """
    ``__name__`` (``function(self, other)``), ``__rname__`` (``function(other, self)``) and
    ``__iname__`` (``function(self, other, out=self)``), for the kinds listed in ``kinds``
    (a subset of ``"fri"``).
    """

    def forward(self, other):
        return function(self, other)

    def reflected(self, other):
        return function(other, self)

    def in_place(self, other):
        return function(self, other, out=self)

    methods = {}
    for kind, method, prefix, operands in (
        ("f", forward, "", "self, other"),
        ("r", reflected, "r", "other, self"),
        ("i", in_place, "i", "self, other, out=self"),
    ):
        if kind in kinds:
            dunder = f"__{prefix}{name}__"
            methods[dunder] = _named(method, dunder, f"``heat.{function.__name__}({operands})``.")
    return methods


def _operators() -> Dict[str, Callable]:
    # bool + bool is logical or in NumPy and torch alike; bool - bool is an error (left to
    # subtract); complex values are ordered lexicographically by relational, not by torch
    methods = {}
    for dunder, function, torch_operation, fast_types, result_type, reflected in (
        ("__add__", arithmetics.add, torch.add, _NUMERIC | _BOOL, None, False),
        ("__radd__", arithmetics.add, torch.add, _NUMERIC | _BOOL, None, True),
        ("__sub__", arithmetics.subtract, torch.sub, _NUMERIC, None, False),
        ("__mul__", arithmetics.multiply, torch.mul, _NUMERIC | _BOOL, None, False),
        ("__rmul__", arithmetics.multiply, torch.mul, _NUMERIC | _BOOL, None, True),
        ("__truediv__", arithmetics.divide, torch.div, _FLOATING, None, False),
        ("__eq__", relational.eq, relational._equal, _NUMERIC | _BOOL, types.bool, False),
        ("__ne__", relational.ne, relational._not_equal, _NUMERIC | _BOOL, types.bool, False),
        ("__lt__", relational.lt, relational._less, _REAL_NUMERIC | _BOOL, types.bool, False),
        ("__le__", relational.le, relational._less_equal, _REAL_NUMERIC | _BOOL, types.bool, False),
        ("__gt__", relational.gt, relational._greater, _REAL_NUMERIC | _BOOL, types.bool, False),
        (
            "__ge__",
            relational.ge,
            relational._greater_equal,
            _REAL_NUMERIC | _BOOL,
            types.bool,
            False,
        ),
    ):
        methods[dunder] = _fast_operator(
            dunder, function, torch_operation, fast_types, result_type, reflected
        )
    for name, function, kinds in (
        ("add", arithmetics.add, "i"),
        ("sub", arithmetics.subtract, "ri"),
        ("mul", arithmetics.multiply, "i"),
        ("truediv", arithmetics.divide, "ri"),
        ("floordiv", arithmetics.floor_divide, "fri"),
        ("mod", arithmetics.mod, "fri"),
        ("pow", arithmetics.pow, "fri"),
        ("and", arithmetics.bitwise_and, "fri"),
        ("or", arithmetics.bitwise_or, "fri"),
        ("xor", arithmetics.bitwise_xor, "fri"),
        ("matmul", products.matmul, "fri"),
        ("lshift", arithmetics.left_shift, "fri"),
        ("rshift", arithmetics.right_shift, "fri"),
    ):
        methods.update(_plain_operators(name, function, kinds))
    return methods


def _divmod(self, other):
    """``(heat.floor_divide(self, other), heat.mod(self, other))``."""
    return arithmetics.floor_divide(self, other), arithmetics.mod(self, other)


def _rdivmod(self, other):
    """``(heat.floor_divide(other, self), heat.mod(other, self))``."""
    return arithmetics.floor_divide(other, self), arithmetics.mod(other, self)


def _invert(self):
    """``heat.bitwise_not(self)``."""
    return arithmetics.bitwise_not(self)


def _neg(self):
    """``heat.neg(self)``."""
    return arithmetics.neg(self)


def _pos(self):
    """``heat.pos(self)``."""
    return arithmetics.pos(self)


def _abs(self):
    """``heat.abs(self)``."""
    return rounding.abs(self)


# ------------------------------------------------------------------------------------------------
# views, printing, indexing
# ------------------------------------------------------------------------------------------------
def _transposed(self) -> DNDarray:
    """The transposed array (axes reversed)."""
    return manipulations.transpose(self)


def _transpose(self, axes=None) -> DNDarray:
    """See :func:`heat.transpose`."""
    return manipulations.transpose(self, axes)


def _real(self) -> DNDarray:
    """The real part."""
    return complex_math.real(self)


def _imag(self) -> DNDarray:
    """The imaginary part."""
    return complex_math.imag(self)


def _matrix_transposed(self) -> DNDarray:
    """The transposes of the matrices in the last two axes (the array API standard's ``mT``)."""
    if self.ndim < 2:
        raise ValueError(f"mT needs an array of at least 2 dimensions, but x has {self.ndim}")
    return manipulations.swapaxes(self, -1, -2)


def _array_namespace(self, /, *, api_version: Optional[str] = None):
    """
    The module of the array API standard's functions for this array: ``heat``.

    Parameters
    ----------
    api_version : str, optional
        The version of the standard asked for (a ``"YYYY.MM"`` string heat implements); default
        the newest, ``heat.__array_api_version__``.

    Raises
    ------
    ValueError
        If heat does not implement ``api_version``.

    Examples
    --------
    >>> x = ht.arange(3)
    >>> xp = x.__array_namespace__()
    >>> xp is ht
    True
    """
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(
            f"api_version must be None or one of {API_VERSIONS}, but was {api_version!r}"
        )
    return importlib.import_module(__name__.rsplit(".", 2)[0])


def _repr(self) -> str:
    return printing.array_repr(self)


def _str(self) -> str:
    return printing.array_str(self)


def _getitem(self, key) -> DNDarray:
    """``self[key]``: NumPy's basic and advanced indexing (see :func:`heat.core.indexing.getitem`)."""
    return indexing.getitem(self, key)


def _setitem(self, key, value) -> None:
    """``self[key] = value`` (see :func:`heat.core.indexing.setitem`)."""
    indexing.setitem(self, key, value)


# ------------------------------------------------------------------------------------------------
# layout changes in place
# ------------------------------------------------------------------------------------------------
def _balance_(self: DNDarray) -> DNDarray:
    """
    Redistribute in place to the default balanced layout (one collective).

    Examples
    --------
    >>> x = ht.arange(10, split=0); x.balance_().balanced
    True
    """
    layout.balance_(self)
    return self


def _redistribute_(
    self: DNDarray,
    lshape_map: Optional[torch.Tensor] = None,
    target_map: Optional[torch.Tensor] = None,
) -> DNDarray:
    """
    Redistribute in place so that the local shapes match ``target_map`` (a
    ``(comm.size, ndim)`` tensor, as :attr:`lshape_map`); one all-to-all.

    Parameters
    ----------
    lshape_map : torch.Tensor, optional
        The current local shapes of all processes, as :attr:`lshape_map`, if the caller
        knows them: used instead of gathering them (the same on every process, and it must
        describe the actual layout).
    target_map : torch.Tensor, optional
        The local shapes wanted; default: the balanced layout.

    Raises
    ------
    ValueError
        If a map has the wrong shape or does not add up to the global shape, or
        ``lshape_map`` disagrees with this process's block.

    Examples
    --------
    >>> x = ht.arange(6, split=0)
    >>> target = x.lshape_map.clone(); target[:, 0] = torch.tensor([6] + [0] * (x.comm.size - 1))
    >>> x.redistribute_(target_map=target).lshape  # on rank 0
    (6,)
    """
    layout.redistribute_(self, target_map, lshape_map=lshape_map)
    return self


def _resplit_(self: DNDarray, axis: Optional[int] = None) -> DNDarray:
    """
    Change the split axis in place (see :func:`heat.resplit`).

    Examples
    --------
    >>> x = ht.zeros((4, 6), split=0); x.resplit_(1).split
    1
    """
    layout.resplit_(self, axis)
    return self


# ------------------------------------------------------------------------------------------------
# the data types as constructors: ht.float32(3), ht.int64([1, 2])
# ------------------------------------------------------------------------------------------------
def _new_array_of_type(cls, *value, **kwargs) -> DNDarray:
    if cls._torch_type is None:
        raise TypeError(f"cannot create an array of the abstract data type '{cls.__name__}'")
    if len(value) > 1:
        raise TypeError(
            f"{cls.__name__}() takes at most 1 positional argument, value ({len(value)} given)"
        )
    return factories.array(value[0] if value else 0, dtype=cls, **kwargs)


# ------------------------------------------------------------------------------------------------
# in-place methods (HeAT's x.add_(y), x.exp_(), ...): heat.<function>(self, ..., out=self)
# ------------------------------------------------------------------------------------------------
# method name -> heat function; binary ones take ``other`` (broadcast to self's shape, aligned to
# self's layout as ``x += y`` does), unary ones nothing
_IN_PLACE_BINARY = {
    "add_": "add",
    "sub_": "subtract",
    "subtract_": "subtract",
    "mul_": "multiply",
    "multiply_": "multiply",
    "div_": "divide",
    "divide_": "divide",
    "true_divide_": "divide",
    "floordiv_": "floor_divide",
    "floor_divide_": "floor_divide",
    "pow_": "pow",
    "power_": "pow",
    "mod_": "remainder",
    "remainder_": "remainder",
    "fmod_": "fmod",
    "bitwise_and_": "bitwise_and",
    "bitwise_or_": "bitwise_or",
    "bitwise_xor_": "bitwise_xor",
    "left_shift_": "left_shift",
    "bitwise_left_shift_": "left_shift",
    "right_shift_": "right_shift",
    "bitwise_right_shift_": "right_shift",
    "copysign_": "copysign",
    "hypot_": "hypot",
    "gcd_": "gcd",
    "lcm_": "lcm",
    "arctan2_": "arctan2",
    "atan2_": "arctan2",
}
_IN_PLACE_UNARY = {
    "neg_": "neg",
    "negative_": "neg",
    "pos_": "pos",
    "positive_": "pos",
    "abs_": "abs",
    "absolute_": "abs",
    "invert_": "bitwise_not",
    "bitwise_not_": "bitwise_not",
    "bitwise_invert_": "bitwise_not",
    "reciprocal_": "reciprocal",
    "exp_": "exp",
    "expm1_": "expm1",
    "exp2_": "exp2",
    "log_": "log",
    "log2_": "log2",
    "log10_": "log10",
    "log1p_": "log1p",
    "sqrt_": "sqrt",
    "square_": "square",
    "sin_": "sin",
    "cos_": "cos",
    "tan_": "tan",
    "arcsin_": "arcsin",
    "arccos_": "arccos",
    "arctan_": "arctan",
    "sinh_": "sinh",
    "cosh_": "cosh",
    "tanh_": "tanh",
    "arcsinh_": "arcsinh",
    "arccosh_": "arccosh",
    "arctanh_": "arctanh",
    "ceil_": "ceil",
    "floor_": "floor",
    "trunc_": "trunc",
    "sign_": "sign",
}

_INTEGER_FUNCTIONS = frozenset(
    (
        "bitwise_and",
        "bitwise_or",
        "bitwise_xor",
        "bitwise_not",
        "left_shift",
        "right_shift",
        "gcd",
        "lcm",
    )
)


def _in_place_doc(name: str, function: Callable, binary: bool) -> str:
    """The docstring of the in-place method ``name`` that calls ``function``."""
    operands, argument = ("self, other", "2") if binary else ("self", "")
    dtype = "int64" if function.__name__ in _INTEGER_FUNCTIONS else "float32"
    other = (
        """

    ``other`` (a DNDarray, scalar or array-like) is broadcast to ``self``'s shape; an array split
    along another axis is aligned to ``self``'s layout, as for the augmented assignments
    (``x += y``).
"""
        if binary
        else " No communication.\n"
    )
    parameters = (
        """
    Parameters
    ----------
    other : DNDarray, scalar or array-like
"""
        if binary
        else ""
    )
    value_error = (
        """    ValueError
        If ``other`` does not broadcast to ``self``'s shape.
"""
        if binary
        else ""
    )
    return f"""
    In place: ``heat.{function.__name__}({operands}, out=self)``; returns ``self``.{other}
    The result is written into ``self``'s local blocks and ``self`` is returned, so its dtype,
    shape and layout stay. As NumPy's ``out=`` (casting rule ``'same_kind'``), a result that
    cannot be cast to ``self``'s dtype raises TypeError before anything is written (e.g. a
    floating result for an integer array).
{parameters}
    Returns
    -------
    DNDarray
        ``self``.

    Raises
    ------
    TypeError
        If the result cannot be cast to ``self``'s dtype, or an operand has an unsupported type.
{value_error}
    Examples
    --------
    >>> x = ht.ones(3, dtype=ht.{dtype}, split=0)
    >>> x.{name}({argument}) is x
    True
    """


def _in_place_binary(name: str, function: Callable) -> Callable:
    def method(self, other):
        function(self, other, out=self)
        return self

    return _named(method, name, _in_place_doc(name, function, binary=True))


def _in_place_unary(name: str, function: Callable) -> Callable:
    def method(self):
        function(self, out=self)
        return self

    return _named(method, name, _in_place_doc(name, function, binary=False))


def _clip_(self, min=None, max=None, *, a_min=None, a_max=None) -> DNDarray:
    """
    In place: ``heat.clip(self, min, max, out=self)``; returns ``self``.

    Parameters
    ----------
    min, max : scalar, DNDarray, array-like or None
        The bounds (see :func:`heat.clip`); ``a_min``/``a_max`` are accepted as keywords.

    Raises
    ------
    TypeError
        If the result (the promotion of ``self`` and the bounds) cannot be cast to ``self``'s
        dtype under ``'same_kind'`` casting, e.g. float bounds for an integer array.

    Examples
    --------
    >>> x = ht.arange(6, split=0)
    >>> x.clip_(1, 3)
    DNDarray([1, 1, 2, 3, 3, 3], dtype=ht.int64, device=cpu:0, split=0)
    """
    rounding.clip(self, min, max, out=self, a_min=a_min, a_max=a_max)
    return self


def _nan_to_num_(self, nan: float = 0.0, posinf=None, neginf=None) -> DNDarray:
    """
    In place: ``heat.nan_to_num(self, copy=False, ...)``; returns ``self``. No communication.

    Examples
    --------
    >>> x = ht.array([float("nan"), 1.0, -float("inf")], split=0)
    >>> x.nan_to_num_(neginf=-9.0)
    DNDarray([ 0.,  1., -9.], dtype=ht.float32, device=cpu:0, split=0)
    """
    arithmetics.nan_to_num(self, copy=False, nan=nan, posinf=posinf, neginf=neginf)
    return self


def _cumsum_(self, axis: Optional[int] = None) -> DNDarray:
    """
    In place: ``heat.cumsum(self, axis, out=self)``; returns ``self``. Accumulated as
    :func:`heat.cumsum` does (bool and small integer types in int64), then cast back to
    ``self``'s dtype, as NumPy's ``np.cumsum(x, axis, out=x)``. ``axis=None`` needs a 1-D array.

    Examples
    --------
    >>> x = ht.arange(1, 5, split=0)
    >>> x.cumsum_(0)
    DNDarray([ 1,  3,  6, 10], dtype=ht.int64, device=cpu:0, split=0)
    """
    arithmetics.cumsum(self, axis, out=self)
    return self


def _cumprod_(self, axis: Optional[int] = None) -> DNDarray:
    """
    In place: ``heat.cumprod(self, axis, out=self)``; returns ``self`` (see :meth:`cumsum_`).

    Examples
    --------
    >>> x = ht.arange(1, 5, split=0)
    >>> x.cumprod_(0)
    DNDarray([ 1,  2,  6, 24], dtype=ht.int64, device=cpu:0, split=0)
    """
    arithmetics.cumprod(self, axis, out=self)
    return self


def _round_(self, decimals: int = 0) -> DNDarray:
    """
    In place: ``heat.round(self, decimals, out=self)``; returns ``self``.

    Examples
    --------
    >>> x = ht.array([0.5, 1.5, 2.26], split=0)
    >>> x.round_(1)
    DNDarray([0.5, 1.5, 2.3], dtype=ht.float32, device=cpu:0, split=0)
    """
    rounding.round(self, decimals, out=self)
    return self


def _in_place_methods(namespace: Dict[str, Callable]) -> Dict[str, Callable]:
    """Every in-place method whose heat function ``namespace`` holds."""
    methods: Dict[str, Callable] = {}
    for table, build in ((_IN_PLACE_BINARY, _in_place_binary), (_IN_PLACE_UNARY, _in_place_unary)):
        for name, function_name in table.items():
            function = namespace.get(function_name)
            if callable(function):
                methods[name] = build(name, function)
    for name, method in (
        ("clip_", _clip_),
        ("nan_to_num_", _nan_to_num_),
        ("cumsum_", _cumsum_),
        ("cumprod_", _cumprod_),
        ("round_", _round_),
    ):
        methods[name] = _named(method, name, method.__doc__)
    methods["cumproduct_"] = _cumprod_
    return methods


# ------------------------------------------------------------------------------------------------
# installation
# ------------------------------------------------------------------------------------------------
def install(namespace: Dict[str, Callable]) -> None:
    """
    Install the family-backed methods and operators on DNDarray, and make the heat data types
    constructors of arrays.

    Called once by ``heat.core`` after every family is imported. ``namespace`` maps the names in
    ``_METHOD_NAMES`` to the heat functions that become methods (``x.sum()`` is ``ht.sum(x)``);
    attributes the class defines itself are left alone.
    """
    for name in _METHOD_NAMES:
        function = namespace.get(name)
        if callable(function) and name not in DNDarray.__dict__:
            setattr(DNDarray, name, function)
    methods: Dict[str, Optional[Callable]] = {
        "__divmod__": _divmod,
        "__rdivmod__": _rdivmod,
        "__invert__": _invert,
        "__neg__": _neg,
        "__pos__": _pos,
        "__abs__": _abs,
        "__array_namespace__": _array_namespace,
        "transpose": _transpose,
        "balance_": _balance_,
        "redistribute_": _redistribute_,
        "resplit_": _resplit_,
        "__repr__": _repr,
        "__str__": _str,
        "__getitem__": _getitem,
        "__setitem__": _setitem,
        "get_halo": halos.get_halo,
        "is_distributed": halos.is_distributed,
        **_operators(),
        **_in_place_methods(namespace),
    }
    for name, method in methods.items():
        setattr(DNDarray, name, method)
    # NumPy's and torch's functions on DNDarrays call heat's (see heat.core._interop)
    DNDarray.__array_ufunc__ = _interop.array_ufunc
    DNDarray.__array_function__ = _interop.array_function
    DNDarray.__torch_function__ = classmethod(_interop.torch_function)
    DNDarray.T = property(_transposed)
    DNDarray.mT = property(_matrix_transposed)
    DNDarray.real = property(_real)
    DNDarray.imag = property(_imag)
    DNDarray.halo_prev = property(halos.halo_prev)
    DNDarray.halo_next = property(halos.halo_next)
    DNDarray.array_with_halos = property(halos.array_with_halos)
    DNDarray.__partitioned__ = property(partition.partitioned)
    types.datatype.__new__ = staticmethod(_new_array_of_type)
