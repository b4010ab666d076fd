"""
Tests of heat.utils.data's in-memory Dataset, DataLoader, DistributedSampler and the global
shuffle (dataset_shuffle / dataset_ishuffle), under 1-4 processes.

Oracles: the samples carry their original global index (column 0 of the features, and the
labels), gathered from all processes: every sample exactly once per epoch, features and labels
paired, and the same layout for the same (seed, epoch) whatever happened before.
"""

import numpy as np
import pytest
import torch

import heat as ht
from heat.utils.data import (
    DataLoader,
    Dataset,
    DistributedSampler,
    dataset_irecv,
    dataset_ishuffle,
    dataset_shuffle,
)
from tests.helpers import assert_raises_then_collective_works, collective_assert

COMM = ht.MPI_WORLD


def make_dataset(n, features=3, **kwargs):
    """Features whose column 0 is the sample number, labels 10x the sample number."""
    x = np.random.default_rng(0).random((n, features)).astype(np.float32)
    x[:, 0] = np.arange(n)
    y = np.arange(n, dtype=np.int64) * 10
    return Dataset((ht.array(x, split=0), ht.array(y, split=0)), **kwargs)


def gathered(tensor):
    return np.concatenate(COMM.allgather(tensor.cpu().numpy()))


def check_exactly_once(ds, n):
    ids = gathered(ds.data[:, 0].to(torch.int64))
    collective_assert(np.array_equal(np.sort(ids), np.arange(n)), f"ids {ids}")
    collective_assert(bool((ds.targets == ds.data[:, 0].to(torch.int64) * 10).all()), "unpaired")
    collective_assert(np.array_equal(gathered(ds.indices), ids), "indices disagree with the data")
    collective_assert(ds.htdata.larray is ds.data and ds.httargets.larray is ds.targets, "ht attrs")
    collective_assert(ds.htdata.gshape == (n, 3), "gshape")


@pytest.mark.parametrize("n", [0, 1, 2, 5, 17, 64])
def test_shuffle_exactly_once_and_paired(n):
    ds = make_dataset(n)
    counts = COMM.allgather(len(ds))
    before = gathered(ds.data[:, 0])
    for epoch in range(3):
        dataset_shuffle(ds, [["data", "htdata"], ["targets", "httargets"]])
        assert ds.epoch == epoch
        check_exactly_once(ds, n)
        collective_assert(COMM.allgather(len(ds)) == counts, "per-process counts changed")
    if n >= 17 and COMM.size > 1:  # samples really moved between processes
        collective_assert(not np.array_equal(before, gathered(ds.data[:, 0])), "no movement")
        mine = set(ds.indices.tolist())
        lo, hi = ds._displs[COMM.rank], ds._displs[COMM.rank] + ds._counts[COMM.rank]
        collective_assert(COMM.allreduce(int(len(mine - set(range(lo, hi))) > 0)) > 0, "local only")


def test_shuffle_deterministic_from_seed_and_epoch():
    a, b = make_dataset(23, seed=5), make_dataset(23, seed=5)
    dataset_shuffle(a, epoch=0)
    dataset_shuffle(a, epoch=1)
    dataset_shuffle(a, epoch=4)
    dataset_shuffle(b, epoch=4)  # straight to epoch 4: the same layout
    collective_assert(torch.equal(a.data, b.data) and torch.equal(a.targets, b.targets), "history")
    c = make_dataset(23, seed=6)
    dataset_shuffle(c, epoch=4)
    differs = not np.array_equal(gathered(c.data[:, 0]), gathered(a.data[:, 0]))
    collective_assert(differs, "another seed gave the same layout")
    d = make_dataset(23, seed=5)
    dataset_shuffle(d, epoch=3)
    collective_assert(not np.array_equal(gathered(d.data[:, 0]), gathered(a.data[:, 0])), "epoch")
    # the layout does not depend on the process count: compare with the single-process oracle
    from heat.utils.data.plan import KeyedPermutation, derive_key

    order = np.empty(23, np.int64)
    order[KeyedPermutation(23, derive_key(5, 4))(np.arange(23))] = np.arange(23)
    collective_assert(np.array_equal(gathered(a.data[:, 0]).astype(np.int64), order), "oracle")


@pytest.mark.parametrize("n", [0, 3, 29])
def test_ishuffle_matches_shuffle(n):
    a, b = make_dataset(n), make_dataset(n)
    dataset_ishuffle(a, a.attrs, epoch=2)
    # training goes on with the current samples meanwhile; they may even change
    before = a.data.clone()
    a.data.add_(0)
    collective_assert(torch.equal(a.data, before) and a.epoch is None, "changed before irecv")
    dataset_irecv(a)
    dataset_shuffle(b, epoch=2)
    collective_assert(torch.equal(a.data, b.data) and torch.equal(a.targets, b.targets), "differ")
    check_exactly_once(a, n)
    # a second ishuffle before the first completed: both land, in order
    dataset_ishuffle(a, epoch=3)
    dataset_ishuffle(a, epoch=5)
    dataset_irecv(a)
    dataset_shuffle(b, epoch=5)
    collective_assert(torch.equal(a.data, b.data), "chained ishuffles")
    dataset_irecv(a)  # nothing pending: a no-op


def test_torch_tensor_input_and_single_array():
    r = COMM.rank
    start = 3 * r + (r > 0)
    local = torch.arange(start, 3 * r + 4, dtype=torch.float64)  # uneven blocks: 4, 3, 3, ...
    ds = Dataset(local)
    n = 3 * COMM.size + 1
    assert ds.htdata.gshape == (n,) and len(ds) == len(local)
    dataset_shuffle(ds, ds.attrs)
    ids = gathered(ds.data)
    collective_assert(np.array_equal(np.sort(ids), np.arange(n)), "torch input")
    collective_assert(isinstance(ds[0], torch.Tensor) if len(ds) else True, "single item")


def test_transforms_and_getitem():
    ds = make_dataset(8, transforms=[lambda x: x * 2, None])
    if len(ds):
        x, y = ds[0]
        assert torch.equal(x, ds.data[0] * 2) and torch.equal(y, ds.targets[0])


def test_dataloader_epochs_cover_everything():
    n = 31
    for ishuffle in (False, True):
        ds = make_dataset(n, ishuffle=ishuffle, seed=1)
        loader = DataLoader(ds, batch_size=4)
        layouts = []
        for epoch in range(3):
            assert loader.epoch == epoch
            seen = []
            batches = 0
            for x, y in loader:
                assert x.shape[0] <= 4 and torch.equal(y, x[:, 0].to(torch.int64) * 10)
                seen.append(x[:, 0].to(torch.int64))
                batches += 1
            assert batches == len(loader) == -(-len(ds) // 4)
            ids = gathered(torch.cat(seen) if seen else torch.zeros(0, dtype=torch.int64))
            collective_assert(np.array_equal(np.sort(ids), np.arange(n)), f"epoch {epoch}")
            layouts.append(ids)
            # the layout of epoch e is the one dataset_shuffle gives for (seed, e)
            ref = make_dataset(n, seed=1)
            dataset_shuffle(ref, epoch=epoch)
            collective_assert(np.array_equal(ids, gathered(ref.data[:, 0]).astype(np.int64)), "key")
        if COMM.size > 1 or n > 1:
            collective_assert(not np.array_equal(layouts[0], layouts[1]), "no reshuffle")
        dataset_irecv(ds)  # the shuffle started for epoch 3


def test_dataloader_test_set_is_not_shuffled():
    ds = make_dataset(10, test_set=True)
    before = ds.data.clone()
    for _ in DataLoader(ds, batch_size=3):
        pass
    collective_assert(torch.equal(ds.data, before) and ds.epoch is None, "test set shuffled")


def test_distributed_sampler_torch_protocol():
    n = 13
    ds = make_dataset(n)
    sampler = DistributedSampler(ds, seed=3)
    loader = torch.utils.data.DataLoader(ds, batch_size=5, sampler=sampler)
    results = []
    for epoch in (0, 1, 1):
        sampler.set_epoch(epoch)
        ids = [x[:, 0].to(torch.int64) for x, _ in loader]
        ids = gathered(torch.cat(ids) if ids else torch.zeros(0, dtype=torch.int64))
        collective_assert(np.array_equal(np.sort(ids), np.arange(n)), "sampler epoch")
        assert len(sampler) == len(ds)
        results.append(ids)
    collective_assert(np.array_equal(results[1], results[2]), "same epoch, same layout")
    # also heat's DataLoader with the sampler
    assert sum(1 for _ in DataLoader(ds, batch_size=5, sampler=sampler)) == len(loader)


def test_bad_input_raises_everywhere():
    x = ht.arange(10, split=0)
    assert_raises_then_collective_works(TypeError, Dataset, [1, 2, 3])
    assert_raises_then_collective_works(ValueError, Dataset, ht.zeros((4, 4), split=1))
    assert_raises_then_collective_works(TypeError, Dataset, x, ishuffle=1)
    assert_raises_then_collective_works(ValueError, Dataset, x, seed=-1)
    # different local lengths on one process only: agreed, raised everywhere
    local = torch.zeros(2 + (COMM.rank == COMM.size - 1))
    assert_raises_then_collective_works(ValueError, Dataset, (torch.zeros(2), local))
    ds = Dataset(x)
    assert_raises_then_collective_works(ValueError, dataset_shuffle, ds, [["nope", None]])
    assert_raises_then_collective_works(TypeError, dataset_shuffle, ds, "data")
    assert_raises_then_collective_works(ValueError, dataset_shuffle, ds, epoch=-1)
    assert_raises_then_collective_works(TypeError, dataset_ishuffle, x)
    assert_raises_then_collective_works(ValueError, DataLoader, ds, batch_size=0)
    assert_raises_then_collective_works(TypeError, DistributedSampler, x)


# ------------------------------------------------------------------------------------------------
# HeAT's DistributedDataset, its DistributedSampler semantics and create_train_val_split
# (issue 18, item 18)
# ------------------------------------------------------------------------------------------------
def numbered(n, features=2):
    """Row i holds i in every column, float32, split 0."""
    return ht.array(np.repeat(np.arange(n, dtype=np.float32)[:, None], features, 1), split=0)


def test_distributed_dataset_items_are_local_rows():
    from heat.utils.data import DistributedDataset

    x = numbered(7)
    ds = DistributedDataset(x, transforms=lambda row: row * 2)
    assert len(ds) == x.lshape[0]
    items = [ds[i] for i in range(len(ds))]
    collective_assert(
        all(torch.equal(item, x.larray[i] * 2) for i, item in enumerate(items)), "items"
    )
    batch = (
        torch.utils.data.default_collate(ds.__getitems__(list(range(len(ds))))) if len(ds) else None
    )
    collective_assert(batch is None or torch.equal(batch, x.larray * 2), "__getitems__")
    loader = torch.utils.data.DataLoader(DistributedDataset(x), batch_size=3)
    rows = [b[:, 0] for b in loader]
    ids = gathered(torch.cat(rows) if rows else torch.zeros(0))
    collective_assert(np.array_equal(ids, np.arange(7)), f"loader rows {ids}")
    assert_raises_then_collective_works(TypeError, DistributedDataset, np.zeros((3, 2)))
    assert_raises_then_collective_works(ValueError, DistributedDataset, ht.zeros((4, 4), split=1))
    assert_raises_then_collective_works(ValueError, DistributedDataset, ht.zeros((4, 4)))
    assert_raises_then_collective_works(TypeError, DistributedDataset, x, transforms=3)


@pytest.mark.parametrize("n", [2, 11, 40])
def test_distributed_sampler_global_shuffle(n):
    from heat.utils.data import DistributedDataset

    x, y = numbered(n), ht.arange(n, split=0) * 10
    counts = COMM.allgather(x.lshape[0])
    sx = DistributedSampler(DistributedDataset(x), shuffle=True, seed=5)
    sy = DistributedSampler(DistributedDataset(y), shuffle=True, seed=5)
    ids = gathered(x.larray[:, 0])
    # a permutation of all rows, the same for both arrays, each process keeps its count, and
    # the same permutation for every process count (it depends on the seed alone)
    collective_assert(np.array_equal(np.sort(ids), np.arange(n)), f"not a permutation {ids}")
    collective_assert(np.array_equal(gathered(y.larray), ids * 10), "features and labels unpaired")
    collective_assert(COMM.allgather(x.lshape[0]) == counts, "counts changed")
    expected = np.random.default_rng([5, 1]).permutation(n)
    collective_assert(np.array_equal(ids, expected), f"{ids} is not the seed's permutation")
    if n >= 11:
        collective_assert(not np.array_equal(ids, np.arange(n)), "not shuffled")
    assert list(sx) == list(range(x.lshape[0])) and len(sx) == x.lshape[0]
    # set_seed shuffles again; a linked sampler follows
    sx.link(sy)
    sx.set_seed(9)
    collective_assert(np.array_equal(gathered(y.larray), gathered(x.larray[:, 0]) * 10), "link")
    sx.unlink()
    assert sx.linked_sampler is None
    # shuffle=False (HeAT's default) leaves the array as it is
    z = numbered(n)
    DistributedSampler(DistributedDataset(z), seed=5)
    collective_assert(np.array_equal(gathered(z.larray[:, 0]), np.arange(n)), "shuffled by default")


def test_distributed_sampler_local_shuffle():
    from heat.utils.data import DistributedDataset

    n = 24
    x = numbered(n)
    before = x.larray[:, 0].clone()
    sampler = DistributedSampler(DistributedDataset(x), shuffle=True, seed=2, shuffle_type="local")
    # every process permuted its own rows, nothing moved between processes
    collective_assert(
        torch.equal(torch.sort(x.larray[:, 0]).values, torch.sort(before).values), "rows moved"
    )
    first, second = list(sampler), list(sampler)
    collective_assert(sorted(first) == list(range(x.lshape[0])) == sorted(second), "indices")
    if x.lshape[0] > 4:
        collective_assert(first != second, "the same order in every iteration")
    again = numbered(n)
    DistributedSampler(DistributedDataset(again), shuffle=True, seed=2, shuffle_type="local")
    collective_assert(torch.equal(again.larray, x.larray), "a seeded local shuffle repeats")
    sampler.set_shuffle_type("global")
    assert sampler.shuffle_type == "global"


def test_distributed_sampler_bad_input():
    from heat.utils.data import DistributedDataset

    ds = DistributedDataset(numbered(5))
    assert_raises_then_collective_works(TypeError, DistributedSampler, ds, shuffle=1)
    assert_raises_then_collective_works(TypeError, DistributedSampler, ds, seed=1.5)
    assert_raises_then_collective_works(ValueError, DistributedSampler, ds, seed=-1)
    assert_raises_then_collective_works(ValueError, DistributedSampler, ds, shuffle_type="both")
    assert_raises_then_collective_works(TypeError, DistributedSampler, ds, shuffle_type=1)
    assert_raises_then_collective_works(TypeError, DistributedSampler, ds, correction="no")
    assert_raises_then_collective_works(
        ValueError, DistributedSampler, make_dataset(5), shuffle_type="local"
    )
    sampler = DistributedSampler(ds)
    assert_raises_then_collective_works(TypeError, sampler.link, ds)
    assert_raises_then_collective_works(ValueError, sampler.set_shuffle_type, "nope")


@pytest.mark.parametrize("n,p", [(20, 0.8), (11, 0.95), (3, 0.5), (5, 0.0), (5, 1.0)])
def test_create_train_val_split(n, p):
    from heat.utils.data import create_train_val_split

    x, y = numbered(n, 3), ht.arange(n, split=0) * 10
    x_before = x.numpy()
    x_train, y_train, x_val, y_val = create_train_val_split(x, y, p=p, seed=4)
    n_train = int(n * p)
    assert x_train.shape == (n_train, 3) and y_train.shape == (n_train,)
    assert x_val.shape == (n - n_train, 3) and y_val.shape == (n - n_train,)
    order = np.random.default_rng([4, 0]).permutation(n)
    ok = (
        np.array_equal(x_train.numpy()[:, 0], order[:n_train])
        and np.array_equal(x_val.numpy()[:, 0], order[n_train:])
        and np.array_equal(y_train.numpy(), order[:n_train] * 10)
        and np.array_equal(y_val.numpy(), order[n_train:] * 10)
    )
    collective_assert(ok, "not the seed's split, or features and labels unpaired")
    collective_assert(np.array_equal(x.numpy(), x_before), "the input changed")
    assert x_train.split == 0 and x_train.balanced and y_val.split == 0


def test_create_train_val_split_bad_input():
    from heat.utils.data import create_train_val_split

    x, y = numbered(6), ht.arange(6, split=0)
    assert_raises_then_collective_works(TypeError, create_train_val_split, x.numpy(), y)
    assert_raises_then_collective_works(
        ValueError, create_train_val_split, x, ht.arange(5, split=0)
    )
    assert_raises_then_collective_works(ValueError, create_train_val_split, x, y, p=1.5)
    assert_raises_then_collective_works(TypeError, create_train_val_split, x, y, p="0.5")
    assert_raises_then_collective_works(ValueError, create_train_val_split, x, y, seed=-3)
    # without a seed every process agrees on one split
    a, b, _, _ = create_train_val_split(x, y, p=0.5)
    collective_assert(np.array_equal(a.numpy()[:, 0], b.numpy()), "unpaired without a seed")
