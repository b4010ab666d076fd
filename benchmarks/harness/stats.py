"""The arithmetic of the benchmark method and report: pure functions, no MPI, no heat."""

from __future__ import annotations

import math
from typing import Dict, Iterable, List, Optional, Sequence


def median(values: Sequence[float]) -> float:
    """Median of ``values`` (mean of the middle two for an even count); NaN for none.

    Examples
    --------
    >>> median([3.0, 1.0, 2.0])
    2.0
    >>> median([4.0, 1.0, 3.0, 2.0])
    2.5
    """
    ordered = sorted(float(v) for v in values)
    n = len(ordered)
    if n == 0:
        return math.nan
    middle = n // 2
    return ordered[middle] if n % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])


def slowest(per_process: Iterable[float]) -> float:
    """Time of a timed region: the slowest process's time.

    Examples
    --------
    >>> slowest([0.5, 0.7, 0.6])
    0.7
    """
    values = [float(v) for v in per_process]
    if not values:
        raise ValueError("per_process is empty: expected one time per process")
    return max(values)


def parallel_efficiency(times: Dict[int, float]) -> Dict[int, float]:
    """Strong-scaling efficiency at each process count, relative to the smallest one measured.

    ``E(p) = (p0 * t(p0)) / (p * t(p))`` where ``p0`` is the smallest process count: 1.0 is
    perfect scaling, 0.5 means half of the added processes' time is lost.

    Examples
    --------
    >>> parallel_efficiency({1: 2.0, 2: 1.0, 4: 1.0})
    {1: 1.0, 2: 1.0, 4: 0.5}
    """
    valid = {p: t for p, t in times.items() if t is not None and t > 0 and math.isfinite(t)}
    if not valid:
        return {}
    base = min(valid)
    return {p: (base * valid[base]) / (p * t) for p, t in sorted(valid.items())}


def ratio(numerator: Optional[float], denominator: Optional[float]) -> Optional[float]:
    """``numerator / denominator``, or None where either is missing, zero or not finite."""
    if numerator is None or denominator is None:
        return None
    if not (math.isfinite(numerator) and math.isfinite(denominator)) or denominator <= 0:
        return None
    return numerator / denominator


def format_ratio(value: Optional[float], valid: bool = True) -> str:
    """A ratio cell of the report: two significant decimals, ``-`` if missing, marked if invalid.

    A ratio whose result differed from NumPy is shown but marked: it sets no time target.

    Examples
    --------
    >>> format_ratio(0.4567)
    '0.46'
    >>> format_ratio(12.345)
    '12.3'
    >>> format_ratio(0.0012345)
    '0.0012'
    >>> format_ratio(None)
    '-'
    >>> format_ratio(1.0, valid=False)
    '1.00 (differs)'
    """
    if value is None or not math.isfinite(value):
        return "-"
    if value >= 10:
        text = f"{value:.3g}"
    elif value >= 0.01:
        text = f"{value:.2f}"
    else:
        text = f"{value:.2g}"
    return text if valid else text + " (differs)"


def format_seconds(value: Optional[float]) -> str:
    """Seconds with 3 significant digits, switching to ms / us below a second.

    Examples
    --------
    >>> format_seconds(1.23456)
    '1.23 s'
    >>> format_seconds(0.000012)
    '12 us'
    >>> format_seconds(None)
    '-'
    """
    if value is None or not math.isfinite(value):
        return "-"
    if value >= 1:
        return f"{value:.3g} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    return f"{value * 1e6:.3g} us"


def rate_fraction(
    rate: Optional[float], limit_per_process: Optional[float], processes: int, cores: int
) -> Optional[float]:
    """Share of the machine's limit reached: ``rate / (min(processes, cores) * limit_per_process)``.

    The limit of one single-threaded process (memory bandwidth of a copy, or a matmul's
    GFLOP/s) is measured once per run; ``processes`` processes can use at most ``cores`` cores.

    Examples
    --------
    >>> rate_fraction(5.0, 10.0, 1, 2)
    0.5
    >>> rate_fraction(10.0, 10.0, 4, 2)
    0.5
    """
    if rate is None or not limit_per_process or limit_per_process <= 0:
        return None
    return rate / (min(max(processes, 1), max(cores, 1)) * limit_per_process)


def parse_procs(text: str) -> List[int]:
    """Process counts from ``"1,2,4"``: positive, unique, in the given order.

    Examples
    --------
    >>> parse_procs("1,2")
    [1, 2]
    """
    counts: List[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = int(part)
        except ValueError:
            raise ValueError(
                f"--procs: expected comma-separated positive integers, got {text!r}"
            ) from None
        if value < 1:
            raise ValueError(f"--procs: process counts must be >= 1, got {value}")
        if value not in counts:
            counts.append(value)
    if not counts:
        raise ValueError(f"--procs: expected at least one process count, got {text!r}")
    return counts


def rotated(items: Sequence, shift: int) -> list:
    """``items`` rotated left by ``shift``: the order of the libraries changes case by case.

    Examples
    --------
    >>> rotated(["heat", "numpy", "torch"], 1)
    ['numpy', 'torch', 'heat']
    """
    items = list(items)
    if not items:
        return items
    shift %= len(items)
    return items[shift:] + items[:shift]
