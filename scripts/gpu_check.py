#!/usr/bin/env python3
"""
One prepared run that answers whether heat works, and how fast, on a GPU.

    python scripts/gpu_check.py                           # one process; JSON to gpu_check.json
    mpiexec -n 2 python scripts/gpu_check.py --json r2.json   # two processes sharing the GPU(s)
    python scripts/gpu_check.py --device cpu --quick     # the CPU half only (what CI runs)

Three parts, each a list of named checks run on every process together:

- **conformance** -- a representative subset of every function family on the device, against
  NumPy: elementwise, reductions, sort/unique, indexing, resplit, manipulations, linalg
  (matmul, qr, svd, eigh, solve, norm), fft, statistics, random, I/O, k-means, PCA and cdist;
  results must live on the device they were computed on;
- **training and data** -- ``StreamingDataLoader(device=...)`` (pinned staging, non-blocking
  copies: batches on the device, every row exactly once, the file's values), ``ht.nn.DataParallel``
  (parameters equal to one-process full-batch training) and DASO with tensors on the device
  (NCCL where every process has a GPU of its own, gloo where processes share one), operands on
  different devices giving a clear error, ``heat info`` on the machine;
- **performance** (skipped with ``--quick``) -- measured side by side in one run: elementwise
  throughput as a share of the device-to-device copy bandwidth torch reaches, matmul and QR
  GFLOP/s against torch's own on the same device, and loader samples/s into device memory against
  reading the same file with h5py and copying each batch with ``.to(device)``.

On a machine without a GPU, ``--device auto`` (the default) runs the CPU half -- every check on
``cpu`` -- and records the CUDA half as skipped, with the reason; that is how CI runs it
(tests/test_gpu_check.py), so the script cannot rot between the rare runs on a GPU.

Every check's outcome is agreed by all processes (failed if it failed anywhere, with the first
failing rank's message). A check that blocks longer than ``--check-timeout`` seconds ends the job
with every rank's stack (faulthandler), so the run never hangs; the JSON report is rewritten by
rank 0 after every check, so what ran before stays readable. The exit status is 1 if any check
failed, else 0.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

# a process per emulated node, so that DASO's cross-node path runs with two or more processes;
# read when heat first builds a node topology
os.environ.setdefault("HEAT_RANKS_PER_NODE", "1")

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import heat as ht  # noqa: E402

COMM = ht.MPI_WORLD
RANK, SIZE = COMM.rank, COMM.size


class Skip(Exception):
    """Raised by a check that cannot run here; the message says why."""


# --------------------------------------------------------------------------------------------------
# running checks
# --------------------------------------------------------------------------------------------------
class Runner:
    """Runs named checks collectively, agrees on their outcome and keeps the JSON report."""

    def __init__(self, report_path: Optional[str], check_timeout: float):
        self.report_path = report_path
        self.check_timeout = check_timeout
        self.checks: List[Dict[str, Any]] = []
        self.metrics: Dict[str, Any] = {}
        self.environment: Dict[str, Any] = {}

    def run(self, part: str, name: str, function: Callable[[], Optional[str]]) -> None:
        faulthandler.dump_traceback_later(self.check_timeout, exit=True)
        start = time.perf_counter()
        try:
            detail, status = function() or "", "pass"
        except Skip as reason:
            detail, status = str(reason), "skip"
        except Exception as error:  # one failing check must not stop the others
            frames = traceback.extract_tb(error.__traceback__)[-3:]
            where = "; ".join(f"{os.path.basename(f.filename)}:{f.lineno}" for f in frames)
            detail, status = f"{type(error).__name__}: {error} [{where}]", "fail"
        finally:
            faulthandler.cancel_dump_traceback_later()
        seconds = time.perf_counter() - start
        outcomes = COMM.allgather((status, detail))
        statuses = [s for s, _ in outcomes]
        for wanted in ("fail", "skip"):
            if wanted in statuses:
                first = statuses.index(wanted)
                status, detail = wanted, outcomes[first][1]
                if wanted == "fail" and SIZE > 1:
                    ranks = [r for r, s in enumerate(statuses) if s == "fail"]
                    detail = f"rank(s) {ranks}: {detail}"
                break
        record = {
            "part": part,
            "name": name,
            "status": status,
            "detail": detail,
            "seconds": round(seconds, 3),
        }
        self.checks.append(record)
        if RANK == 0:
            mark = {"pass": "ok  ", "fail": "FAIL", "skip": "skip"}[status]
            print(f"[{mark}] {part:<12} {name:<38} {seconds:7.2f} s  {detail}"[:400], flush=True)
        self.write()

    def metric(self, name: str, values: Dict[str, Any]) -> None:
        self.metrics[name] = values
        if RANK == 0:
            shown = ", ".join(f"{k}={_fmt(v)}" for k, v in values.items())
            print(f"[perf] {name:<38} {shown}", flush=True)
        self.write()

    def write(self) -> None:
        if RANK != 0 or not self.report_path:
            return
        counts = {s: sum(c["status"] == s for c in self.checks) for s in ("pass", "fail", "skip")}
        report = {
            "environment": self.environment,
            "summary": counts,
            "checks": self.checks,
            "metrics": self.metrics,
        }
        temporary = f"{self.report_path}.tmp"
        with open(temporary, "w") as stream:
            json.dump(report, stream, indent=1)
        os.replace(temporary, self.report_path)

    def failed(self) -> int:
        return sum(c["status"] == "fail" for c in self.checks)


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def synchronize(device: ht.Device) -> None:
    if device.device_type == "gpu":
        torch.cuda.synchronize()


# --------------------------------------------------------------------------------------------------
# comparing with NumPy
# --------------------------------------------------------------------------------------------------
TOLERANCES = {
    np.dtype(np.float32): (1e-4, 1e-5),
    np.dtype(np.float64): (1e-10, 1e-12),
    np.dtype(np.complex64): (1e-4, 1e-5),
    np.dtype(np.complex128): (1e-10, 1e-12),
}


def expect_on(x: Any, device: ht.Device, what: str) -> None:
    """``x`` (a DNDarray) lives on ``device``: its metadata and its torch block."""
    if not isinstance(x, ht.DNDarray):
        raise AssertionError(f"{what}: expected a DNDarray, got {type(x).__name__}")
    if x.device != device:
        raise AssertionError(f"{what}: result on {x.device}, expected {device}")
    expected_type = "cuda" if device.device_type == "gpu" else "cpu"
    if x.larray.device.type != expected_type:
        raise AssertionError(f"{what}: local block on {x.larray.device}, expected {expected_type}")


def agree(
    x: ht.DNDarray,
    expected: np.ndarray,
    device: ht.Device,
    what: str,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    dtype: bool = True,
) -> None:
    """``x`` equals NumPy's ``expected`` (values, shape and, by default, dtype) and lives on
    ``device``."""
    expect_on(x, device, what)
    got = x.numpy()
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        raise AssertionError(f"{what}: shape {got.shape}, NumPy {expected.shape}")
    if dtype and got.dtype != expected.dtype:
        raise AssertionError(f"{what}: dtype {got.dtype}, NumPy {expected.dtype}")
    default_rtol, default_atol = TOLERANCES.get(expected.dtype, (0.0, 0.0))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=what)


def data(shape: Tuple[int, ...], dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    """The same pseudo-random NumPy array on every process (no zeros for integer types)."""
    generator = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return generator.integers(1, 20, size=shape).astype(dtype)
    return generator.standard_normal(shape).astype(dtype)


def splits(ndim: int) -> Tuple[Optional[int], ...]:
    return (None,) + tuple(range(ndim)) + ((-1,) if ndim > 1 else ())


# rows: 7 and 3 are uneven at 2-4 processes; 3 rows at 4 processes leaves a block empty
SHAPES_2D = ((7, 5), (3, 4))


def conformance_checks(device: ht.Device) -> List[Tuple[str, Callable[[], Optional[str]]]]:
    """The (name, check) pairs of the conformance part on ``device``."""

    def elementwise():
        count = 0
        for shape in SHAPES_2D:
            for dtype in (np.float32, np.float64, np.int32):
                a, b = data(shape, dtype, 1), data(shape, dtype, 2)
                row = data(shape[1:], dtype, 3)
                for split in splits(2):
                    x = ht.array(a, split=split, device=device)
                    y = ht.array(b, split=split, device=device)
                    r = ht.array(row, device=device)
                    cases = [
                        ("add", x + y, a + b),
                        ("mul", x * y, a * b),
                        ("sub broadcast", x - r, a - row),
                        ("abs", ht.abs(x), np.abs(a)),
                        ("maximum", ht.maximum(x, y), np.maximum(a, b)),
                        ("less", x < y, a < b),
                        ("where", ht.where(x > y, x, y), np.where(a > b, a, b)),
                        ("clip", ht.clip(x, -1, 1), np.clip(a, -1, 1)),
                    ]
                    if np.dtype(dtype).kind == "f":
                        cases += [
                            ("exp", ht.exp(x), np.exp(a)),
                            ("sin", ht.sin(x), np.sin(a)),
                            ("sqrt", ht.sqrt(ht.abs(x)), np.sqrt(np.abs(a))),
                            ("divide", x / y, a / b),
                            ("power", x**2, a**2),
                        ]
                    for op, got, want in cases:
                        agree(got, want, device, f"{op} {np.dtype(dtype)} {shape} split={split}")
                        count += 1
        return f"{count} results"

    def reductions():
        count = 0
        for shape in SHAPES_2D:
            for dtype in (np.float32, np.float64, np.int64):
                a = data(shape, dtype, 4)
                for split in splits(2):
                    x = ht.array(a, split=split, device=device)
                    for axis in (None, 0, 1):
                        cases = [
                            ("sum", ht.sum(x, axis=axis), np.sum(a, axis=axis)),
                            ("max", ht.max(x, axis=axis), np.max(a, axis=axis)),
                            ("argmin", ht.argmin(x, axis=axis), np.argmin(a, axis=axis)),
                        ]
                        if np.dtype(dtype).kind == "f":
                            cases += [
                                ("mean", ht.mean(x, axis=axis), np.mean(a, axis=axis)),
                                ("std", ht.std(x, axis=axis), np.std(a, axis=axis)),
                            ]
                        if axis is not None:
                            cases.append(
                                ("cumsum", ht.cumsum(x, axis=axis), np.cumsum(a, axis=axis))
                            )
                        for op, got, want in cases:
                            agree(
                                got,
                                want,
                                device,
                                f"{op} {np.dtype(dtype)} {shape} split={split} axis={axis}",
                                rtol=1e-4 if dtype == np.float32 else None,
                            )
                            count += 1
        return f"{count} results"

    def sort_unique():
        count = 0
        for shape in ((11, 4), (3, 5)):
            for dtype in (np.float32, np.int32):
                a = data(shape, dtype, 5)
                a[::3] = a[1::3][: len(a[::3])] if len(a) > 1 else a[::3]  # repeated rows/values
                for split in splits(2):
                    x = ht.array(a, split=split, device=device)
                    for axis in (0, 1):
                        agree(
                            ht.sort(x, axis=axis),
                            np.sort(a, axis=axis),
                            device,
                            f"sort {np.dtype(dtype)} {shape} split={split} axis={axis}",
                        )
                        count += 1
                    agree(
                        ht.unique(x),
                        np.unique(a),
                        device,
                        f"unique {np.dtype(dtype)} {shape} split={split}",
                    )
                    count += 1
        return f"{count} results"

    def indexing():
        count = 0
        a = data((9, 6), np.float32, 6)
        for split in splits(2):
            x = ht.array(a, split=split, device=device)
            mask = a > 0
            cases = [
                ("slice", x[1:8:2, ::2], a[1:8:2, ::2]),
                ("row", x[4], a[4]),
                ("column", x[:, 3], a[:, 3]),
                ("negative", x[-3:, -2], a[-3:, -2]),
                ("fancy", x[[0, 7, 3]], a[[0, 7, 3]]),
                ("mask", x[ht.array(mask, split=split, device=device)], a[mask]),
            ]
            for op, got, want in cases:
                agree(got, want, device, f"getitem {op} split={split}")
                count += 1
            y = x.copy()
            y[y > 0] = 0.0
            b = a.copy()
            b[b > 0] = 0.0
            agree(y, b, device, f"setitem mask split={split}")
            y[2:5, 1] = ht.array(np.arange(3, dtype=np.float32), device=device)
            b[2:5, 1] = np.arange(3)
            agree(y, b, device, f"setitem slice split={split}")
            count += 2
        return f"{count} results"

    def resplit_and_manipulations():
        count = 0
        for shape in ((13, 6), (2, 9)):
            a = data(shape, np.float64, 7)
            for source in splits(2):
                x = ht.array(a, split=source, device=device)
                for target in (None, 0, 1):
                    agree(ht.resplit(x, target), a, device, f"resplit {shape} {source}->{target}")
                    count += 1
                cases = [
                    ("transpose", x.T, a.T),
                    ("reshape", ht.reshape(x, (shape[1], shape[0])), a.reshape(shape[1], shape[0])),
                    ("concatenate", ht.concatenate([x, x], axis=0), np.concatenate([a, a], axis=0)),
                    ("flip", ht.flip(x, 0), np.flip(a, 0)),
                    ("diff", ht.diff(x, axis=0), np.diff(a, axis=0)),
                ]
                for op, got, want in cases:
                    agree(got, want, device, f"{op} {shape} split={source}")
                    count += 1
        return f"{count} results"

    def matmul():
        count = 0
        for dtype in (np.float32, np.float64):
            a, b = data((9, 7), dtype, 8), data((7, 5), dtype, 9)
            for split_a in (None, 0, 1):
                for split_b in (None, 0, 1):
                    got = ht.matmul(
                        ht.array(a, split=split_a, device=device),
                        ht.array(b, split=split_b, device=device),
                    )
                    agree(
                        got,
                        a @ b,
                        device,
                        f"matmul {np.dtype(dtype)} {split_a}x{split_b}",
                        rtol=1e-4 if dtype == np.float32 else 1e-10,
                        atol=1e-5,
                    )
                    count += 1
        return f"{count} results"

    def qr_svd():
        count = 0
        for shape in ((40, 6), (6, 6)):
            a = data(shape, np.float64, 10)
            for split in (None, 0, 1):
                x = ht.array(a, split=split, device=device)
                q, r = ht.linalg.qr(x)
                expect_on(q, device, f"qr Q split={split}")
                qn, rn = q.numpy(), r.numpy()
                np.testing.assert_allclose(qn @ rn, a, atol=1e-10, err_msg=f"qr QR=A {shape}")
                np.testing.assert_allclose(
                    qn.T @ qn,
                    np.eye(shape[1]),
                    atol=1e-10,
                    err_msg=f"qr Q orthonormal {shape} split={split}",
                )
                np.testing.assert_allclose(
                    np.abs(rn),
                    np.abs(np.linalg.qr(a)[1]),
                    atol=1e-10,
                    err_msg=f"qr |R| {shape} split={split}",
                )
                u, s, vh = ht.linalg.svd(x, full_matrices=False)
                agree(s, np.linalg.svd(a, compute_uv=False), device, f"svd S {shape} {split}")
                np.testing.assert_allclose(
                    (u.numpy() * s.numpy()) @ vh.numpy(),
                    a,
                    atol=1e-9,
                    err_msg=f"svd USV=A {shape} split={split}",
                )
                count += 2
        return f"{count} decompositions"

    def eigh_solve_norm():
        count = 0
        a = data((8, 8), np.float64, 11)
        sym = a + a.T
        rhs = data((8, 3), np.float64, 12)
        for split in (None, 0, 1):
            values, vectors = ht.linalg.eigh(ht.array(sym, split=split, device=device))
            agree(values, np.linalg.eigh(sym)[0], device, f"eigh values split={split}", atol=1e-9)
            v = vectors.numpy()
            np.testing.assert_allclose(
                sym @ v, v * values.numpy(), atol=1e-8, err_msg=f"eigh vectors split={split}"
            )
            x = ht.linalg.solve(
                ht.array(sym, split=split, device=device), ht.array(rhs, split=split, device=device)
            )
            agree(x, np.linalg.solve(sym, rhs), device, f"solve split={split}", atol=1e-9)
            agree(
                ht.linalg.norm(ht.array(a, split=split, device=device)),
                np.linalg.norm(a),
                device,
                f"norm split={split}",
            )
            count += 3
        return f"{count} results"

    def fft():
        count = 0
        for dtype in (np.float32, np.float64):
            a = data((8, 6), dtype, 13)
            for split in splits(2):
                x = ht.array(a, split=split, device=device)
                for axis in (0, 1):
                    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else {}
                    agree(
                        ht.fft.fft(x, axis=axis),
                        np.fft.fft(a, axis=axis),
                        device,
                        f"fft {np.dtype(dtype)} split={split} axis={axis}",
                        dtype=False,
                        **tol,
                    )
                    agree(
                        ht.fft.rfft(x, axis=axis),
                        np.fft.rfft(a, axis=axis),
                        device,
                        f"rfft {np.dtype(dtype)} split={split} axis={axis}",
                        dtype=False,
                        **tol,
                    )
                    count += 2
                back = ht.fft.ifft(ht.fft.fft2(x), axis=0)
                agree(
                    back,
                    np.fft.ifft(np.fft.fft2(a), axis=0),
                    device,
                    f"fft2+ifft {np.dtype(dtype)} split={split}",
                    dtype=False,
                    rtol=1e-3 if dtype == np.float32 else 1e-9,
                    atol=1e-3,
                )
                count += 1
        return f"{count} results"

    def statistics_and_random():
        count = 0
        a = data((10, 4), np.float64, 14)
        for split in splits(2):
            x = ht.array(a, split=split, device=device)
            agree(ht.median(x, axis=0), np.median(a, axis=0), device, f"median split={split}")
            agree(
                ht.percentile(x, 30.0, axis=1),
                np.percentile(a, 30.0, axis=1),
                device,
                f"percentile split={split}",
            )
            count += 2
        for split in (None, 0):
            ht.random.seed(42)
            on_device = ht.random.randn(6, 3, split=split, device=device)
            ht.random.seed(42)
            on_cpu = ht.random.randn(6, 3, split=split, device="cpu")
            agree(on_device, on_cpu.numpy(), device, f"random.randn same on cpu split={split}")
            count += 1
        return f"{count} results"

    def io_hdf5():
        a = data((11, 3), np.float32, 15)
        folder = COMM.bcast(tempfile.mkdtemp(prefix="heat_gpu_check_") if RANK == 0 else None)
        path = os.path.join(folder, "x.h5")
        try:
            for split in (None, 0, 1):
                ht.save(ht.array(a, split=split, device=device), path, "x")
                back = ht.load(path, dataset="x", split=split, device=device)
                agree(back, a, device, f"save/load hdf5 split={split}")
        finally:
            COMM.Barrier()
            if RANK == 0:
                _remove_tree(folder)
        return "3 round trips"

    def kmeans():
        centers = np.array([[0.0, 0.0], [8.0, 8.0], [-8.0, 8.0]])
        points = np.concatenate(
            [c + data((40, 2), np.float64, 16 + i) for i, c in enumerate(centers)]
        )
        results = {}
        for where in (device, ht.cpu):
            estimator = ht.cluster.KMeans(n_clusters=3, init="k-means++", random_state=3)
            estimator.fit(ht.array(points, split=0, device=where))
            expect_on(estimator.cluster_centers_, where, f"kmeans centers on {where}")
            results[str(where)] = np.sort(estimator.cluster_centers_.numpy(), axis=0)
        found = results[str(device)]
        np.testing.assert_allclose(
            found,
            np.sort(centers, axis=0),
            atol=0.6,
            err_msg="kmeans centres far from the true ones",
        )
        np.testing.assert_allclose(
            found,
            results["cpu:0"],
            atol=1e-8,
            err_msg="kmeans on the device differs from kmeans on cpu",
        )
        return "centres equal to the CPU run's"

    def pca_cdist():
        a = data((30, 5), np.float64, 19) * np.array([5.0, 3.0, 1.0, 0.5, 0.1])
        b = data((7, 5), np.float64, 20)
        centred = a - a.mean(axis=0)
        variances = np.linalg.svd(centred, compute_uv=False) ** 2 / (len(a) - 1)
        for split in (None, 0, 1):
            pca = ht.decomposition.PCA(n_components=3).fit(ht.array(a, split=split, device=device))
            agree(
                pca.explained_variance_,
                variances[:3],
                device,
                f"PCA variances split={split}",
                atol=1e-9,
            )
        expected = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
        for split in (None, 0):
            got = ht.spatial.cdist(
                ht.array(a, split=split, device=device), ht.array(b, device=device)
            )
            agree(got, expected, device, f"cdist split={split}", atol=1e-9)
        return "PCA at 3 splits, cdist at 2"

    return [
        ("elementwise", elementwise),
        ("reductions", reductions),
        ("sort and unique", sort_unique),
        ("indexing", indexing),
        ("resplit and manipulations", resplit_and_manipulations),
        ("linalg.matmul", matmul),
        ("linalg.qr and svd", qr_svd),
        ("linalg.eigh, solve, norm", eigh_solve_norm),
        ("fft", fft),
        ("statistics and random", statistics_and_random),
        ("io.hdf5 save/load", io_hdf5),
        ("cluster.KMeans", kmeans),
        ("PCA and cdist", pca_cdist),
    ]


def _remove_tree(folder: str) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------------------------------
# training and data
# --------------------------------------------------------------------------------------------------
def write_h5(rows: int, features: int, chunk_rows: Optional[int] = None) -> Tuple[str, str]:
    """A file of ``x`` (row i holds i + column / 1000) and ``y`` (i), written by rank 0."""
    folder = COMM.bcast(tempfile.mkdtemp(prefix="heat_gpu_check_") if RANK == 0 else None)
    path = os.path.join(folder, "rows.h5")
    if RANK == 0:
        index = np.arange(rows, dtype=np.float32)[:, None]
        with h5py.File(path, "w") as f:
            chunks = None if chunk_rows is None else (chunk_rows, features)
            step = 1 << 16
            x = f.create_dataset("x", (rows, features), np.float32, chunks=chunks)
            for start in range(0, rows, step):
                stop = min(start + step, rows)
                x[start:stop] = index[start:stop] + np.arange(features, dtype=np.float32) / 1000
            f.create_dataset("y", data=np.arange(rows, dtype=np.int64))
    COMM.Barrier()
    return folder, path


def training_checks(
    device: ht.Device, runner: "Runner"
) -> List[Tuple[str, Callable[[], Optional[str]]]]:

    def loader():
        from heat.utils.data import StreamingDataLoader

        rows, features = 5_003, 16
        folder, path = write_h5(rows, features, chunk_rows=256)
        torch_type = "cuda" if device.device_type == "gpu" else "cpu"
        try:
            for shuffle in (True, False):
                stream = StreamingDataLoader(
                    path,
                    ["x", "y"],
                    batch_size=64,
                    shuffle=shuffle,
                    seed=5,
                    window_bytes=96 * 1024,
                    device=device,
                    return_indices=True,
                )
                seen = []
                for x, y, indices in stream:
                    for t in (x, y):
                        if t.device.type != torch_type:
                            raise AssertionError(f"batch on {t.device}, expected {torch_type}")
                    expected_y = indices.to(y.device)
                    if not torch.equal(y, expected_y):
                        raise AssertionError("y does not hold the rows of the indices")
                    if not torch.equal(x[:, 0], expected_y.to(x.dtype)):
                        raise AssertionError("x does not hold the rows of the indices")
                    seen.append(indices.cpu().numpy())
                everything = np.sort(np.concatenate(COMM.allgather(np.concatenate(seen))))
                if not np.array_equal(everything, np.arange(rows)):
                    raise AssertionError(f"shuffle={shuffle}: rows not yielded exactly once")
            dnd = StreamingDataLoader(
                path, ["x"], batch_size=50, device=device, as_dndarray=True, window_bytes=96 * 1024
            )
            first = next(iter(dnd))[0]
            expect_on(first, device, "as_dndarray batch")
        finally:
            COMM.Barrier()
            if RANK == 0:
                _remove_tree(folder)
        return f"{rows} rows exactly once, shuffle on and off, at {SIZE} process(es)"

    def data_parallel():
        torch_device = torch.device(device.torch_device)
        torch.manual_seed(0)
        net = (
            torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
            .double()
            .to(torch_device)
        )
        reference = (
            torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
            .double()
            .to(torch_device)
        )
        reference.load_state_dict(net.state_dict())
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        model = ht.nn.DataParallel(net, optimizer=optimizer)
        reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
        batch = 8
        for step in range(4):
            generator = torch.Generator().manual_seed(100 + step)
            xs = torch.randn(SIZE * batch, 6, generator=generator, dtype=torch.float64)
            ys = torch.randint(0, 3, (SIZE * batch,), generator=generator)
            xs, ys = xs.to(torch_device), ys.to(torch_device)
            mine = slice(RANK * batch, (RANK + 1) * batch)
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(xs[mine]), ys[mine]).backward()
            optimizer.step()
            reference_optimizer.zero_grad()
            torch.nn.functional.cross_entropy(reference(xs), ys).backward()
            reference_optimizer.step()
        for (name, p), q in zip(net.named_parameters(), reference.parameters()):
            if p.device.type != torch_device.type:
                raise AssertionError(f"parameter {name} moved to {p.device}")
            if not torch.allclose(p, q, rtol=1e-10, atol=1e-12):
                raise AssertionError(
                    f"parameter {name} differs from full-batch training by "
                    f"{float((p - q).abs().max()):.3g}"
                )
        return f"4 SGD steps equal to full-batch training at {SIZE} process(es)"

    def daso():
        torch_device = torch.device(device.torch_device)
        torch.manual_seed(1)
        net = torch.nn.Sequential(
            torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)
        ).to(torch_device)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        epochs, steps = 4, 12
        daso = ht.optim.DASO(
            local_optimizer=optimizer,
            total_epochs=epochs,
            warmup_epochs=1,
            cooldown_epochs=1,
            max_global_skips=2,
        )
        model = ht.nn.DataParallelMultiGPU(net, daso)
        daso.last_batch = steps
        generator = torch.Generator().manual_seed(7 + RANK)
        teacher = torch.randn(8, 2, generator=torch.Generator().manual_seed(3))
        losses = []
        for epoch in range(epochs):
            total = 0.0
            for _ in range(steps):
                x = torch.randn(32, 8, generator=generator)
                y = (x @ teacher).argmax(1)
                x, y = x.to(torch_device), y.to(torch_device)
                daso.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                daso.step()
                total += float(loss.detach())
            daso.epoch_loss_logic(total / steps)
            losses.append(total / steps)
        flat = torch.cat([p.detach().reshape(-1).double().cpu() for p in net.parameters()])
        copies = COMM.allgather(flat.numpy())
        spread = max(float(np.abs(c - copies[0]).max()) for c in copies)
        if spread > 1e-6:
            raise AssertionError(f"parameters differ across processes after cool-down by {spread}")
        if not losses[-1] < losses[0]:
            raise AssertionError(f"loss did not fall: {losses}")
        if any(p.device.type != torch_device.type for p in net.parameters()):
            raise AssertionError("DASO moved parameters off the device")
        nodes = daso.groups.num_nodes
        return (
            f"loss {losses[0]:.3f} -> {losses[-1]:.3f}, {nodes} emulated node(s), parameters "
            f"equal everywhere after cool-down"
        )

    def mixed_devices():
        if device.device_type != "gpu":
            raise Skip("needs a GPU: operands on cpu and gpu")
        a = ht.ones((4, 3), split=0, device="cpu")
        b = ht.ones((4, 3), split=0, device=device)
        calls = {
            "add": lambda: a + b,
            "matmul": lambda: ht.matmul(a, b.T),
            "concatenate": lambda: ht.concatenate([a, b]),
            "where": lambda: ht.where(a > 0, a, b),
            "maximum": lambda: ht.maximum(a, b),
        }
        unclear = []
        for name, call in calls.items():
            try:
                call()
                unclear.append(f"{name}: no error")
            except (ValueError, TypeError) as error:
                if "device" not in str(error):
                    unclear.append(f"{name}: {type(error).__name__} without 'device': {error}")
            except Exception as error:
                unclear.append(f"{name}: {type(error).__name__}: {str(error)[:120]}")
        if unclear:
            raise AssertionError("; ".join(unclear))
        return f"{len(calls)} operations raise a clear error naming the devices"

    def heat_info():
        from heat.cli import collect_info, format_info

        text = format_info(collect_info())
        if device.device_type == "gpu" and torch.cuda.get_device_name(0) not in text:
            raise AssertionError(f"heat info does not name the GPU {torch.cuda.get_device_name(0)}")
        runner.environment["heat_info"] = text
        if RANK == 0:
            print(text, flush=True)
        return "printed above"

    return [
        ("StreamingDataLoader on the device", loader),
        ("nn.DataParallel on the device", data_parallel),
        ("DASO on the device", daso),
        ("operands on two devices", mixed_devices),
        ("heat info", heat_info),
    ]


# --------------------------------------------------------------------------------------------------
# performance, side by side
# --------------------------------------------------------------------------------------------------
def timed(
    function: Callable[[], Any], device: ht.Device, repeat: int = 5, root_only: bool = False
) -> float:
    """Median seconds of ``function`` over ``repeat`` runs after one warm-up, all processes
    starting together (the slowest process counts); ``root_only``: rank 0 alone runs it, the
    others wait (a one-process reference on a GPU the processes may share)."""
    times = [0.0]
    if RANK == 0 or not root_only:
        function()
        synchronize(device)
        times = []
        for _ in range(repeat):
            if not root_only:
                COMM.Barrier()
            start = time.perf_counter()
            function()
            synchronize(device)
            times.append(time.perf_counter() - start)
    return float(COMM.allreduce(float(np.median(times)), op=ht.MPI.MAX))


def performance_checks(device: ht.Device, quick: bool, runner: Runner):
    torch_device = torch.device(device.torch_device)
    gpu = device.device_type == "gpu"

    def elementwise():
        elements = (1 << 26 if gpu else 1 << 20) * SIZE  # 256 MiB of float32 per process on a GPU
        x = ht.random.rand(elements, split=0, device=device)
        y = ht.random.rand(elements, split=0, device=device)
        lx, ly = x.larray, y.larray
        moved = 3 * lx.numel() * 4  # two reads, one write
        copy = timed(lambda: lx.clone(), device)
        heat_add = timed(lambda: x + y, device)
        torch_add = timed(lambda: lx + ly, device)
        heat_exp = timed(lambda: ht.exp(x), device)
        copy_bandwidth = 2 * lx.numel() * 4 / copy / 1e9
        values = {
            "copy_GBps": copy_bandwidth,
            "heat_add_GBps": moved / heat_add / 1e9,
            "torch_add_GBps": moved / torch_add / 1e9,
            "heat_exp_GBps": 2 * lx.numel() * 4 / heat_exp / 1e9,
        }
        values["heat_add_share_of_copy"] = values["heat_add_GBps"] / copy_bandwidth
        values["heat_add_vs_torch"] = torch_add / heat_add
        runner.metric("elementwise per process", values)
        return f"add at {values['heat_add_share_of_copy']:.0%} of copy bandwidth"

    def matmul_qr():
        n = 4096 if gpu else 256
        values = {}
        for dtype, name in ((ht.float32, "float32"), (ht.float64, "float64")):
            a = ht.random.randn(n, n, dtype=dtype, split=0, device=device)
            b = ht.random.randn(n, n, dtype=dtype, split=None, device=device)
            whole_a, whole_b = ht.resplit(a, None).larray, b.larray
            flops = 2.0 * n**3
            heat_seconds = timed(lambda: ht.matmul(a, b), device)
            torch_seconds = timed(lambda: whole_a @ whole_b, device, root_only=True)
            values[f"matmul_{name}_heat_GFLOPs"] = flops / heat_seconds / 1e9
            values[f"matmul_{name}_torch_1proc_GFLOPs"] = flops / torch_seconds / 1e9
        rows, columns = (32768, 512) if gpu else (4096, 64)
        tall = ht.random.randn(rows * SIZE, columns, dtype=ht.float64, split=0, device=device)
        whole = ht.resplit(tall, None).larray
        flops = 2.0 * rows * SIZE * columns**2 - 2.0 * columns**3 / 3
        values["qr_float64_heat_GFLOPs"] = flops / timed(lambda: ht.linalg.qr(tall), device) / 1e9
        values["qr_float64_torch_1proc_GFLOPs"] = (
            flops / timed(lambda: torch.linalg.qr(whole), device, root_only=True) / 1e9
        )
        runner.metric(f"matmul {n}^2 and QR {rows * SIZE}x{columns}", values)
        return (
            f"matmul float32 {values['matmul_float32_heat_GFLOPs']:.0f} GFLOP/s vs torch "
            f"{values['matmul_float32_torch_1proc_GFLOPs']:.0f}"
        )

    def loader_rate():
        from heat.utils.data import StreamingDataLoader

        rows_per_process = 1 << 20 if gpu else 1 << 16
        features, batch = 64, 1024
        rows = rows_per_process * SIZE
        folder, path = write_h5(rows, features, chunk_rows=4096)
        try:
            values = {}
            for shuffle in (False, True):
                stream = StreamingDataLoader(
                    path,
                    ["x", "y"],
                    batch_size=batch,
                    shuffle=shuffle,
                    window_bytes=64 * 2**20,
                    device=device,
                )
                list(stream)  # warm: page cache, pinned buffers, CUDA context
                COMM.Barrier()
                start = time.perf_counter()
                for x, y in stream:
                    pass
                synchronize(device)
                seconds = COMM.allreduce(time.perf_counter() - start, op=ht.MPI.MAX)
                values[f"loader_shuffle_{'on' if shuffle else 'off'}_rows_per_s"] = rows / seconds

            def h5py_batches():
                share = rows // SIZE
                begin = RANK * share
                with h5py.File(path, "r") as f:
                    for start in range(begin, begin + share, batch):
                        stop = min(start + batch, begin + share)
                        _x = torch.from_numpy(f["x"][start:stop]).to(torch_device)
                        _y = torch.from_numpy(f["y"][start:stop]).to(torch_device)
                synchronize(device)

            h5py_batches()
            COMM.Barrier()
            start = time.perf_counter()
            h5py_batches()
            seconds = COMM.allreduce(time.perf_counter() - start, op=ht.MPI.MAX)
            values["h5py_to_device_rows_per_s"] = rows / seconds
            values["loader_off_vs_h5py"] = values["loader_shuffle_off_rows_per_s"] / (
                rows / seconds
            )
            values["loader_on_vs_h5py"] = values["loader_shuffle_on_rows_per_s"] / (rows / seconds)
            runner.metric(f"loader {rows} rows x {features} float32 into {device}", values)
        finally:
            COMM.Barrier()
            if RANK == 0:
                _remove_tree(folder)
        return f"shuffle on at {values['loader_on_vs_h5py']:.2f}x h5py + .to(device)"

    if quick:
        return []
    return [
        ("elementwise throughput", elementwise),
        ("matmul and QR rate", matmul_qr),
        ("loader rate into device memory", loader_rate),
    ]


# --------------------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------------------
def environment(device_choice: str) -> Dict[str, Any]:
    values: Dict[str, Any] = {
        "processes": SIZE,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "numpy": np.__version__,
        "heat": ht.__version__,
        "device_choice": device_choice,
        "host": platform.node(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    if torch.cuda.is_available():
        values["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        values["cuda_aware_mpi"] = ht.communication.buffers.CUDA_AWARE_MPI
    return values


def parse(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--device",
        choices=("auto", "cpu", "gpu"),
        default="auto",
        help="auto: the GPU half where torch sees a GPU, else the CPU half",
    )
    parser.add_argument("--json", default="gpu_check.json", help="report path ('' for none)")
    parser.add_argument("--quick", action="store_true", help="skip the performance part")
    parser.add_argument(
        "--check-timeout",
        type=float,
        default=240.0,
        help="seconds after which a blocked check ends the job with stacks",
    )
    parser.add_argument("--only", default="", help="comma-separated substrings of check names")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse(argv)
    has_gpu = torch.cuda.is_available()
    if args.device == "gpu" and not has_gpu:
        raise SystemExit("--device gpu: torch sees no GPU on this machine")
    use_gpu = args.device == "gpu" or (args.device == "auto" and has_gpu)
    device = ht.sanitize_device("gpu" if use_gpu else "cpu")
    runner = Runner(args.json or None, args.check_timeout)
    runner.environment = environment(args.device)
    runner.environment["device"] = str(device)
    wanted = [w.strip().lower() for w in args.only.split(",") if w.strip()]
    if RANK == 0:
        print(f"heat GPU check on {device} at {SIZE} process(es): {runner.environment}", flush=True)
    parts = [
        ("conformance", conformance_checks(device)),
        ("training", training_checks(device, runner)),
        ("performance", performance_checks(device, args.quick, runner)),
    ]
    for part, checks in parts:
        for name, check in checks:
            if wanted and not any(w in name.lower() for w in wanted):
                continue
            runner.run(part, name, check)
    if not use_gpu:
        reason = "torch sees no GPU on this machine" if not has_gpu else "--device cpu chosen"
        runner.run("cuda", "the CUDA half", lambda: (_ for _ in ()).throw(Skip(reason)))
    failed = runner.failed()
    if RANK == 0:
        counts = {s: sum(c["status"] == s for c in runner.checks) for s in ("pass", "fail", "skip")}
        print(
            f"== {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped "
            f"on {device} at {SIZE} process(es)" + (f"; report {args.json}" if args.json else ""),
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
