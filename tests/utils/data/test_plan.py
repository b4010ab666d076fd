"""
Tests of heat.utils.data.plan: the pure plan of a streaming epoch.

No MPI and no files: several process counts are simulated in one process (``EpochPlan.simulate``
gives the rows each process would yield). The oracles are NumPy counts of the rows over all
simulated processes (every row exactly once, ...), the documented batch-size rules, and fixed
values of the keyed permutation (a change of the algorithm would silently break resuming states
saved before it, so it must be deliberate).
"""

import itertools

import numpy as np
import pytest

from heat.utils.data.plan import (
    EpochPlan,
    KeyedPermutation,
    derive_key,
    window_bounds,
    window_order,
)


def epoch_rows(n, window, p, b, history=(), **kwargs):
    """The plan and, per simulated process, its batches (arrays of global rows)."""
    plan = EpochPlan(n, window, p, b, history=history, **kwargs)
    return plan, [plan.simulate(r) for r in range(p)]


def flat(batches):
    return np.concatenate(batches).astype(np.int64) if batches else np.zeros(0, np.int64)


def check_counts(counts, tail, plan, n, p, b):
    """The multiplicity of every row over an epoch is what the tail policy promises."""
    if tail == "short":
        assert (counts == 1).all(), np.flatnonzero(counts != 1)
    elif tail == "drop":
        assert counts.max(initial=0) <= 1
        assert (counts == 0).sum() == plan.dropped < p * b
    else:
        assert counts.min(initial=1) >= 1
        assert counts.sum() - n == plan.wrapped < p * b


# ---------------------------------------------------------------------------------------------
# keyed functions
# ---------------------------------------------------------------------------------------------
def test_derive_key_separates_and_is_fixed():
    assert derive_key(0, 1) != derive_key(1, 0)
    assert derive_key(5) != derive_key(5, 0)
    # fixed values: plans of saved states depend on them
    assert derive_key(0) == 0x6DC9F14B373A6867
    assert 0 <= derive_key(2**70, -1) < 2**64


@pytest.mark.parametrize("size", [0, 1, 2, 3, 5, 8, 10, 31, 64, 100, 1000, 4097])
def test_keyed_permutation_is_a_bijection(size):
    for key in (None, derive_key(1), derive_key(2, 3)):
        perm = KeyedPermutation(size, key)
        values = perm(np.arange(size))
        assert values.dtype == np.int64
        assert np.array_equal(np.sort(values), np.arange(size))
        assert np.array_equal(perm.inverse(values), np.arange(size))
        # evaluated on a subset, in any order
        subset = np.arange(size)[::3][::-1]
        assert np.array_equal(perm(subset), values[subset])
    assert np.array_equal(KeyedPermutation(7, None)(np.arange(7)), np.arange(7))


def test_keyed_permutation_fixed_values():
    # the algorithm is part of the format of saved states: changing it must fail this test
    values = KeyedPermutation(10, derive_key(7))(np.arange(10))
    assert values.tolist() == [4, 0, 5, 2, 1, 8, 9, 7, 6, 3]  # explicit (small)
    large = KeyedPermutation(10000, derive_key(7))  # Feistel
    assert large(np.array([0, 1, 9999])).tolist() == [687, 4605, 1475]
    assert not np.array_equal(values, KeyedPermutation(10, derive_key(8))(np.arange(10)))


@pytest.mark.parametrize("size", [6, 5000])  # the explicit form and the Feistel network
def test_keyed_permutation_looks_uniform(size):
    # over many keys: where element 0 goes, and how far element 1 lands from it (10 bins each);
    # chi-square with 9 degrees of freedom, limit 33 (p ~ 1e-4)
    keys, bins = 3000, min(size, 10)
    first = np.zeros(bins, np.int64)
    gap = np.zeros(bins, np.int64)
    for k in range(keys):
        images = KeyedPermutation(size, derive_key(99, k))(np.array([0, 1]))
        first[images[0] * bins // size] += 1
        gap[(images[1] - images[0] - 1) % size * bins // (size - 1)] += 1
    for counts, cells in ((first, bins), (gap, min(size - 1, bins))):
        expected = keys / cells
        chi2 = ((counts[:cells] - expected) ** 2 / expected).sum()
        assert chi2 < 33, counts


def test_windows():
    starts, stops = window_bounds(10, 4)
    assert starts.tolist() == [0, 4, 8] and stops.tolist() == [4, 8, 10]
    assert window_bounds(0, 4)[0].size == 0
    assert window_order(5, 0, 0, shuffle=False).tolist() == [0, 1, 2, 3, 4]
    orders = {tuple(window_order(6, 0, e, shuffle=True)) for e in range(8)}
    assert len(orders) > 4  # a new order (almost) every epoch
    assert all(sorted(o) == list(range(6)) for o in orders)


# ---------------------------------------------------------------------------------------------
# one epoch
# ---------------------------------------------------------------------------------------------
CONFIGS = list(
    itertools.product(
        [0, 1, 3, 17, 101],  # rows (also fewer than processes, and none)
        [1, 3, 50],  # window rows
        [1, 2, 3, 4],  # processes
        [1, 2, 5],  # batch size
    )
)


@pytest.mark.parametrize("tail", ["short", "drop", "wrap"])
@pytest.mark.parametrize("shuffle", [True, False])
def test_every_row_once_per_tail_policy(tail, shuffle):
    for n, window, p, b in CONFIGS:
        plan, per = epoch_rows(n, window, p, b, tail=tail, shuffle=shuffle, seed=2, epoch=1)
        for batches in per:
            assert len(batches) == plan.steps  # every process yields the same number of batches
        counts = np.bincount(np.concatenate([flat(x) for x in per]), minlength=n)
        assert len(counts) == n
        check_counts(counts, tail, plan, n, p, b)


def test_batch_sizes():
    b = 4
    for n, p in itertools.product(range(0, 40), [1, 2, 3]):
        for tail in ("short", "drop", "wrap"):
            plan, per = epoch_rows(n, 5, p, b, tail=tail, seed=1)
            g = p * b
            assert plan.steps == (n // g if tail == "drop" else -(-n // g))
            for batches in per:
                sizes = [len(x) for x in batches]
                if tail != "short" or n % g == 0:
                    assert all(s == b for s in sizes)
                elif plan.steps == 1:
                    assert sizes[0] in (n // p, n // p + 1)
                else:  # the last two split the rest evenly, each at least half a batch
                    assert all(s == b for s in sizes[:-2])
                    assert b // 2 <= sizes[-1] <= sizes[-2] <= b
                    assert sizes[-2] - sizes[-1] <= 1
    # only B == 1 or fewer rows than processes give an empty batch
    _, per = epoch_rows(2, 5, 3, 4)
    assert sorted(len(x[0]) for x in per) == [0, 1, 1]


def test_wrap_copies_are_last():
    # the padding copies are the last rows of each process: a state saved before the last step
    # has never yielded one
    plan, per = epoch_rows(37, 4, 3, 2, tail="wrap", seed=5)
    assert plan.wrapped == 5
    for batches in per:
        rows = flat(batches[:-1])
        assert len(np.unique(rows)) == len(rows)
    seen_before_last = np.concatenate([flat(x[:-1]) for x in per])
    assert len(np.unique(seen_before_last)) == len(seen_before_last)


def test_deterministic_and_keyed():
    a = epoch_rows(200, 16, 3, 4, seed=1, epoch=2)[1]
    b = epoch_rows(200, 16, 3, 4, seed=1, epoch=2)[1]
    assert all(np.array_equal(flat(x), flat(y)) for x, y in zip(a, b))
    for other in (dict(seed=2, epoch=2), dict(seed=1, epoch=3)):
        c = epoch_rows(200, 16, 3, 4, **other)[1]
        assert not all(np.array_equal(flat(x), flat(y)) for x, y in zip(a, c))
    # without shuffle: file order, each process a window at a time
    _, per = epoch_rows(24, 4, 2, 2, shuffle=False)
    assert flat(per[0]).tolist() == [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19]
    assert flat(per[1]).tolist() == [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23]


def test_shuffle_mixes_processes_and_windows():
    # one round covers the file: every process gets rows of every window, in no visible order
    n, window, p = 400, 100, 4
    _, per = epoch_rows(n, window, p, 10, seed=4)
    for batches in per:
        rows = flat(batches)
        assert len(rows) == n // p
        assert len(np.unique(rows // window)) == n // window
        assert not np.array_equal(rows, np.sort(rows))
    # over many epochs, the process a row lands on is (close to) uniform
    hits = np.zeros(p, np.int64)
    for epoch in range(200):
        plan = EpochPlan(n, window, p, 10, seed=4, epoch=epoch)
        for r in range(p):
            hits[r] += np.isin(0, flat(plan.simulate(r)))
    assert hits.min() > 20, hits


def test_shares_are_balanced():
    plan, per = epoch_rows(1003, 37, 3, 8, seed=0)
    totals = [len(flat(x)) for x in per]
    assert max(totals) - min(totals) <= 1
    for r in range(3):  # after every round, the processes' totals differ by at most one
        assert all(t.take >= 0 for t in plan.tasks(r))


# ---------------------------------------------------------------------------------------------
# resume
# ---------------------------------------------------------------------------------------------
def yielded(per, first, last=None):
    return np.concatenate([flat(x[first:last]) for x in per])


def test_resume_same_configuration_continues_identically():
    plan, per = epoch_rows(203, 8, 3, 4, seed=1)
    for steps in (0, 1, 5, plan.steps - 1):
        again, rest = epoch_rows(203, 8, 3, 4, seed=1, history=[(3, 4, steps)])
        assert again.start_step == steps and again.steps == plan.steps
        for r in range(3):
            assert all(np.array_equal(a, b) for a, b in zip(per[r][steps:], rest[r]))


@pytest.mark.parametrize("tail", ["short", "drop", "wrap"])
@pytest.mark.parametrize("shuffle", [True, False])
def test_resume_on_other_process_counts_and_batch_sizes(tail, shuffle):
    # a state saved at (p0, b0) after s0 steps, resumed at (p1, b1), interrupted again after
    # half of the rest and finished at (p2, b2): every row still once (or per the tail policy)
    kwargs = dict(tail=tail, shuffle=shuffle, seed=7, epoch=3)
    for n, window in ((37, 4), (103, 16), (64, 8)):
        for (p0, b0), (p1, b1), (p2, b2) in [
            ((3, 2), (2, 2), (1, 3)),
            ((3, 5), (2, 5), (4, 1)),
            ((1, 4), (4, 1), (3, 2)),
            ((2, 3), (3, 2), (2, 3)),
            ((4, 2), (4, 3), (3, 2)),
        ]:
            first, per0 = epoch_rows(n, window, p0, b0, **kwargs)
            for s0 in sorted({0, 1, first.steps // 2, first.steps - 1}):
                if not 0 <= s0 < first.steps:
                    continue
                second, per1 = epoch_rows(n, window, p1, b1, history=[(p0, b0, s0)], **kwargs)
                k1 = (second.segment.steps - second.start_step) // 2
                s1 = second.start_step + k1
                if s1 < second.segment.steps:
                    last, per2 = epoch_rows(n, window, p2, b2, history=second.history(s1), **kwargs)
                    rest = yielded(per2, 0)
                else:
                    last, rest = second, yielded(per1, k1)
                rows = np.concatenate([yielded(per0, 0, s0), yielded(per1, 0, k1), rest])
                counts = np.bincount(rows, minlength=n)
                check_counts(counts, tail, last, n, max(p1, p2), max(b1, b2))
                # the epoch's batches, counted over all segments (what len(loader) reports)
                assert second.steps == s0 + len(per1[0])
                if last is not second:
                    assert last.steps == s0 + k1 + len(per2[0])


def test_history_validation():
    with pytest.raises(ValueError, match="history"):
        EpochPlan(20, 4, 2, 2, history=[(2, 2, 99)])
    plan = EpochPlan(20, 4, 2, 2)
    with pytest.raises(ValueError, match="finished epoch"):
        EpochPlan(20, 4, 3, 2, history=[(2, 2, plan.steps)])
    with pytest.raises(ValueError, match="history entries"):
        EpochPlan(20, 4, 2, 2, history=[(0, 2, 1)])
    finished = EpochPlan(20, 4, 2, 2, history=[(2, 2, plan.steps)])
    assert finished.finished and finished.simulate(0) == []


@pytest.mark.parametrize(
    "name, value, error",
    [
        ("n_rows", -1, ValueError),
        ("n_rows", 2.0, TypeError),
        ("window_rows", 0, ValueError),
        ("process_count", 0, ValueError),
        ("batch_size", True, TypeError),
        ("seed", -1, ValueError),
        ("epoch", "1", TypeError),
        ("tail", "pad", ValueError),
    ],
)
def test_bad_arguments(name, value, error):
    arguments = dict(n_rows=10, window_rows=2, process_count=2, batch_size=2)
    arguments[name] = value
    with pytest.raises(error, match=name):
        EpochPlan(**arguments)
