"""
Tests of heat/core/sanitation.py's scalar-argument vocabulary (check_int, check_bool, check_type,
check_choice, warn_ignored) and of the modules that use it: NumPy scalars are accepted wherever a
Python int or bool is, with one message style, and compatibility parameters that do nothing say so.
"""

import warnings

import numpy as np
import pytest
import torch

import heat as ht
from heat.core.sanitation import check_bool, check_choice, check_int, check_type, warn_ignored


@pytest.mark.parametrize("value", [3, np.int64(3), np.int32(3), np.uint8(3)])
def test_check_int_accepts_python_and_numpy_integers(value):
    result = check_int(value, "n", 1, maximum=5)
    assert result == 3 and type(result) is int


@pytest.mark.parametrize("value", [True, np.bool_(True), 3.0, "3", None, np.float64(3)])
def test_check_int_refuses_other_types_naming_the_argument(value):
    with pytest.raises(TypeError, match=r"^n must be an int, got "):
        check_int(value, "n")


def test_check_int_bounds_and_none():
    with pytest.raises(ValueError, match=r"^n must be >= 1, got 0$"):
        check_int(0, "n", 1)
    with pytest.raises(ValueError, match=r"^n must be <= 5, got 6$"):
        check_int(6, "n", maximum=5)
    assert check_int(None, "n", 1, allow_none=True) is None
    with pytest.raises(TypeError, match="None or an int"):
        check_int(1.5, "n", allow_none=True)


def test_check_bool_type_and_choice():
    assert check_bool(np.bool_(False), "flag") is False and check_bool(True, "flag") is True
    for bad in (1, 0, "yes", None):
        with pytest.raises(TypeError, match=r"^flag must be a bool, got "):
            check_bool(bad, "flag")
    assert check_type(torch.float32, "dtype", torch.dtype, "a torch.dtype") is torch.float32
    with pytest.raises(TypeError, match=r"^size must be an int, got bool$"):
        check_type(True, "size", int, "an int")
    with pytest.raises(TypeError, match=r"^dtype must be a torch.dtype, got str$"):
        check_type("float32", "dtype", torch.dtype, "a torch.dtype")
    assert check_choice("epoch", "interval", ("batch", "epoch")) == "epoch"
    with pytest.raises(
        ValueError, match=r"^interval must be one of \('batch', 'epoch'\), got 'b'$"
    ):
        check_choice("b", "interval", ("batch", "epoch"))
    with pytest.raises(ValueError, match="interval"):
        check_choice(["batch"], "interval", {"batch"})  # unhashable


def test_warn_ignored_only_for_other_values():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_ignored(2, "procs_to_merge", 2, "reason")  # the default: silent
    with pytest.warns(UserWarning, match=r"procs_to_merge=4 has no effect: reason"):
        warn_ignored(4, "procs_to_merge", 2, "reason")


def test_numpy_scalars_accepted_across_heat():
    # issue 17: DASOSchedule and rsvd refused np.int64 while PCA and the loader accepted it
    schedule = ht.optim.DASOSchedule(np.int64(10), warmup_epochs=np.int64(1))
    assert schedule.total_epochs == 10 and type(schedule.total_epochs) is int
    a = ht.random.randn(30, 6, split=0)
    u, s, vt = ht.linalg.rsvd(a, np.int64(2), power_iter=np.int64(1))
    assert s.shape == (2,) and all(type(n) is int for n in s.shape)
    w, v = ht.linalg.reigh(a.T @ a, np.int32(3))
    assert w.shape == (3,)
    sorted_ = ht.sort(ht.array([3, 1, 2], split=0), descending=np.bool_(True))
    assert sorted_.numpy().tolist() == [3, 2, 1]
    pca = ht.decomposition.PCA(n_components=np.int64(2), whiten=np.bool_(False)).fit(a)
    assert pca.components_.shape == (2, 6)
    with pytest.raises(TypeError, match="descending must be a bool"):
        ht.sort(ht.array([1, 2]), descending=1)


def test_compatibility_parameters_that_do_nothing_warn():
    a = ht.random.randn(20, 4, split=0)
    with pytest.warns(UserWarning, match="procs_to_merge=4 has no effect"):
        ht.linalg.qr(a, procs_to_merge=4)
    parameter = torch.nn.Parameter(torch.ones(2))
    with pytest.warns(UserWarning, match="blocking=True has no effect"):
        ht.optim.DataParallelOptimizer(torch.optim.SGD([parameter], lr=0.1), blocking=True)
    with pytest.warns(UserWarning, match="use_mpi_groups=False has no effect"):
        ht.optim.DASO(torch.optim.SGD([parameter], lr=0.1), total_epochs=8, use_mpi_groups=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the defaults stay silent
        ht.linalg.qr(a)
        ht.optim.DataParallelOptimizer(torch.optim.SGD([parameter], lr=0.1))
