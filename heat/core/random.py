"""
Random numbers from a counter-based generator: the same seed gives the same global array for
any number of processes and any split axis.

The generator
-------------
The default (and only) generator is Threefry-2x32 with 20 rounds (Salmon et al., "Parallel
random numbers: as easy as 1, 2, 3", SC'11), written here in vectorized torch integer
operations. It is a stateless function ``threefry(key, counter) -> two 32-bit words``; the key is
the 64-bit seed and the counter a 64-bit number. The only state is ``(seed, counter)``:

- A draw of ``n`` values that needs ``c`` counters per value (``c`` is 1 except for float64
  normal values, which need 2) gives the element with global flat index ``i`` (its row-major
  index in the global array) the words of counters ``counter + i * c + j``, ``j < c``.
  Every process evaluates the generator only at the global indices of its own block, so the
  global array does not depend on how it is distributed, and no process communicates.
- Afterwards the counter advances by ``n * c`` on every process (modulo 2**64).

From words to values
--------------------
- float32 uniform: the top 24 bits of the first word, times 2**-24 (float16: 11 bits, bfloat16:
  8 bits); float64 uniform: 27 bits of the first and 26 bits of the second word (53 bits), times
  2**-53. Values lie in [0, 1) and are exactly representable.
- normal: Box-Muller, ``sqrt(-2 log(1 - u1)) cos(2 pi u2)`` evaluated in float64, one value per
  element (the sine half is not used, so element ``i`` always uses the same words whatever the
  layout); for float32 and smaller ``u1`` and ``u2`` are the two 32-bit words of one counter,
  for float64 they are 53-bit uniforms from two counters.
- integers in ``[low, high)`` (``r = high - low``): 63 random bits ``u`` give ``low + u mod r``.
  The modulo bias is at most ``r / 2**63`` in relative terms (below 5e-10 for ``r <= 2**32``);
  ranges wider than ``2**63`` (only possible for int64) use all 64 bits, reduced once.
- complex (``rand`` and ``randn`` with complex64 / complex128, and the functions that share their
  path): the real and imaginary parts of element ``i`` are the real values of flat indices
  ``2 i`` and ``2 i + 1`` of a real draw of shape ``shape + (2,)`` in the component type
  (float32 / float64), so the layout is the same for any split and process count. ``rand`` gives
  parts uniform in [0, 1); ``randn`` scales both normal parts by ``sqrt(1/2)`` (total variance 1,
  torch's convention). A complex draw of ``n`` elements advances the counter as ``2 n`` reals.
- permutations: every element gets a random 63-bit key and the elements are sorted by key with
  the distributed sample sort of :mod:`heat.core.sorting` (ties keep the index order), so the
  permutation is the same for any number of processes.

The initial seed is drawn from the operating system's entropy on rank 0 and broadcast when a
random function first needs it (or by ``seed()``): a collective call, like every function here.

Generators
----------
:func:`default_rng` returns a :class:`Generator` with NumPy's ``Generator`` methods
(``random``, ``integers``, ``normal``, ...) and a ``(seed, counter)`` state of its own, drawn
from the same stream (they live in :mod:`heat.core.random_generator`, above this module, and
``heat/core/__init__.py`` shows them here): ``ht.random.default_rng(s).random(n)`` equals
``ht.random.seed(s); ht.random.rand(n, dtype=ht.float64)``, for any number of processes.
"""

from __future__ import annotations

import contextlib
import numbers
import secrets
from typing import Callable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

from . import types
from .communication import MPI, MPICommunication, get_comm, sanitize_comm
from .devices import Device, sanitize_device
from .dndarray import DNDarray
from .sanitation import broadcast_shapes, sanitize_shape, sanitize_split

__all__ = [
    "choice",
    "get_state",
    "normal",
    "permutation",
    "rand",
    "randint",
    "randn",
    "random",
    "random_integer",
    "random_sample",
    "randperm",
    "ranf",
    "sample",
    "seed",
    "set_state",
    "shuffle",
    "standard_normal",
    "uniform",
]

_GENERATOR = "Threefry"
_MASK32 = 0xFFFFFFFF
_TWO32 = 1 << 32
_TWO63 = 1 << 63
_TWO64 = 1 << 64
# Threefry-2x32 rotation constants and key-schedule parity (Salmon et al., SC'11)
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_PARITY = 0x1BD11BDA
_ROUNDS = 20
# elements per vectorized pass: the ~160 passes over a block stay in cache, and torch runs each
# pass on one thread (bigger blocks are split over threads, whose per-op sync dominated)
_CPU_CHUNK = 1 << 14
_GPU_CHUNK = 1 << 22

# the generator state, identical on every process: seed None = not seeded yet
_state = {"seed": None, "counter": 0}


# =============================================================================================
# the counter-based generator
# =============================================================================================
def _as_int32(value: int) -> int:
    """The 32-bit pattern of ``value`` as a signed Python int (for adding to int32 tensors)."""
    value &= _MASK32
    return value - _TWO32 if value >= (1 << 31) else value


def _threefry2x32(
    c0: torch.Tensor, c1: torch.Tensor, k0: int, k1: int
) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    Threefry-2x32-20 of the counters ``(c0, c1)`` (int32 tensors holding 32-bit patterns) under
    the key ``(k0, k1)``; returns the two output words as int32 bit patterns.

    int32 addition and left shifts wrap modulo 2**32; the logical right shift of the rotation is
    an arithmetic shift with the sign-extended bits masked off.
    """
    schedule = (k0, k1, (k0 ^ k1 ^ _PARITY) & _MASK32)
    x0 = c0 + _as_int32(schedule[0])
    x1 = c1 + _as_int32(schedule[1])
    for r in range(_ROUNDS):
        rotation = _ROTATIONS[r % 8]
        x0.add_(x1)
        low_bits = torch.bitwise_right_shift(x1, 32 - rotation).bitwise_and_((1 << rotation) - 1)
        x1.bitwise_left_shift_(rotation).bitwise_or_(low_bits).bitwise_xor_(x0)
        if r % 4 == 3:
            injection = r // 4 + 1
            x0.add_(_as_int32(schedule[injection % 3]))
            x1.add_(_as_int32(schedule[(injection + 1) % 3] + injection))
    return x0, x1


def _unsigned(word: torch.Tensor) -> torch.Tensor:
    """An int32 bit pattern as the unsigned value in [0, 2**32), int64."""
    return word.to(torch.int64).bitwise_and_(_MASK32)


def _signed_low32(values: torch.Tensor) -> torch.Tensor:
    """int64 values in [0, 2**32) as int32 tensors with the same bit pattern."""
    return (values - ((values >> 31) << 32)).to(torch.int32)


def _words(flat_index: torch.Tensor, seed: int, base: int, per_element: int, j: int):
    """The two words of counter ``base + flat_index * per_element + j`` (mod 2**64)."""
    base_low, base_high = base & _MASK32, base >> 32
    counter = flat_index * per_element + (base_low + j)  # < 2**63 for any array torch can index
    low = counter & _MASK32
    high = ((counter >> 32) + base_high) & _MASK32
    return _threefry2x32(_signed_low32(low), _signed_low32(high), seed & _MASK32, seed >> 32)


def _local_flat_index(
    gshape: Tuple[int, ...], split: Optional[int], offset: int, lshape: Tuple[int, ...], device
) -> torch.Tensor:
    """Global row-major flat indices (int64) of the elements of a local block, in local order."""
    if split is None or len(gshape) == 0:
        return torch.arange(_prod(gshape), dtype=torch.int64, device=device)
    outer = _prod(gshape[:split])
    inner = _prod(gshape[split + 1 :])
    length = lshape[split]
    if outer == 1:
        return torch.arange(
            offset * inner, (offset + length) * inner, dtype=torch.int64, device=device
        )
    rows = torch.arange(outer, dtype=torch.int64, device=device).view(-1, 1, 1) * gshape[split]
    along = torch.arange(offset, offset + length, dtype=torch.int64, device=device).view(1, -1, 1)
    within = torch.arange(inner, dtype=torch.int64, device=device).view(1, 1, -1)
    return ((rows + along) * inner + within).reshape(-1)


def _prod(values) -> int:
    result = 1
    for v in values:
        result *= v
    return result


def _ensure_seeded(comm: MPICommunication) -> None:
    if _state["seed"] is None:
        _state["seed"] = _entropy_seed(comm)
        _state["counter"] = 0


def _entropy_seed(comm: MPICommunication) -> int:
    """A 64-bit seed from the OS entropy of rank 0, broadcast (one collective)."""
    value = secrets.randbits(64) if comm.rank == 0 else None
    return int(comm.bcast(value, root=0)) if comm.size > 1 else int(value)


@contextlib.contextmanager
def _using_state(state: dict) -> Iterator[None]:
    """
    Draw from ``state`` (a dict with "seed" and "counter", e.g. a Generator's) instead of the
    global state within the block; the counter it reaches is written back to ``state``.
    """
    saved = dict(_state)
    _state.update(seed=state["seed"], counter=state["counter"])
    try:
        yield
    finally:
        state["counter"] = _state["counter"]
        _state.update(saved)


def _reserve(count: int, comm: MPICommunication) -> Tuple[int, int]:
    """The seed and the first counter of a draw of ``count`` counters; advances the state."""
    _ensure_seeded(comm)
    base = _state["counter"]
    _state["counter"] = (base + count) % _TWO64
    return _state["seed"], base


def _generate(
    gshape: Tuple[int, ...],
    split: Optional[int],
    comm: MPICommunication,
    device: Device,
    per_element: int,
    transform: Callable[[List[Tuple[torch.Tensor, torch.Tensor]]], torch.Tensor],
    torch_type: torch.dtype,
) -> torch.Tensor:
    """
    This process's block of a random array of ``gshape`` split along ``split``.

    ``transform`` maps the words of ``per_element`` counters per element (a list of
    ``(word0, word1)`` int32 tensors) to the values. Advances the state on every process.
    """
    seed_value, base = _reserve(_prod(gshape) * per_element, comm)
    offset, lshape, _ = comm.chunk(gshape, split)
    torch_device = device.torch_device
    result = torch.empty(_prod(lshape), dtype=torch_type, device=torch_device)
    if result.numel() == 0:
        return result.reshape(lshape)
    flat_index = _local_flat_index(gshape, split, offset, lshape, torch_device)
    chunk = _CPU_CHUNK if result.device.type == "cpu" else _GPU_CHUNK
    for start in range(0, flat_index.numel(), chunk):
        index = flat_index[start : start + chunk]
        words = [_words(index, seed_value, base, per_element, j) for j in range(per_element)]
        result[start : start + chunk] = transform(words)
    return result.reshape(lshape)


# ---------------------------------------------------------------------------------------------
# words -> values
# ---------------------------------------------------------------------------------------------
# bits of randomness per uniform value (the significand width): every value is exact
_UNIFORM_BITS = {torch.float16: 11, torch.bfloat16: 8, torch.float32: 24, torch.float64: 53}


def _uniform53(words: Tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """A float64 uniform in [0, 1) from 53 bits of the two words."""
    high = _unsigned(words[0]) >> 5
    low = _unsigned(words[1]) >> 6
    return (high * (1 << 26) + low).to(torch.float64) * 2.0**-53


def _uniform_transform(torch_type: torch.dtype) -> Callable:
    bits = _UNIFORM_BITS[torch_type]
    if bits == 53:
        return lambda words: _uniform53(words[0])

    def transform(words):
        top = _unsigned(words[0][0]) >> (32 - bits)
        return top.to(torch_type) * 2.0**-bits

    return transform


def _normal_transform(
    torch_type: torch.dtype,
    scale: float = 1.0,
    shift: float = 0.0,
    out_type: Optional[torch.dtype] = None,
) -> Callable:
    """
    Box-Muller in float64 (one value per element), then ``shift + scale * z`` in ``out_type``
    (default ``torch_type``). ``torch_type`` fixes which words are used: float64 takes 53-bit
    uniforms from two counters, smaller types the two 32-bit words of one counter.
    """
    out_type = torch_type if out_type is None else out_type

    def transform(words):
        if torch_type == torch.float64:
            u1, u2 = _uniform53(words[0]), _uniform53(words[1])
        else:
            u1 = _unsigned(words[0][0]).to(torch.float64) * 2.0**-32
            u2 = _unsigned(words[0][1]).to(torch.float64) * 2.0**-32
        radius = torch.sqrt(-2.0 * torch.log1p(-u1))  # 1 - u1 lies in (0, 1]
        z = radius * torch.cos((2.0 * np.pi) * u2)
        if scale != 1.0 or shift != 0.0:
            z = z * scale + shift
        return z.to(out_type)

    return transform


def _normal_counters(torch_type: torch.dtype) -> int:
    return 2 if torch_type == torch.float64 else 1


def _bits63(words: Tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """63 random bits as a non-negative int64."""
    high = words[1].to(torch.int64).bitwise_and_(0x7FFFFFFF)
    return (high << 32) | _unsigned(words[0])


def _wrap_int64(value: int) -> int:
    """``value`` modulo 2**64 as a signed 64-bit Python int."""
    return ((value + _TWO63) % _TWO64) - _TWO63


def _integer_transform(low: int, span: int) -> Callable:
    """Integers in ``[low, low + span)`` as int64 (see the module notes for the bias)."""
    if span < _TWO63:
        return lambda words: torch.remainder(_bits63(words[0]), span) + low

    # span in [2**63, 2**64): take all 64 bits V and reduce once (V - span if V >= span),
    # computed in wrapping int64 arithmetic
    def transform(words):
        bits64 = words[0][1].to(torch.int64) * _TWO32 + _unsigned(
            words[0][0]
        )  # V mod 2**64, signed
        at_least_span = (bits64 ^ (-_TWO63)) >= (span - _TWO63)  # unsigned V >= span
        shift = torch.where(
            at_least_span,
            torch.tensor(_wrap_int64(low - span), dtype=torch.int64, device=bits64.device),
            torch.tensor(_wrap_int64(low), dtype=torch.int64, device=bits64.device),
        )
        return bits64 + shift

    return transform


# =============================================================================================
# argument handling (everything from information every process shares)
# =============================================================================================
def _shape_of(value, name: str) -> Tuple[int, ...]:
    """None -> (); an int or a sequence of ints -> a shape (ValueError for negative sizes)."""
    if value is None:
        return ()
    return sanitize_shape(value, name=name)


def _shape_from_args(args, name: str = "d") -> Tuple[int, ...]:
    """``rand(2, 3)`` and ``rand((2, 3))`` both give (2, 3); ``rand()`` gives ()."""
    if len(args) == 1 and not hasattr(args[0], "__index__") and args[0] is not None:
        return sanitize_shape(args[0], name=name)
    if len(args) == 1 and args[0] is None:
        return ()
    return sanitize_shape(args, name=name)


def _float_type(dtype, function: str):
    heat_type = types.canonical_heat_type(dtype)
    if not types.heat_type_is_realfloating(heat_type):
        raise TypeError(
            f"dtype must be a real floating point type for {function}, but was {heat_type.__name__}"
        )
    return heat_type


def _float_or_complex_type(dtype, function: str):
    """A real or complex floating heat type (``rand``, ``randn`` and their aliases)."""
    heat_type = types.canonical_heat_type(dtype)
    if not (
        types.heat_type_is_realfloating(heat_type) or types.heat_type_is_complexfloating(heat_type)
    ):
        raise TypeError(
            f"dtype must be a floating point or complex type for {function}, but was {heat_type.__name__}"
        )
    return heat_type


def _generate_values(
    gshape, split, comm, device, heat_type, transform_for, counters_for
) -> torch.Tensor:
    """
    This process's block of a float or complex random array. ``transform_for(torch_type)`` and
    ``counters_for(torch_type)`` give the transform and the counters per value of a real type;
    a complex array is a real draw of shape ``gshape + (2,)`` in the component type, the last
    axis read as (real, imaginary), so the layout does not depend on the split or process count.
    """
    if not types.heat_type_is_complexfloating(heat_type):
        torch_type = heat_type.torch_type()
        return _generate(
            gshape,
            split,
            comm,
            device,
            counters_for(torch_type),
            transform_for(torch_type),
            torch_type,
        )
    part_type = types.real_type_of(heat_type).torch_type()
    pairs = _generate(
        tuple(gshape) + (2,),
        split,
        comm,
        device,
        counters_for(part_type),
        transform_for(part_type),
        part_type,
    )
    return torch.view_as_complex(pairs.contiguous())


def _setup(gshape, split, device, comm):
    split = sanitize_split(gshape, split)
    return split, sanitize_device(device), sanitize_comm(comm)


def _wrap(local: torch.Tensor, gshape, heat_type, split, device, comm) -> DNDarray:
    return DNDarray(local, tuple(gshape), heat_type, split, device, comm, True)


def _is_integer(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real_scalar(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


# =============================================================================================
# state
# =============================================================================================
def seed(seed: Optional[int] = None) -> None:
    """
    Seed the generator and reset its counter.

    Collective over the default communicator when ``seed`` is None: rank 0 draws a 64-bit seed
    from the operating system's entropy and broadcasts it, so every process agrees. Also seeds
    torch's own generator (used by, e.g., dropout layers).

    Parameters
    ----------
    seed : int, optional
        An integer in ``[0, 2**64)``; None draws one from the OS.

    Raises
    ------
    TypeError
        If ``seed`` is not an integer or None.
    ValueError
        If ``seed`` is negative or not below ``2**64``.

    Examples
    --------
    >>> ht.random.seed(42)
    >>> a = ht.random.rand(3)
    >>> ht.random.seed(42)
    >>> bool((ht.random.rand(3) == a).all())
    True
    """
    if seed is None:
        value = _entropy_seed(get_comm())
    else:
        if not _is_integer(seed):
            raise TypeError(f"seed must be an integer or None, but was {type(seed).__name__}")
        value = int(seed)
        if not 0 <= value < _TWO64:
            raise ValueError(f"seed must be in [0, 2**64), but was {value}")
    _state["seed"] = value
    _state["counter"] = 0
    torch.manual_seed(value)


def get_state() -> Tuple[str, int, int, int, float]:
    """
    The state of the generator: ``("Threefry", seed, counter, 0, 0.0)``.

    The last two entries are kept for the shape of HeAT's state tuple (they are always 0).
    If the generator was never seeded, it is seeded from the OS first (collective).

    Returns
    -------
    tuple
        ``(name, seed, counter, 0, 0.0)``; :func:`set_state` restores it.

    Examples
    --------
    >>> ht.random.seed(3)
    >>> ht.random.get_state()
    ('Threefry', 3, 0, 0, 0.0)
    >>> _ = ht.random.rand(2, 5)
    >>> ht.random.get_state()[2]
    10
    """
    _ensure_seeded(get_comm())
    return (_GENERATOR, _state["seed"], _state["counter"], 0, 0.0)


def set_state(state: Sequence) -> None:
    """
    Restore a state returned by :func:`get_state`.

    Parameters
    ----------
    state : tuple or list
        ``(name, seed, counter)`` or ``(name, seed, counter, 0, 0.0)`` with name "Threefry".

    Raises
    ------
    TypeError
        If ``state`` is not a tuple or list, or seed/counter are not integers.
    ValueError
        If ``state`` has the wrong length or generator name, or seed/counter are out of range.

    Examples
    --------
    >>> state = ht.random.get_state()
    >>> a = ht.random.randn(4)
    >>> ht.random.set_state(state)
    >>> bool((ht.random.randn(4) == a).all())
    True
    """
    if not isinstance(state, (tuple, list)):
        raise TypeError(f"state must be a tuple or list, but was {type(state).__name__}")
    if len(state) not in (3, 5):
        raise ValueError(f"state must have 3 or 5 entries, but had {len(state)}")
    if state[0] != _GENERATOR:
        raise ValueError(f"state[0] must be {_GENERATOR!r} (the generator), but was {state[0]!r}")
    for position, name in ((1, "seed"), (2, "counter")):
        if not _is_integer(state[position]):
            raise TypeError(
                f"state[{position}] ({name}) must be an integer, but was {type(state[position]).__name__}"
            )
        if not 0 <= int(state[position]) < _TWO64:
            raise ValueError(
                f"state[{position}] ({name}) must be in [0, 2**64), but was {state[position]}"
            )
    _state["seed"] = int(state[1])
    _state["counter"] = int(state[2])


# =============================================================================================
# uniform floats
# =============================================================================================
def _uniform_array(gshape, dtype, split, device, comm, function: str) -> DNDarray:
    heat_type = _float_or_complex_type(dtype, function)
    split, device, comm = _setup(gshape, split, device, comm)
    local = _generate_values(
        gshape, split, comm, device, heat_type, _uniform_transform, lambda _: 1
    )
    return _wrap(local, gshape, heat_type, split, device, comm)


def rand(
    *d: int,
    dtype=types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Uniform random values in [0, 1), as :func:`numpy.random.rand`.

    Parameters
    ----------
    *d : int
        The shape (``rand(2, 3)``; a single sequence ``rand((2, 3))`` works too). No argument
        gives a 0-d array.
    dtype : floating or complex heat type
        float32 (default), float64, float16, bfloat16, complex64 or complex128; complex values
        have real and imaginary parts each uniform in [0, 1).
    split : int, optional
        The axis to distribute the result along.
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray
        Identical for a given seed whatever the number of processes and ``split``.

    Raises
    ------
    TypeError
        If a size is not an integer or ``dtype`` is not a floating point or complex type.
    ValueError
        If a size is negative or ``split`` is out of range.

    Examples
    --------
    >>> ht.random.seed(1)
    >>> x = ht.random.rand(2, 3, split=1)
    >>> x.shape, x.dtype
    ((2, 3), <class 'heat.core.types.float32'>)
    >>> ht.random.rand(4, dtype=ht.complex64).dtype
    <class 'heat.core.types.complex64'>
    """
    return _uniform_array(_shape_from_args(d), dtype, split, device, comm, "rand")


def random_sample(
    shape=None,
    dtype=types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Uniform random values in [0, 1), as :func:`numpy.random.random_sample`.

    Parameters
    ----------
    shape : int or sequence of int, optional
        The shape; None gives a 0-d array.
    dtype : floating or complex heat type
        float32 (default), float64, float16, bfloat16, complex64 or complex128; complex values
        have real and imaginary parts each uniform in [0, 1).
    split : int, optional
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``shape`` does not consist of integers or ``dtype`` is not a floating point or
        complex type.
    ValueError
        If a size is negative or ``split`` is out of range.

    Examples
    --------
    >>> ht.random.random_sample((4,), split=0).shape
    (4,)
    """
    return _uniform_array(_shape_of(shape, "shape"), dtype, split, device, comm, "random_sample")


def random(
    shape=None,
    dtype=types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Uniform random values in [0, 1); the same as :func:`random_sample`.

    Parameters
    ----------
    shape : int or sequence of int, optional
        The shape; None gives a 0-d array.
    dtype : floating or complex heat type
        float32 (default), float64, float16, bfloat16, complex64 or complex128; complex values
        have real and imaginary parts each uniform in [0, 1).
    split : int, optional
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``shape`` does not consist of integers or ``dtype`` is not a floating point or
        complex type.
    ValueError
        If a size is negative or ``split`` is out of range.

    Examples
    --------
    >>> ht.random.random((2, 2)).shape
    (2, 2)
    """
    return _uniform_array(_shape_of(shape, "shape"), dtype, split, device, comm, "random")


def ranf(
    shape=None,
    dtype=types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Uniform random values in [0, 1); the same as :func:`random_sample`.

    Parameters
    ----------
    shape : int or sequence of int, optional
        The shape; None gives a 0-d array.
    dtype : floating or complex heat type
        float32 (default), float64, float16, bfloat16, complex64 or complex128; complex values
        have real and imaginary parts each uniform in [0, 1).
    split : int, optional
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``shape`` does not consist of integers or ``dtype`` is not a floating point or
        complex type.
    ValueError
        If a size is negative or ``split`` is out of range.

    Examples
    --------
    >>> ht.random.ranf(3).shape
    (3,)
    """
    return _uniform_array(_shape_of(shape, "shape"), dtype, split, device, comm, "ranf")


def sample(
    shape=None,
    dtype=types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Uniform random values in [0, 1); the same as :func:`random_sample`.

    Parameters
    ----------
    shape : int or sequence of int, optional
        The shape; None gives a 0-d array.
    dtype : floating or complex heat type
        float32 (default), float64, float16, bfloat16, complex64 or complex128; complex values
        have real and imaginary parts each uniform in [0, 1).
    split : int, optional
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``shape`` does not consist of integers or ``dtype`` is not a floating point or
        complex type.
    ValueError
        If a size is negative or ``split`` is out of range.

    Examples
    --------
    >>> ht.random.sample(3).shape
    (3,)
    """
    return _uniform_array(_shape_of(shape, "shape"), dtype, split, device, comm, "sample")


# =============================================================================================
# normal and uniform with parameters
# =============================================================================================
def _parameter(value, name: str, device, comm):
    """A distribution parameter: a Python real (kept) or an array (as a DNDarray)."""
    if _is_real_scalar(value):
        return float(value)
    if isinstance(value, DNDarray):
        if types.heat_type_is_complexfloating(value.dtype):
            raise TypeError(f"{name} must be real, but has dtype {value.dtype.__name__}")
        return value
    if isinstance(value, (list, tuple, np.ndarray, torch.Tensor)):
        from .factories import array

        converted = array(value, device=device, comm=comm)
        if types.heat_type_is_complexfloating(converted.dtype):
            raise TypeError(f"{name} must be real, but has dtype {converted.dtype.__name__}")
        return converted
    raise TypeError(f"{name} must be a real number or an array, but was {type(value).__name__}")


def _parameter_layout(params, shape, name: str) -> Tuple[Tuple[int, ...], Optional[int]]:
    """The result shape (NumPy's broadcasting with ``shape``) and the split a parameter suggests."""
    arrays = [p for p in params if isinstance(p, DNDarray)]
    broadcast = broadcast_shapes(*(p.gshape for p in arrays)) if arrays else ()
    if shape is None:
        gshape = broadcast
    else:
        gshape = sanitize_shape(shape, name=name)
        try:
            combined = broadcast_shapes(gshape, broadcast)
        except ValueError:
            combined = None
        if combined != gshape:
            raise ValueError(
                f"{name} {gshape} does not match the broadcast shape {broadcast} of the parameters"
            )
    suggested = None
    for p in arrays:
        if p.split is not None:
            axis = p.split + len(gshape) - p.ndim
            if p.gshape[p.split] == gshape[axis]:
                suggested = axis
                break
    return gshape, suggested


def _any_negative(value: DNDarray) -> bool:
    """Whether an array has a negative entry (one reduction if it is distributed)."""
    local = bool((value.larray < 0).any().item()) if value.larray.numel() else False
    if value.split is not None and value.comm.size > 1:
        local = bool(value.comm.allreduce(local, op=MPI.LOR))
    return local


def _affine(z: DNDarray, scale, shift, heat_type) -> DNDarray:
    """``shift + scale * z`` with array parameters (broadcast, aligned by the engines)."""
    from . import arithmetics

    result = z
    if not (isinstance(scale, float) and scale == 1.0):
        result = arithmetics.multiply(result, scale)
    if not (isinstance(shift, float) and shift == 0.0):
        result = arithmetics.add(result, shift)
    if result.dtype is not heat_type:
        result = result.astype(heat_type)
    return result


def normal(
    mean=0.0,
    std=1.0,
    shape=None,
    dtype=types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Normally distributed random values, as :func:`numpy.random.normal` (``loc``, ``scale``,
    ``size``).

    Parameters
    ----------
    mean : float or array_like
        The mean; arrays broadcast against ``std`` and ``shape`` as in NumPy.
    std : float or array_like
        The standard deviation (non-negative).
    shape : int or sequence of int, optional
        The result shape; None: the broadcast shape of ``mean`` and ``std`` (0-d for scalars).
    dtype : floating heat type
        float32 (default), float64, float16 or bfloat16; the result has this type.
    split : int, optional
        The axis to distribute the result along; default: the split of a distributed parameter
        (if it spans that axis), else None.
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray
        ``mean + std * z`` with ``z`` standard normal (see :func:`randn`).

    Raises
    ------
    TypeError
        If ``mean`` or ``std`` are not real numbers or arrays, or ``dtype`` is not floating.
    ValueError
        If ``std`` has a negative entry, ``shape`` does not match the broadcast parameters, or
        ``split`` is out of range.

    Examples
    --------
    >>> ht.random.normal(10.0, 0.5, (3, 2), split=0).shape
    (3, 2)
    >>> ht.random.normal(ht.zeros(4, split=0), 2.0).split
    0
    """
    heat_type = _float_type(dtype, "normal")
    device_ = sanitize_device(device)
    comm_ = sanitize_comm(comm)
    mean = _parameter(mean, "mean", device_, comm_)
    std = _parameter(std, "std", device_, comm_)
    if isinstance(std, float) and std < 0:
        raise ValueError(f"std must be non-negative, but was {std}")
    gshape, suggested = _parameter_layout((mean, std), shape, "shape")
    split = sanitize_split(gshape, split if split is not None else suggested)
    if isinstance(std, DNDarray) and _any_negative(std):
        raise ValueError("std must be non-negative, but has negative entries")
    torch_type = heat_type.torch_type()
    if isinstance(mean, float) and isinstance(std, float):
        transform = _normal_transform(torch_type, std, mean)
        local = _generate(
            gshape, split, comm_, device_, _normal_counters(torch_type), transform, torch_type
        )
        return _wrap(local, gshape, heat_type, split, device_, comm_)
    # array parameters: z in float64 (same words as the scalar path), then the engines
    local = _generate(
        gshape,
        split,
        comm_,
        device_,
        _normal_counters(torch_type),
        _normal_transform(torch_type, out_type=torch.float64),
        torch.float64,
    )
    z = _wrap(local, gshape, types.float64, split, device_, comm_)
    return _affine(z, std, mean, heat_type)


def randn(
    *d: int,
    dtype=types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Standard normal random values (mean 0, standard deviation 1), as :func:`numpy.random.randn`.

    Parameters
    ----------
    *d : int
        The shape (``randn(2, 3)`` or ``randn((2, 3))``); no argument gives a 0-d array.
    dtype : floating or complex heat type
        float32 (default), float64, float16, bfloat16, complex64 or complex128. Complex values
        have independent normal real and imaginary parts of variance 1/2 each (total variance 1,
        as :func:`torch.randn`).
    split : int, optional
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray
        Identical for a given seed whatever the number of processes and ``split``.

    Raises
    ------
    TypeError
        If a size is not an integer or ``dtype`` is not a floating point or complex type.
    ValueError
        If a size is negative or ``split`` is out of range.

    Examples
    --------
    >>> ht.random.seed(5)
    >>> ht.random.randn(11, 3, split=0).shape
    (11, 3)
    >>> ht.random.randn(4, dtype=ht.complex128, split=0).dtype
    <class 'heat.core.types.complex128'>
    """
    return standard_normal(_shape_from_args(d), dtype, split, device, comm)


def standard_normal(
    shape=None,
    dtype=types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Standard normal random values, as :func:`numpy.random.standard_normal`.

    Parameters
    ----------
    shape : int or sequence of int, optional
        None gives a 0-d array.
    dtype, split, device, comm
        As in :func:`randn`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As in :func:`randn`.

    Examples
    --------
    >>> ht.random.standard_normal((2, 5), dtype=ht.float64).dtype
    <class 'heat.core.types.float64'>
    """
    gshape = _shape_of(shape, "shape")
    heat_type = _float_or_complex_type(dtype, "standard_normal")
    split, device, comm = _setup(gshape, split, device, comm)
    if types.heat_type_is_complexfloating(heat_type):
        # each part has variance 1/2, so E|z|**2 = 1 (torch.randn's complex convention)
        def transform_for(part_type):
            return _normal_transform(part_type, scale=np.sqrt(0.5))
    else:
        transform_for = _normal_transform
    local = _generate_values(
        gshape, split, comm, device, heat_type, transform_for, _normal_counters
    )
    return _wrap(local, gshape, heat_type, split, device, comm)


def uniform(
    low=0.0,
    high=1.0,
    size=None,
    dtype=types.float32,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Uniform random values in ``[low, high)``, as :func:`numpy.random.uniform`.

    Parameters
    ----------
    low, high : float or array_like
        The bounds; arrays broadcast against each other and ``size`` as in NumPy.
    size : int or sequence of int, optional
        The result shape; None: the broadcast shape of ``low`` and ``high``.
    dtype : floating heat type
        float32 (default), float64, float16 or bfloat16.
    split : int, optional
        Default: the split of a distributed bound (if it spans that axis), else None.
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray
        ``low + (high - low) * u`` with ``u`` from :func:`rand` (as in NumPy, rounding may
        produce ``high`` itself, and ``low > high`` gives values in ``(high, low]``).

    Raises
    ------
    TypeError
        If the bounds are not real numbers or arrays, or ``dtype`` is not floating.
    ValueError
        If ``size`` does not match the broadcast bounds or ``split`` is out of range.

    Examples
    --------
    >>> x = ht.random.uniform(-1.0, 1.0, (2, 4), split=1)
    >>> bool(((x >= -1) & (x < 1)).all())
    True
    """
    heat_type = _float_type(dtype, "uniform")
    device_ = sanitize_device(device)
    comm_ = sanitize_comm(comm)
    low = _parameter(low, "low", device_, comm_)
    high = _parameter(high, "high", device_, comm_)
    gshape, suggested = _parameter_layout((low, high), size, "size")
    split = sanitize_split(gshape, split if split is not None else suggested)
    torch_type = heat_type.torch_type()
    if isinstance(low, float) and isinstance(high, float):
        # the uniform in the target precision, scaled in float64
        base_transform = _uniform_transform(torch_type)
        width = high - low

        def transform(words):
            return (base_transform(words).to(torch.float64) * width + low).to(torch_type)

        local = _generate(gshape, split, comm_, device_, 1, transform, torch_type)
        return _wrap(local, gshape, heat_type, split, device_, comm_)
    from . import arithmetics

    local = _generate(gshape, split, comm_, device_, 1, _uniform_transform(torch_type), torch_type)
    u = _wrap(local, gshape, heat_type, split, device_, comm_).astype(types.float64)
    width = arithmetics.subtract(high, low)
    return _affine(u, width, low, heat_type)


# =============================================================================================
# integers
# =============================================================================================
def _integer_bounds(low, high, heat_type) -> Tuple[int, int]:
    for value, name in ((low, "low"), (high, "high")):
        if not _is_integer(value):
            raise TypeError(f"{name} must be an integer, but was {type(value).__name__}")
    low, high = int(low), int(high)
    if low >= high:
        raise ValueError(f"low >= high: low is {low}, high is {high}")
    if heat_type is types.bool:
        lowest, highest = 0, 1
    else:
        info = types.iinfo(heat_type)
        lowest, highest = int(info.min), int(info.max)
    if low < lowest:
        raise ValueError(f"low {low} is out of bounds for {heat_type.__name__}")
    if high - 1 > highest:
        raise ValueError(f"high {high} is out of bounds for {heat_type.__name__}")
    return low, high


def randint(
    low: int,
    high: Optional[int] = None,
    size=None,
    dtype=types.int64,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Random integers from ``[low, high)``, as :func:`numpy.random.randint`.

    Parameters
    ----------
    low : int
        The lowest value (or, if ``high`` is None, the exclusive upper bound, with low 0).
    high : int, optional
        One above the largest value.
    size : int or sequence of int, optional
        The shape; None gives a 0-d array.
    dtype : integer heat type
        int64 (default), int32, int16, int8, uint8 or bool.
    split : int, optional
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray
        ``low + u mod (high - low)`` for 63 random bits ``u`` per element: the relative bias is
        at most ``(high - low) / 2**63`` (negligible below ranges of ``2**32``).

    Raises
    ------
    TypeError
        If ``low``/``high`` are not integers or ``dtype`` is not an integer type.
    ValueError
        If ``low >= high``, a bound does not fit ``dtype``, a size is negative, or ``split`` is
        out of range.

    Examples
    --------
    >>> x = ht.random.randint(3, 7, (4, 4), split=0)
    >>> bool(((x >= 3) & (x < 7)).all())
    True
    """
    heat_type = types.canonical_heat_type(dtype)
    if not types.heat_type_is_exact(heat_type):
        raise TypeError(
            f"dtype must be an integer or bool type for randint, but was {heat_type.__name__}"
        )
    if high is None:
        low, high = 0, low
    low, high = _integer_bounds(low, high, heat_type)
    gshape = _shape_of(size, "size")
    split, device, comm = _setup(gshape, split, device, comm)
    transform = _integer_transform(low, high - low)
    local = _generate(gshape, split, comm, device, 1, transform, torch.int64)
    return _wrap(local.to(heat_type.torch_type()), gshape, heat_type, split, device, comm)


def random_integer(
    low: int,
    high: Optional[int] = None,
    size=None,
    dtype=types.int64,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    Random integers from ``[low, high)``; the same as :func:`randint` (HeAT's name).

    Parameters
    ----------
    low, high, size, dtype, split, device, comm
        As in :func:`randint`.

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError, ValueError
        As in :func:`randint`.

    Examples
    --------
    >>> ht.random.random_integer(5, size=3).shape
    (3,)
    """
    return randint(low, high, size, dtype, split, device, comm)


# =============================================================================================
# permutations
# =============================================================================================
def _keys(n: int, split: Optional[int], comm, device) -> DNDarray:
    """n random 63-bit integer sort keys (one counter each), split along 0 or not."""
    local = _generate((n,), split, comm, device, 1, lambda words: _bits63(words[0]), torch.int64)
    return _wrap(local, (n,), types.int64, split, device, comm)


def _order(keys: DNDarray) -> DNDarray:
    """The indices that sort ``keys`` (distributed sample sort if split; ties by index)."""
    from .sorting import argsort

    return argsort(keys, axis=0)


def randperm(
    n: int,
    dtype=types.int64,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    A random permutation of ``0, ..., n - 1``, as :func:`torch.randperm`.

    Every index gets a random key (counter-based) and the indices are sorted by key; for a
    split result this is a distributed sample sort, and the permutation is the same for any
    number of processes.

    Parameters
    ----------
    n : int
        The number of elements (>= 0).
    dtype : heat type
        int64 (default) or any integer or floating type that holds ``n - 1``.
    split : int, optional
        None or 0.
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray

    Raises
    ------
    TypeError
        If ``n`` is not an integer or ``dtype`` is bool or complex.
    ValueError
        If ``n`` is negative or ``split`` is out of range.

    Examples
    --------
    >>> p = ht.random.randperm(6, split=0)
    >>> sorted(p.tolist())
    [0, 1, 2, 3, 4, 5]
    """
    if not _is_integer(n):
        raise TypeError(f"n must be an integer, but was {type(n).__name__}")
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be non-negative, but was {n}")
    heat_type = types.canonical_heat_type(dtype)
    if heat_type is types.bool or types.heat_type_is_complexfloating(heat_type):
        raise TypeError(
            f"dtype must be an integer or real floating type, but was {heat_type.__name__}"
        )
    split, device, comm = _setup((n,), split, device, comm)
    order = _order(_keys(n, split, comm, device))
    return order if heat_type is types.int64 else order.astype(heat_type)


def _permuted_rows(x: DNDarray) -> DNDarray:
    """A copy of ``x`` with its rows (axis 0) in random order, distributed like ``x``."""
    split = 0 if x.split == 0 else None
    order = _order(_keys(x.gshape[0], split, x.comm, x.device))
    if x.ndim == 1 and x.split is None:
        return _wrap(x.larray[order.larray], x.gshape, x.dtype, None, x.device, x.comm)
    return x[order]


def permutation(x) -> DNDarray:
    """
    A random permutation of an integer range or of an array's rows, as
    :func:`numpy.random.permutation`.

    Parameters
    ----------
    x : int or DNDarray or array_like
        An integer ``n`` gives a permutation of ``arange(n)`` (not split); an array gives a
        copy with its rows (axis 0) permuted, distributed like ``x``.

    Returns
    -------
    DNDarray
        The same for any number of processes and any split of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is neither an integer nor array-like.
    ValueError
        If ``x`` is a negative integer or a 0-d array (NumPy raises IndexError for the latter).

    Examples
    --------
    >>> sorted(ht.random.permutation(5).tolist())
    [0, 1, 2, 3, 4]
    >>> ht.random.permutation(ht.arange(12, split=0).reshape(4, 3)).shape
    (4, 3)
    """
    if _is_integer(x):
        return randperm(int(x))
    if not isinstance(x, DNDarray):
        from .factories import array

        try:
            x = array(x)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"x must be an integer or array-like, but was {type(x).__name__}"
            ) from error
    if x.ndim == 0:
        raise ValueError("x must be an integer or at least 1-dimensional")
    return _permuted_rows(x)


def shuffle(x: DNDarray) -> None:
    """
    Shuffle the rows (axis 0) of an array in place, as :func:`numpy.random.shuffle`.

    The layout of ``x`` is kept; the result is the same for any number of processes.

    Parameters
    ----------
    x : DNDarray
        At least 1-D.

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray.
    ValueError
        If ``x`` is 0-d.

    Examples
    --------
    >>> x = ht.arange(6, split=0)
    >>> ht.random.shuffle(x)
    >>> sorted(x.tolist())
    [0, 1, 2, 3, 4, 5]
    """
    if not isinstance(x, DNDarray):
        raise TypeError(f"x must be a DNDarray, but was {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError("x must be at least 1-dimensional")
    result = _permuted_rows(x)
    if x.split is not None and x.comm.size > 1 and result.lshape != x.lshape:
        from .layout import redistribute

        result = redistribute(result, x.counts_displs()[0])
    x.larray.copy_(result.larray)


def _probabilities(p, n: int) -> torch.Tensor:
    """``p`` as a float64 tensor on every process, validated identically everywhere."""
    if isinstance(p, DNDarray):
        if p.ndim != 1:
            raise ValueError(f"p must be 1-dimensional, but has shape {p.gshape}")
        if types.heat_type_is_complexfloating(p.dtype):
            raise TypeError("p must be real")
        exact_type = p.dtype
        if p.split is not None and p.comm.size > 1:
            from .layout import resplit

            p = resplit(p, None)  # a user-sized vector of probabilities: small
        tensor = p.larray.detach().to("cpu", torch.float64)
    else:
        try:
            array = np.asarray(p)
        except Exception as error:  # anything NumPy cannot read
            raise TypeError(f"p must be array-like, but was {type(p).__name__}") from error
        if array.dtype.kind not in "biuf":
            raise TypeError(f"p must contain real numbers, but has dtype {array.dtype}")
        if array.ndim != 1:
            raise ValueError(f"p must be 1-dimensional, but has shape {array.shape}")
        exact_type = types.float32 if array.dtype == np.float32 else types.float64
        tensor = torch.from_numpy(array.astype(np.float64))
    if tensor.numel() != n:
        raise ValueError(f"a and p must have the same size, but have {n} and {tensor.numel()}")
    if bool(torch.isnan(tensor).any()):
        raise ValueError("p must not contain NaN")
    if bool((tensor < 0).any()):
        raise ValueError("p must be non-negative")
    # NumPy's tolerance: sqrt(eps) of float64, or of p's own type if that is coarser
    tolerance = np.sqrt(np.finfo(np.float64).eps)
    if types.heat_type_is_realfloating(exact_type):
        tolerance = max(tolerance, float(np.sqrt(types.finfo(exact_type).eps)))
    total = float(tensor.sum())
    if abs(total - 1.0) > tolerance:
        raise ValueError(f"p must sum to 1, but sums to {total}")
    return tensor


def choice(
    a,
    size=None,
    replace: bool = True,
    p=None,
    split: Optional[int] = None,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> DNDarray:
    """
    A random sample from a population, as :func:`numpy.random.choice`.

    Parameters
    ----------
    a : int or 1-D DNDarray or array_like
        The population: ``arange(a)`` for an integer, else the elements of ``a``.
    size : int or sequence of int, optional
        The sample shape; None gives a single value (a 0-d array).
    replace : bool
        Sample with replacement (default) or without.
    p : 1-D array_like, optional
        The probability of each element (non-negative, summing to 1); default uniform.
    split : int, optional
        The axis to distribute the sample along.
    device : str or Device, optional
    comm : MPICommunication, optional

    Returns
    -------
    DNDarray
        With replacement: every element is chosen independently (uniform: see :func:`randint`;
        with ``p``: inverse transform sampling on the cumulative sum of ``p``). Without
        replacement: every population element gets a random key (uniform: a random integer;
        with ``p``: an exponential variate of rate ``p_i``) and the sample is the ``prod(size)``
        elements with the smallest keys in key order (:func:`heat.topk`), which is the
        distribution of successive draws proportional to the remaining weights (NumPy's). The
        same for any number of processes.

    Raises
    ------
    TypeError
        If ``a`` is not an integer or array-like, ``replace`` is not a bool, or ``p`` is not
        real.
    ValueError
        If ``a`` is a negative integer, not 1-D, empty while samples are requested, ``p``
        does not match ``a`` or does not sum to 1 or has negative entries, or a sample without
        replacement is larger than the population (or than the number of non-zero ``p``).

    Examples
    --------
    >>> ht.random.choice(5, 3).shape
    (3,)
    >>> sorted(ht.random.choice(ht.arange(4) * 10, 4, replace=False).tolist())
    [0, 10, 20, 30]
    """
    if not isinstance(replace, (bool, np.bool_)):
        raise TypeError(f"replace must be a bool, but was {type(replace).__name__}")
    device = sanitize_device(device)
    comm = sanitize_comm(comm)
    if _is_integer(a):
        n = int(a)
        if n < 0:
            raise ValueError(f"a must be a non-negative integer, but was {n}")
        population = None
    else:
        if not isinstance(a, DNDarray):
            from .factories import array

            try:
                a = array(a, device=device, comm=comm)
            except (TypeError, ValueError) as error:
                raise TypeError(
                    f"a must be an integer or array-like, but was {type(a).__name__}"
                ) from error
        if a.ndim != 1:
            raise ValueError(f"a must be 1-dimensional, but has shape {a.gshape}")
        n = a.gshape[0]
        population = a
        comm, device = a.comm, a.device
    gshape = _shape_of(size, "size")
    m = _prod(gshape)
    split = sanitize_split(gshape, split)
    if n == 0 and m > 0:
        raise ValueError("a cannot be empty unless no samples are taken")
    weights = None if p is None else _probabilities(p, n)
    if not replace:
        if m > n:
            raise ValueError(
                f"cannot take a larger sample ({m}) than the population ({n}) when replace=False"
            )
        if weights is not None and m > int((weights > 0).sum()):
            raise ValueError(f"fewer non-zero entries in p than the sample size {m}")

    if replace:
        if weights is None:
            transform = _integer_transform(0, max(n, 1))
        else:
            cdf = torch.cumsum(weights, 0)
            cdf = (cdf / cdf[-1]).to(device.torch_device)  # the last entry is exactly 1

            def transform(words):
                return torch.searchsorted(cdf, _uniform53(words[0]), right=True)

        index_local = _generate(gshape, split, comm, device, 1, transform, torch.int64)
        indices = _wrap(index_local, gshape, types.int64, split, device, comm)
    else:
        # the m smallest of n random keys, in key order (ties, practically impossible, by index):
        # a local linear-time selection per process, then a small exchange of the candidates
        from .sorting import topk

        if population is not None:
            key_split = population.split
        else:
            key_split = 0 if comm.size > 1 else None
        if weights is None:
            keys = _keys(n, key_split, comm, device)
        else:
            keys = _weighted_keys(n, key_split, comm, device, weights)
        _, smallest = topk(keys, m, dim=0, largest=False)
        indices = _to_layout(smallest, gshape, split)
    if population is None:
        return indices
    result = population[indices]
    if result.split != split:
        from .layout import resplit

        result = resplit(result, split)
    return result


def _to_layout(flat: DNDarray, gshape: Tuple[int, ...], split: Optional[int]) -> DNDarray:
    """A 1-D array reshaped to ``gshape`` and distributed along ``split``."""
    from . import manipulations
    from .layout import resplit

    if len(gshape) == 0:
        result = manipulations.reshape(flat, gshape)
    else:
        result = manipulations.reshape(flat, gshape, new_split=split if split is not None else 0)
    if result.split != split:
        result = resplit(result, split)
    return result


def _weighted_keys(n: int, split, comm, device, weights: torch.Tensor) -> DNDarray:
    """Exponential keys ``-log(1 - u) / p_i`` (infinite where ``p_i == 0``), one counter each."""
    local_u = _generate(
        (n,), split, comm, device, 1, lambda words: _uniform53(words[0]), torch.float64
    )
    offset, lshape, _ = comm.chunk((n,), split)
    local_weights = weights[offset : offset + lshape[0]].to(local_u.device)
    exponential = -torch.log1p(-local_u)
    keys = torch.where(
        local_weights > 0, exponential / local_weights, torch.full_like(exponential, float("inf"))
    )
    return _wrap(keys, (n,), types.float64, split, device, comm)
