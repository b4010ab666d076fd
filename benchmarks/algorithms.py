"""
Issue-3 algorithm benchmark: reductions, layout changes, sorting, sets, indexing and statistics.

Each operation is timed and memory-profiled on its own, on the same data in every library.

The same file runs under this repository's heat, under the HeAT 1.8 release, and under plain
NumPy (one process, the serial baseline)::

    PYTHONPATH=/work/main mpiexec -n 2 python benchmarks/algorithms.py --out ours.jsonl
    mpiexec -n 2 /tmp/heat-anchor/bin/python benchmarks/algorithms.py --out anchor.jsonl
    python benchmarks/algorithms.py --library numpy --out numpy.jsonl

``benchmarks/run_algorithms.py`` runs all of them and prints the side-by-side table; run this
file directly to look at one library. Rank 0 writes one JSON object per line to ``--out``
(``"event": "meta"`` first, then ``"start"`` and ``"result"`` per operation) and a short
summary to stdout.

Every process builds the same data with NumPy from a fixed seed and distributes it with
``ht.array(data, split=...)``. Each operation is run once to warm up, once more to measure its
peak memory, then timed: ``--repeat`` repetitions, each of ``number`` back-to-back calls (chosen
so that a repetition lasts at least ``--min-time`` seconds), with a Barrier before each
repetition; the time of a repetition is the maximum over the processes, and the best and the
median repetition are reported. An operation whose warm-up call takes ``--slow`` seconds or more
is measured on that call alone. Finally the result is compared with NumPy's.

Memory: before the measured call the script collects garbage, returns free heap memory to the
kernel (``malloc_trim``), reads the resident set size and resets the kernel's high-water mark
(``/proc/self/clear_refs``); after it, ``VmHWM`` minus that RSS is the operation's peak extra
memory on the process. It is reported (maximum over processes) next to the process's input and
output bytes. Pages the allocator kept from earlier operations can hide part of the peak, so
the driver fixes glibc's mmap threshold (``MALLOC_MMAP_THRESHOLD_``) to make large blocks go
back to the kernel when freed.

A failing operation is reported, not fatal: every process catches its own exception, then all
processes agree on the outcome over a separate communicator. If the other processes are stuck
inside a collective that the failing one left (so they never come to agree), the failing
process records the error in ``<out>.abort.<rank>`` and aborts the job after
``--agree-timeout`` seconds; the driver then restarts the run after that operation.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import math
import os
import statistics
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

SEED = 1234
BASE_ROWS = 2000  # rows of the 2-D float32 test array at --scale 1 (4e6 elements, 16 MB)
COLS = 2000
UNIQUE_VALUES = 1000  # distinct values of the integer array for "unique int"
HIST_BINS = 100
# the 1-D array of "max + argmax" holds BIG_FACTOR x as many values as x (2e7 at --scale 1, the
# size issue 12 reported: a reduction that streams 80 MB, not one that fits in the caches)
BIG_FACTOR = 5
# issue 8: the tall-skinny matrix of "qr" and "svd", TALL_ROWS x TALL_COLS float32 at --scale 1
TALL_ROWS = 200000
TALL_COLS = 50
# issue 8: cdist of CDIST_ROWS x CDIST_COLS float32 with itself; k-means of KMEANS_ROWS x
# KMEANS_COLS float32 (uniform: Lloyd's iterations do not converge within KMEANS_ITER, so every
# library runs all of them, scikit-learn included) into KMEANS_K clusters from the first rows
CDIST_ROWS = 10000
CDIST_COLS = 16
KMEANS_ROWS = 1_000_000
KMEANS_COLS = 8
KMEANS_K = 8
KMEANS_ITER = 20
# issue 8: PCA (exact solver) of the tall-skinny matrix of "qr" and "svd", PCA_COMPONENTS kept
PCA_COMPONENTS = 10
# issue 8: Lasso of the first LASSO_COLS columns of the tall-skinny matrix, LASSO_ITER sweeps of
# coordinate descent with penalty LASSO_LAM (scikit-learn's alpha)
LASSO_COLS = 20
LASSO_ITER = 20
LASSO_LAM = 0.01
# reshape (rows, COLS) -> (rows * COLS // RESHAPE_COLS, RESHAPE_COLS): the split axis changes
# length (2000 -> 2500 rows), so rows really move between processes
RESHAPE_COLS = COLS * 4 // 5
ERROR_CHARS = 160  # length of error messages kept in the results

# ---------------------------------------------------------------------------------------------
# the data (identical on every process and in every library)


@dataclass
class Data:
    x: np.ndarray  # (rows, COLS) float32, uniform in [0, 1)
    y: np.ndarray  # second operand for concatenate, same shape
    ints: np.ndarray  # 1-D int64 in [0, UNIQUE_VALUES), x.size elements
    idx: np.ndarray  # int64 row indices for fancy indexing, length rows
    mask: np.ndarray  # x > 0.5
    big: np.ndarray  # 1-D float32, uniform in [0, 1), BIG_FACTOR * x.size values
    tall: np.ndarray  # 2-D float32, standard normal, TALL_ROWS * scale x TALL_COLS
    samples: np.ndarray  # 2-D float32, uniform in [0, 1), CDIST_ROWS * scale x CDIST_COLS
    points: np.ndarray  # 2-D float32, uniform in [0, 1), KMEANS_ROWS * scale x KMEANS_COLS

    @property
    def flat(self) -> np.ndarray:
        return self.x.reshape(-1)


def make_data(scale: float) -> Data:
    rows = max(8, 8 * round(BASE_ROWS * scale / 8))  # a multiple of 8: see RESHAPE_COLS
    rng = np.random.default_rng(SEED)
    x = rng.random((rows, COLS), dtype=np.float32)
    y = rng.random((rows, COLS), dtype=np.float32)
    ints = rng.integers(0, UNIQUE_VALUES, size=x.size, dtype=np.int64)
    idx = rng.integers(0, rows, size=rows, dtype=np.int64)
    big = rng.random(
        BIG_FACTOR * x.size, dtype=np.float32
    )  # drawn last: the others stay as they were
    tall_rows = max(8, int(round(TALL_ROWS * scale / 8)) * 8)
    tall = rng.standard_normal(
        (tall_rows, TALL_COLS), dtype=np.float32
    )  # after big, for the same reason
    samples = rng.random((max(8, int(CDIST_ROWS * scale)), CDIST_COLS), dtype=np.float32)
    points = rng.random((max(KMEANS_K, int(KMEANS_ROWS * scale)), KMEANS_COLS), dtype=np.float32)
    return Data(
        x=x,
        y=y,
        ints=ints,
        idx=idx,
        mask=x > 0.5,
        big=big,
        tall=tall,
        samples=samples,
        points=points,
    )


# ---------------------------------------------------------------------------------------------
# adapters: the library-specific spelling of every measured call


class NumpyLib:
    """The serial baseline: plain NumPy on the whole data in one process."""

    name = "numpy"
    size = 1
    rank = 0

    def __init__(self) -> None:
        self.version = np.__version__
        self.location = np.__file__

    def distribute(self, a: np.ndarray, split: Optional[int]) -> np.ndarray:
        return np.array(a, copy=True)

    def barrier(self) -> None:
        pass

    def reduce(self, kind: str, x, axis):
        return getattr(np, kind)(x, axis=axis)

    def max_argmax(self, x):
        return np.max(x), np.argmax(x)

    def matmul(self, a, b):
        return a @ b

    def qr(self, a):
        return np.linalg.qr(a)

    def svd(self, a):
        return np.linalg.svd(a, full_matrices=False)

    def cdist(self, x, quadratic_expansion):
        from scipy.spatial.distance import cdist

        return cdist(x, x)  # the serial reference has one method (float64 result)

    def kmeans(self, x, init):
        # the serial baseline is scikit-learn's KMeans (its own threads), where installed
        try:
            from sklearn.cluster import KMeans
        except ImportError:
            return _lloyd(x, init, KMEANS_ITER)
        # tol=0: scikit-learn's only way not to stop on tolerance (and the data does not converge)
        model = KMeans(
            len(init), init=init, n_init=1, max_iter=KMEANS_ITER, tol=0.0, algorithm="lloyd"
        )
        return model.fit(x)

    def lasso(self, x, y):
        # the serial baseline is scikit-learn's Lasso (tol=0: all LASSO_ITER sweeps), where installed
        try:
            from sklearn.linear_model import Lasso
        except ImportError:
            return _lasso_sweeps(x, y, LASSO_LAM, LASSO_ITER)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "did not converge": tol=0 on purpose
            return Lasso(alpha=LASSO_LAM, max_iter=LASSO_ITER, tol=0.0).fit(x, y)

    def lasso_coef(self, model) -> np.ndarray:
        return model if isinstance(model, np.ndarray) else np.asarray(model.coef_, dtype=np.float64)

    def pca(self, x):
        # the serial baseline is scikit-learn's PCA with the exact solver, where installed
        try:
            from sklearn.decomposition import PCA
        except ImportError:
            centred = x - x.mean(axis=0)
            return np.linalg.svd(centred, compute_uv=False)[:PCA_COMPONENTS] ** 2 / (len(x) - 1)
        return PCA(PCA_COMPONENTS, svd_solver="full").fit(x)

    def explained_variance(self, model) -> np.ndarray:
        return np.asarray(getattr(model, "explained_variance_", model))

    def centres(self, model) -> np.ndarray:
        return np.asarray(model.cluster_centers_) if hasattr(model, "cluster_centers_") else model

    def resplit(self, x, axis):
        return x.copy()  # NumPy has no layout: the equivalent work is one copy

    def reshape(self, x, shape):
        return x.reshape(shape).copy()  # a distributed reshape always moves data

    def concatenate(self, a, b, axis):
        return np.concatenate((a, b), axis=axis)

    def sort(self, x, axis):
        return np.sort(x, axis=axis)

    def unique(self, x):
        return np.unique(x)

    def getitem(self, x, key):
        return x[key]

    def setitem(self, x, key, value) -> None:
        x[key] = value

    def cumsum(self, x, axis):
        return np.cumsum(x, axis=axis)

    def histc(self, x, bins, lo, hi):
        return np.histogram(x, bins=bins, range=(lo, hi))[0]

    def percentile(self, x, q, axis):
        return np.percentile(x, q, axis=axis)

    def shared_path(self, name: str) -> str:
        """A file name that every process of this run agrees on (for the file-reading operations)."""
        return os.path.join(tempfile.gettempdir(), f"heat-bench-{os.getpid()}-{name}")

    def load_hdf5(self, path: str, dataset: str, split):
        import h5py

        with h5py.File(path, "r") as f:
            return f[dataset][...]

    def to_numpy(self, result) -> np.ndarray:
        return np.asarray(result)

    def local_nbytes(self, obj) -> int:
        if obj is None:
            return 0
        if isinstance(obj, (tuple, list)):
            return sum(self.local_nbytes(o) for o in obj)
        return int(getattr(obj, "nbytes", 0))


class HeatLib(NumpyLib):
    """Whichever ``heat`` is importable: this repository's, or the HeAT 1.x release."""

    name = "heat"

    def __init__(self) -> None:
        import torch

        import heat as ht

        self.ht = ht
        self.torch = torch
        self.version = ht.__version__
        self.location = ht.__file__
        # HeAT 1.x spells some calls differently (sort returns values and indices, unique
        # defaults to unsorted output); our API follows NumPy
        self.legacy = _major(ht.__version__) == 1
        from mpi4py import MPI

        self.MPI = MPI
        self.world = MPI.COMM_WORLD
        self.size = self.world.Get_size()
        self.rank = self.world.Get_rank()

    def distribute(self, a: np.ndarray, split: Optional[int]):
        # copy=True: HeAT 1.8's default (copy=None) can alias the NumPy data, and an in-place
        # operation would then change the data of every later operation
        return self.ht.array(a, split=split, copy=True)

    def barrier(self) -> None:
        self.world.Barrier()

    def reduce(self, kind: str, x, axis):
        return getattr(self.ht, kind)(x, axis=axis)

    def max_argmax(self, x):
        return self.ht.max(x), self.ht.argmax(x)

    def matmul(self, a, b):
        return self.ht.matmul(a, b)

    def qr(self, a):
        return self.ht.linalg.qr(a)

    def svd(self, a):
        return self.ht.linalg.svd(a, full_matrices=False)  # both heats (HeAT 1.8 has it too)

    def cdist(self, x, quadratic_expansion):
        return self.ht.spatial.cdist(x, quadratic_expansion=quadratic_expansion)

    def kmeans(self, x, init):
        init = self.ht.array(init, split=None)
        model = self.ht.cluster.KMeans(len(init), init=init, max_iter=KMEANS_ITER, tol=-1.0)
        return model.fit(x)

    def pca(self, x):
        return self.ht.decomposition.PCA(PCA_COMPONENTS, svd_solver="full").fit(x)

    def lasso(self, x, y):
        if self.legacy:  # HeAT 1.8: fit returns None; tol=None runs all sweeps
            model = self.ht.regression.Lasso(lam=LASSO_LAM, max_iter=LASSO_ITER, tol=None)
            model.fit(x, y)
            return model
        # tol=0: stops early only at an exact fixed point; the Gram variant ("auto" here)
        return self.ht.regression.Lasso(lam=LASSO_LAM, max_iter=LASSO_ITER, tol=0.0).fit(x, y)

    def lasso_coef(self, model) -> np.ndarray:
        return self.to_numpy(model.coef_).reshape(-1).astype(np.float64)

    def explained_variance(self, model) -> np.ndarray:
        return self.to_numpy(model.explained_variance_)

    def centres(self, model) -> np.ndarray:
        return self.to_numpy(model.cluster_centers_)

    def resplit(self, x, axis):
        return self.ht.resplit(x, axis)

    def reshape(self, x, shape):
        return self.ht.reshape(x, shape, new_split=x.split)

    def concatenate(self, a, b, axis):
        return self.ht.concatenate((a, b), axis=axis)

    def sort(self, x, axis):
        if self.legacy:
            return tuple(self.ht.sort(x, axis=axis))  # (values, indices): both are its output
        return self.ht.sort(x, axis=axis)

    def unique(self, x):
        if self.legacy:
            return self.ht.unique(x, sorted=True)  # same (sorted) result as NumPy and ours
        return self.ht.unique(x)

    def cumsum(self, x, axis):
        return self.ht.cumsum(x, axis=axis)

    def histc(self, x, bins, lo, hi):
        return self.ht.histc(x, bins=bins, min=lo, max=hi)

    def percentile(self, x, q, axis):
        return self.ht.percentile(x, q, axis=axis)

    def shared_path(self, name: str) -> str:
        return self.world.bcast(
            NumpyLib.shared_path(self, name) if self.rank == 0 else None, root=0
        )

    def load_hdf5(self, path: str, dataset: str, split):
        return self.ht.load_hdf5(path, dataset, split=split)

    def to_numpy(self, result) -> np.ndarray:
        if isinstance(result, tuple):  # HeAT 1.x sort: compare the values
            result = result[0]
        if isinstance(result, self.ht.DNDarray):
            return np.asarray(result.numpy())
        return np.asarray(result)

    def local_nbytes(self, obj) -> int:
        if obj is None:
            return 0
        if isinstance(obj, (tuple, list)):
            return sum(self.local_nbytes(o) for o in obj)
        if isinstance(obj, self.ht.DNDarray):
            t = obj.larray
            return int(t.numel() * t.element_size())
        if isinstance(obj, self.torch.Tensor):
            return int(obj.numel() * obj.element_size())
        return int(getattr(obj, "nbytes", 0))


def _major(version: str) -> int:
    try:
        return int(version.split(".")[0])
    except ValueError:
        return 0


# ---------------------------------------------------------------------------------------------
# the operations


@dataclass
class Op:
    name: str
    group: str  # picks the target in run_algorithms.py: "time", "sort", "indexing"
    # (lib, data) -> (inputs kept alive and counted as input bytes, zero-argument call)
    build: Callable[[Any, Data], Tuple[List[Any], Callable[[], Any]]]
    # data -> the expected result (NumPy, float64 where it accumulates)
    expect: Callable[[Data], np.ndarray]
    rtol: float = 0.0  # 0: exact comparison
    atol: float = 0.0
    # for in-place operations: (inputs) -> the array whose value is checked instead of the result
    checked: Optional[Callable[[List[Any]], Any]] = None
    # for results of several arrays: (lib, result) -> the one array compared with ``expect``
    convert: Optional[Callable[[Any, Any], np.ndarray]] = None
    # data -> floating point operations of one call (issue 8: the tables report GFLOP/s for
    # these); None for operations that do not count them
    flops: Optional[Callable[[Data], float]] = None


def _reduction(kind: str, axis, split: int) -> Op:
    def build(L, D):
        x = L.distribute(D.x, split)
        return [x], lambda: L.reduce(kind, x, axis)

    def expect(D):
        return getattr(np, kind)(D.x.astype(np.float64), axis=axis)

    return Op(f"{kind} axis={axis} split={split}", "time", build, expect, rtol=1e-4, atol=1e-4)


def _ops() -> List[Op]:
    ops = [
        _reduction(kind, axis, split)
        for split in (0, 1)
        for kind in ("sum", "mean", "std")
        for axis in (0, 1, None)
    ]

    def resplit(L, D):
        x = L.distribute(D.x, 0)
        return [x], lambda: L.resplit(x, 1)

    ops.append(Op("resplit 0->1", "time", resplit, lambda D: D.x))

    def reshape(L, D):
        x = L.distribute(D.x, 0)
        shape = (D.x.size // RESHAPE_COLS, RESHAPE_COLS)
        return [x], lambda: L.reshape(x, shape)

    ops.append(
        Op(
            "reshape (n,m)->(n*m/k,k) split=0",
            "time",
            reshape,
            lambda D: D.x.reshape(D.x.size // RESHAPE_COLS, RESHAPE_COLS),
        )
    )

    for axis in (0, 1):

        def concatenate(L, D, axis=axis):
            a = L.distribute(D.x, 0)
            b = L.distribute(D.y, 0)
            return [a, b], lambda: L.concatenate(a, b, axis)

        ops.append(
            Op(
                f"concatenate axis={axis} split=0",
                "time",
                concatenate,
                lambda D, axis=axis: np.concatenate((D.x, D.y), axis=axis),
            )
        )

    def sort2d(L, D):
        x = L.distribute(D.x, 0)
        return [x], lambda: L.sort(x, 0)

    ops.append(Op("sort axis=0 split=0 (2-D)", "sort", sort2d, lambda D: np.sort(D.x, axis=0)))

    def sort1d(L, D):
        x = L.distribute(D.flat, 0)
        return [x], lambda: L.sort(x, 0)

    ops.append(Op("sort 1-D split=0", "sort", sort1d, lambda D: np.sort(D.flat)))

    def unique_float(L, D):
        x = L.distribute(D.flat, 0)
        return [x], lambda: L.unique(x)

    ops.append(
        Op("unique 1-D float (all distinct)", "time", unique_float, lambda D: np.unique(D.flat))
    )

    def unique_int(L, D):
        x = L.distribute(D.ints, 0)
        return [x], lambda: L.unique(x)

    ops.append(
        Op(
            f"unique 1-D int ({UNIQUE_VALUES} values)",
            "time",
            unique_int,
            lambda D: np.unique(D.ints),
        )
    )

    def bool_getitem(L, D):
        x = L.distribute(D.x, 0)
        mask = x > 0.5  # built outside the timing: the operation measured is the indexing
        return [x, mask], lambda: L.getitem(x, mask)

    ops.append(Op("x[x > 0.5] split=0", "indexing", bool_getitem, lambda D: D.x[D.mask]))

    def fancy_getitem(L, D):
        x = L.distribute(D.x, 0)
        idx = L.distribute(D.idx, None)  # a global index array, the same on every process
        return [x, idx], lambda: L.getitem(x, idx)

    ops.append(Op("x[idx] rows, split=0", "indexing", fancy_getitem, lambda D: D.x[D.idx]))

    def bool_setitem(L, D):
        x = L.distribute(D.x, 0)  # a fresh array: x itself is changed
        mask = x > 0.5
        # repeating it is the same work (the mask is fixed; the values written are the same)
        return [x, mask], lambda: L.setitem(x, mask, 0.0)

    def expect_setitem(D):
        out = D.x.copy()
        out[D.mask] = 0.0
        return out

    ops.append(
        Op(
            "x[mask] = 0 split=0",
            "time",
            bool_setitem,
            expect_setitem,
            checked=lambda inputs: inputs[0],
        )
    )

    def cumsum(L, D):
        x = L.distribute(D.x, 0)
        return [x], lambda: L.cumsum(x, 0)

    ops.append(
        Op(
            "cumsum axis=0 split=0",
            "time",
            cumsum,
            lambda D: np.cumsum(D.x.astype(np.float64), axis=0),
            rtol=1e-4,
            atol=1e-3,
        )
    )

    def histc(L, D):
        x = L.distribute(D.x, 0)
        return [x], lambda: L.histc(x, HIST_BINS, 0.0, 1.0)

    # bin edges are computed in float32 by torch, in float64 by NumPy: a value on an edge may
    # land in the neighbouring bin, hence the small absolute tolerance on the counts
    ops.append(
        Op(
            f"histc bins={HIST_BINS} split=0",
            "time",
            histc,
            lambda D: np.histogram(D.x, bins=HIST_BINS, range=(0.0, 1.0))[0],
            atol=8.0,
        )
    )

    for axis in (0, None):

        def percentile(L, D, axis=axis):
            x = L.distribute(D.x, 0)
            return [x], lambda: L.percentile(x, 50, axis)

        ops.append(
            Op(
                f"percentile q=50 axis={axis} split=0",
                "time",
                percentile,
                lambda D, axis=axis: np.percentile(D.x.astype(np.float64), 50, axis=axis),
                rtol=1e-5,
                atol=1e-6,
            )
        )

    # issue 12, appended so that the indices of the operations above stay what they were
    def max_argmax(L, D):
        x = L.distribute(D.big, 0)
        return [x], lambda: L.max_argmax(x)

    def both_scalars(L, result):
        # HeAT 1.8's argmax has shape (1,), ours and NumPy's (): compare the two numbers
        return np.array([np.asarray(L.to_numpy(r)).item() for r in result], dtype=np.float64)

    ops.append(
        Op(
            "max + argmax 1-D split=0",
            "time",
            max_argmax,
            lambda D: np.array([D.big.max(), D.big.argmax()], dtype=np.float64),
            convert=both_scalars,
        )
    )
    # issue 7: every process reads its block of an HDF5 dataset (x, contiguous, float32)
    for split in (0, 1):

        def load_hdf5(L, D, split=split):
            path = L.shared_path("load.h5")
            if L.rank == 0:
                _write_hdf5(path, D.x)
            L.barrier()
            return [], lambda: L.load_hdf5(path, "x", split)

        ops.append(Op(f"load_hdf5 split={split}", "time", load_hdf5, lambda D: D.x))
    # issue 8: matrix product x @ y.T, (rows x COLS) @ (COLS x rows), 2000 x 2000 at --scale 1
    for split_a, split_b in ((0, 0), (0, 1), (1, 0), (1, 1)):

        def matmul(L, D, split_a=split_a, split_b=split_b):
            a = L.distribute(D.x, split_a)
            b = L.distribute(np.ascontiguousarray(D.y.T), split_b)
            return [a, b], lambda: L.matmul(a, b)

        ops.append(
            Op(
                f"matmul split={split_a}-{split_b}",
                "time",
                matmul,
                lambda D: D.x.astype(np.float64) @ D.y.T.astype(np.float64),
                rtol=1e-4,
                atol=1e-3,
                flops=lambda D: 2.0 * D.x.shape[0] * COLS * D.x.shape[0],
            )
        )

    # issue 8: tall-skinny QR and SVD of a (200000 x 50) matrix split along its rows
    def tall(L, D, kind):
        a = L.distribute(D.tall, 0)
        return [a], lambda: getattr(L, kind)(a)

    def abs_r(L, result):
        # R is unique up to the signs of its rows (Q R is compared by the tests)
        return np.abs(np.asarray(L.to_numpy(result[1]), dtype=np.float64))

    def singular_values(L, result):
        return np.asarray(L.to_numpy(result[1]), dtype=np.float64)

    def expect_r(D):
        return np.abs(np.linalg.qr(D.tall.astype(np.float64), mode="r"))

    def expect_s(D):
        return np.linalg.svd(D.tall.astype(np.float64), compute_uv=False)

    n = TALL_COLS
    ops.append(
        Op(
            "qr tall-skinny split=0",
            "time",
            lambda L, D: tall(L, D, "qr"),
            expect_r,
            rtol=1e-3,
            atol=1e-2,
            convert=abs_r,
            flops=lambda D: 4.0 * D.tall.shape[0] * n * n - 4.0 * n**3 / 3,
        )
    )  # R and the reduced Q
    ops.append(
        Op(
            "svd tall-skinny split=0",
            "time",
            lambda L, D: tall(L, D, "svd"),
            expect_s,
            rtol=1e-4,
            atol=1e-3,
            convert=singular_values,
        )
    )

    # issue 8: euclidean distances of 10000 x 16 samples to themselves (ring exchange at p > 1)
    for quadratic in (False, True):

        def cdist(L, D, quadratic=quadratic):
            x = L.distribute(D.samples, 0)
            return [x], lambda: L.cdist(x, quadratic)

        def expect_cdist(D):
            squared = (D.samples.astype(np.float64) ** 2).sum(1)
            products = D.samples.astype(np.float64) @ D.samples.T.astype(np.float64)
            return np.sqrt(np.maximum(squared[:, None] + squared[None, :] - 2 * products, 0))

        ops.append(
            Op(
                f"cdist{' quadratic_expansion' if quadratic else ''} split=0",
                "time",
                cdist,
                expect_cdist,
                rtol=1e-3,
                atol=2e-3,
                flops=lambda D: 2.0 * D.samples.shape[0] ** 2 * D.samples.shape[1],
            )
        )

    # issue 8: 20 Lloyd iterations (k-means, k = 8) of 1e6 x 8 samples from the first 8 samples
    def kmeans(L, D):
        x = L.distribute(D.points, 0)
        return [x], lambda: L.kmeans(x, D.points[:KMEANS_K])

    ops.append(
        Op(
            "kmeans 20 iterations split=0",
            "kmeans",
            kmeans,
            lambda D: _lloyd(D.points, D.points[:KMEANS_K], KMEANS_ITER),
            rtol=1e-3,
            atol=1e-3,
            convert=lambda L, model: L.centres(model),
        )
    )

    # issue 8: PCA of the 200000 x 50 tall-skinny matrix (split along its rows), 10 components
    def pca(L, D):
        x = L.distribute(D.tall, 0)
        return [x], lambda: L.pca(x)

    def expect_variance(D):
        centred = D.tall.astype(np.float64) - D.tall.astype(np.float64).mean(axis=0)
        s = np.linalg.svd(centred, compute_uv=False)[:PCA_COMPONENTS]
        return s**2 / (len(centred) - 1)

    ops.append(
        Op(
            "pca full 10 components split=0",
            "time",
            pca,
            expect_variance,
            rtol=1e-3,
            atol=1e-4,
            convert=lambda L, model: L.explained_variance(model),
        )
    )

    # issue 8: Lasso, 20 coordinate-descent sweeps over the 20 coefficients of 200000 x 20 samples
    # (HeAT 1.8 solves another problem: its first column is the intercept and it assumes columns
    # of unit mean square, so its coefficients differ)
    def lasso(L, D):
        x = L.distribute(np.ascontiguousarray(D.tall[:, :LASSO_COLS]), 0)
        y = L.distribute(_lasso_targets(D), 0)
        return [x, y], lambda: L.lasso(x, y)

    ops.append(
        Op(
            f"lasso {LASSO_ITER} iterations split=0",
            "time",
            lasso,
            lambda D: _lasso_sweeps(
                D.tall[:, :LASSO_COLS], _lasso_targets(D), LASSO_LAM, LASSO_ITER
            ),
            rtol=1e-3,
            atol=1e-3,
            convert=lambda L, model: L.lasso_coef(model),
        )
    )
    return ops


def _lasso_targets(D: Data) -> np.ndarray:
    """Targets of the Lasso case: a linear function of its columns plus noise, float32."""
    coefficients = np.linspace(-2.0, 2.0, LASSO_COLS, dtype=np.float32)
    return D.tall[:, :LASSO_COLS] @ coefficients + np.float32(0.1) * D.tall[:, LASSO_COLS]


def _lasso_sweeps(x: np.ndarray, y: np.ndarray, lam: float, sweeps: int) -> np.ndarray:
    """Cyclic coordinate descent of scikit-learn's Lasso objective in float64: the coefficients."""
    x = x.astype(np.float64) - x.mean(axis=0, dtype=np.float64)
    residual = y.astype(np.float64) - y.mean(dtype=np.float64)
    norms = (x * x).sum(axis=0)
    w = np.zeros(x.shape[1])
    for _ in range(sweeps):
        for j in range(x.shape[1]):
            rho = x[:, j] @ residual + norms[j] * w[j]
            new = np.sign(rho) * max(abs(rho) - lam * len(x), 0.0) / norms[j]
            residual -= (new - w[j]) * x[:, j]
            w[j] = new
    return w


def _lloyd(points: np.ndarray, init: np.ndarray, iterations: int) -> np.ndarray:
    """Lloyd's iterations in float64 NumPy: the reference centres (an empty cluster stays)."""
    x = points.astype(np.float64)
    centres = init.astype(np.float64).copy()
    k = len(centres)
    for _ in range(iterations):
        squared = (centres**2).sum(1)[None, :] - 2.0 * (x @ centres.T)
        labels = squared.argmin(1)
        counts = np.bincount(labels, minlength=k)
        sums = np.stack(
            [np.bincount(labels, weights=x[:, j], minlength=k) for j in range(x.shape[1])], 1
        )
        nonempty = counts > 0
        centres[nonempty] = sums[nonempty] / counts[nonempty, None]
    return centres


_WRITTEN_FILES: set = set()


def _write_hdf5(path: str, x: np.ndarray) -> None:
    """Write ``x`` as dataset "x" of ``path`` (removed when the process exits)."""
    import atexit

    import h5py

    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=x)
    if path not in _WRITTEN_FILES:
        _WRITTEN_FILES.add(path)
        atexit.register(lambda: os.path.exists(path) and os.remove(path))


OPS = _ops()

# ---------------------------------------------------------------------------------------------
# measuring


def _proc_status_kb(field: str) -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def _trim_heap() -> None:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure_memory(fn: Callable[[], Any], L) -> Tuple[int, int]:
    """(peak extra bytes during one call, local bytes of its result); -1 where unsupported."""
    _trim_heap()
    before = _proc_status_kb("VmRSS")
    ok = _reset_peak()
    result = fn()
    peak = _proc_status_kb("VmHWM")
    out_bytes = L.local_nbytes(result)
    del result
    if not ok or before < 0 or peak < 0:
        return -1, out_bytes
    return max(0, peak - before) * 1024, out_bytes


def compare(got: np.ndarray, want: np.ndarray, op: Op) -> str:
    """'' when equal within the op's tolerance, else a short description."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if op.rtol == 0 and op.atol == 0:
        if np.array_equal(got, want):
            return ""
    elif np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=op.rtol, atol=op.atol):
        return ""
    with np.errstate(all="ignore"):
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    worst = np.nanmax(diff) if diff.size else 0.0
    return f"values differ (max abs diff {worst:.3g})"


def calibrate(L, fn: Callable[[], Any], first: float, min_time: float, cap: int = 1000) -> int:
    """
    Calls per repetition so that one lasts at least ``min_time``: the number grows at most ten
    times per step (one slow call under load must not inflate it), and every step's time is the
    maximum over the processes, so that all of them take the same decisions.
    """
    number, elapsed = 1, _slowest(L, first)
    while elapsed < min_time and number < cap:
        number = min(
            cap,
            10 * number,
            max(2 * number, math.ceil(1.2 * number * min_time / max(elapsed, 1e-9))),
        )
        L.barrier()
        start = time.perf_counter()
        for _ in range(number):
            result = fn()
            del result
        elapsed = _slowest(L, time.perf_counter() - start)
    return number


def _slowest(L, seconds: float) -> float:
    return L.world.allreduce(seconds, op=L.MPI.MAX) if L.size > 1 else seconds


def run_op(
    L, op: Op, D: Data, repeat: int, min_time: float, slow: float, inject: Tuple = ()
) -> Dict[str, Any]:
    """
    Runs one operation on this process; every field is local (agreement happens later).

    ``times`` always has ``repeat`` entries (unused ones -1) so that all processes agree on
    vectors of one length. An operation whose warm-up call takes ``slow`` seconds or more is
    measured on that call alone (time, memory and result), to bound the run's length.
    """
    inputs, fn = op.build(L, D)
    if inject and int(inject[0]) in (L.rank, -1):
        if inject[1:] == ("hang",):
            time.sleep(1e6)
        raise RuntimeError(f"failure injected on rank {L.rank}")
    in_bytes = L.local_nbytes(inputs)
    # warm-up, its memory watched too (used for slow operations only)
    _trim_heap()
    before = _proc_status_kb("VmRSS")
    reset = _reset_peak()
    L.barrier()
    start = time.perf_counter()
    result = fn()
    first = _slowest(L, time.perf_counter() - start)
    if first >= slow:
        peak = _proc_status_kb("VmHWM")
        mem_delta = max(0, peak - before) * 1024 if (reset and before >= 0 and peak >= 0) else -1
        out_bytes = L.local_nbytes(result)
        number, times = 1, [first] + [-1.0] * (repeat - 1)
    else:
        del result
        mem_delta, out_bytes = measure_memory(fn, L)
        # enough calls per repetition to last min_time, the same number on every process
        number = calibrate(L, fn, first, min_time)
        times = []
        for r in range(repeat):
            L.barrier()
            start = time.perf_counter()
            for i in range(number):
                if r or i:  # the last call's result is kept for the check
                    del result
                result = fn()
            times.append((time.perf_counter() - start) / number)
    # correctness
    if op.convert is not None:
        got = op.convert(L, result)
    else:
        got = L.to_numpy(op.checked(inputs) if op.checked is not None else result)
    mismatch = compare(got, op.expect(D), op)
    del result, got, inputs, fn
    return dict(
        times=times,
        number=number,
        mem_delta=mem_delta,
        in_bytes=in_bytes,
        out_bytes=out_bytes,
        mismatch=mismatch,
    )


class Agreement:
    """Agrees on each operation's outcome on a communicator of its own, with a time limit."""

    def __init__(self, L, timeout: float, abort_path: str) -> None:
        self.L = L
        self.timeout = timeout
        self.abort_path = abort_path
        self.comm = L.world.Dup() if L.size > 1 else None

    def maximum(self, values: Sequence[float], op_name: str, error: str) -> np.ndarray:
        local = np.asarray(values, dtype=np.float64)
        if self.comm is None:
            return local
        out = np.empty_like(local)
        request = self.comm.Iallreduce(local, out, op=self.L.MPI.MAX)
        deadline = time.monotonic() + self.timeout
        while not request.Test():
            if time.monotonic() > deadline:
                reason = error or "another process did not finish (hung in a collective?)"
                with open(f"{self.abort_path}.{self.L.rank}", "w") as f:
                    json.dump({"op": op_name, "error": reason, "rank": self.L.rank}, f)
                sys.stderr.write(
                    f"[rank {self.L.rank}] {op_name}: no agreement after {self.timeout} s; aborting\n"
                )
                sys.stderr.flush()
                self.L.world.Abort(3)
            time.sleep(0.002)
        return out

    def gather(self, obj) -> list:
        return [obj] if self.comm is None else self.comm.allgather(obj)


def short_error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 3] + "..."


def parse_indices(text: str) -> set:
    chosen = set()
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        chosen.update(range(int(lo), int(hi or lo) + 1))
    return chosen


def selected_ops(text: str) -> List[int]:
    """
    The indices of the operations whose name contains ``text`` (all for ""). A text that names
    no operation raises ValueError listing the names, rather than running nothing.
    """
    chosen = [index for index, op in enumerate(OPS) if text in op.name]
    if not chosen:
        names = "\n  ".join(op.name for op in OPS)
        raise ValueError(
            f"--ops {text!r} is part of no operation's name; the operations:\n  {names}"
        )
    return chosen


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--library", choices=("heat", "numpy"), default="heat")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the 4e6-element data")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions per operation")
    parser.add_argument("--min-time", type=float, default=0.05, help="least seconds per repetition")
    parser.add_argument("--ops", default="", help="only operations whose name contains this text")
    parser.add_argument("--skip", default="", help="operation indices to leave out, e.g. 0-5,9")
    parser.add_argument(
        "--slow",
        type=float,
        default=5.0,
        help="seconds: a slower warm-up call is the only measurement",
    )
    parser.add_argument("--agree-timeout", type=float, default=120.0)
    parser.add_argument("--out", default="", help="JSON-lines file written by rank 0")
    parser.add_argument("--list", action="store_true", help="print the operations and exit")
    parser.add_argument(
        "--threads", type=int, default=0, help="torch threads per process (0: cores // processes)"
    )
    parser.add_argument(
        "--inject-failure",
        default="",
        metavar="INDEX:RANK[:hang]",
        help="testing the harness: raise (or hang) in operation INDEX on RANK (-1: every rank)",
    )
    args = parser.parse_args(argv)

    if args.list:
        for i, op in enumerate(OPS):
            print(f"{i:3d}  {op.name}")
        return
    try:
        chosen = set(selected_ops(args.ops))
    except ValueError as error:
        parser.error(str(error))

    L = HeatLib() if args.library == "heat" else NumpyLib()
    if L.name == "heat":
        # the same threads per process for every heat (ours sets this itself at import)
        L.torch.set_num_threads(args.threads or max(1, (os.cpu_count() or 1) // L.size))
    D = make_data(args.scale)
    skip = parse_indices(args.skip)
    inject = tuple(args.inject_failure.split(":")) if args.inject_failure else ()
    agree = Agreement(L, args.agree_timeout, (args.out or "algorithms") + ".abort")
    sink = open(args.out, "a") if (args.out and L.rank == 0) else None

    def emit(record: dict) -> None:
        if sink is not None:
            sink.write(json.dumps(record) + "\n")
            sink.flush()

    threads = L.torch.get_num_threads() if L.name == "heat" else 1
    emit(
        dict(
            event="meta",
            library=L.name,
            version=L.version,
            location=L.location,
            processes=L.size,
            shape=list(D.x.shape),
            dtype="float32",
            threads=threads,
            repeat=args.repeat,
            min_time=args.min_time,
            scale=args.scale,
            load=os.getloadavg()[0],
            time=time.strftime("%Y-%m-%d %H:%M:%S"),
        )
    )
    if L.rank == 0:
        print(
            f"{L.name} {L.version} ({L.location}), {L.size} process(es), {threads} thread(s) each, "
            f"data {D.x.shape} float32, load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    for index, op in enumerate(OPS):
        if index in skip or index not in chosen:
            continue
        emit(dict(event="start", index=index, op=op.name))
        gc.collect()
        error = ""
        try:
            injected = inject[1:] if inject and int(inject[0]) == index else ()
            local = run_op(L, op, D, args.repeat, args.min_time, args.slow, injected)
        except Exception as exc:  # reported per operation; the run goes on
            error = short_error(exc)
            if os.environ.get("ALGORITHMS_TRACEBACK"):
                traceback.print_exc()
            local = dict(
                times=[-1.0] * args.repeat,
                number=0,
                mem_delta=0,
                in_bytes=0,
                out_bytes=0,
                mismatch="",
            )
        gc.collect()
        bad_check = 1.0 if local["mismatch"] else 0.0
        ratio = local["mem_delta"] / max(1, local["in_bytes"] + local["out_bytes"])
        vector = [
            1.0 if error else 0.0,
            bad_check,
            local["mem_delta"],
            local["in_bytes"],
            local["out_bytes"],
            ratio,
        ]
        agreed = agree.maximum(vector + list(local["times"]), op.name, error)
        failed, mismatched = agreed[0] > 0, agreed[1] > 0
        messages = agree.gather((error, local["mismatch"])) if (failed or mismatched) else []
        record = dict(event="result", index=index, op=op.name, group=op.group, processes=L.size)
        if op.flops:
            record["flops"] = op.flops(D)
        if failed:
            first = next(e for e, _ in messages if e)
            record.update(status="error", error=first)
        else:
            times = [float(t) for t in agreed[6:] if t >= 0]
            record.update(
                status="ok",
                best=min(times),
                median=statistics.median(times),
                number=local["number"],
                repeat=len(times),
                mem_delta=int(agreed[2]) if agreed[2] >= 0 else None,
                in_bytes=int(agreed[3]),
                out_bytes=int(agreed[4]),
                mem_ratio=float(agreed[5]) if agreed[2] >= 0 else None,
                check="ok" if not mismatched else next(m for _, m in messages if m),
            )
        emit(record)
        if L.rank == 0:
            if failed:
                print(f"{index:3d} {op.name:40s} error: {record['error']}", flush=True)
            else:
                print(
                    f"{index:3d} {op.name:40s} best {record['best']:.5f} s  median {record['median']:.5f} s"
                    f"  x{record['number']}  mem +{(record['mem_delta'] or 0) / 2**20:.1f} MB"
                    f"  in+out {(record['in_bytes'] + record['out_bytes']) / 2**20:.1f} MB  check {record['check']}",
                    flush=True,
                )
    emit(dict(event="done"))
    if sink is not None:
        sink.close()


if __name__ == "__main__":
    main()
