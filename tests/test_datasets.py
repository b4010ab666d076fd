"""heat.datasets (issue 18, item 19): the shipped sample files and their loaders."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import heat as ht
from heat.core.communication import verdicts

ROOT = Path(__file__).resolve().parent.parent


def collective_assert(condition, message=""):
    assert ht.MPI_WORLD.allreduce(bool(condition), op=ht.MPI.LAND), message


def sklearn_datasets():
    return pytest.importorskip("sklearn.datasets")


@pytest.mark.parametrize("split", [None, 0, 1, -1])
def test_load_iris_matches_the_public_data(split):
    oracle = sklearn_datasets().load_iris()
    bunch = ht.datasets.load_iris(split=split)
    collective_assert(bunch.data.split == (None if split is None else split % 2))
    collective_assert(bunch.target.split == (0 if split == 0 else None))
    collective_assert(bunch.data.dtype is ht.float32 and bunch.target.dtype is ht.int64)
    np.testing.assert_allclose(bunch.data.numpy(), oracle.data, atol=5e-7)
    np.testing.assert_array_equal(bunch.target.numpy(), oracle.target)
    assert bunch.target_names == ["setosa", "versicolor", "virginica"]
    assert bunch["feature_names"] == bunch.feature_names and len(bunch.feature_names) == 4
    X, y = ht.datasets.load_iris(split=split, return_X_y=True, dtype=ht.float64)
    collective_assert(X.dtype is ht.float64 and y.shape == (150,))


def test_iris_halves_are_a_stratified_partition():
    full = ht.datasets.load_iris(dtype=ht.float64)
    rows = {}
    for part in ("train", "test"):
        X, y = ht.datasets.load_iris(split=0, part=part, return_X_y=True, dtype=ht.float64)
        assert X.shape == (75, 4) and y.shape == (75,)
        assert np.bincount(y.numpy()).tolist() == [25, 25, 25]
        rows[part] = np.concatenate([X.numpy(), y.numpy()[:, None]], axis=1)
    every = np.concatenate([full.data.numpy(), full.target.numpy()[:, None]], axis=1)
    both = np.concatenate([rows["train"], rows["test"]])
    # the halves together are the whole dataset, row for row (with repeated flowers counted)
    order = np.lexsort(both.T[::-1])
    np.testing.assert_array_equal(both[order], every[np.lexsort(every.T[::-1])])


@pytest.mark.parametrize("split", [None, 0, 1])
def test_load_diabetes_matches_the_public_data(split):
    oracle = sklearn_datasets().load_diabetes()
    X, y = ht.datasets.load_diabetes(split=split, return_X_y=True)
    collective_assert(X.shape == (442, 10) and y.shape == (442,) and X.split == split)
    np.testing.assert_array_equal(X.numpy(), oracle.data)
    np.testing.assert_array_equal(y.numpy(), oracle.target)
    bunch = ht.datasets.load_diabetes(dtype=ht.float32)
    assert bunch.data.dtype is ht.float32 and bunch.feature_names[2] == "bmi"


def test_the_files_load_by_path_as_in_heats_tutorials(monkeypatch):
    monkeypatch.chdir(ROOT)  # HeAT's tests open the files relative to the clone's root
    by_path = ht.load("heat/datasets/iris.csv", sep=";", split=0)
    expected = ht.datasets.load_iris(split=0).data
    collective_assert(bool(ht.equal(by_path, expected).all()))
    h5 = ht.load(ht.datasets.path("iris.h5"), dataset="data", split=0)
    collective_assert(bool(ht.allclose(h5, expected)))
    pytest.importorskip("netCDF4")
    nc = ht.load(ht.datasets.path("iris.nc"), variable="data", split=1)
    collective_assert(bool(ht.allclose(nc, expected)))


def test_every_listed_file_is_shipped():
    for name in ht.datasets.files():
        assert Path(ht.datasets.path(name)).is_file(), name
    setup = (ROOT / "setup.py").read_text()
    assert '"heat.datasets": ["*.csv", "*.h5", "*.nc"]' in setup  # in wheels, too
    shipped = {p.name for p in (ROOT / "heat" / "datasets").iterdir() if p.suffix != ".py"}
    assert shipped - {"__pycache__"} == set(ht.datasets.files())


def test_the_files_are_what_the_generator_writes():
    sklearn_datasets()
    pytest.importorskip("netCDF4")
    if ht.MPI_WORLD.rank == 0:
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "make_datasets.py"), "--check"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        ok, message = done.returncode == 0, done.stdout + done.stderr
    else:
        ok, message = True, ""
    verdicts.raise_if_any(ht.MPI_WORLD, None if ok else AssertionError(message))


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="part"):
        ht.datasets.load_iris(part="validation")
    with pytest.raises(TypeError, match="return_X_y"):
        ht.datasets.load_iris(return_X_y="yes")
    with pytest.raises(ValueError, match="name"):
        ht.datasets.path("mnist.csv")
    with pytest.raises(TypeError, match="name"):
        ht.datasets.path(3)
    with pytest.raises(TypeError, match="return_X_y"):
        ht.datasets.load_diabetes(return_X_y=1)
    b = ht.datasets.Bunch(a=1)
    b.c = 2
    assert b["c"] == 2 and b.a == 1 and sorted(dir(b)) == ["a", "c"]
    with pytest.raises(AttributeError):
        b.missing
