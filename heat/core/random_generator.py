"""
NumPy's ``Generator`` interface to heat's random numbers: ``ht.random.default_rng(seed)``.

A :class:`Generator` owns a ``(seed, counter)`` state of the counter-based Threefry stream of
:mod:`heat.core.random` and draws with the same functions as the module's global generator, so
its numbers are the same for any number of processes and any split, and equal to those of the
global generator seeded alike: ``default_rng(7).random(5)`` is ``seed(7); rand(5,
dtype=float64)``. Two generators never disturb each other or the global state.

The methods take NumPy's arguments and defaults (floating results are float64, as NumPy's; heat's
module functions default to float32), plus heat's keywords ``split``, ``device`` and ``comm``;
``size=None`` gives a 0-d DNDarray where NumPy gives a Python scalar. Like every random function,
each call is collective: every process must draw the same things from its generator in the same
order (its state is the same on every process), or their states part.
"""

from __future__ import annotations

import numbers
from typing import Optional, Union

import numpy as np

from . import random as _random
from . import types
from .communication import MPICommunication, get_comm
from .devices import Device
from .dndarray import DNDarray

__all__ = ["Generator", "default_rng"]

_TWO64 = 1 << 64


def _check_axis(axis, function: str) -> None:
    """NumPy's ``axis`` argument: only the first axis (rows) is supported."""
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"axis must be an integer, but was {type(axis).__name__}")
    if axis != 0:
        raise ValueError(
            f"Generator.{function} supports axis=0 only (the rows), but axis was {axis}"
        )


class Generator:
    """
    Random numbers with NumPy's ``numpy.random.Generator`` methods, from heat's counter-based
    stream (Threefry-2x32-20). Create one with :func:`default_rng`.

    Parameters
    ----------
    seed : int
        An integer in ``[0, 2**64)``; the generator starts at counter 0 of this key.

    Notes
    -----
    The state is ``(seed, counter)``: a draw of ``n`` values advances the counter by ``n``
    (``2 n`` for float64 normal values), on every process alike. The generator is not
    thread-safe (nor is the global one).

    Examples
    --------
    >>> rng = ht.random.default_rng(42)
    >>> x = rng.standard_normal((1000, 3), split=0)
    >>> x.dtype, x.split
    (<class 'heat.core.types.float64'>, 0)
    >>> rng.integers(0, 10, size=5).shape
    (5,)
    """

    def __init__(self, seed: int):
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an integer, but was {type(seed).__name__}")
        if not 0 <= int(seed) < _TWO64:
            raise ValueError(f"seed must be in [0, 2**64), but was {seed}")
        self._state = {"seed": int(seed), "counter": 0}

    def __repr__(self) -> str:
        return f"Generator(Threefry, seed={self._state['seed']}, counter={self._state['counter']})"

    @property
    def state(self) -> dict:
        """The generator's state: ``{"seed": int, "counter": int}`` (a copy)."""
        return dict(self._state)

    def _draw(self, function, *args, **kwargs):
        with _random._using_state(self._state):
            return function(*args, **kwargs)

    # ------------------------------------------------------------------------------ floats
    def random(
        self,
        size=None,
        dtype=types.float64,
        *,
        split: Optional[int] = None,
        device: Optional[Union[str, Device]] = None,
        comm: Optional[MPICommunication] = None,
    ) -> DNDarray:
        """
        Uniform random values in ``[0, 1)``, as ``numpy.random.Generator.random``.

        Parameters
        ----------
        size : int or sequence of int, optional
            The shape; None gives a 0-d array.
        dtype : floating heat type
            float64 (default, as NumPy), float32, float16 or bfloat16.
        split : int, optional
            The axis to distribute the result along.
        device : str or Device, optional
        comm : MPICommunication, optional

        Returns
        -------
        DNDarray

        Raises
        ------
        TypeError
            If ``size`` does not consist of integers or ``dtype`` is not floating.
        ValueError
            If a size is negative or ``split`` is out of range.

        Examples
        --------
        >>> ht.random.default_rng(0).random((2, 3), split=1).shape
        (2, 3)
        """
        _random._float_type(dtype, "Generator.random")  # real only, as NumPy's Generator
        return self._draw(_random.random, size, dtype, split, device, comm)

    def standard_normal(
        self,
        size=None,
        dtype=types.float64,
        *,
        split: Optional[int] = None,
        device: Optional[Union[str, Device]] = None,
        comm: Optional[MPICommunication] = None,
    ) -> DNDarray:
        """
        Standard normal values, as ``numpy.random.Generator.standard_normal``.

        Parameters
        ----------
        size : int or sequence of int, optional
            The shape; None gives a 0-d array.
        dtype : floating heat type
            float64 (default), float32, float16 or bfloat16.
        split, device, comm
            As in :meth:`random`.

        Returns
        -------
        DNDarray

        Raises
        ------
        TypeError, ValueError
            As in :meth:`random`.

        Examples
        --------
        >>> ht.random.default_rng(1).standard_normal(4).dtype
        <class 'heat.core.types.float64'>
        """
        _random._float_type(dtype, "Generator.standard_normal")  # real only, as NumPy's Generator
        return self._draw(_random.standard_normal, size, dtype, split, device, comm)

    def normal(
        self,
        loc=0.0,
        scale=1.0,
        size=None,
        *,
        dtype=types.float64,
        split: Optional[int] = None,
        device: Optional[Union[str, Device]] = None,
        comm: Optional[MPICommunication] = None,
    ) -> DNDarray:
        """
        Normally distributed values, as ``numpy.random.Generator.normal``.

        Parameters
        ----------
        loc : float or array_like
            The mean.
        scale : float or array_like
            The standard deviation (non-negative).
        size : int or sequence of int, optional
            The shape; None: the broadcast shape of ``loc`` and ``scale``.
        dtype : floating heat type
            float64 (default), float32, float16 or bfloat16.
        split, device, comm
            As in :meth:`random`; ``split`` defaults to that of a distributed parameter.

        Returns
        -------
        DNDarray

        Raises
        ------
        TypeError
            If ``loc`` or ``scale`` are not real numbers or arrays, or ``dtype`` is not floating.
        ValueError
            If ``scale`` is negative somewhere or ``size`` does not fit the parameters.

        Examples
        --------
        >>> ht.random.default_rng(2).normal(10.0, 0.5, size=(3, 2), split=0).shape
        (3, 2)
        """
        return self._draw(_random.normal, loc, scale, size, dtype, split, device, comm)

    def uniform(
        self,
        low=0.0,
        high=1.0,
        size=None,
        *,
        dtype=types.float64,
        split: Optional[int] = None,
        device: Optional[Union[str, Device]] = None,
        comm: Optional[MPICommunication] = None,
    ) -> DNDarray:
        """
        Uniform values in ``[low, high)``, as ``numpy.random.Generator.uniform``.

        Parameters
        ----------
        low, high : float or array_like
            The bounds.
        size : int or sequence of int, optional
            The shape; None: the broadcast shape of ``low`` and ``high``.
        dtype : floating heat type
            float64 (default), float32, float16 or bfloat16.
        split, device, comm
            As in :meth:`normal`.

        Returns
        -------
        DNDarray

        Raises
        ------
        TypeError, ValueError
            As :func:`heat.random.uniform`.

        Examples
        --------
        >>> x = ht.random.default_rng(3).uniform(-1.0, 1.0, size=100, split=0)
        >>> bool(((x >= -1) & (x < 1)).all())
        True
        """
        return self._draw(_random.uniform, low, high, size, dtype, split, device, comm)

    # ---------------------------------------------------------------------------- integers
    def integers(
        self,
        low: int,
        high: Optional[int] = None,
        size=None,
        dtype=types.int64,
        endpoint: bool = False,
        *,
        split: Optional[int] = None,
        device: Optional[Union[str, Device]] = None,
        comm: Optional[MPICommunication] = None,
    ) -> DNDarray:
        """
        Random integers from ``[low, high)`` (``[low, high]`` with ``endpoint=True``), as
        ``numpy.random.Generator.integers``.

        Parameters
        ----------
        low : int
            The lowest value (or, if ``high`` is None, the upper bound, with low 0).
        high : int, optional
            The upper bound.
        size : int or sequence of int, optional
            The shape; None gives a 0-d array.
        dtype : integer heat type
            int64 (default), int32, int16, int8, uint8 or bool.
        endpoint : bool
            Whether ``high`` itself may be drawn.
        split, device, comm
            As in :meth:`random`.

        Returns
        -------
        DNDarray

        Raises
        ------
        TypeError
            If the bounds are not integers, ``endpoint`` is not a bool or ``dtype`` is not an
            integer type.
        ValueError
            If the range is empty or does not fit ``dtype``.

        Examples
        --------
        >>> d6 = ht.random.default_rng(4).integers(1, 6, size=1000, endpoint=True, split=0)
        >>> int(d6.min()), int(d6.max())
        (1, 6)
        """
        if not isinstance(endpoint, (bool, np.bool_)):
            raise TypeError(f"endpoint must be a bool, but was {type(endpoint).__name__}")
        if high is None:
            low, high = 0, low
        if endpoint and isinstance(high, (int, np.integer)) and not isinstance(high, bool):
            high = int(high) + 1
        return self._draw(_random.randint, low, high, size, dtype, split, device, comm)

    # ------------------------------------------------------------------------ permutations
    def choice(
        self,
        a,
        size=None,
        replace: bool = True,
        p=None,
        axis: int = 0,
        shuffle: bool = True,
        *,
        split: Optional[int] = None,
        device: Optional[Union[str, Device]] = None,
        comm: Optional[MPICommunication] = None,
    ) -> DNDarray:
        """
        A random sample from ``arange(a)`` or the elements of a 1-D array, as
        ``numpy.random.Generator.choice``.

        Parameters
        ----------
        a : int or 1-D DNDarray or array_like
            The population.
        size : int or sequence of int, optional
            The sample's shape; None gives a single value (0-d).
        replace : bool
            With replacement (default) or without.
        p : 1-D array_like, optional
            The probability of each element; default uniform.
        axis : int
            0 only (``a`` is 1-D).
        shuffle : bool
            Accepted for NumPy's signature: a sample without replacement is always in random
            order here (NumPy's ``shuffle=False`` leaves the order unspecified).
        split, device, comm
            As in :meth:`random`.

        Returns
        -------
        DNDarray

        Raises
        ------
        TypeError, ValueError
            As :func:`heat.random.choice`; ValueError for an ``axis`` other than 0.

        Examples
        --------
        >>> sorted(ht.random.default_rng(5).choice(4, 4, replace=False).tolist())
        [0, 1, 2, 3]
        """
        _check_axis(axis, "choice")
        if not isinstance(shuffle, (bool, np.bool_)):
            raise TypeError(f"shuffle must be a bool, but was {type(shuffle).__name__}")
        return self._draw(_random.choice, a, size, replace, p, split, device, comm)

    def permutation(self, x, axis: int = 0) -> DNDarray:
        """
        A permutation of ``arange(x)``, or a copy of an array with its rows permuted, as
        ``numpy.random.Generator.permutation``.

        Parameters
        ----------
        x : int or DNDarray or array_like
        axis : int
            0 only.

        Returns
        -------
        DNDarray
            Distributed like ``x`` (not split for an integer).

        Raises
        ------
        TypeError, ValueError
            As :func:`heat.random.permutation`; ValueError for an ``axis`` other than 0.

        Examples
        --------
        >>> sorted(ht.random.default_rng(6).permutation(ht.arange(5, split=0)).tolist())
        [0, 1, 2, 3, 4]
        """
        _check_axis(axis, "permutation")
        return self._draw(_random.permutation, x)

    def shuffle(self, x: DNDarray, axis: int = 0) -> None:
        """
        Shuffle the rows of ``x`` in place, as ``numpy.random.Generator.shuffle``.

        Parameters
        ----------
        x : DNDarray
            At least 1-D; its layout is kept.
        axis : int
            0 only.

        Raises
        ------
        TypeError, ValueError
            As :func:`heat.random.shuffle`; ValueError for an ``axis`` other than 0.

        Examples
        --------
        >>> x = ht.arange(6, split=0)
        >>> ht.random.default_rng(7).shuffle(x)
        >>> sorted(x.tolist())
        [0, 1, 2, 3, 4, 5]
        """
        _check_axis(axis, "shuffle")
        self._draw(_random.shuffle, x)


def default_rng(seed: Optional[Union[int, Generator]] = None) -> Generator:
    """
    A new :class:`Generator`, as ``numpy.random.default_rng``.

    Parameters
    ----------
    seed : int or Generator, optional
        An integer in ``[0, 2**64)``; None draws one from the operating system's entropy on
        rank 0 and broadcasts it (collective over the default communicator); a Generator is
        returned unaltered (as NumPy does).

    Returns
    -------
    Generator

    Raises
    ------
    TypeError
        If ``seed`` is neither None, an integer nor a Generator.
    ValueError
        If ``seed`` is negative or not below ``2**64``.

    Examples
    --------
    >>> rng = ht.random.default_rng(12345)
    >>> a = rng.random(3)
    >>> ht.random.seed(12345)
    >>> bool((ht.random.rand(3, dtype=ht.float64) == a).all())
    True
    """
    if isinstance(seed, Generator):
        return seed
    if seed is None:
        return Generator(_random._entropy_seed(get_comm()))
    return Generator(seed)
