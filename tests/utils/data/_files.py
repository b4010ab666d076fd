"""
Helpers of the heat.utils.data tests: HDF5 files in a temporary folder shared by all ranks.

Rank 0 creates the folder and the files; the path travels by broadcast, and a barrier (through
the broadcast of the finished path) makes sure no rank opens a file before it is complete.
"""

import os
import shutil
import tempfile

import h5py
import numpy as np
import pytest

import heat as ht


@pytest.fixture(scope="module")
def shared_dir():
    """A temporary folder, the same on every rank, removed after the module's tests."""
    comm = ht.MPI_WORLD
    path = tempfile.mkdtemp(prefix="heat-stream-") if comm.rank == 0 else None
    path = comm.bcast(path)
    yield path
    comm.handle.Barrier()
    if comm.rank == 0:
        shutil.rmtree(path, ignore_errors=True)


def write_h5(folder: str, name: str, arrays: dict, **dataset_kwargs) -> str:
    """Write ``arrays`` (name -> NumPy array) into ``folder/name`` on rank 0; collective."""
    comm = ht.MPI_WORLD
    path = os.path.join(folder, name)
    if comm.rank == 0:
        with h5py.File(path, "w") as f:
            for key, value in arrays.items():
                f.create_dataset(key, data=value, **dataset_kwargs)
    return comm.bcast(path if comm.rank == 0 else None)


def rows_data(n: int, features: int = 3, seed: int = 0):
    """Features whose first column is the row number, and labels equal to the row number."""
    rng = np.random.default_rng(seed)
    x = rng.random((n, features), dtype=np.float32)
    x[:, 0] = np.arange(n)
    return x, np.arange(n, dtype=np.int64)
