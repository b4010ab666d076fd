"""
Heat data types, type conversion and type promotion.

Heat dtypes are classes. The abstract classes form a hierarchy modelled on NumPy's::

    datatype
    ├── bool                                  (concrete, also exported as ``bool_``)
    └── number
        ├── integer
        │   ├── signedinteger                 int8, int16, int32, int64
        │   └── unsignedinteger               uint8, uint16, uint32, uint64
        ├── floating                          float16, bfloat16, float32, float64
        └── complexfloating                   complex64, complex128

Calling a concrete type builds a :class:`~heat.core.dndarray.DNDarray` of that type:
``ht.float32([1, 2])`` is ``ht.array([1, 2], dtype=ht.float32)``, and ``ht.int64()`` is a zero
scalar array of type int64.

Every concrete type has the classmethods ``torch_type()`` (the ``torch.dtype``), ``char()`` (the
NumPy character code, ``None`` for bfloat16) and ``numpy_type()`` (the ``numpy.dtype``, ``None``
for bfloat16).

uint16, uint32 and uint64 are stored as torch's ``uint16``/``uint32``/``uint64`` tensors (so
memory, MPI messages, NumPy and HDF5 round trips keep the exact type), but torch computes on them
only partly: the engines of :mod:`heat.core._operations` compute uint16 in int32, uint32 in int64
(cast back, wrapping modulo 2**k as NumPy does) and uint64 on its bits read as int64, with
unsigned implementations of what two's complement gets wrong (ordering, division, right shift).

Aliases
-------
=============  ==========  ===========================================================
alias          heat type   note
=============  ==========  ===========================================================
``bool_``      bool        as NumPy
``ubyte``      uint8       as NumPy
``ushort``     uint16      as NumPy
``uintc``      uint32      as NumPy
``ulonglong``  uint64      as NumPy
``byte``       int8        as NumPy
``short``      int16       as NumPy and torch
``int``        int32       as torch (``torch.int``); NumPy's ``int`` is int64
``int_``       int64       as NumPy
``long``       int64       as torch and NumPy
``half``       float16     as NumPy and torch
``float``      float32     as torch (``torch.float``); NumPy's ``float`` is float64
``float_``     float32     as HeAT (NumPy 1.x's ``float_`` was float64)
``double``     float64     as NumPy and torch
``cfloat``     complex64   as torch (``torch.cfloat``)
``csingle``    complex64   as NumPy
``cdouble``    complex128  as NumPy and torch
``complex``    complex64   heat's default complex type
=============  ==========  ===========================================================

Strings
-------
:func:`canonical_heat_type` accepts the name of any heat type or alias (``"float32"``,
``"bfloat16"``, ``"double"``; so ``"int"`` is int32 and ``"float"`` is float32, the same as
``ht.int`` and ``ht.float``) and every string NumPy understands as one of the supported types
(``"f4"``, ``"<f4"``, ``"i8"``, ``"?"``, ``"complex128"``, ...).

Defaults
--------
Python scalars and Python types map to the heat defaults: ``bool -> bool``, ``int -> int64``,
``float -> float32``, ``complex -> complex64`` (the torch/HeAT convention; NumPy uses float64 and
complex128).

Promotion
---------
:func:`promote_types` follows NumPy's table (``numpy.promote_types``) for every pair of types NumPy
has. bfloat16, which NumPy lacks, follows torch:

* ``bfloat16 + bfloat16 -> bfloat16``;
* ``bfloat16 + bool / any integer type -> bfloat16`` (bfloat16 has the exponent range of
  float32, so no integer type overflows it);
* ``bfloat16 + float16 -> float32``, ``bfloat16 + float32 -> float32``,
  ``bfloat16 + float64 -> float64``;
* ``bfloat16 + complex64 -> complex64``, ``bfloat16 + complex128 -> complex128``.

:func:`result_type` implements NumPy 2's rules (NEP 50): arrays, NumPy scalars and types are
"strong"; Python scalars (``bool``, ``int``, ``float``, ``complex`` values) are "weak" and can only
raise the *kind* of the result (bool < integer < floating < complex). Where a weak scalar raises
the kind, the result is the one NumPy gives (e.g. ``int8`` array + ``3.0`` -> float64,
``float16`` array + ``1j`` -> complex64, ``bool`` array + ``3`` -> int64). Only when *all*
operands are Python scalars do heat's defaults apply (``result_type(1.5) -> float32``).

Functions that turn integers into floating point numbers (``exp``, ``true_divide``, ``mean``)
use :func:`float_type_for`, i.e. NumPy's ``promote_types(t, float16)``.
"""

from __future__ import annotations

import builtins
import collections.abc
from typing import Any, Optional, Tuple, Type

import numpy as np
import torch

from . import devices

# The module defines heat types called ``bool``, ``int``, ``float`` and ``complex``; the Python
# builtins are used through these names everywhere below.
_PY_BOOL = builtins.bool
_PY_INT = builtins.int
_PY_FLOAT = builtins.float
_PY_COMPLEX = builtins.complex
_PY_SCALAR_TYPES = (_PY_BOOL, _PY_INT, _PY_FLOAT, _PY_COMPLEX)

__all__ = [
    # abstract types
    "datatype",
    "number",
    "integer",
    "signedinteger",
    "unsignedinteger",
    "floating",
    "complexfloating",
    "flexible",
    # concrete types
    "bool",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    # aliases
    "bool_",
    "ubyte",
    "ushort",
    "uintc",
    "ulonglong",
    "byte",
    "short",
    "int",
    "int_",
    "long",
    "half",
    "float",
    "float_",
    "double",
    "cfloat",
    "csingle",
    "cdouble",
    "complex",
    # functions and classes
    "canonical_heat_type",
    "heat_type_of",
    "promote_types",
    "result_type",
    "can_cast",
    "issubdtype",
    "finfo",
    "iinfo",
    "heat_type_is_exact",
    "heat_type_is_inexact",
    "heat_type_is_realfloating",
    "heat_type_is_complexfloating",
    "float_type_for",
    "complex_type_for",
    "real_type_of",
    # the array API standard's inspection
    "isdtype",
    "__array_namespace_info__",
]


# ----------------------------------------------------------------------------------------------
# the type classes
# ----------------------------------------------------------------------------------------------
class _DataTypeMeta(type):
    """
    The type of heat's type classes. A concrete heat type compares equal to the NumPy dtype and
    the NumPy scalar type it stands for (``ht.float64 == np.float64``,
    ``ht.float64 == np.dtype("float64")``, either way round), so that NumPy habits such as
    ``x.dtype == np.float64`` work, and it has a ``dtype`` attribute (the ``numpy.dtype``),
    NumPy's protocol for "this object stands for a dtype": ``np.dtype(ht.float32)``,
    ``np.zeros(3, dtype=ht.float32)`` and ``np.issubdtype(ht.int8, np.integer)`` work too.

    The hash of a concrete type is that of its NumPy dtype, so equal objects hash alike where
    NumPy's do: a heat type finds the entry of its dtype in a dict or set. (NumPy's scalar type
    objects hash differently from their dtypes, in NumPy too, so ``np.float64`` is not found in
    a set of heat types although the two compare equal.) bfloat16, which NumPy lacks, and the
    abstract types equal only themselves.
    """

    def __eq__(cls, other: Any) -> _PY_BOOL:
        if cls is other:
            return True
        if isinstance(other, _DataTypeMeta):
            return False
        numpy_type = cls.__dict__.get("_numpy_type")
        if numpy_type is not None:
            if isinstance(other, np.dtype):
                return _PY_BOOL(other == numpy_type)
            if isinstance(other, type) and issubclass(other, np.generic):
                try:
                    return _PY_BOOL(np.dtype(other) == numpy_type)
                except TypeError:  # an abstract NumPy type: np.floating, np.number, ...
                    return False
        return NotImplemented

    def __hash__(cls) -> _PY_INT:
        numpy_type = cls.__dict__.get("_numpy_type")
        return type.__hash__(cls) if numpy_type is None else hash(numpy_type)

    @property
    def dtype(cls) -> np.dtype:
        """The ``numpy.dtype`` of a concrete type (AttributeError for bfloat16, abstract ones)."""
        numpy_type = cls.__dict__.get("_numpy_type")
        if numpy_type is None:
            raise AttributeError(f"heat type '{cls.__name__}' has no NumPy dtype")
        return numpy_type


class datatype(metaclass=_DataTypeMeta):
    """
    Abstract base class of all heat data types.

    Concrete subclasses (``ht.float32``, ``ht.int64``, ...) are callable: ``ht.float32(obj,
    **kwargs)`` returns ``ht.array(obj, dtype=ht.float32, **kwargs)``. Called without ``obj``
    they return a zero scalar array of their type. Abstract classes cannot be called.

    Parameters
    ----------
    value : array_like, optional
        Data of the new array; a zero scalar if omitted.
    **kwargs
        Passed on to :func:`heat.core.factories.array` (``split``, ``device``, ``comm``, ...).

    Raises
    ------
    TypeError
        If the class is abstract, or if more than one positional argument is given.

    Examples
    --------
    >>> x = ht.float32([1, 2])
    >>> x.dtype, x.shape
    (<class 'heat.core.types.float32'>, (2,))
    >>> z = ht.int64()
    >>> z.dtype, z.shape, z.item()
    (<class 'heat.core.types.int64'>, (), 0)
    """

    # set by the concrete classes
    _torch_type: Optional[torch.dtype] = None
    _numpy_type: Optional[np.dtype] = None

    # calling a concrete type creates an array (ht.float32(3)): that constructor needs the
    # factories, which sit above this module, so heat.core._methods installs it as __new__

    @classmethod
    def torch_type(cls) -> torch.dtype:
        """
        The ``torch.dtype`` of this heat type.

        Raises
        ------
        TypeError
            If the type is abstract.

        Examples
        --------
        >>> ht.float32.torch_type()
        torch.float32
        """
        if cls._torch_type is None:
            raise TypeError(f"the abstract data type '{cls.__name__}' has no torch type")
        return cls._torch_type

    @classmethod
    def numpy_type(cls) -> Optional[np.dtype]:
        """
        The ``numpy.dtype`` of this heat type; ``None`` for bfloat16, which NumPy lacks.

        Raises
        ------
        TypeError
            If the type is abstract.

        Examples
        --------
        >>> ht.int16.numpy_type()
        dtype('int16')
        >>> ht.bfloat16.numpy_type() is None
        True
        """
        if cls._torch_type is None:
            raise TypeError(f"the abstract data type '{cls.__name__}' has no NumPy type")
        return cls._numpy_type

    @classmethod
    def char(cls) -> Optional[str]:
        """
        The NumPy character code of this heat type; ``None`` for bfloat16.

        Raises
        ------
        TypeError
            If the type is abstract.

        Examples
        --------
        >>> ht.float32.char()
        'f'
        >>> ht.complex128.char()
        'D'
        """
        numpy_type = cls.numpy_type()
        return None if numpy_type is None else numpy_type.char


class bool(datatype):
    """Boolean (True or False), stored as one byte. Also exported as ``bool_``."""

    _torch_type = torch.bool
    _numpy_type = np.dtype(np.bool_)


class number(datatype):
    """Abstract base class of all numeric types."""


class integer(number):
    """Abstract base class of the integer types."""


class signedinteger(integer):
    """Abstract base class of the signed integer types."""


class unsignedinteger(integer):
    """Abstract base class of the unsigned integer types."""


class floating(number):
    """Abstract base class of the real floating point types."""


class complexfloating(number):
    """Abstract base class of the complex floating point types."""


class flexible(datatype):
    """
    Abstract base class of the flexible-size types (NumPy's ``np.flexible``: strings and
    ``void``). heat has no such type, so no heat type derives from it; it exists for type tests
    that name it (HeAT 1.8 had it as a placeholder, too).

    Examples
    --------
    >>> ht.issubdtype(ht.float32, ht.flexible)
    False
    >>> ht.issubdtype(ht.flexible, ht.number)
    False
    """


class uint8(unsignedinteger):
    """8-bit unsigned integer (0 to 255). Alias ``ubyte``."""

    _torch_type = torch.uint8
    _numpy_type = np.dtype(np.uint8)


class uint16(unsignedinteger):
    """16-bit unsigned integer (0 to 65535). Alias ``ushort``; computed in int32."""

    _torch_type = torch.uint16
    _numpy_type = np.dtype(np.uint16)


class uint32(unsignedinteger):
    """32-bit unsigned integer (0 to 4294967295). Alias ``uintc``; computed in int64."""

    _torch_type = torch.uint32
    _numpy_type = np.dtype(np.uint32)


class uint64(unsignedinteger):
    """
    64-bit unsigned integer (0 to 18446744073709551615). Alias ``ulonglong``; computed on its bits
    read as int64 where two's complement gives the same bits, by unsigned algorithms elsewhere.
    """

    _torch_type = torch.uint64
    _numpy_type = np.dtype(np.uint64)


class int8(signedinteger):
    """8-bit signed integer (-128 to 127). Alias ``byte``."""

    _torch_type = torch.int8
    _numpy_type = np.dtype(np.int8)


class int16(signedinteger):
    """16-bit signed integer. Alias ``short``."""

    _torch_type = torch.int16
    _numpy_type = np.dtype(np.int16)


class int32(signedinteger):
    """32-bit signed integer. Alias ``int``."""

    _torch_type = torch.int32
    _numpy_type = np.dtype(np.int32)


class int64(signedinteger):
    """64-bit signed integer. Aliases ``int_``, ``long``."""

    _torch_type = torch.int64
    _numpy_type = np.dtype(np.int64)


class float16(floating):
    """IEEE half precision float (5 exponent bits, 10 mantissa bits). Alias ``half``."""

    _torch_type = torch.float16
    _numpy_type = np.dtype(np.float16)


class bfloat16(floating):
    """Brain float (8 exponent bits, 7 mantissa bits); has no NumPy equivalent."""

    _torch_type = torch.bfloat16
    _numpy_type = None


class float32(floating):
    """IEEE single precision float. Aliases ``float``, ``float_``."""

    _torch_type = torch.float32
    _numpy_type = np.dtype(np.float32)


class float64(floating):
    """IEEE double precision float. Alias ``double``."""

    _torch_type = torch.float64
    _numpy_type = np.dtype(np.float64)


class complex64(complexfloating):
    """Complex number of two float32. Aliases ``complex``, ``cfloat``, ``csingle``."""

    _torch_type = torch.complex64
    _numpy_type = np.dtype(np.complex64)


class complex128(complexfloating):
    """Complex number of two float64. Alias ``cdouble``."""

    _torch_type = torch.complex128
    _numpy_type = np.dtype(np.complex128)


# ----------------------------------------------------------------------------------------------
# aliases
# ----------------------------------------------------------------------------------------------
bool_ = bool
ubyte = uint8
ushort = uint16
uintc = uint32
ulonglong = uint64
byte = int8
short = int16
int = int32
int_ = int64
long = int64
half = float16
float = float32
float_ = float32
double = float64
cfloat = complex64
csingle = complex64
cdouble = complex128
complex = complex64

HeatType = Type[datatype]

_CONCRETE_TYPES: Tuple[HeatType, ...] = (
    bool,
    uint8,
    uint16,
    uint32,
    uint64,
    int8,
    int16,
    int32,
    int64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
)
_CONCRETE_SET = frozenset(_CONCRETE_TYPES)

# defaults for Python scalars and Python types
_PY_DEFAULTS = {_PY_BOOL: bool, _PY_INT: int64, _PY_FLOAT: float32, _PY_COMPLEX: complex64}

# ----------------------------------------------------------------------------------------------
# lookup tables for canonical_heat_type
# ----------------------------------------------------------------------------------------------
# hashable non-string objects: torch dtypes, Python types, NumPy dtypes and scalar types
_OBJECT_MAP: dict = dict(_PY_DEFAULTS)
for _t in _CONCRETE_TYPES:
    _OBJECT_MAP[_t.torch_type()] = _t
    if _t.numpy_type() is not None:
        _OBJECT_MAP[_t.numpy_type()] = _t
        _OBJECT_MAP[_t.numpy_type().type] = _t

# NumPy dtypes by (kind, itemsize): catches byte-swapped dtypes and platform duplicates
# (e.g. 'q' and 'l' are both int64 on Linux)
_KIND_SIZE_MAP = {
    (_t.numpy_type().kind, _t.numpy_type().itemsize): _t
    for _t in _CONCRETE_TYPES
    if _t.numpy_type() is not None
}

# names of heat types and aliases; these take precedence over NumPy's reading of a string
_NAME_MAP = {_t.__name__: _t for _t in _CONCRETE_TYPES}
_NAME_MAP.update(
    {
        "bool_": bool_,
        "ubyte": ubyte,
        "ushort": ushort,
        "uintc": uintc,
        "ulonglong": ulonglong,
        "byte": byte,
        "short": short,
        "int": int,
        "int_": int_,
        "long": long,
        "half": half,
        "float": float,
        "float_": float_,
        "double": double,
        "cfloat": cfloat,
        "csingle": csingle,
        "cdouble": cdouble,
        "complex": complex,
    }
)
del _t


def canonical_heat_type(a_type: Any) -> HeatType:
    """
    The concrete heat type that ``a_type`` denotes.

    Parameters
    ----------
    a_type : heat type, torch.dtype, numpy.dtype, NumPy scalar type, Python type or str
        Python types map to the heat defaults (``bool -> bool``, ``int -> int64``,
        ``float -> float32``, ``complex -> complex64``). Strings may name a heat type or alias
        (``"float32"``, ``"double"``, ``"int"`` is int32) or be any NumPy type string of a
        supported type (``"f4"``, ``"<f4"``, ``"i8"``, ``"?"``).

    Returns
    -------
    heat type
        One of the concrete heat types.

    Raises
    ------
    TypeError
        If ``a_type`` is abstract, denotes a type heat does not support (float128,
        strings, objects, ...) or is not a type at all.

    Examples
    --------
    >>> ht.core.types.canonical_heat_type(torch.float32)
    <class 'heat.core.types.float32'>
    >>> ht.core.types.canonical_heat_type("i8")
    <class 'heat.core.types.int64'>
    >>> ht.core.types.canonical_heat_type(float)
    <class 'heat.core.types.float32'>
    >>> ht.core.types.canonical_heat_type(np.dtype(">c16"))
    <class 'heat.core.types.complex128'>
    """
    # fast path: already a concrete heat type
    if isinstance(a_type, type) and issubclass(a_type, datatype):
        if a_type in _CONCRETE_SET:
            return a_type
        raise TypeError(f"data type '{a_type.__name__}' not understood: it is abstract")

    if isinstance(a_type, str):
        heat_type = _NAME_MAP.get(a_type.strip())
        if heat_type is not None:
            return heat_type
    else:
        try:
            heat_type = _OBJECT_MAP.get(a_type)
        except TypeError:  # unhashable
            heat_type = None
        if heat_type is not None:
            return heat_type

    # anything else NumPy can read: strings, NumPy scalar types, numpy.dtype objects
    if isinstance(a_type, (str, type, np.dtype)):
        try:
            numpy_dtype = np.dtype(a_type)
        except (TypeError, ValueError):
            numpy_dtype = None
        if numpy_dtype is not None:
            heat_type = _KIND_SIZE_MAP.get((numpy_dtype.kind, numpy_dtype.itemsize))
            if heat_type is not None and numpy_dtype.fields is None:
                return heat_type
            if numpy_dtype.name == "bfloat16":  # e.g. ml_dtypes.bfloat16
                return bfloat16

    raise TypeError(f"data type '{a_type}' not understood")


def _as_heat_type(obj: Any) -> HeatType:
    """A type argument (anything canonical_heat_type accepts) or a value (DNDarray, tensor, ...)."""
    if isinstance(obj, type) and issubclass(obj, datatype):
        return canonical_heat_type(obj)
    if isinstance(obj, (str, type, np.dtype, torch.dtype)):
        return canonical_heat_type(obj)
    return heat_type_of(obj)


# ----------------------------------------------------------------------------------------------
# type of a value
# ----------------------------------------------------------------------------------------------
def _collect_sequence_types(sequence: Any, python_kinds: set, strong_types: set) -> None:
    """
    Gather the kinds of the Python scalars (0 bool ... 3 complex) and the heat types of all other
    leaves of a nested sequence.
    """
    has_other = False
    for element_type in set(map(type, sequence)):
        kind = _WEAK_KIND.get(element_type)
        if kind is not None:
            python_kinds.add(kind)
        else:
            has_other = True
    if not has_other:
        return
    for element in sequence:
        if type(element) in _WEAK_KIND:
            continue
        if _is_nested_sequence(element):
            _collect_sequence_types(element, python_kinds, strong_types)
        else:
            kind = _weak_kind(element)
            if kind is not None:
                python_kinds.add(kind)
            else:
                strong_types.add(heat_type_of(element))


def _is_nested_sequence(obj: Any) -> _PY_BOOL:
    return isinstance(obj, (list, tuple)) or (
        isinstance(obj, collections.abc.Sequence)
        and not isinstance(obj, (str, bytes, bytearray, memoryview))
    )


def heat_type_of(obj: Any) -> HeatType:
    """
    The heat type of a value.

    Parameters
    ----------
    obj : DNDarray, torch.Tensor, numpy.ndarray, NumPy scalar, Python scalar or nested sequence
        * objects with a ``dtype`` attribute (DNDarray, tensors, NumPy arrays and scalars) give
          the heat type of that dtype;
        * Python scalars give the heat defaults: ``bool -> bool``, ``int -> int64``,
          ``float -> float32``, ``complex -> complex64``;
        * nested lists and tuples: the Python scalars among the leaves together count as the
          heat default of their highest kind (``[1, 2.5]`` is float32, ``[True, 2]`` is int64);
          this is promoted (:func:`promote_types`) with the types of the other leaves
          (``[np.float64(1), 2]`` is float64). An empty sequence gives float32.

    Returns
    -------
    heat type

    Raises
    ------
    TypeError
        If ``obj`` is a type (use :func:`canonical_heat_type`), a string, or contains a value
        without a supported heat type.

    Examples
    --------
    >>> ht.core.types.heat_type_of(3)
    <class 'heat.core.types.int64'>
    >>> ht.core.types.heat_type_of([[1, 2], [3, 4.5]])
    <class 'heat.core.types.float32'>
    >>> ht.core.types.heat_type_of(np.arange(3, dtype=np.int16))
    <class 'heat.core.types.int16'>
    >>> ht.core.types.heat_type_of(torch.ones(2, dtype=torch.bfloat16))
    <class 'heat.core.types.bfloat16'>
    """
    if isinstance(obj, type):
        raise TypeError(
            f"heat_type_of expects a value, got the type {obj!r}; use canonical_heat_type for types"
        )
    # DNDarray (duck-typed), tensors, NumPy arrays and scalars; NumPy scalars are checked before
    # Python scalars because np.float64 is a subclass of float
    dtype = getattr(obj, "dtype", None)
    if dtype is not None:
        try:
            return canonical_heat_type(dtype)
        except TypeError:
            raise TypeError(
                f"data type of {type(obj).__name__} object ({dtype}) not understood"
            ) from None

    for py_type, heat_type in _PY_DEFAULTS.items():  # bool is checked before int
        if isinstance(obj, py_type):
            return heat_type

    if _is_nested_sequence(obj):
        python_kinds: set = set()
        strong_types: set = set()
        _collect_sequence_types(obj, python_kinds, strong_types)
        if python_kinds:
            strong_types.add(_WEAK_DEFAULT[max(python_kinds)])
        if not strong_types:
            return float32
        return _promote_all(strong_types)

    raise TypeError(f"data type of {type(obj).__name__} object not understood")


# ----------------------------------------------------------------------------------------------
# promotion
# ----------------------------------------------------------------------------------------------
# smallest float / complex type that holds every value of an integer type (NumPy's choice)
_INT_TO_FLOAT = {
    bool: float16,
    uint8: float16,
    uint16: float32,
    uint32: float64,
    uint64: float64,
    int8: float16,
    int16: float32,
    int32: float64,
    int64: float64,
}
_FLOAT_TO_COMPLEX = {
    float16: complex64,
    bfloat16: complex64,
    float32: complex64,
    float64: complex128,
}
_COMPLEX_TO_FLOAT = {complex64: float32, complex128: float64}
# the smallest type that holds every value of an unsigned type and every signed value
_SIGNED_WIDER = {uint8: int16, uint16: int32, uint32: int64, uint64: float64}


def _bits(heat_type: HeatType) -> _PY_INT:
    return heat_type.torch_type().itemsize * 8


def _kind_rank(heat_type: HeatType) -> _PY_INT:
    """NumPy's kind order, used for 'same_kind' casting: b < u < i < f < c."""
    if heat_type is bool:
        return 0
    if issubclass(heat_type, unsignedinteger):
        return 1
    if issubclass(heat_type, signedinteger):
        return 2
    if issubclass(heat_type, floating):
        return 3
    return 4


def _promote_pair(a: HeatType, b: HeatType) -> HeatType:
    """The promotion rules themselves; promote_types reads them from a precomputed table."""
    if a is b:
        return a
    if a is bool:
        return b
    if b is bool:
        return a
    if _kind_rank(a) > _kind_rank(b):
        a, b = b, a
    ka, kb = _kind_rank(a), _kind_rank(b)
    if kb <= 2:  # two integer types
        if ka == kb:
            return a if _bits(a) >= _bits(b) else b
        # unsigned a with signed b: b if it holds every value of a, else the next wider signed
        # type; none holds uint64 (NumPy gives float64)
        if _bits(b) > _bits(a):
            return b
        return _SIGNED_WIDER[a]
    if kb == 3:  # b floating, a integer or floating
        if ka <= 2:
            if b is bfloat16:  # torch's rule: bfloat16 absorbs every integer type
                return bfloat16
            needed = _INT_TO_FLOAT[a]
            return needed if _bits(needed) > _bits(b) else b
        if bfloat16 in (a, b):  # a, b are different floats
            other = b if a is bfloat16 else a
            return float32 if other is float16 else other
        return a if _bits(a) >= _bits(b) else b
    # b complex
    if ka == 4:
        return a if _bits(a) >= _bits(b) else b
    needed = _FLOAT_TO_COMPLEX[_INT_TO_FLOAT[a] if ka <= 2 else a]
    return needed if _bits(needed) > _bits(b) else b


_PROMOTION_TABLE = {(a, b): _promote_pair(a, b) for a in _CONCRETE_TYPES for b in _CONCRETE_TYPES}


def _promote_all(heat_types) -> HeatType:
    """
    Promote several concrete heat types as ``numpy.result_type`` does: independent of their order.

    Pairwise promotion is not associative (``(uint8 + int8) + float16`` is float32, but
    ``float16`` absorbs both integer types), so NumPy first picks the most generic type and
    promotes every other type into it; folding from the highest kind and largest size does that.
    """
    ordered = sorted(set(heat_types), key=lambda t: (_kind_rank(t), _bits(t), t is bfloat16))
    result = ordered.pop()
    while ordered:
        result = _PROMOTION_TABLE[result, ordered.pop()]
    return result


def promote_types(type1: Any, type2: Any) -> HeatType:
    """
    The smallest heat type to which both ``type1`` and ``type2`` can be safely cast.

    Follows ``numpy.promote_types`` for all types NumPy has; bfloat16 follows torch (see the module
    docstring): ``bfloat16 + float16 -> float32``, ``bfloat16 + int64 -> bfloat16``.
    The operation is symmetric.

    Parameters
    ----------
    type1, type2 : type specifiers
        Anything :func:`canonical_heat_type` accepts.

    Returns
    -------
    heat type

    Raises
    ------
    TypeError
        If an argument is not a supported type.

    Examples
    --------
    >>> ht.promote_types(ht.uint8, ht.int8)
    <class 'heat.core.types.int16'>
    >>> ht.promote_types("i4", ht.float32)
    <class 'heat.core.types.float64'>
    >>> ht.promote_types(ht.bfloat16, ht.float16)
    <class 'heat.core.types.float32'>
    """
    try:
        return _PROMOTION_TABLE[type1, type2]
    except (KeyError, TypeError):
        pass
    return _PROMOTION_TABLE[canonical_heat_type(type1), canonical_heat_type(type2)]


# weak Python scalar kinds: 0 bool, 1 integer, 2 floating, 3 complex
_WEAK_KIND = {_PY_BOOL: 0, _PY_INT: 1, _PY_FLOAT: 2, _PY_COMPLEX: 3}
_WEAK_DEFAULT = (bool, int64, float32, complex64)


def _weak_kind(obj: Any) -> Optional[_PY_INT]:
    """The kind of a Python scalar value, None for anything else (NumPy scalars included)."""
    kind = _WEAK_KIND.get(type(obj))
    if kind is not None:
        return kind
    if isinstance(obj, _PY_SCALAR_TYPES) and not isinstance(obj, np.generic):
        for py_type, kind in _WEAK_KIND.items():  # subclasses, e.g. enum.IntEnum
            if isinstance(obj, py_type):
                return kind
    return None


def _apply_weak_kind(strong: HeatType, weak_kind: _PY_INT) -> HeatType:
    """NumPy 2 (NEP 50): the result of a strong type combined with a weak Python scalar."""
    if strong is bool:
        strong_kind = 0
    elif issubclass(strong, integer):
        strong_kind = 1
    elif issubclass(strong, floating):
        strong_kind = 2
    else:
        strong_kind = 3
    if weak_kind <= strong_kind:
        return strong
    if weak_kind == 1:  # Python int with a bool array
        return int64
    if weak_kind == 2:  # Python float with a bool or integer array: NumPy's default float
        return float64
    # Python complex
    if strong_kind == 2:
        return _FLOAT_TO_COMPLEX[strong]
    return complex128


def result_type(*arrays_and_types: Any) -> HeatType:
    """
    The heat type that results from applying type promotion to the arguments.

    Implements NumPy 2's promotion (NEP 50). Types, DNDarrays, tensors, NumPy arrays, NumPy
    scalars and sequences are "strong" and promoted with :func:`promote_types`, independently of
    their order, as NumPy does (``result_type(uint8, int8, float16)`` is float16 although
    ``promote_types(promote_types(uint8, int8), float16)`` is float32). Python scalars
    (``bool``, ``int``, ``float``, ``complex`` values) are "weak": they do not change the result
    unless they raise its kind (bool < integer < floating < complex), and then the result is what
    NumPy gives, e.g. ``int8`` + ``3.0`` -> float64, ``float32`` + ``1j`` -> complex64,
    ``bool`` + ``3`` -> int64. If all arguments are Python scalars, the heat default of the
    highest kind is returned (bool, int64, float32, complex64).

    Parameters
    ----------
    *arrays_and_types : types, arrays or scalars
        At least one.

    Returns
    -------
    heat type

    Raises
    ------
    TypeError
        If an argument has no supported heat type.
    ValueError
        If no argument is given.

    Examples
    --------
    >>> ht.result_type(ht.int8, 3)
    <class 'heat.core.types.int8'>
    >>> ht.result_type(ht.int8, 3.0)
    <class 'heat.core.types.float64'>
    >>> ht.result_type(ht.float16, 1j)
    <class 'heat.core.types.complex64'>
    >>> ht.result_type(ht.ones(3, dtype=ht.int16), ht.uint8)
    <class 'heat.core.types.int16'>
    >>> ht.result_type(2, 0.5)
    <class 'heat.core.types.float32'>
    """
    if not arrays_and_types:
        raise ValueError("result_type expects at least one array or type in arrays_and_types")
    strong_types = []
    weak_kind = -1
    for arg in arrays_and_types:
        kind = _weak_kind(arg)
        if kind is not None:
            weak_kind = max(weak_kind, kind)
        else:
            strong_types.append(_as_heat_type(arg))
    if not strong_types:
        return _WEAK_DEFAULT[weak_kind]
    if len(strong_types) == 1:
        strong = strong_types[0]
    elif len(strong_types) == 2:
        strong = _PROMOTION_TABLE[strong_types[0], strong_types[1]]
    else:
        strong = _promote_all(strong_types)
    if weak_kind < 0:
        return strong
    return _apply_weak_kind(strong, weak_kind)


_CASTING_MODES = ("no", "equiv", "safe", "same_kind", "unsafe")


def can_cast(from_: Any, to: Any, casting: str = "safe") -> _PY_BOOL:
    """
    Whether a cast from ``from_`` to ``to`` is allowed under the rule ``casting``.

    The rules are NumPy's:

    * ``"no"``, ``"equiv"``: only to the same type (heat has no byte orders);
    * ``"safe"``: only casts that preserve values, i.e. ``promote_types(from_, to)`` is ``to``
      (as in NumPy, int64 -> float64 counts as safe; by the bfloat16 promotion rule, so does
      every integer type -> bfloat16);
    * ``"same_kind"``: safe casts and casts within or up the kind order
      bool < unsigned < signed < floating < complex (float64 -> float16, uint8 -> int8);
    * ``"unsafe"``: every cast.

    Parameters
    ----------
    from_ : type, DNDarray, tensor, NumPy array or scalar
        A Python scalar is judged by its heat default type (``int -> int64``,
        ``float -> float32``, ...), not by its value. (NumPy 2 refuses Python scalars here.)
    to : type specifier
        Anything :func:`canonical_heat_type` accepts.
    casting : {"no", "equiv", "safe", "same_kind", "unsafe"}, optional

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``from_`` or ``to`` has no supported heat type, or ``casting`` is not a str.
    ValueError
        If ``casting`` is not one of the modes above.

    Examples
    --------
    >>> ht.can_cast(ht.int32, ht.int64)
    True
    >>> ht.can_cast(ht.float64, ht.float32)
    False
    >>> ht.can_cast(ht.float64, ht.float32, casting="same_kind")
    True
    >>> ht.can_cast(2.5, ht.float32)
    True
    """
    if not isinstance(casting, str):
        raise TypeError(f"casting must be a str, but was {type(casting).__name__}")
    if casting not in _CASTING_MODES:
        raise ValueError(f"casting must be one of {_CASTING_MODES}, got {casting!r}")
    from_type = _as_heat_type(from_)
    to_type = canonical_heat_type(to)
    if casting in ("no", "equiv"):
        return from_type is to_type
    if casting == "unsafe":
        return True
    if _PROMOTION_TABLE[from_type, to_type] is to_type:
        return True
    if casting == "same_kind":
        return _kind_rank(from_type) <= _kind_rank(to_type)
    return False


# NumPy's abstract scalar types, for issubdtype
_NUMPY_ABSTRACT = {
    np.generic: datatype,
    np.number: number,
    np.integer: integer,
    np.signedinteger: signedinteger,
    np.unsignedinteger: unsignedinteger,
    np.inexact: (floating, complexfloating),
    np.floating: floating,
    np.complexfloating: complexfloating,
    np.flexible: flexible,
}


def issubdtype(arg1: Any, arg2: Any) -> _PY_BOOL:
    """
    Whether the type ``arg1`` is ``arg2`` or lower in the type hierarchy.

    Parameters
    ----------
    arg1 : type specifier
        A heat type (abstract or concrete) or anything :func:`canonical_heat_type` accepts.
    arg2 : type specifier
        A heat type (abstract or concrete), a NumPy abstract type (``np.floating``, ...) or
        anything :func:`canonical_heat_type` accepts.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If an argument is not a type specifier.

    Examples
    --------
    >>> ht.issubdtype(ht.float32, ht.floating)
    True
    >>> ht.issubdtype(ht.int8, ht.unsignedinteger)
    False
    >>> ht.issubdtype("i4", ht.number)
    True
    >>> ht.issubdtype(ht.float64, ht.float32)
    False
    """

    def as_class(arg):
        if isinstance(arg, type) and issubclass(arg, datatype):
            return arg
        try:
            if arg in _NUMPY_ABSTRACT:
                return _NUMPY_ABSTRACT[arg]
        except TypeError:  # unhashable
            pass
        return canonical_heat_type(arg)

    return issubclass(as_class(arg1), as_class(arg2))


# ----------------------------------------------------------------------------------------------
# type predicates and derived types
# ----------------------------------------------------------------------------------------------
def heat_type_is_exact(ht_dtype: Any) -> _PY_BOOL:
    """
    Whether ``ht_dtype`` is an exact type: bool or an integer type.

    Examples
    --------
    >>> ht.core.types.heat_type_is_exact(ht.int32)
    True
    >>> ht.core.types.heat_type_is_exact(ht.float32)
    False
    """
    return issubclass(canonical_heat_type(ht_dtype), (bool, integer))


def heat_type_is_inexact(ht_dtype: Any) -> _PY_BOOL:
    """
    Whether ``ht_dtype`` is an inexact type: a real or complex floating point type.

    Examples
    --------
    >>> ht.core.types.heat_type_is_inexact(ht.bfloat16)
    True
    >>> ht.core.types.heat_type_is_inexact(ht.uint8)
    False
    """
    return issubclass(canonical_heat_type(ht_dtype), (floating, complexfloating))


def heat_type_is_realfloating(ht_dtype: Any) -> _PY_BOOL:
    """
    Whether ``ht_dtype`` is a real floating point type.

    Examples
    --------
    >>> ht.core.types.heat_type_is_realfloating(ht.float64)
    True
    >>> ht.core.types.heat_type_is_realfloating(ht.complex64)
    False
    """
    return issubclass(canonical_heat_type(ht_dtype), floating)


def heat_type_is_complexfloating(ht_dtype: Any) -> _PY_BOOL:
    """
    Whether ``ht_dtype`` is a complex floating point type.

    Examples
    --------
    >>> ht.core.types.heat_type_is_complexfloating(ht.complex128)
    True
    >>> ht.core.types.heat_type_is_complexfloating(ht.float64)
    False
    """
    return issubclass(canonical_heat_type(ht_dtype), complexfloating)


def float_type_for(ht_dtype: Any) -> HeatType:
    """
    The floating point type NumPy computes in when a function (``exp``, ``true_divide``,
    ``mean``, ...) turns values of type ``ht_dtype`` into floats.

    For bool and integer types this is ``promote_types(ht_dtype, float16)``: bool, uint8 and int8
    give float16, int16 gives float32, int32 and int64 give float64. Floating and complex types
    are returned unchanged.

    Examples
    --------
    >>> ht.core.types.float_type_for(ht.int32)
    <class 'heat.core.types.float64'>
    >>> ht.core.types.float_type_for(ht.uint8)
    <class 'heat.core.types.float16'>
    >>> ht.core.types.float_type_for(ht.complex64)
    <class 'heat.core.types.complex64'>
    """
    heat_type = canonical_heat_type(ht_dtype)
    if issubclass(heat_type, (floating, complexfloating)):
        return heat_type
    return _PROMOTION_TABLE[heat_type, float16]


def complex_type_for(ht_dtype: Any) -> HeatType:
    """
    The complex type that holds values of type ``ht_dtype``: float16, bfloat16 and float32 give
    complex64, float64 gives complex128, complex types are returned unchanged, and bool and
    integer types give the complex type of :func:`float_type_for` (int32 -> complex128), as
    ``promote_types(ht_dtype, complex64)`` does.

    Examples
    --------
    >>> ht.core.types.complex_type_for(ht.float32)
    <class 'heat.core.types.complex64'>
    >>> ht.core.types.complex_type_for(ht.float64)
    <class 'heat.core.types.complex128'>
    """
    heat_type = canonical_heat_type(ht_dtype)
    if issubclass(heat_type, complexfloating):
        return heat_type
    return _FLOAT_TO_COMPLEX[float_type_for(heat_type)]


def real_type_of(ht_dtype: Any) -> HeatType:
    """
    The type of the real (and imaginary) part of values of type ``ht_dtype``: complex64 gives
    float32, complex128 gives float64; real types are returned unchanged (as NumPy's
    ``x.real.dtype``).

    Examples
    --------
    >>> ht.core.types.real_type_of(ht.complex64)
    <class 'heat.core.types.float32'>
    >>> ht.core.types.real_type_of(ht.int16)
    <class 'heat.core.types.int16'>
    """
    heat_type = canonical_heat_type(ht_dtype)
    return _COMPLEX_TO_FLOAT.get(heat_type, heat_type)


# ----------------------------------------------------------------------------------------------
# machine limits
# ----------------------------------------------------------------------------------------------
class finfo:
    """
    Machine limits of a floating point type.

    For complex types, the limits of their real part (as NumPy).

    Parameters
    ----------
    dtype : floating or complex type, or DNDarray/tensor of one
        Anything :func:`canonical_heat_type` accepts, or a value with such a ``dtype``.

    Attributes
    ----------
    bits : int
        Number of bits of the type.
    eps : float
        Difference between 1.0 and the next representable float.
    max : float
        Largest representable number.
    min : float
        Smallest (most negative) representable number, ``-max``.
    tiny : float
        Smallest positive normal number; same as ``smallest_normal``.
    smallest_normal : float
        Smallest positive normal number.
    resolution : float
        Approximate decimal resolution, ``10 ** -precision``.
    dtype : heat type
        The real floating point type the limits belong to.

    Raises
    ------
    TypeError
        If ``dtype`` is not understood as a heat type.
    ValueError
        If the type is not a floating point or complex type (as NumPy).

    Examples
    --------
    >>> ht.finfo(ht.float32).eps
    1.1920928955078125e-07
    >>> ht.finfo(ht.complex128).dtype
    <class 'heat.core.types.float64'>
    >>> ht.finfo(ht.bfloat16).bits
    16
    """

    bits: _PY_INT
    eps: _PY_FLOAT
    max: _PY_FLOAT
    min: _PY_FLOAT
    tiny: _PY_FLOAT
    smallest_normal: _PY_FLOAT
    resolution: _PY_FLOAT
    dtype: HeatType

    def __init__(self, dtype: Any):
        heat_type = _as_heat_type(dtype)
        if not issubclass(heat_type, (floating, complexfloating)):
            raise ValueError(
                f"finfo expects a floating point or complex type as dtype, got {heat_type.__name__}"
            )
        real_type = real_type_of(heat_type)
        info = torch.finfo(real_type.torch_type())
        self.bits = info.bits
        self.eps = info.eps
        self.max = info.max
        self.min = info.min
        self.tiny = info.tiny
        self.smallest_normal = info.smallest_normal
        self.resolution = info.resolution
        self.dtype = real_type

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
            f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
            f"dtype={self.dtype.__name__})"
        )


class iinfo:
    """
    Machine limits of an integer type.

    Parameters
    ----------
    dtype : integer type, or DNDarray/tensor of one
        Anything :func:`canonical_heat_type` accepts, or a value with such a ``dtype``.

    Attributes
    ----------
    bits : int
        Number of bits of the type.
    max : int
        Largest representable integer.
    min : int
        Smallest representable integer.
    dtype : heat type
        The integer type.

    Raises
    ------
    TypeError
        If ``dtype`` is not understood as a heat type.
    ValueError
        If the type is not an integer type, bool included (as NumPy).

    Examples
    --------
    >>> ht.iinfo(ht.int8).min
    -128
    >>> ht.iinfo(ht.uint8).max
    255
    """

    bits: _PY_INT
    max: _PY_INT
    min: _PY_INT
    dtype: HeatType

    def __init__(self, dtype: Any):
        heat_type = _as_heat_type(dtype)
        if not issubclass(heat_type, integer):
            raise ValueError(f"iinfo expects an integer type as dtype, got {heat_type.__name__}")
        info = torch.iinfo(heat_type.torch_type())
        self.bits = info.bits
        self.max = info.max
        self.min = info.min
        self.dtype = heat_type

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype.__name__})"


# ----------------------------------------------------------------------------------------------
# the array API standard's dtype kinds and inspection namespace
# ----------------------------------------------------------------------------------------------
# kind name -> the abstract heat type whose subclasses are of that kind
_KINDS = {
    "bool": bool,
    "signed integer": signedinteger,
    "unsigned integer": unsignedinteger,
    "integral": integer,
    "real floating": floating,
    "complex floating": complexfloating,
    "numeric": number,
}


def isdtype(dtype: Any, kind: Any) -> _PY_BOOL:
    """
    Whether ``dtype`` is of the kind ``kind``, as the array API standard's ``isdtype``.

    Parameters
    ----------
    dtype : heat type
        The type to classify (anything :func:`canonical_heat_type` accepts).
    kind : heat type, str or tuple of them
        A type (True only for that type), one of the kinds ``"bool"``, ``"signed integer"``,
        ``"unsigned integer"``, ``"integral"``, ``"real floating"`` (float16 and bfloat16
        included), ``"complex floating"``, ``"numeric"``, or a tuple of these (True if
        ``dtype`` is any of them).

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``dtype`` is not a heat type or ``kind`` is neither a type, a string nor a tuple.
    ValueError
        If ``kind`` is an unknown kind name.

    Examples
    --------
    >>> ht.isdtype(ht.float32, "real floating")
    True
    >>> ht.isdtype(ht.int8, ("unsigned integer", ht.float64))
    False
    """
    heat_type = canonical_heat_type(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(heat_type, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(
                f"kind must be a data type or one of {tuple(_KINDS)}, but was {kind!r}"
            )
        return issubclass(heat_type, _KINDS[kind])
    try:
        return heat_type is canonical_heat_type(kind)
    except (TypeError, ValueError):
        raise TypeError(
            f"kind must be a data type, a kind name or a tuple of them, but was {kind!r}"
        ) from None


class _NamespaceInfo:
    """
    What heat supports of the array API standard: the object ``heat.__array_namespace_info__()``
    returns (capabilities, devices, data types and default data types).
    """

    def capabilities(self) -> dict:
        """
        ``{"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}``
        (``unique``, ``nonzero`` and boolean masks give results of data-dependent shape;
        torch tensors have at most 64 dimensions).
        """
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> devices.Device:
        """The device of new arrays (:func:`heat.get_device`)."""
        return devices.get_device()

    def devices(self) -> tuple:
        """
        The devices heat can place arrays on in this process, as a tuple (the array API
        standard 2025.12): the CPU, and its GPU if any.
        """
        return (devices.cpu,) + ((devices.gpu,) if hasattr(devices, "gpu") else ())

    def _check_device(self, device) -> None:
        if device is not None:
            devices.sanitize_device(device)

    def default_dtypes(self, *, device=None) -> dict:
        """
        The default data types (the same on every device): float32 for real floating point
        values (heat's and torch's default), complex64, int64 for integers and indices.
        """
        self._check_device(device)
        return {
            "real floating": float32,
            "complex floating": complex64,
            "integral": int64,
            "indexing": int64,
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """
        The standard's data types heat supports (name -> type), all of them or those of
        ``kind`` (a kind name as :func:`isdtype` takes, or a tuple of them). heat also has
        float16 and bfloat16, which are not part of the standard.
        """
        self._check_device(device)
        supported = (
            bool,
            int8,
            int16,
            int32,
            int64,
            uint8,
            uint16,
            uint32,
            uint64,
            float32,
            float64,
            complex64,
            complex128,
        )
        return {t.__name__: t for t in supported if kind is None or isdtype(t, kind)}

    def __repr__(self) -> str:
        return "heat.__array_namespace_info__()"


def __array_namespace_info__() -> _NamespaceInfo:
    """
    The array API standard's inspection namespace of heat: an object with the methods
    ``capabilities()``, ``default_device()``, ``default_dtypes(device=None)``, ``devices()`` and
    ``dtypes(device=None, kind=None)``.

    Examples
    --------
    >>> info = ht.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"]
    <class 'heat.core.types.float32'>
    >>> sorted(info.dtypes(kind="signed integer"))
    ['int16', 'int32', 'int64', 'int8']
    """
    return _NamespaceInfo()
