"""
Printing DNDarrays: NumPy-like text of the global array, print options, and rank-0 printing.

``repr(x)`` and ``str(x)`` show the *global* array in NumPy's layout (brackets, ``", "``
separators, line width, precision, ``...`` summarization of large arrays), followed by heat's
metadata::

    DNDarray([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=ht.int64, device=cpu:0, split=0)

Following HeAT's convention, ``str`` and ``repr`` give the same text (NumPy's ``str`` would drop
the metadata; for a distributed array the split axis and device are worth seeing), and the
metadata always follows the last line of the array text (NumPy's ``repr`` moves ``dtype=`` to a
new line when the line would grow past ``linewidth``). Empty arrays other than shape ``(0,)`` also
show ``shape=...``, as in NumPy.

Only the elements that are shown travel: when an array has more than ``threshold`` elements,
each process selects the first and last ``edgeitems`` entries along every axis from its local
block, and one all-gather of these small pieces assembles the shown part of the array on every
process, which all build the same string. The digits are exactly those ``numpy.array2string``
prints for the full array (``separator=", "``): the shown part is formatted by NumPy itself, with
a placeholder in the middle of each summarized axis so that NumPy puts ``...`` where it would for
the full array (NumPy fits its number format on the shown elements only, and never displays the
placeholders).

Printed once
------------
With more than one process, ``print(x)`` shows ``x`` once, from rank 0 of its communicator, not
once per process. Every process computes the same text (gathering the shown elements is
collective: every process must call ``print``, ``str`` or ``repr``); on the other processes the
text is marked, and heat's filter of their ``sys.stdout`` -- installed at import on every process
but rank 0 of the world -- drops the output line it is written in. So ``print(x)``,
``print("x =", x)`` and the interpreter's echo of ``x`` appear once, and everything else those
processes print passes unchanged (the filter passes a line on when it is complete, or at
``flush()``). Text built from the array (``f"{x}"``, ``"%s" % x``, ``str([x])``, logging) is
plain text, printed by every process that prints it; :func:`print0` prints anything on rank 0
only; after :func:`local_printing` every process prints its own block. ``sys.stdout =
sys.__stdout__`` removes the filter.

``if rank == 0: print(x)`` on a split array waits forever (in HeAT too): rank 0 waits in the
gather that the other processes never join. heat cannot tell this from processes that are only
slow to arrive, so it does not abort; after ``REPORT_WAIT_SECONDS`` (10 s) the waiting process
says on stderr what it waits for and how to print instead, and goes on waiting.
"""

from __future__ import annotations

import builtins
import math
import sys
import threading
from typing import Dict, List, Optional, Union

import numpy as np
import torch

from .communication import MPI_WORLD
from .dndarray import DNDarray
from .sanitation import check_int

__all__ = [
    "array_repr",
    "array_str",
    "get_printoptions",
    "global_printing",
    "local_printing",
    "print0",
    "set_printoptions",
]

# NumPy's defaults: heat shows the digits NumPy would show for the same data
_PROFILES: Dict[str, Dict[str, Union[int, float]]] = {
    "default": {"precision": 8, "threshold": 1000, "edgeitems": 3, "linewidth": 75},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 75},
    "full": {"precision": 8, "threshold": math.inf, "edgeitems": 3, "linewidth": 75},
}

_OPTIONS: Dict[str, object] = dict(_PROFILES["default"], sci_mode=None)

# global (default) or process-local printing
_MODE = {"local": False}
_PREFIX = "DNDarray("
#: seconds a process waits in the gather of a print before it says on stderr what it waits for
REPORT_WAIT_SECONDS = 10.0


# ---------------------------------------------------------------------------------- options
def _check_threshold(value) -> Union[int, float]:
    if isinstance(value, float) and not isinstance(value, builtins.bool):
        if math.isinf(value) and value > 0:
            return math.inf
        raise ValueError(f"threshold must be a non-negative integer or math.inf, but was {value}")
    return check_int(value, "threshold", 0)


def set_printoptions(
    precision: Optional[int] = None,
    threshold: Optional[Union[int, float]] = None,
    edgeitems: Optional[int] = None,
    linewidth: Optional[int] = None,
    profile: Optional[str] = None,
    sci_mode: Optional[bool] = None,
) -> None:
    """
    Set how DNDarrays are printed (on this process; call it on every process).

    Arguments left at None keep their current value, except ``sci_mode``, which is always set
    (None restores the automatic choice), as in :func:`torch.set_printoptions`. A ``profile``
    is applied first; the other arguments then override it.

    Parameters
    ----------
    precision : int, optional
        Number of digits after the decimal point (at most; NumPy's ``floatmode="maxprec"``).
        Default 8, as in NumPy.
    threshold : int or math.inf, optional
        Arrays with more elements than this are summarized with ``...``. Default 1000.
        ``math.inf`` (or ``sys.maxsize``) never summarizes.
    edgeitems : int, optional
        Number of leading and trailing entries shown along each summarized axis (at least 1).
        Default 3.
    linewidth : int, optional
        Characters per line before wrapping. Default 75.
    profile : str, optional
        ``"default"`` (NumPy's defaults), ``"short"`` (precision 2, 2 edge items) or
        ``"full"`` (never summarize).
    sci_mode : bool or None, optional
        None: NumPy's automatic choice between fixed and scientific notation. True: always
        scientific. False: suppress scientific notation for small numbers (NumPy's
        ``suppress=True``; values of 1e8 and above still use it, as in NumPy).

    Raises
    ------
    TypeError
        If an argument has the wrong type (naming the argument).
    ValueError
        If ``precision`` or ``threshold`` is negative, ``edgeitems`` or ``linewidth`` is less
        than 1, or ``profile`` is unknown.

    Examples
    --------
    >>> ht.set_printoptions(precision=2)
    >>> ht.array([1.23456, 2.0])
    DNDarray([1.23, 2.  ], dtype=ht.float32, device=cpu:0, split=None)
    >>> ht.set_printoptions(profile="default")
    """
    # validate everything first, so that a bad call changes nothing
    updates: Dict[str, object] = {}
    if profile is not None:
        if not isinstance(profile, str):
            raise TypeError(f"profile must be a str, but was {type(profile).__name__}")
        if profile not in _PROFILES:
            raise ValueError(f"profile must be one of {sorted(_PROFILES)}, but was {profile!r}")
        updates.update(_PROFILES[profile])
    if precision is not None:
        updates["precision"] = check_int(precision, "precision", 0)
    if threshold is not None:
        updates["threshold"] = _check_threshold(threshold)
    if edgeitems is not None:
        updates["edgeitems"] = check_int(edgeitems, "edgeitems", 1)
    if linewidth is not None:
        updates["linewidth"] = check_int(linewidth, "linewidth", 1)
    if sci_mode is not None and not isinstance(sci_mode, builtins.bool):
        raise TypeError(f"sci_mode must be a bool or None, but was {type(sci_mode).__name__}")
    updates["sci_mode"] = sci_mode
    _OPTIONS.update(updates)


def get_printoptions() -> Dict[str, object]:
    """
    The current print options.

    Returns
    -------
    dict
        A copy with the keys ``precision``, ``threshold``, ``edgeitems``, ``linewidth`` and
        ``sci_mode`` (see :func:`set_printoptions`).

    Examples
    --------
    >>> ht.get_printoptions()["precision"]
    8
    """
    return dict(_OPTIONS)


def local_printing() -> None:
    """
    Print the process-local blocks instead of the global array.

    Afterwards ``repr(x)``/``str(x)`` show this process's ``x.larray``, prefixed with
    ``[rank/size]``, and communicate nothing (so processes may print independently).
    :func:`global_printing` restores the default.

    Examples
    --------
    >>> ht.local_printing()
    >>> x = ht.arange(10, split=0)
    >>> print(x)  # on rank 0 of 3 processes
    [0/3] DNDarray([0, 1, 2, 3], dtype=ht.int64, device=cpu:0, split=0)
    >>> ht.global_printing()
    """
    _MODE["local"] = True


def global_printing() -> None:
    """
    Print the global array (the default): ``repr(x)`` is collective for split arrays and gives
    the same text on every process, and ``print(x)`` shows it once, from rank 0 (see the
    module's notes).

    Examples
    --------
    >>> ht.global_printing()
    >>> print(ht.arange(3, split=0))
    DNDarray([0, 1, 2], dtype=ht.int64, device=cpu:0, split=0)
    """
    _MODE["local"] = False


def print0(*args, **kwargs) -> None:
    """
    Print on rank 0 of the world communicator only.

    DNDarray arguments are first converted to text on *every* process (collective, so call
    ``print0`` on every process); the other arguments are passed to :func:`print` unchanged.
    (``print(x)`` of a DNDarray already shows it once; ``print0`` does so for any text, e.g.
    ``ht.print0(f"loss {loss:.3f}")``.)

    Parameters
    ----------
    *args
        The objects to print.
    **kwargs
        Keyword arguments of :func:`print` (``sep``, ``end``, ``file``, ``flush``).

    Examples
    --------
    >>> x = ht.arange(4, split=0)
    >>> ht.print0("x =", x)
    x = DNDarray([0, 1, 2, 3], dtype=ht.int64, device=cpu:0, split=0)
    """
    converted = [str(a) if isinstance(a, DNDarray) else a for a in args]
    if MPI_WORLD.rank == 0:
        print(*converted, **kwargs)


# ---------------------------------------------------------------------------------- formatting
def _kept_ranges(n: int, edgeitems: int, summarize: bool) -> Optional[List[range]]:
    """The global index ranges shown along an axis of length ``n``; None: all of them."""
    if not summarize or n <= 2 * edgeitems:
        return None
    return [range(0, edgeitems), range(n - edgeitems, n)]


def _select(tensor: torch.Tensor, axis: int, ranges: List[range], offset: int = 0) -> torch.Tensor:
    """Entries of ``tensor`` along ``axis`` whose global index ``offset + i`` is in ``ranges``."""
    length = tensor.shape[axis]
    pieces = []
    for r in ranges:
        start = max(r.start - offset, 0)
        stop = min(r.stop - offset, length)
        if stop > start:
            pieces.append(tensor.narrow(axis, start, stop - start))
    if not pieces:
        return tensor.narrow(axis, 0, 0)
    if len(pieces) == 1:
        return pieces[0]
    return torch.cat(pieces, dim=axis)


def _to_numpy(tensor: torch.Tensor) -> np.ndarray:
    tensor = tensor.detach().cpu()
    if tensor.dtype is torch.bfloat16:
        tensor = tensor.float()
    return tensor.resolve_conj().resolve_neg().numpy()


def _report_wait(x: DNDarray, seconds: float) -> None:
    """Say on stderr that this process waits for the others to print ``x``, and why it may hang."""
    comm = x.comm
    message = (
        f"[rank {comm.rank}/{comm.size}] heat has waited {seconds:.0f} s for the other processes "
        f"to print a DNDarray (shape {x.gshape}, split={x.split}) and goes on waiting. Printing "
        "a distributed array is collective: every process must call print(x) (or str/repr), and "
        "heat shows it once, from rank 0; `if rank == 0: print(x)` waits here forever. Call "
        "print(x) on every process, or ht.local_printing() to print each process's own block "
        "without communication.\n"
    )
    try:
        sys.stderr.write(message)
        sys.stderr.flush()
    except Exception:  # noqa: B902 - a closed stderr must not end the wait
        pass


def _split_counts(x: DNDarray) -> List[int]:
    """
    The rows of every process along ``x.split``: known everywhere for the default layout (or
    a cached one), else from one non-blocking all-gather, waited for with a report.
    """
    comm, split = x.comm, x.split
    # the layout's cached knowledge, read without the collective that x.lshape_map may start
    if x._balanced:
        return list(comm.counts_displs_shape(x.gshape, split)[0])
    if x._lshape_map is not None:
        return [int(c) for c in x._lshape_map[:, split].tolist()]
    counts = torch.empty(comm.size, dtype=torch.int64)
    request = comm.Iallgather(torch.tensor([x.lshape[split]], dtype=torch.int64), counts)
    request.wait_reporting(REPORT_WAIT_SECONDS, lambda seconds: _report_wait(x, seconds))
    return [int(c) for c in counts.tolist()]


def _rows_kept(ranges: Optional[List[range]], start: int, count: int) -> int:
    """How many of the global rows ``start ... start + count - 1`` lie in ``ranges``."""
    if ranges is None:
        return count
    return sum(max(0, min(r.stop, start + count) - max(r.start, start)) for r in ranges)


def _shown_part(
    x: DNDarray, local: torch.Tensor, gshape, split: Optional[int], summarize: bool, edgeitems: int
) -> np.ndarray:
    """
    The shown part of the global array (head and tail along every summarized axis) as a NumPy
    array on every process. With ``split=None`` nothing is communicated; otherwise each process
    selects its shown rows and one non-blocking all-gather assembles them, waited for with a
    report after ``REPORT_WAIT_SECONDS`` (a process that prints alone would wait forever).
    """
    distributed = split is not None and x.comm.size > 1
    if distributed:
        # along split first: it shrinks the local block the most
        counts = _split_counts(x)
        displs = [sum(counts[:r]) for r in range(len(counts))]
        split_ranges = _kept_ranges(gshape[split], edgeitems, summarize)
        if split_ranges is not None:
            local = _select(local, split, split_ranges, displs[x.comm.rank])
        kept = [_rows_kept(split_ranges, d, c) for d, c in zip(displs, counts)]
    for axis, n in enumerate(gshape):
        if distributed and axis == split:
            continue
        ranges = _kept_ranges(n, edgeitems, summarize)
        if ranges is not None:
            local = _select(local, axis, ranges)
    if distributed:
        front = local.movedim(split, 0).contiguous()
        rest = tuple(front.shape[1:])
        gathered = torch.empty((sum(kept),) + rest, dtype=front.dtype, device=front.device)
        if gathered.numel():  # the same decision on every process: kept and rest agree
            row = math.prod(rest)
            request = x.comm.Iallgatherv(front, (gathered, [k * row for k in kept]))
            request.wait_reporting(REPORT_WAIT_SECONDS, lambda seconds: _report_wait(x, seconds))
        local = gathered.movedim(0, split)
    return _to_numpy(local)


def _with_placeholders(shown: np.ndarray, gshape, edgeitems: int) -> np.ndarray:
    """
    ``shown`` with one placeholder entry between head and tail of every summarized axis: NumPy
    then summarizes exactly those axes, never displays the placeholders and fits its number
    format on the shown entries only, so the text equals that of the full array.
    """
    result = shown
    for axis, n in enumerate(gshape):
        if n > 2 * edgeitems:
            head = np.take(result, range(edgeitems), axis=axis)
            middle = np.take(result, [edgeitems - 1], axis=axis)
            tail = np.take(result, range(edgeitems, 2 * edgeitems), axis=axis)
            result = np.concatenate([head, middle, tail], axis=axis)
    return result


class _ScientificFormat:
    """Scientific notation for every element, aligned, fitted on the shown values."""

    def __init__(self, values: np.ndarray, precision: int, sign: builtins.bool = False):
        self.sign = sign
        self.fraction_digits = 0
        self.exp_digits = 2
        for value in values[np.isfinite(values)].ravel():
            text = np.format_float_scientific(value, precision=precision, unique=True, trim="-")
            mantissa, exponent = text.split("e")
            if "." in mantissa:
                self.fraction_digits = max(self.fraction_digits, len(mantissa.split(".")[1]))
            self.exp_digits = max(self.exp_digits, len(exponent) - 1)
        self.width = max((len(self.plain(v)) for v in values.ravel()), default=0)

    def plain(self, value) -> str:
        if np.isnan(value):
            return "+nan" if self.sign else "nan"
        if np.isinf(value):
            return ("-" if value < 0 else "+" if self.sign else "") + "inf"
        return np.format_float_scientific(
            value,
            precision=self.fraction_digits,
            unique=False,
            trim="k",
            sign=self.sign,
            exp_digits=self.exp_digits,
        )

    def __call__(self, value) -> str:
        return self.plain(value).rjust(self.width)


class _ComplexScientificFormat:
    def __init__(self, values: np.ndarray, precision: int):
        self.real = _ScientificFormat(values.real, precision)
        self.imag = _ScientificFormat(values.imag, precision, sign=True)

    def __call__(self, value) -> str:
        return self.real(value.real) + self.imag(value.imag) + "j"


def _array_text(shown: np.ndarray, gshape, summarize: bool, options, prefix: str) -> str:
    """NumPy's ``array2string`` text (separator ``", "``) of the array shown by ``shown``."""
    edgeitems = options["edgeitems"]
    formatter = None
    if options["sci_mode"] is True and shown.dtype.kind in "fc":
        kind = "complex_kind" if shown.dtype.kind == "c" else "float_kind"
        fitted = (
            _ComplexScientificFormat(shown, options["precision"])
            if kind == "complex_kind"
            else _ScientificFormat(shown, options["precision"])
        )
        formatter = {kind: fitted}
    if summarize:
        shown = _with_placeholders(shown, gshape, edgeitems)
        threshold = 0  # summarize every axis longer than 2 * edgeitems
    else:
        threshold = sys.maxsize
    # every NumPy option is given, so NumPy's own global print options do not leak in
    with np.printoptions(
        precision=options["precision"],
        threshold=threshold,
        edgeitems=edgeitems,
        linewidth=options["linewidth"],
        suppress=options["sci_mode"] is False,
        nanstr="nan",
        infstr="inf",
        formatter=formatter,
        sign="-",
        floatmode="maxprec",
        legacy=False,
    ):
        return np.array2string(shown, separator=", ", prefix=prefix, suffix=",")


def _metadata(x: DNDarray) -> str:
    return f"dtype=ht.{x.dtype.__name__}, device={x.device}, split={x.split})"


def _assemble(prefix: str, text: str, x: DNDarray, gshape) -> str:
    """``prefix + text`` followed by the metadata on the last line (HeAT's convention)."""
    empty = math.prod(gshape) == 0 and tuple(gshape) != (0,)
    shape_note = f"shape={tuple(gshape)}, " if empty else ""  # as NumPy's repr of empty arrays
    return f"{prefix}{text}, {shape_note}{_metadata(x)}"


def _format(x: DNDarray, options) -> str:
    if _MODE["local"]:
        local = x.larray
        prefix = f"[{x.comm.rank}/{x.comm.size}] {_PREFIX}"
        gshape = tuple(local.shape)
        summarize = local.numel() > options["threshold"]
        shown = _shown_part(x, local, gshape, None, summarize, options["edgeitems"])
    else:
        prefix = _PREFIX
        gshape = x.gshape
        summarize = x.size > options["threshold"]
        shown = _shown_part(x, x.larray, gshape, x.split, summarize, options["edgeitems"])
    text = _assemble(prefix, _array_text(shown, gshape, summarize, options, prefix), x, gshape)
    if not _MODE["local"] and x.comm.size > 1 and x.comm.rank != 0:
        return _ShownElsewhere(text)  # printed by rank 0
    return text


# ---------------------------------------------------------------------------------- printed once
class _ShownElsewhere(str):
    """
    The text of a DNDarray on a process that does not print it (not rank 0 of the array's
    communicator): the same characters, marked for :class:`_PrintOnceStdout`. ``str()`` keeps
    the mark, so that ``print`` and the interpreter's echo write the marked object itself.
    """

    __slots__ = ()

    def __str__(self) -> str:
        return self


class _PrintOnceStdout:
    """
    ``sys.stdout`` of the processes other than rank 0 of the world: drops every output line in
    which a :class:`_ShownElsewhere` text is written, passes everything else on. A line is
    passed on when it is complete (or at ``flush()``), since the array may come after other
    text in the same ``print`` call. Every other attribute is the wrapped stream's.
    """

    def __init__(self, stream):
        self._stream = stream
        self._pending: List[str] = []  # the current line so far
        self._dropping = False  # the current line shows an array: drop it
        self._lock = threading.RLock()

    def write(self, text: str) -> int:
        with self._lock:
            if isinstance(text, _ShownElsewhere):
                self._pending.clear()
                self._dropping = True
                return len(text)
            rest = text
            while True:
                line, newline, rest = rest.partition("\n")
                if not newline:
                    if line and not self._dropping:
                        self._pending.append(line)
                    return len(text)
                if not self._dropping:
                    self._stream.write("".join(self._pending) + line + "\n")
                self._pending.clear()
                self._dropping = False

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        with self._lock:
            if self._pending and not self._dropping:
                self._stream.write("".join(self._pending))
                self._pending.clear()
            self._stream.flush()

    def __getattr__(self, name: str):
        return getattr(object.__getattribute__(self, "_stream"), name)


def _print_once() -> None:
    """Install the filter on this process's stdout (at import; not on rank 0 of the world)."""
    if (
        MPI_WORLD.size > 1
        and MPI_WORLD.rank != 0
        and sys.stdout is not None
        and not isinstance(sys.stdout, _PrintOnceStdout)
    ):
        sys.stdout = _PrintOnceStdout(sys.stdout)


def _options_with(
    max_line_width: Optional[int], precision: Optional[int], suppress_small: Optional[bool]
) -> Dict[str, object]:
    options = dict(_OPTIONS)
    if max_line_width is not None:
        options["linewidth"] = check_int(max_line_width, "max_line_width", 1)
    if precision is not None:
        options["precision"] = check_int(precision, "precision", 0)
    if suppress_small is not None:
        if not isinstance(suppress_small, builtins.bool):
            raise TypeError(
                f"suppress_small must be a bool or None, but was {type(suppress_small).__name__}"
            )
        if suppress_small:
            options["sci_mode"] = False
        elif options["sci_mode"] is False:
            options["sci_mode"] = None
    return options


def array_repr(
    x: DNDarray,
    max_line_width: Optional[int] = None,
    precision: Optional[int] = None,
    suppress_small: Optional[bool] = None,
) -> str:
    """
    The text of a DNDarray: NumPy's layout of the global array and heat's metadata.

    Collective for split arrays (in global printing mode): call it on every process of
    ``x.comm``; every process gets the same text. Only the shown elements are communicated.

    Parameters
    ----------
    x : DNDarray
    max_line_width : int, optional
        Overrides the ``linewidth`` print option.
    precision : int, optional
        Overrides the ``precision`` print option.
    suppress_small : bool, optional
        True: suppress scientific notation for small numbers (as ``sci_mode=False``).

    Returns
    -------
    str

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, or an option has the wrong type.
    ValueError
        If an option has an invalid value.

    Examples
    --------
    >>> ht.array_repr(ht.arange(3, split=0))
    'DNDarray([0, 1, 2], dtype=ht.int64, device=cpu:0, split=0)'
    >>> print(ht.arange(2000, split=0))
    DNDarray([   0,    1,    2, ..., 1997, 1998, 1999], dtype=ht.int64, device=cpu:0, split=0)
    """
    if not isinstance(x, DNDarray):
        raise TypeError(f"x must be a DNDarray, but was {type(x).__name__}")
    return _format(x, _options_with(max_line_width, precision, suppress_small))


def array_str(
    x: DNDarray,
    max_line_width: Optional[int] = None,
    precision: Optional[int] = None,
    suppress_small: Optional[bool] = None,
) -> str:
    """
    ``str(x)``: the same text as :func:`array_repr` (HeAT's convention: the split axis and
    device are worth seeing in printed output too).

    Parameters
    ----------
    x : DNDarray
    max_line_width : int, optional
    precision : int, optional
    suppress_small : bool, optional
        See :func:`array_repr`.

    Returns
    -------
    str

    Raises
    ------
    TypeError
        If ``x`` is not a DNDarray, or an option has the wrong type.
    ValueError
        If an option has an invalid value.

    Examples
    --------
    >>> ht.array_str(ht.array([[1.5, 2.0]]))
    'DNDarray([[1.5, 2. ]], dtype=ht.float32, device=cpu:0, split=None)'
    """
    return array_repr(x, max_line_width, precision, suppress_small)


_print_once()
