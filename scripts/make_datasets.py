"""
Write the sample data shipped in ``heat/datasets/`` (issue 18, item 19).

HeAT's tutorials and ported tests load small sample files by path (``heat/datasets/iris.csv``,
``iris.h5``, ``iris.nc``, the iris train/test splits, ``diabetes.h5``). The values are the public
Iris (Fisher, 1936) and Diabetes (Efron et al., 2004) data as scikit-learn distributes them; the
files are written here, in the formats ``ht.load`` reads, so that they can be remade and checked:

    python scripts/make_datasets.py            # (re)write heat/datasets/*
    python scripts/make_datasets.py --check    # exit 1 if a file differs from what it would write

Formats: CSV with ``;`` between values and three decimals (iris measurements) or integers
(labels); HDF5 and netCDF with the array under the variable ``data`` (iris) or ``x`` / ``y``
(diabetes). The train/test split is stratified, half of each class in each part, drawn with a
fixed seed: the same files on every machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

TARGET = Path(__file__).resolve().parent.parent / "heat" / "datasets"
SPLIT_SEED = 20261127


def _csv(path: Path, array: np.ndarray, fmt: str) -> None:
    np.savetxt(path, array, fmt=fmt, delimiter=";")


def _h5(path: Path, **arrays: np.ndarray) -> None:
    import h5py

    with h5py.File(path, "w", track_order=True) as handle:
        for name, array in arrays.items():
            handle.create_dataset(name, data=array)


def _nc(path: Path, data: np.ndarray) -> None:
    import netCDF4

    with netCDF4.Dataset(path, "w", format="NETCDF4") as handle:
        dims = [handle.createDimension(f"dim_{i}", n).name for i, n in enumerate(data.shape)]
        variable = handle.createVariable("data", data.dtype, dims)
        variable[...] = data


def stratified_halves(labels: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of the train and test parts: half of each class in each, shuffled."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for label in np.unique(labels):
        rows = rng.permutation(np.flatnonzero(labels == label))
        train.append(rows[: rows.size // 2])
        test.append(rows[rows.size // 2 :])
    return rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test))


def write_all(folder: Path) -> list[Path]:
    from sklearn import datasets

    iris = datasets.load_iris()
    x = np.round(iris.data.astype(np.float64), 3)
    y = iris.target.astype(np.int64)
    train, test = stratified_halves(y, SPLIT_SEED)
    diabetes = datasets.load_diabetes()

    written = []

    def out(name: str) -> Path:
        written.append(folder / name)
        return folder / name

    _csv(out("iris.csv"), x, "%.3f")
    _csv(out("iris_labels.csv"), y, "%d")
    _csv(out("iris_X_train.csv"), x[train], "%.3f")
    _csv(out("iris_X_test.csv"), x[test], "%.3f")
    _csv(out("iris_y_train.csv"), y[train], "%d")
    _csv(out("iris_y_test.csv"), y[test], "%d")
    _h5(out("iris.h5"), data=x.astype(np.float32))
    _nc(out("iris.nc"), x.astype(np.float32))
    _h5(
        out("diabetes.h5"),
        x=diabetes.data.astype(np.float64),
        y=diabetes.target.astype(np.float64),
    )
    return written


def _same(a: Path, b: Path) -> bool:
    if a.suffix == ".csv":
        return a.read_bytes() == b.read_bytes()
    import h5py  # netCDF4 files are HDF5 files: compare the variables, not the bytes

    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        names = sorted(k for k in fa.keys() if isinstance(fa[k], h5py.Dataset))
        if names != sorted(k for k in fb.keys() if isinstance(fb[k], h5py.Dataset)):
            return False
        return all(np.array_equal(fa[n][()], fb[n][()]) for n in names if not n.startswith("dim_"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    if not args.check:
        TARGET.mkdir(parents=True, exist_ok=True)
        for path in write_all(TARGET):
            print(f"wrote {path.relative_to(TARGET.parent.parent)} ({path.stat().st_size} bytes)")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        fresh = write_all(Path(scratch))
        differing = [
            p.name for p in fresh if not (TARGET / p.name).exists() or not _same(p, TARGET / p.name)
        ]
    if differing:
        print(f"differ from what scripts/make_datasets.py writes: {differing}")
        return 1
    print("heat/datasets matches scripts/make_datasets.py")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
