"""
Tests of heat/utils/validation.py: the input checks heat's estimators share (validate_samples,
check_n_features), on every split, raising the same error on every process.
"""

import numpy as np
import pytest
import torch

import heat as ht
from heat.utils.validation import check_n_features, validate_samples
from tests.helpers import assert_array_equal, assert_raises_then_collective_works


class Shift(ht.TransformMixin, ht.BaseEstimator):
    """A fitted transformer of 4 features, for check_n_features' message."""

    def __init__(self, offset=0.0):
        self.offset = offset

    def fit(self, x, y=None):
        self.n_features_in_ = x.shape[1]
        return self

    def transform(self, x):
        return x + self.offset


@pytest.mark.parametrize("split", [None, 0, 1])
def test_validate_samples(split):
    data = np.arange(12, dtype=np.int32).reshape(4, 3)
    x = ht.array(data, split=split)
    checked = validate_samples(x)
    assert checked.dtype is ht.float64 and checked.split == split
    assert_array_equal(checked, data.astype(np.float64))
    floats = ht.array(data.astype(np.float32), split=split)
    assert validate_samples(floats) is floats
    assert validate_samples(ht.array(data.astype(np.uint8), split=split)).dtype is ht.float32
    # NumPy arrays and tensors become replicated DNDarrays
    for local in (data.astype(np.float32), torch.tensor(data, dtype=torch.float64)):
        converted = validate_samples(local)
        assert converted.split is None and converted.shape == (4, 3)
    bad = data.astype(np.float64)
    bad[3, 2] = np.nan  # on the last process's rows only
    assert_raises_then_collective_works(ValueError, validate_samples, ht.array(bad, split=split))
    bad[3, 2] = -np.inf
    assert_raises_then_collective_works(ValueError, validate_samples, ht.array(bad, split=split))
    validate_samples(ht.array(bad, split=split), ensure_finite=False)
    assert_raises_then_collective_works(ValueError, validate_samples, x, min_samples=5)
    assert_raises_then_collective_works(ValueError, validate_samples, ht.zeros(4, split=0))
    assert_raises_then_collective_works(TypeError, validate_samples, "data")
    complex_data = ht.array(data.astype(np.complex64), split=split)
    assert_raises_then_collective_works(TypeError, validate_samples, complex_data)


def test_check_n_features():
    fitted = Shift().fit(ht.ones((3, 4), split=0))
    check_n_features(fitted, ht.ones((2, 4)))
    with pytest.raises(ValueError, match="x has 3 features, but Shift was fitted with 4"):
        check_n_features(fitted, ht.ones((2, 3), split=0))
