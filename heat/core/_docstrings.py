"""
The parameter sections that families of elementwise functions share, as NumPy shares its
ufuncs' docstrings: a function whose docstring says ``{parameters}`` gets the section of its
family there (:func:`sections`), so one text describes ``out``, ``where`` and the errors of all
its members, and the function keeps its own summary, notes and examples.
"""

from __future__ import annotations

import inspect
from typing import Callable, TypeVar

__all__ = []

F = TypeVar("F", bound=Callable)

#: multiply, divide
PRODUCT_QUOTIENT = """
Parameters
----------
t1, t2 : DNDarray, scalar or array-like
out : DNDarray, optional
    See :func:`add`.
where : DNDarray or array-like of bool, optional
    See :func:`add`.

Returns
-------
DNDarray

Raises
------
ValueError
    If the shapes cannot be broadcast together.
"""

#: floor_divide, remainder, fmod
INTEGER_DIVISION = """
Parameters
----------
t1, t2 : DNDarray, scalar or array-like
out : DNDarray, optional
    See :func:`add`.
where : DNDarray or array-like of bool, optional
    See :func:`add`.

Returns
-------
DNDarray

Raises
------
TypeError
    If an operand is complex.
ValueError
    If the shapes cannot be broadcast together.
"""

#: bitwise_and, bitwise_or, bitwise_xor, left_shift, right_shift
BITWISE = """
Parameters
----------
t1, t2 : DNDarray, scalar or array-like
    Integer or boolean operands.
out : DNDarray, optional
    See :func:`add`.
where : DNDarray or array-like of bool, optional
    See :func:`add`.

Returns
-------
DNDarray

Raises
------
TypeError
    If an operand is a floating point or complex type.
ValueError
    If the shapes cannot be broadcast together.
"""

#: gcd, lcm
GCD_LCM = """
Parameters
----------
t1, t2 : DNDarray, scalar or array-like
    Integer operands.
out : DNDarray, optional
    See :func:`add`.
where : DNDarray or array-like of bool, optional
    See :func:`add`.

Returns
-------
DNDarray

Raises
------
TypeError
    If an operand is not an integer type.
ValueError
    If the shapes cannot be broadcast together.
"""

#: exp, expm1, exp2, log, log2, log10, log1p, sqrt, sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh, arccosh, arctanh
UNARY = """
Parameters
----------
x : DNDarray
    Input array.
out : DNDarray, optional
    Where to store the result (same shape, any layout; the result must cast to its dtype
    under ``'same_kind'`` casting).
where : DNDarray or array-like of bool, optional
    Compute only where True; elsewhere ``out`` keeps its value (zeros without ``out``).

Returns
-------
DNDarray
    Same shape and layout as ``x``.

Raises
------
TypeError
    If ``x`` is not a DNDarray, or the result cannot be cast to ``out``'s dtype.
"""

#: logaddexp, logaddexp2
LOG_ADD_EXP = """
Parameters
----------
x1, x2 : DNDarray, scalar or array-like
    Operands; broadcast together, distributed layouts are aligned.
out : DNDarray, optional
    Where to store the result.
where : DNDarray or array-like of bool, optional
    Compute only where True; elsewhere ``out`` keeps its value (zeros without ``out``).

Returns
-------
DNDarray

Raises
------
TypeError
    If an operand is complex or not numeric.
ValueError
    If the shapes cannot be broadcast together.
"""

#: deg2rad, rad2deg
ANGLE_CONVERSION = """
Parameters
----------
x : DNDarray
    Input array.
out : DNDarray, optional
    Where to store the result (same shape, any layout; the result must cast to its dtype
    under ``'same_kind'`` casting).
where : DNDarray or array-like of bool, optional
    Compute only where True; elsewhere ``out`` keeps its value (zeros without ``out``).

Returns
-------
DNDarray
    Same shape and layout as ``x``.

Raises
------
TypeError
    If ``x`` is not a DNDarray or is complex, or the result cannot be cast to ``out``'s dtype.
"""

#: ceil, floor, trunc
ROUNDING = """
Parameters
----------
x : DNDarray
    Real input array.
out : DNDarray, optional
    See :func:`abs`.
where : DNDarray or array-like of bool, optional
    See :func:`abs`.

Returns
-------
DNDarray

Raises
------
TypeError
    If ``x`` is not a DNDarray or is complex.
"""

#: all, any
TRUTH_REDUCTION = """
Parameters
----------
x : DNDarray
axis : None, int or tuple of int, optional
    Axes to reduce; None reduces all.
out : DNDarray, optional
    Where to store the result (cast to its dtype).
keepdims : bool, optional
    Keep the reduced axes with length 1.

Returns
-------
DNDarray
    Boolean array.

Raises
------
TypeError
    If ``x`` is not a DNDarray or ``axis`` has the wrong type.
ValueError
    If an axis is out of range or repeated, or ``out`` has the wrong shape.
"""

#: isnan, isinf, isfinite
FLOAT_PREDICATE = """
Parameters
----------
x : DNDarray
out : DNDarray, optional
    Where to store the result.
where : DNDarray or array-like of bool, optional
    Test only where True; elsewhere ``out`` keeps its value (False without ``out``).

Returns
-------
DNDarray
    Boolean array, same shape and layout as ``x``.

Raises
------
TypeError
    If ``x`` is not a DNDarray.
"""

#: isposinf, isneginf
INFINITY_PREDICATE = """
Parameters
----------
x : DNDarray
    Real input array.
out : DNDarray, optional
    Where to store the result.

Returns
-------
DNDarray
    Boolean array.

Raises
------
TypeError
    If ``x`` is not a DNDarray or is complex (ambiguous, as NumPy).
"""

#: logical_and, logical_or, logical_xor
LOGICAL_BINARY = """
Parameters
----------
x1, x2 : DNDarray, scalar or array-like
    Operands, broadcast together; differently distributed operands are aligned.
out : DNDarray, optional
    Where to store the result.
where : DNDarray or array-like of bool, optional
    Compute only where True; elsewhere ``out`` keeps its value (False without ``out``).

Returns
-------
DNDarray
    Boolean array.

Raises
------
TypeError
    If an operand is not numeric.
ValueError
    If the shapes cannot be broadcast together.
"""

#: lt, le, gt, ge
ORDER_COMPARISON = """
Parameters
----------
x, y : DNDarray, scalar or array-like
    Operands; promoted to a common type and broadcast together.
out : DNDarray, optional
    Where to store the result.
where : DNDarray or array-like of bool, optional
    Compare only where True; elsewhere ``out`` keeps its value (False without ``out``).

Returns
-------
DNDarray
    Boolean array.

Raises
------
TypeError
    If an operand is not numeric.
ValueError
    If the shapes cannot be broadcast together.
"""

#: real, imag
COMPLEX_PART = """
Parameters
----------
x : DNDarray

Returns
-------
DNDarray

Raises
------
TypeError
    If ``x`` is not a DNDarray.
"""

#: iscomplex, isreal
COMPLEX_PREDICATE = """
Parameters
----------
x : DNDarray

Returns
-------
DNDarray
    Of dtype bool, with ``x``'s shape and layout.

Raises
------
TypeError
    If ``x`` is not a DNDarray.
"""


def sections(parameters: str) -> Callable[[F], F]:
    """
    Put ``parameters`` (one of this module's sections) where the decorated function's docstring
    says ``{parameters}``.

    Examples
    --------
    >>> @sections(UNARY)
    ... def sin(x, out=None, where=None):
    ...     '''Elementwise sine.
    ...
    ...     {parameters}
    ...     '''
    >>> "out : DNDarray, optional" in sin.__doc__
    True
    """

    def fill(function: F) -> F:
        text = inspect.cleandoc(function.__doc__ or "")
        if "{parameters}" not in text:
            raise ValueError(f"the docstring of {function.__name__} has no {{parameters}} marker")
        function.__doc__ = text.replace("{parameters}", parameters.strip("\n"))
        return function

    return fill
