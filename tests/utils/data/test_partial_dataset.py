"""
Tests of heat.utils.data.PartialH5Dataset (HeAT's name, over the StreamingDataLoader) on small
HDF5 files in a temporary folder shared by all ranks, under 1-4 processes.

Oracle: labels equal to the row number, gathered from all processes: every row exactly once per
epoch (no dropped remainder), features paired with labels, the same order for the same seed.
"""

import numpy as np
import pytest
import torch

import heat as ht
from heat.utils.data import DataLoader, PartialH5DataLoaderIter, PartialH5Dataset
from tests.helpers import assert_raises_then_collective_works, collective_assert
from tests.utils.data._files import rows_data, shared_dir, write_h5  # noqa: F401 (fixture)

COMM = ht.MPI_WORLD


def epoch_labels(loader):
    """Labels of one epoch on this process (checking that features stay paired)."""
    labels = []
    for x, y in loader:
        assert isinstance(x, torch.Tensor) and x.shape[0] == y.shape[0]
        assert torch.equal(x[:, 0].to(torch.int64), y.cpu())
        labels.append(y.cpu().numpy())
    return np.concatenate(labels) if labels else np.zeros(0, np.int64)


@pytest.mark.parametrize("n", [1, 3, 50, 101])
def test_every_row_once_per_epoch(shared_dir, n):  # noqa: F811
    x, y = rows_data(n)
    path = write_h5(shared_dir, f"p{n}.h5", {"x": x, "y": y})
    ds = PartialH5Dataset(path, dataset_names=["x", "y"], use_gpu=False, initial_load=8)
    assert ds.total_size == n
    loader = DataLoader(ds, batch_size=4)
    orders = []
    for epoch in range(2):
        it = iter(loader)
        assert isinstance(it, PartialH5DataLoaderIter)
        mine = epoch_labels(it)
        collective_assert(len(set(COMM.allgather(len(it)))) == 1, "batch counts differ")
        every = np.concatenate(COMM.allgather(mine))
        collective_assert(np.array_equal(np.sort(every), np.arange(n)), f"epoch {epoch}: {every}")
        assert loader.epoch == epoch + 1
        orders.append(every)
    if n > 10:
        collective_assert(not np.array_equal(orders[0], orders[1]), "not reshuffled")
        collective_assert(not np.array_equal(orders[0], np.arange(n)), "not shuffled")
    # the same seed gives the same epochs
    again = DataLoader(
        PartialH5Dataset(path, dataset_names=["x", "y"], use_gpu=False, initial_load=8),
        batch_size=4,
    )
    collective_assert(
        np.array_equal(np.concatenate(COMM.allgather(epoch_labels(again))), orders[0]), "seed"
    )


def test_single_dataset_validate_set_and_drop(shared_dir):  # noqa: F811
    n = 23
    x, y = rows_data(n)
    path = write_h5(shared_dir, "single.h5", {"data": y})
    ds = PartialH5Dataset(path, use_gpu=False, validate_set=True, initial_load=5)
    loader = DataLoader(ds, batch_size=3)
    batches = list(loader)
    assert all(isinstance(b, torch.Tensor) for b in batches) and len(batches) == len(loader)
    mine = np.concatenate([b.numpy() for b in batches]) if batches else np.zeros(0, np.int64)
    every = np.concatenate(COMM.allgather(mine))
    collective_assert(np.array_equal(np.sort(every), np.arange(n)), "validation set")
    dropped = DataLoader(ds, batch_size=3, drop_last=True)
    mine = [b.numpy() for b in dropped]
    total = sum(len(b) for b in mine)
    total = COMM.allreduce(total)
    collective_assert(total == n - n % (3 * COMM.size), f"drop_last kept {total}")


def test_bad_input(shared_dir):  # noqa: F811
    path = write_h5(shared_dir, "bad.h5", {"data": np.arange(5)})
    assert_raises_then_collective_works(TypeError, PartialH5Dataset, 5)
    assert_raises_then_collective_works(ValueError, PartialH5Dataset, path, initial_load=0)
    assert_raises_then_collective_works(TypeError, PartialH5Dataset, path, use_gpu="yes")
    assert_raises_then_collective_works(FileNotFoundError, PartialH5Dataset, path + ".missing")
    assert_raises_then_collective_works(ValueError, PartialH5Dataset, path, dataset_names="nope")
    ds = PartialH5Dataset(path, use_gpu=False)
    assert_raises_then_collective_works(TypeError, ds.__getitem__, 0)


class HeatStylePairs(PartialH5Dataset):
    """A subclass written as for HeAT 1.8: __getitem__ builds a sample from the row attributes."""

    def __init__(self, path, **kwargs):
        super().__init__(path, dataset_names=["x", "y"], use_gpu=False, initial_load=8, **kwargs)

    def __getitem__(self, index):
        assert isinstance(self.x, np.ndarray) and isinstance(self.y, np.ndarray)
        return torch.from_numpy(self.x[index]), int(self.y[index]) + 1000


@pytest.mark.parametrize("n", [2, 37])
def test_subclass_getitem_builds_the_samples(shared_dir, n):  # noqa: F811
    x, y = rows_data(n)
    path = write_h5(shared_dir, f"sub{n}.h5", {"x": x, "y": y})
    # transforms apply to the elements __getitem__ returns (HeAT's rule), not to the datasets
    ds = HeatStylePairs(path, transforms=[lambda t: t * 2, None])
    loader = DataLoader(ds, batch_size=4)
    labels = []
    for features, targets in loader:
        assert features.dtype == torch.float32 and features.shape[1:] == (3,)
        assert targets.dtype == torch.int64 and targets.shape == features.shape[:1]
        assert torch.equal(features[:, 0], 2 * (targets - 1000).to(torch.float32))
        labels.append(targets.numpy() - 1000)
    every = np.concatenate(COMM.allgather(np.concatenate(labels)))
    collective_assert(np.array_equal(np.sort(every), np.arange(n)), f"rows {every}")
    # the loader's collate_fn builds the batch from the samples
    seen = []

    def collate(samples):
        seen.append(len(samples))
        return [s[1] for s in samples]

    counts = [len(batch) for batch in DataLoader(ds, batch_size=4, collate_fn=collate)]
    assert counts == seen  # one call per batch, empty batches included
    total = COMM.allreduce(sum(counts))
    collective_assert(total == n, f"{total} samples through collate_fn")


def test_subclass_dataset_name_hiding_an_attribute(shared_dir):  # noqa: F811
    path = write_h5(shared_dir, "hide.h5", {"seed": np.arange(6)})

    class Hiding(PartialH5Dataset):
        def __getitem__(self, index):
            return self.seed[index]

    ds = Hiding(path, dataset_names="seed", use_gpu=False)
    assert_raises_then_collective_works(ValueError, lambda: next(iter(DataLoader(ds, 2))))
