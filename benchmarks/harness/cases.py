"""
The registry of named cases, grouped in suites.

A case is an :class:`algorithms.Op` (how to build the inputs in a library, the zero-argument call
that is timed, the NumPy result it must match and its tolerance) plus the suite it belongs to
and, where it is memory-bound, the bytes one call moves (for GB/s). The operations of
``benchmarks/algorithms.py`` are registered as they are; the elementwise and per-call-overhead
cases of ``elementwise.py`` and ``overhead.py`` are defined here (those scripts are thin
wrappers around them). Scripts that keep their own method (streaming, DASO) are
:class:`External` cases: the runner starts them with their own command line and reads their
JSON.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import algorithms  # noqa: E402
from algorithms import Data, Op  # noqa: E402

SUITES = ("core", "algorithms", "io", "linalg", "training")
SCALES = {"small": 0.02, "default": 1.0}  # --size: fraction of algorithms.py's data


@dataclass
class Case:
    """
    One named measurement; ``traffic(D)`` is the bytes one call reads plus writes (or None);
    ``threads``: torch threads per process for this case (None: the run's, by default one).
    """

    name: str
    suite: str
    op: Op
    traffic: Optional[Callable[[Data], float]] = None
    threads: Optional[int] = None

    def flops(self, D: Data) -> Optional[float]:
        return float(self.op.flops(D)) if callable(self.op.flops) else None


@dataclass
class External:
    """A script run as a subprocess with its own CLI; ``command(size, json_path)`` gives its arguments."""

    name: str
    suite: str
    script: str
    command: Callable[[str, str], List[str]]
    mpi: bool = True  # run under mpiexec at each process count (else once, as its own driver)
    needs_root: bool = False
    env: Dict[str, str] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# elementwise (the cases of benchmarks/elementwise.py): 1-D float32, the 2e7 values of
# algorithms.py's "big" array at --scale 1; the second operand is linspace(1, 2)

EXPRESSIONS = [
    ("x * 2.0 + 1.0", lambda m, x, y: x * 2.0 + 1.0, 2),
    ("x + y", lambda m, x, y: x + y, 3),
    ("exp(x)", lambda m, x, y: m.exp(x), 2),
    ("sqrt(abs(x))", lambda m, x, y: m.sqrt(m.abs(x)), 2),
    ("x > y", lambda m, x, y: x > y, 2.5),  # two float32 in, one byte out per element
    ("sum(x)", lambda m, x, y: m.sum(x), 1),
]

_SECOND: Dict[int, np.ndarray] = {}


def second_operand(D: Data) -> np.ndarray:
    """The second operand of the elementwise cases (built once per data)."""
    key = id(D.big)
    if key not in _SECOND:
        _SECOND.clear()
        _SECOND[key] = np.linspace(1, 2, D.big.size, dtype=np.float32)
    return _SECOND[key]


def _elementwise(label: str, expression, words: float) -> Case:
    def build(L, D):
        x = L.distribute(D.big, 0)
        y = L.distribute(second_operand(D), 0)
        return [x, y], lambda: L.finish(expression(L.module, x, y))

    def expect(D):
        return np.asarray(
            expression(np, D.big.astype(np.float64), second_operand(D).astype(np.float64))
        )

    op = Op(f"elementwise {label}", "time", build, expect, rtol=1e-4, atol=1e-5)
    return Case(op.name, "core", op, traffic=lambda D, w=words: 4.0 * w * D.big.size)


# ---------------------------------------------------------------------------------------------
# per-call overhead (the cases of benchmarks/overhead.py): 10-element float32 arrays, not split

STATEMENTS = [
    ("a + b", lambda m, a, b: a + b),
    ("exp(a)", lambda m, a, b: m.exp(a)),
    ("a.sum()", lambda m, a, b: a.sum()),
    ("a[3]", lambda m, a, b: a[3]),
]


def _overhead(label: str, statement) -> Case:
    ten = np.arange(10, dtype=np.float32)

    def build(L, D):
        a = L.distribute(ten, None)
        b = L.distribute(ten, None)
        return [a, b], lambda: L.finish(statement(L.module, a, b))

    def expect(D):
        return np.asarray(statement(np, ten.astype(np.float64), ten.astype(np.float64)))

    op = Op(f"overhead {label} (10 values)", "time", build, expect, rtol=1e-6, atol=1e-6)
    return Case(op.name, "core", op)


# ---------------------------------------------------------------------------------------------
# algorithms.py's operations, by suite


def _suite_of(op: Op) -> str:
    name = op.name
    if name.startswith(("matmul", "qr", "svd")):
        return "linalg"
    if name.startswith("load_hdf5"):
        return "io"
    if name.startswith(
        ("sort", "unique", "histc", "percentile", "cdist", "kmeans", "pca", "lasso")
    ):
        return "algorithms"
    return "core"


def _traffic_of(op: Op) -> Optional[Callable[[Data], float]]:
    """Bytes per call of the memory-bound operations (reads + writes, float32)."""
    name = op.name
    if name.startswith(("sum", "mean")):
        return lambda D: 4.0 * D.x.size
    if name.startswith("std"):
        return lambda D: 8.0 * D.x.size  # two passes over the data
    if name.startswith("max + argmax"):
        return lambda D: 4.0 * D.big.size
    if name.startswith(("cumsum", "resplit", "reshape")):
        return lambda D: 8.0 * D.x.size
    if name.startswith("concatenate"):
        return lambda D: 16.0 * D.x.size
    return None


def registry() -> List[Case]:
    """Every in-process case, in a fixed order (the order the harness runs them in)."""
    cases = [_overhead(label, statement) for label, statement in STATEMENTS]
    cases += [_elementwise(label, expression, words) for label, expression, words in EXPRESSIONS]
    cases += [Case(op.name, _suite_of(op), op, _traffic_of(op)) for op in algorithms.OPS]
    return cases


HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def externals() -> List[External]:
    """The scripts with their own method, run as subprocesses."""

    def streaming(size: str, out: str) -> List[str]:
        small = [
            "--file-mb",
            "4",
            "--window-mb",
            "1",
            "--repeat",
            "2",
            "--torch-seconds",
            "0.5",
            "--no-memory",
        ]
        return (small if size == "small" else []) + ["--out", out]

    def daso_accuracy(size: str, out: str) -> List[str]:
        small = ["--samples", "4000", "--test-samples", "1000", "--hidden", "64", "--epochs", "3"]
        return (small if size == "small" else []) + ["--json", out]

    def daso(size: str, out: str) -> List[str]:
        small = [
            "--runs",
            "1",
            "--batches",
            "4",
            "--warmup",
            "1",
            "--width",
            "256",
            "--compute-ms",
            "20",
            "--timeout",
            "240",
        ]
        return (small if size == "small" else []) + ["--json", out]

    return [
        External("streaming loader", "io", os.path.join(HERE, "streaming.py"), streaming),
        External(
            "daso accuracy", "training", os.path.join(HERE, "daso_accuracy.py"), daso_accuracy
        ),
        External(
            "daso emulated cluster",
            "training",
            os.path.join(HERE, "daso.py"),
            daso,
            mpi=False,
            needs_root=True,
        ),
    ]


def select(suite: str, names: Optional[List[str]] = None) -> List[Case]:
    """The cases of ``suite`` (or ``"all"``), optionally only those whose name contains one of ``names``."""
    if suite != "all" and suite not in SUITES:
        raise ValueError(f"--suite: expected one of {', '.join(SUITES + ('all',))}, got {suite!r}")
    chosen = [c for c in registry() if suite == "all" or c.suite == suite]
    if names:
        chosen = [c for c in chosen if any(n in c.name for n in names)]
    return chosen


def select_externals(suite: str, names: Optional[List[str]] = None) -> List[External]:
    chosen = [e for e in externals() if suite == "all" or e.suite == suite]
    if names:
        chosen = [e for e in chosen if any(n in e.name for n in names)]
    return chosen
