"""
Library adapters: the spelling of every measured call in each library.

heat and HeAT 1.8 share :class:`algorithms.HeatLib` (it tells the release apart by its version);
NumPy (with scikit-learn for the estimators) is :class:`algorithms.NumpyLib`. This module adds
torch and Dask, and the two hooks the harness needs beyond algorithms.py's: ``module`` (the
namespace an elementwise expression is written in) and ``finish`` (what makes a lazy result
concrete: Dask's ``compute``). A call a library cannot express raises ``NotImplementedError``
and the case is reported as not available for it.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import algorithms  # noqa: E402  (benchmarks/algorithms.py: the operations and the heat/NumPy adapters)


def _unsupported(library: str, call: str):
    raise NotImplementedError(f"{library} has no {call} in this harness")


class NumpyAdapter(algorithms.NumpyLib):
    """NumPy / SciPy / scikit-learn, one process: the serial baseline and the oracle."""

    label = "numpy"
    module = np

    def finish(self, result):
        return result


class HeatAdapter(algorithms.HeatLib):
    """This repository's heat, or the HeAT 1.8 release when run by its interpreter."""

    def __init__(self, label: str = "heat") -> None:
        super().__init__()
        self.label = label
        self.module = self.ht

    def finish(self, result):
        return result


class TorchAdapter(algorithms.NumpyLib):
    """Plain torch tensors in one process (CPU), one thread: what heat runs on underneath."""

    name = label = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = self.module = torch
        self.version = torch.__version__
        self.location = torch.__file__

    def finish(self, result):
        return result

    def distribute(self, a: np.ndarray, split: Optional[int]):
        return self.torch.from_numpy(np.array(a, copy=True))

    def reduce(self, kind: str, x, axis):
        if kind == "std":
            return (
                self.torch.std(x, correction=0)
                if axis is None
                else self.torch.std(x, dim=axis, correction=0)
            )
        fn = getattr(self.torch, kind)
        return fn(x) if axis is None else fn(x, dim=axis)

    def max_argmax(self, x):
        return self.torch.max(x), self.torch.argmax(x)

    def matmul(self, a, b):
        return a @ b

    def qr(self, a):
        return self.torch.linalg.qr(a)

    def svd(self, a):
        return self.torch.linalg.svd(a, full_matrices=False)

    def cdist(self, x, quadratic_expansion):
        mode = "use_mm_for_euclid_dist" if quadratic_expansion else "donot_use_mm_for_euclid_dist"
        return self.torch.cdist(x, x, compute_mode=mode)

    def resplit(self, x, axis):
        return x.clone()

    def reshape(self, x, shape):
        return x.reshape(shape).clone()

    def concatenate(self, a, b, axis):
        return self.torch.cat((a, b), dim=axis)

    def sort(self, x, axis):
        return self.torch.sort(x, dim=axis).values

    def unique(self, x):
        return self.torch.unique(x, sorted=True)

    def cumsum(self, x, axis):
        return self.torch.cumsum(x, dim=axis)

    def histc(self, x, bins, lo, hi):
        return self.torch.histc(x, bins=bins, min=lo, max=hi)

    def percentile(self, x, q, axis):
        return (
            self.torch.quantile(x, q / 100.0)
            if axis is None
            else self.torch.quantile(x, q / 100.0, dim=axis)
        )

    def kmeans(self, x, init):
        _unsupported("torch", "k-means")

    def pca(self, x):
        _unsupported("torch", "PCA estimator")

    def lasso(self, x, y):
        _unsupported("torch", "Lasso estimator")

    def load_hdf5(self, path, dataset, split):
        _unsupported("torch", "HDF5 reader")

    def to_numpy(self, result) -> np.ndarray:
        if isinstance(result, self.torch.Tensor):
            return result.numpy()
        return np.asarray(result)


class DaskAdapter(algorithms.NumpyLib):
    """
    Dask array on a distributed ``LocalCluster`` of ``workers`` single-threaded worker processes.

    Inputs are chunked along ``split`` into one block per worker and persisted before the
    timing; a measured call builds the (small) graph and computes it, result included.
    """

    name = label = "dask"

    def __init__(self, workers: int) -> None:
        import dask
        import dask.array as da
        from distributed import Client, LocalCluster

        self.dask, self.da = dask, da
        self.module = da
        self.workers = workers
        self.cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=40,
        )
        self.client = Client(self.cluster)
        self._config = dask.config.set(scheduler=self.client)
        self._config.__enter__()
        self.version = dask.__version__
        self.location = dask.__file__

    def close(self) -> None:
        self._config.__exit__(None, None, None)
        self.client.close()
        self.cluster.close()

    def finish(self, result):
        return result.compute() if hasattr(result, "compute") else result

    def distribute(self, a: np.ndarray, split: Optional[int]):
        from distributed import wait

        a = np.asarray(a)
        chunks = list(a.shape)
        if split is not None and a.ndim:
            chunks[split] = max(1, -(-a.shape[split] // self.workers))
        x = self.da.from_array(a, chunks=tuple(chunks) or ()).persist()
        wait(x)
        return x

    def reduce(self, kind: str, x, axis):
        return getattr(self.da, kind)(x, axis=axis).compute()

    def max_argmax(self, x):
        return self.dask.compute(self.da.max(x), self.da.argmax(x))

    def matmul(self, a, b):
        return (a @ b).compute()

    def qr(self, a):
        return self.dask.compute(*self.da.linalg.qr(a))

    def svd(self, a):
        return self.dask.compute(*self.da.linalg.svd(a))

    def cdist(self, x, quadratic_expansion):
        # dask.array has no cdist: the quadratic expansion, the way a Dask user writes it
        squared = (x * x).sum(axis=1)
        distances = squared[:, None] + squared[None, :] - 2.0 * (x @ x.T)
        return self.da.sqrt(self.da.maximum(distances, 0.0)).compute()

    def concatenate(self, a, b, axis):
        return self.da.concatenate((a, b), axis=axis).compute()

    def cumsum(self, x, axis):
        return self.da.cumsum(x, axis=axis).compute()

    def unique(self, x):
        return self.da.unique(x).compute()

    def getitem(self, x, key):
        return x[key].compute()

    def to_numpy(self, result) -> np.ndarray:
        if isinstance(result, tuple):
            return np.asarray(result[0])
        return np.asarray(result)

    def __getattribute__(self, item: str) -> Any:
        unsupported = {
            "resplit",
            "reshape",
            "sort",
            "setitem",
            "histc",
            "percentile",
            "kmeans",
            "pca",
            "lasso",
            "load_hdf5",
        }
        if item in unsupported:
            _unsupported("dask", item)
        return super().__getattribute__(item)


def make(label: str, processes: int = 1):
    """The adapter of one library: ``heat``, ``anchor`` (HeAT 1.8), ``numpy``, ``torch`` or ``dask``."""
    if label in ("heat", "anchor"):
        return HeatAdapter(label)
    if label == "numpy":
        return NumpyAdapter()
    if label == "torch":
        return TorchAdapter()
    if label == "dask":
        return DaskAdapter(processes)
    raise ValueError(f"library: expected heat, anchor, numpy, torch or dask, got {label!r}")
