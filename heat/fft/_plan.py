"""
Validation of the transforms' arguments and the distributed execution of a chain of 1-D
transforms (the machinery behind every function of :mod:`heat.fft`).

A transform is described as a list of *groups*, each ``(kind, [(axis, n), ...])`` in the order of
application, where ``kind`` is ``"fft"``/``"ifft"`` (complex-to-complex; the 1-D transforms of one
group commute, except two along the same axis, which keep their order), ``"rfft"`` (real to
complex, a single axis) or ``"irfft"`` (complex to real, a single axis). ``n`` is the length the
input is cut or zero-padded to along ``axis`` before the 1-D transform.

Execution (:func:`execute`) alternates between two layouts, split along the input's split axis
``s`` and along a target axis ``t``: every transform along an axis that is not split in the
current layout runs on the local block (NumPy's pocketfft on CPU tensors, ``torch.fft`` on
GPU); when the next transform is along the split axis, the array is resplit (one all-to-all)
to the other layout. For every transform NumPy offers that is at most two all-to-alls
(``s -> t`` and back). A split 1-D array has no ``t``: each 1-D transform of it is the
distributed four-step algorithm (:func:`_four_step`), for a prime length Bluestein's
(:func:`_bluestein`, built on three four-step transforms); only lengths below 4 are
transformed whole on every process (:func:`_gathered`).
"""

from __future__ import annotations

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

from ..core import types
from ..core.complex_math import conj, real
from ..core.dndarray import DNDarray
from ..core.joining import concatenate
from ..core.layout import balance, redistribute, resplit
from ..core.manipulations import flip, pad
from ..core.sanitation import sanitize_axis, sanitize_in

__all__ = ["check_input", "check_n", "check_norm", "cook_nd", "execute", "swap_norm"]

NORMS = (None, "backward", "ortho", "forward")
_SWAPPED = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}

Group = Tuple[str, List[Tuple[int, int]]]


# ---------------------------------------------------------------------------------------------
# argument validation (global information only: raises alike on every rank, before any
# communication)
# ---------------------------------------------------------------------------------------------
def check_input(x, real: bool = False) -> None:
    """``x`` must be a DNDarray of at least one dimension (and real when ``real``)."""
    sanitize_in(x, "x")
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension, but is 0-dimensional")
    if real and types.heat_type_is_complexfloating(x.dtype):
        raise TypeError(f"x must be real for this transform, but has dtype {x.dtype.__name__}")


def check_norm(norm) -> None:
    if norm not in NORMS:
        raise ValueError(f'norm must be None, "backward", "ortho" or "forward", but was {norm!r}')


def swap_norm(norm: Optional[str]) -> str:
    """The norm of the opposite direction (``hfft`` is an ``irfft`` with swapped norm)."""
    return _SWAPPED[norm]


def check_n(n, default: int, name: str = "n") -> int:
    """The number of points of a 1-D transform: ``n`` or ``default``, an integer >= 1."""
    if n is None:
        n = default
    elif isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"{name} must be None or an integer, but was {type(n).__name__}")
    n = n.__index__()
    if n < 1:
        raise ValueError(f"{name} must be at least 1 (the number of FFT data points), but is {n}")
    return n


def check_axis(x: DNDarray, axis, name: str = "axis") -> int:
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{name} must be an integer, but was {type(axis).__name__}")
    return sanitize_axis(x.gshape, axis, name)


def cook_nd(x: DNDarray, s, axes, inverse_real: bool = False) -> Tuple[List[int], List[int]]:
    """
    The lengths and axes of an n-D transform, as NumPy 2: ``axes`` None means all axes, or the
    last ``len(s)`` when ``s`` is given; ``s[i] == -1`` means the input length along ``axes[i]``;
    for ``inverse_real`` without ``s`` the last length is ``2 * (m - 1)``. Axes may repeat.
    """
    if s is not None:
        if hasattr(s, "__index__") or isinstance(s, (str, bytes)):
            raise TypeError(f"s must be None or a sequence of integers, but was {type(s).__name__}")
        try:
            s = list(s)
        except TypeError:
            raise TypeError(
                f"s must be None or a sequence of integers, but was {type(s).__name__}"
            ) from None
        for value in s:
            if isinstance(value, bool) or not hasattr(value, "__index__"):
                raise TypeError(f"s must contain integers, but contained {value!r}")
        s = [value.__index__() for value in s]
    if axes is None:
        axes = list(range(x.ndim)) if s is None else list(range(-len(s), 0))
    elif hasattr(axes, "__index__"):
        axes = [axes]
    if isinstance(axes, (str, bytes)):
        raise TypeError(
            f"axes must be None or a sequence of integers, but was {type(axes).__name__}"
        )
    try:
        axes = list(axes)
    except TypeError:
        raise TypeError(
            f"axes must be None or a sequence of integers, but was {type(axes).__name__}"
        ) from None
    # one by one: NumPy allows an axis to appear twice (the transform is applied twice)
    axes = [sanitize_axis(x.gshape, a, "axes") for a in axes]
    if not axes:
        raise ValueError("axes must name at least one axis")
    if s is None:
        s = [x.gshape[a] for a in axes]
        if inverse_real:
            s[-1] = 2 * (x.gshape[axes[-1]] - 1)
    elif len(s) != len(axes):
        raise ValueError(f"s and axes have different lengths: {len(s)} and {len(axes)}")
    s = [x.gshape[a] if value == -1 else value for value, a in zip(s, axes)]
    for value in s:
        if value < 1:
            raise ValueError(f"s must contain lengths of at least 1 (or -1), but was {s}")
    return s, axes


# ---------------------------------------------------------------------------------------------
# dtypes (NumPy 2: float32 stays single precision, integers and bool become double precision)
# ---------------------------------------------------------------------------------------------
def compute_dtype(heat_type) -> torch.dtype:
    """The torch type the transforms run in for input of type ``heat_type``."""
    if types.heat_type_is_complexfloating(heat_type):
        return heat_type.torch_type()
    if heat_type in (types.float32, types.float64):
        return heat_type.torch_type()
    if types.heat_type_is_realfloating(heat_type):  # float16, bfloat16: no CPU kernels
        return torch.float32
    return torch.float64  # bool and integers


def real_output_dtype(heat_type) -> torch.dtype:
    """A complex-to-real transform's result type: NumPy's ``result_type(x.real.dtype, 1.0)``."""
    real = types.real_type_of(heat_type)
    if types.heat_type_is_realfloating(real):
        return real.torch_type()
    return torch.float64


# ---------------------------------------------------------------------------------------------
# execution
# ---------------------------------------------------------------------------------------------
def _output_length(kind: str, n: int) -> int:
    return n // 2 + 1 if kind == "rfft" else n


def _apply_local(
    local: torch.Tensor, kind: str, ops: Sequence[Tuple[int, int]], norm
) -> torch.Tensor:
    """
    The 1-D transforms ``ops`` of one kind on a local block, in order. On CPU tensors NumPy's
    pocketfft runs on the tensor's memory (zero-copy both ways): torch's CPU kernels were 3 to
    500 times slower here for all but the largest 1-D transforms (many times slower along a
    non-last axis); GPU tensors stay with torch.fft.
    """
    if local.numel() == 0:
        # torch's CPU kernels reject empty batches; an empty axis padded to n points is zeros
        shape = list(local.shape)
        for axis, n in ops:
            shape[axis] = _output_length(kind, n)
        dtype = local.dtype
        if kind == "irfft":
            dtype = local.real.dtype if local.is_complex() else dtype
        elif not local.is_complex():
            dtype = torch.complex128 if dtype == torch.float64 else torch.complex64
        return torch.zeros(shape, dtype=dtype, device=local.device)
    on_cpu = local.device.type == "cpu"
    if on_cpu:
        local = local.resolve_conj().resolve_neg()  # NumPy reads plain memory only
    if kind in ("fft", "ifft"):
        if on_cpu:
            function = np.fft.fftn if kind == "fft" else np.fft.ifftn
        else:
            function = torch.fft.fftn if kind == "fft" else torch.fft.ifftn
        # distinct consecutive axes go in one call; a repeated axis starts the next call
        start = 0
        while start < len(ops):
            stop, seen = start, set()
            while stop < len(ops) and ops[stop][0] not in seen:
                seen.add(ops[stop][0])
                stop += 1
            sizes, axes = [n for _, n in ops[start:stop]], [a for a, _ in ops[start:stop]]
            if on_cpu:
                local = torch.from_numpy(function(local.numpy(), s=sizes, axes=axes, norm=norm))
            else:
                local = function(local, s=sizes, dim=axes, norm=norm)
            start = stop
        return local
    ((axis, n),) = ops
    if on_cpu:
        function = np.fft.rfft if kind == "rfft" else np.fft.irfft
        return torch.from_numpy(function(local.numpy(), n=n, axis=axis, norm=norm))
    function = torch.fft.rfft if kind == "rfft" else torch.fft.irfft
    return function(local, n=n, dim=axis, norm=norm)


def _factor(n: int) -> Tuple[int, int]:
    """``(n1, n2)`` with ``n1 * n2 == n`` and ``n1 <= n2`` as close to ``sqrt(n)`` as possible."""
    n1 = math.isqrt(n)
    while n1 > 1 and n % n1:
        n1 -= 1
    return n1, n // n1


def _resize(x: DNDarray, n: int) -> DNDarray:
    """The split vector ``x`` cut or zero-padded to ``n`` points."""
    m = x.gshape[0]
    if n < m:
        return x[:n]
    if n > m:
        return pad(x, (0, n - m))
    return x


def _as_rows(vector: DNDarray, rows: int, width: int) -> DNDarray:
    """
    The split vector as the row-major ``(rows, width)`` matrix split along its rows: the rows
    are first redistributed so that every block starts at a row boundary (one all-to-all that
    moves only the parts near the old block boundaries), then each block is viewed locally.
    """
    comm = vector.comm
    counts = tuple(c * width for c in comm.counts_displs_shape((rows,), 0)[0])
    if tuple(vector.counts_displs()[0]) != counts:
        vector = redistribute(vector, counts)
    local = vector.larray.reshape(-1, width)
    return DNDarray(local, (rows, width), vector.dtype, 0, vector.device, comm, True)


def _as_vector(matrix: DNDarray) -> DNDarray:
    """The row-major flattening of a matrix split along its rows, as a balanced split vector."""
    local = matrix.larray.reshape(-1)
    size = matrix.gshape[0] * matrix.gshape[1]
    vector = DNDarray(local, (size,), matrix.dtype, 0, matrix.device, matrix.comm, None)
    return balance(vector)


def _four_step(x: DNDarray, kind: str, norm) -> DNDarray:
    """
    The complex transform of the split complex vector ``x`` of length ``N = N1 * N2``, with
    ``N1, N2 > 1`` (Bailey's four-step algorithm, the decimation in frequency form):
    with ``B[n1, n2] = x[N2 * n1 + n2]``,
    ``X[k1 + N1 * k2] = sum_n2 w_N^(n2 k1) w_N2^(n2 k2) sum_n1 B[n1, n2] w_N1^(n1 k1)``.

    The vector becomes the (N1, N2) matrix ``B`` split along its columns, the columns are
    transformed locally and multiplied by the twiddle factors ``w_N^(n2 k1)``, the matrix is
    resplit along its rows, the rows are transformed locally, and the transposed matrix is read
    back as a split vector. The three full exchanges are resplits (all-to-alls of strided
    views); the two redistributions that align blocks with rows move only the data near block
    boundaries. Every process holds about ``N / p`` points throughout. The 1-D transforms
    carry ``norm`` (its factors multiply over the two stages).
    """
    big = x.gshape[0]
    n1, n2 = _factor(big)
    matrix = resplit(_as_rows(x, n1, n2), 1)
    local = _apply_local(matrix.larray, kind, [(0, n1)], norm)
    # twiddle factors of this process's columns, from exact integer products mod N
    offset = sum(matrix.counts_displs()[0][: x.comm.rank])
    columns = torch.arange(offset, offset + local.shape[1], dtype=torch.int64, device=local.device)
    rows = torch.arange(n1, dtype=torch.int64, device=local.device)
    sign = -1.0 if kind == "fft" else 1.0
    angle = ((rows[:, None] * columns[None, :]) % big).double() * (sign * 2.0 * math.pi / big)
    local = local * torch.polar(torch.ones_like(angle), angle).to(local.dtype)
    matrix = DNDarray(
        local, (n1, n2), types.canonical_heat_type(local.dtype), 1, x.device, x.comm, True
    )
    matrix = resplit(matrix, 0)
    local = _apply_local(matrix.larray, kind, [(1, n2)], norm)
    # X[k1 + N1 * k2] is the transposed (N2, N1) matrix read row by row
    transposed = DNDarray(
        local.T, (n2, n1), types.canonical_heat_type(local.dtype), 1, x.device, x.comm, True
    )
    return _as_vector(resplit(transposed, 0))


def _gathered(x: DNDarray, kind: str, n: int, norm) -> DNDarray:
    """One 1-D transform of the split vector ``x`` computed whole on every process."""
    whole = resplit(x, None)
    local = _apply_local(whole.larray, kind, [(0, n)], norm)
    whole = DNDarray(
        local,
        tuple(local.shape),
        types.canonical_heat_type(local.dtype),
        None,
        x.device,
        x.comm,
        True,
    )
    return resplit(whole, 0)


def _offset(x: DNDarray) -> int:
    """The global index of this process's first element of the split vector ``x``."""
    return sum(x.counts_displs()[0][: x.comm.rank])


def _chirp(start: int, count: int, big: int, sign: float, device) -> torch.Tensor:
    """``exp(sign * i * pi * j**2 / big)`` for ``j`` in ``[start, start + count)``, exactly reduced."""
    j = torch.arange(start, start + count, dtype=torch.int64, device=device)
    angle = ((j * j) % (2 * big)).double() * (sign * math.pi / big)
    return torch.polar(torch.ones_like(angle), angle)


def _scaled(x: DNDarray, factor: float) -> DNDarray:
    if factor == 1.0:
        return x
    return DNDarray(x.larray * factor, x.gshape, x.dtype, x.split, x.device, x.comm, x._balanced)


def _bluestein(x: DNDarray, kind: str, norm) -> DNDarray:
    """
    The complex transform of the split complex vector ``x`` of any length ``N`` (a prime one,
    which has no four-step factorization) as a circular convolution (Bluestein's algorithm):
    with ``c_j = exp(-+ i pi j^2 / N)``, ``X_k = c_k sum_n (x_n c_n) conj(c_(k - n))``, the
    convolution done with three four-step transforms of a power-of-two length ``M >= 2N - 1``.
    Every process keeps about ``M / p`` points; the chirps are computed locally from global
    indices.
    """
    big = x.gshape[0]
    padded = 1 << (2 * big - 2).bit_length()
    sign = -1.0 if kind == "fft" else 1.0
    device, dtype = x.larray.device, x.larray.dtype
    chirp = _chirp(_offset(x), x.lshape[0], big, sign, device).to(dtype)
    a = pad(_scaled_local(x, chirp), (0, padded - big))
    # b_j = conj(c_j) for |j| < N, read circularly: b_(M - j) = b_j; zero in between
    start, lshape, _ = x.comm.chunk((padded,), 0)
    j = torch.arange(start, start + lshape[0], dtype=torch.int64, device=device)
    distance = torch.minimum(j, padded - j)
    angle = ((distance * distance) % (2 * big)).double() * (-sign * math.pi / big)
    values = torch.polar(torch.ones_like(angle), angle).to(dtype)
    values = torch.where(distance < big, values, torch.zeros_like(values))
    kernel = DNDarray(values, (padded,), x.dtype, 0, x.device, x.comm, True)
    spectrum = _four_step(a, "fft", "backward")
    kernel_spectrum = _four_step(kernel, "fft", "backward")
    product = DNDarray(
        spectrum.larray * kernel_spectrum.larray, (padded,), x.dtype, 0, x.device, x.comm, True
    )
    convolution = balance(_four_step(product, "ifft", "backward")[:big])
    result = _scaled_local(
        convolution,
        _chirp(_offset(convolution), convolution.lshape[0], big, sign, device).to(dtype),
    )
    unnormalized_is = "backward" if kind == "fft" else "forward"
    if norm == "ortho":
        return _scaled(result, 1.0 / math.sqrt(big))
    if (norm or "backward") != unnormalized_is:
        return _scaled(result, 1.0 / big)
    return result


def _scaled_local(x: DNDarray, factors: torch.Tensor) -> DNDarray:
    """``x`` times this process's ``factors`` (as long as its block)."""
    return DNDarray(x.larray * factors, x.gshape, x.dtype, x.split, x.device, x.comm, x._balanced)


def _complex_vector(x: DNDarray, kind: str, norm) -> DNDarray:
    """The complex transform of a split complex vector: four-step, or Bluestein for primes."""
    if _factor(x.gshape[0])[0] == 1:
        return _bluestein(x, kind, norm)
    return _four_step(x, kind, norm)


def _vector_transform(x: DNDarray, kind: str, n: int, norm) -> DNDarray:
    """
    One 1-D transform of a vector split over several processes. Complex transforms use
    :func:`_four_step` (or :func:`_bluestein` for a prime length); ``rfft`` is the complex
    transform of the real input, cut to ``n // 2 + 1`` terms; ``irfft`` the real part of the
    complex inverse transform of the Hermitian extension (which, as NumPy, ignores the
    imaginary parts of the zero and Nyquist terms). Lengths below 4 are transformed whole on
    every process (a few numbers).
    """
    if n < 4:
        return _gathered(x, kind, n, norm)
    complex_type = types.complex_type_for(x.dtype)
    if kind in ("fft", "ifft"):
        return _complex_vector(_resize(x, n).astype(complex_type), kind, norm)
    if kind == "rfft":
        full = _complex_vector(_resize(x, n).astype(complex_type), "fft", norm)
        return balance(full[: n // 2 + 1])
    half = _resize(x.astype(complex_type), n // 2 + 1)
    tail = conj(flip(half[1 : (n - 1) // 2 + 1], 0))
    extended = balance(concatenate([half, tail], axis=0))
    return real(_complex_vector(extended, "ifft", norm))


def _choose_target(x: DNDarray, axes: set) -> int:
    """
    The axis the split moves to while the split axis is transformed: preferably one that is not
    transformed at all (then everything happens in that layout), else the longest other one.
    """
    split = x.split
    untouched = [a for a in range(x.ndim) if a not in axes]
    candidates = untouched or [a for a in range(x.ndim) if a != split]
    return max(candidates, key=lambda a: (x.gshape[a], -a))


def execute(
    x: DNDarray,
    groups: Sequence[Group],
    norm,
    output_dtype: Optional[torch.dtype] = None,
    conjugate_input: bool = False,
    conjugate_output: bool = False,
) -> DNDarray:
    """
    Run the transform ``groups`` on ``x`` (validated already) and return a DNDarray with the
    same split as ``x``. ``output_dtype``: cast the result to it (a complex-to-real transform of
    float16 input, say). ``conjugate_input``/``conjugate_output``: conjugate before/after.
    """
    local = x.larray.to(compute_dtype(x.dtype))
    if conjugate_input and local.is_complex():
        local = local.conj_physical()
    gshape = list(x.gshape)
    split, balanced, comm = x.split, x._balanced, x.comm
    transformed = {axis for _, ops in groups for axis, _ in ops}
    distributed = split is not None and comm.size > 1 and split in transformed

    def move(local: torch.Tensor, source: Optional[int], target: Optional[int]) -> torch.Tensor:
        heat_type = types.canonical_heat_type(local.dtype)
        block = DNDarray(local, tuple(gshape), heat_type, source, x.device, comm, balanced)
        return resplit(block, target).larray

    if not distributed:
        for kind, ops in groups:
            local = _apply_local(local, kind, ops, norm)
            for axis, n in ops:
                gshape[axis] = _output_length(kind, n)
    elif x.ndim == 1:
        # no other axis to move the split to: the distributed 1-D transform ("four-step")
        vector = DNDarray(
            local,
            tuple(gshape),
            types.canonical_heat_type(local.dtype),
            split,
            x.device,
            comm,
            balanced,
        )
        for kind, ops in groups:
            for _, n in ops:
                vector = _vector_transform(vector, kind, n, norm)
        local, balanced, gshape = vector.larray, vector._balanced, list(vector.gshape)
    else:
        target = _choose_target(x, transformed)
        current = split
        for kind, ops in groups:
            remaining = list(ops)
            while remaining:
                if kind in ("fft", "ifft"):
                    # transforms along different axes commute: do now what is local now
                    here = [op for op in remaining if op[0] != current]
                else:
                    here = remaining if remaining[0][0] != current else []
                if here:
                    local = _apply_local(local, kind, here, norm)
                    for axis, n in here:
                        gshape[axis] = _output_length(kind, n)
                    remaining = (
                        [op for op in remaining if op[0] == current]
                        if kind in ("fft", "ifft")
                        else []
                    )
                if remaining:
                    other = target if current == split else split
                    local = move(local, current, other)
                    balanced, current = True, other
        if current != split:
            local = move(local, current, split)
            balanced = True
    if conjugate_output and local.is_complex():
        local = local.conj_physical()
    if output_dtype is not None and local.dtype != output_dtype:
        local = local.to(output_dtype)
    heat_type = types.canonical_heat_type(local.dtype)
    return DNDarray(local, tuple(gshape), heat_type, split, x.device, comm, balanced)
