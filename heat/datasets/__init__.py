"""
Sample data shipped with heat: the Iris and Diabetes datasets, as files and as DNDarrays.

HeAT's tutorials and tests load these files by path (``ht.load("heat/datasets/iris.csv",
sep=";")``), which works from a clone's root; :func:`path` gives the installed location from
anywhere. :func:`load_iris` and :func:`load_diabetes` read them into DNDarrays split like any
array, with scikit-learn's ``return_X_y`` habit.

Files (``;``-separated CSV; HDF5 / netCDF with the array under ``data``, or ``x`` and ``y``):

- ``iris.csv``, ``iris.h5``, ``iris.nc``: the 150 x 4 Iris measurements in cm (sepal length,
  sepal width, petal length, petal width);
- ``iris_labels.csv``: the 150 species labels (0 setosa, 1 versicolor, 2 virginica);
- ``iris_X_train.csv`` / ``iris_y_train.csv`` and ``iris_X_test.csv`` / ``iris_y_test.csv``: a
  stratified split into halves (75 rows each, 25 per species);
- ``diabetes.h5``: ``x``, 442 x 10 standardized features, and ``y``, the disease progression
  one year later.

The values are the public datasets as scikit-learn distributes them; ``scripts/make_datasets.py``
writes the files (and checks them). The train/test halves are heat's own draw, not HeAT's: a
ported test that expects HeAT's exact split predictions gets other numbers.
"""

from __future__ import annotations

import os
from typing import Optional, Tuple, Union

from ..core import types
from ..core.communication import MPICommunication
from ..core.devices import Device
from ..core.dndarray import DNDarray
from ..core.io import load_csv, load_hdf5
from ..core.sanitation import check_bool, check_choice, check_type

__all__ = ["Bunch", "path", "files", "load_iris", "load_diabetes"]

_FOLDER = os.path.dirname(os.path.abspath(__file__))
_FILES = (
    "iris.csv",
    "iris.h5",
    "iris.nc",
    "iris_labels.csv",
    "iris_X_train.csv",
    "iris_X_test.csv",
    "iris_y_train.csv",
    "iris_y_test.csv",
    "diabetes.h5",
)
IRIS_FEATURES = ("sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)")
IRIS_SPECIES = ("setosa", "versicolor", "virginica")
DIABETES_FEATURES = ("age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6")


class Bunch(dict):
    """
    A dict whose keys are attributes too (scikit-learn's ``Bunch``): ``data.target`` is
    ``data["target"]``.

    Examples
    --------
    >>> b = ht.datasets.Bunch(data=1)
    >>> b.data, b["data"]
    (1, 1)
    """

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value) -> None:
        self[name] = value

    def __dir__(self):
        return list(self.keys())


def files() -> Tuple[str, ...]:
    """
    The names of the shipped files.

    Examples
    --------
    >>> "iris.csv" in ht.datasets.files()
    True
    """
    return _FILES


def path(name: str) -> str:
    """
    The absolute path of a shipped file, for ``ht.load`` and friends.

    Parameters
    ----------
    name : str
        One of :func:`files`, e.g. ``"iris.csv"``.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If ``name`` is not a shipped file.

    Examples
    --------
    >>> x = ht.load(ht.datasets.path("iris.csv"), sep=";", split=0)
    >>> x.shape
    (150, 4)
    """
    check_type(name, "name", str, "a string")
    check_choice(name, "name", _FILES)
    return os.path.join(_FOLDER, name)


def _labels(name: str, split, device, comm) -> DNDarray:
    column = load_csv(path(name), sep=";", dtype=types.int64, split=split, device=device, comm=comm)
    return column.reshape(-1)


def load_iris(
    split: Optional[int] = None,
    part: str = "all",
    return_X_y: bool = False,
    dtype=types.float32,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> Union[Bunch, Tuple[DNDarray, DNDarray]]:
    """
    The Iris dataset: 150 flowers, 4 measurements each, 3 species (50 each).

    Parameters
    ----------
    split : int or None
        The split axis of the measurements (0 or 1, or None); the labels are split along 0
        when the measurements are split along 0, else not split.
    part : {"all", "train", "test"}
        All 150 rows, or the stratified 75-row train or test half (the ``iris_*_train`` /
        ``iris_*_test`` files).
    return_X_y : bool
        Return ``(X, y)`` instead of a :class:`Bunch`.
    dtype : heat type
        Of the measurements (float32 by default, HeAT's choice); the labels are int64.
    device, comm
        As for any factory.

    Returns
    -------
    Bunch or tuple
        ``data`` (n x 4), ``target`` (n,), ``feature_names``, ``target_names``, ``filename``;
        or ``(data, target)``.

    Raises
    ------
    TypeError, ValueError
        For an argument of the wrong type or out of range (the same on every process).

    Examples
    --------
    >>> X, y = ht.datasets.load_iris(split=0, return_X_y=True)
    >>> X.shape, y.shape, y.split
    ((150, 4), (150,), 0)
    >>> ht.datasets.load_iris(part="train").data.shape
    (75, 4)
    """
    check_choice(part, "part", ("all", "train", "test"))
    return_X_y = check_bool(return_X_y, "return_X_y")
    data_file, label_file = {
        "all": ("iris.csv", "iris_labels.csv"),
        "train": ("iris_X_train.csv", "iris_y_train.csv"),
        "test": ("iris_X_test.csv", "iris_y_test.csv"),
    }[part]
    data = load_csv(path(data_file), sep=";", dtype=dtype, split=split, device=device, comm=comm)
    target = _labels(label_file, 0 if data.split == 0 else None, device, data.comm)
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        feature_names=list(IRIS_FEATURES),
        target_names=list(IRIS_SPECIES),
        filename=path(data_file),
    )


def load_diabetes(
    split: Optional[int] = None,
    return_X_y: bool = False,
    dtype=types.float64,
    device: Optional[Union[str, Device]] = None,
    comm: Optional[MPICommunication] = None,
) -> Union[Bunch, Tuple[DNDarray, DNDarray]]:
    """
    The Diabetes dataset: 442 patients, 10 standardized features (each column has mean 0 and
    sum of squares 1), the target a measure of disease progression one year later.

    Parameters
    ----------
    split : int or None
        The split axis of the features (0, 1 or None); the target is split along 0 when the
        features are, else not split.
    return_X_y : bool
        Return ``(X, y)`` instead of a :class:`Bunch`.
    dtype : heat type
        Of features and target (float64 by default).
    device, comm
        As for any factory.

    Returns
    -------
    Bunch or tuple
        ``data`` (442 x 10), ``target`` (442,), ``feature_names``, ``filename``; or
        ``(data, target)``.

    Examples
    --------
    >>> X, y = ht.datasets.load_diabetes(split=0, return_X_y=True)
    >>> X.shape, y.shape
    ((442, 10), (442,))
    """
    return_X_y = check_bool(return_X_y, "return_X_y")
    file = path("diabetes.h5")
    data = load_hdf5(file, "x", dtype=dtype, split=split, device=device, comm=comm)
    target = load_hdf5(
        file, "y", dtype=dtype, split=0 if data.split == 0 else None, device=device, comm=data.comm
    )
    if return_X_y:
        return data, target
    return Bunch(data=data, target=target, feature_names=list(DIABETES_FEATURES), filename=file)
