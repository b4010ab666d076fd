"""
Tests of heat.random.

The oracle is an independent NumPy re-implementation of the documented generator (Threefry-2x32-20
on the global flat index, then the documented conversions), evaluated at every global index. The
distributed results must equal it for every split and any number of processes.
"""

import numpy as np
import pytest

import heat as ht
from tests.helpers import (
    assert_array_equal,
    assert_raises_then_collective_works,
    collective_assert,
    splits_for,
)

SHAPES = [(7,), (5, 6), (2, 3, 4), (1, 5), (0, 3)]
LAYOUTS = [(shape, split) for shape in SHAPES for split in splits_for(len(shape))]


# =============================================================================================
# the oracle
# =============================================================================================
_M32 = 0xFFFFFFFF
_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)


def oracle_threefry(c0, c1, k0, k1):
    """Threefry-2x32-20 on uint32 arrays (NumPy's uint32 arithmetic wraps)."""
    ks = [np.uint32(k0 & _M32), np.uint32(k1 & _M32), np.uint32((k0 ^ k1 ^ 0x1BD11BDA) & _M32)]
    x0 = np.asarray(c0, dtype=np.uint32) + ks[0]
    x1 = np.asarray(c1, dtype=np.uint32) + ks[1]
    for r in range(20):
        rot = np.uint32(_ROTATIONS[r % 8])
        x0 = x0 + x1
        x1 = (x1 << rot) | (x1 >> (np.uint32(32) - rot))
        x1 = x1 ^ x0
        if r % 4 == 3:
            s = r // 4 + 1
            x0 = x0 + ks[s % 3]
            x1 = x1 + np.uint32((int(ks[(s + 1) % 3]) + s) & _M32)
    return x0, x1


def oracle_words(seed, counter, n, per=1, j=0):
    """Words of counters counter + i * per + j, i < n (mod 2**64), as uint64 arrays."""
    ctr = np.uint64(counter) + np.arange(n, dtype=np.uint64) * np.uint64(per) + np.uint64(j)
    w0, w1 = oracle_threefry(
        (ctr & np.uint64(_M32)).astype(np.uint32),
        (ctr >> np.uint64(32)).astype(np.uint32),
        seed & _M32,
        seed >> 32,
    )
    return w0.astype(np.uint64), w1.astype(np.uint64)


def oracle_u53(w0, w1):
    return ((w0 >> np.uint64(5)) * np.uint64(1 << 26) + (w1 >> np.uint64(6))).astype(
        np.float64
    ) * 2.0**-53


def oracle_uniform(seed, counter, shape, dtype):
    n = int(np.prod(shape))
    w0, w1 = oracle_words(seed, counter, n)
    if dtype == np.float64:
        return oracle_u53(w0, w1).reshape(shape)
    return ((w0 >> np.uint64(8)).astype(np.float64) * 2.0**-24).astype(np.float32).reshape(shape)


def oracle_normal(seed, counter, shape, dtype):
    """Box-Muller in float64, one value per element (float64: two counters per element)."""
    n = int(np.prod(shape))
    if dtype == np.float64:
        u1 = oracle_u53(*oracle_words(seed, counter, n, 2, 0))
        u2 = oracle_u53(*oracle_words(seed, counter, n, 2, 1))
    else:
        w0, w1 = oracle_words(seed, counter, n)
        u1, u2 = w0.astype(np.float64) * 2.0**-32, w1.astype(np.float64) * 2.0**-32
    z = np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
    return z.reshape(shape)


def oracle_bits63(seed, counter, n):
    w0, w1 = oracle_words(seed, counter, n)
    return ((w1 & np.uint64(0x7FFFFFFF)) << np.uint64(32)) | w0


def oracle_randint(seed, counter, shape, low, high):
    n = int(np.prod(shape))
    span = high - low
    if span < 2**63:
        values = [low + int(u) % span for u in oracle_bits63(seed, counter, n)]
    else:
        w0, w1 = oracle_words(seed, counter, n)
        full = [(int(a) << 32) | int(b) for a, b in zip(w1, w0, strict=True)]
        values = [low + (v - span if v >= span else v) for v in full]
    return np.array(values, dtype=np.int64).reshape(shape)


def oracle_perm(seed, counter, n):
    return np.argsort(oracle_bits63(seed, counter, n), kind="stable")


def set_counter(seed, counter):
    ht.random.set_state(("Threefry", seed, counter))


class BlockChecks:
    """
    Compare balanced random arrays with the oracle block by block, without gathering them (each
    process checks its own block), and agree on the outcome in one collective at the end. The
    first array of a test still goes through assert_array_equal (layout invariants, gathering).
    """

    def __init__(self):
        self.failures = []

    def check(self, name, x, expected, rtol=0.0, atol=0.0):
        expected = np.asarray(expected)
        ok = x.gshape == expected.shape
        if ok and x.split is not None:
            expected = expected[x.comm.chunk(x.gshape, x.split)[2]]
        local = x.larray.cpu().numpy()
        ok = (
            ok
            and local.shape == expected.shape
            and x.dtype is ht.types.canonical_heat_type(expected.dtype)
            and np.allclose(local, expected, rtol=rtol, atol=atol)
        )
        if not ok:
            self.failures.append(name)

    def assert_all(self):
        collective_assert(not self.failures, f"differs from the oracle: {self.failures}")


# =============================================================================================
# the generator itself
# =============================================================================================
@pytest.mark.parametrize(
    "key, counter, expected",
    [
        ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
        ((_M32, _M32), (_M32, _M32), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ],
)
def test_threefry_known_answers(key, counter, expected):
    # the published known-answer vectors of Threefry-2x32-20, for the oracle and the torch code
    import torch

    from heat.core import random as hr

    w0, w1 = oracle_threefry(np.array([counter[0]]), np.array([counter[1]]), *key)
    assert (int(w0[0]), int(w1[0])) == expected
    c0 = hr._signed_low32(torch.tensor([counter[0]], dtype=torch.int64))
    c1 = hr._signed_low32(torch.tensor([counter[1]], dtype=torch.int64))
    t0, t1 = hr._threefry2x32(c0, c1, *key)
    assert (int(hr._unsigned(t0)[0]), int(hr._unsigned(t1)[0])) == expected


# =============================================================================================
# identical global arrays for every split and process count
# =============================================================================================
@pytest.mark.parametrize("shape, split", LAYOUTS)
def test_rand_and_randn_match_oracle(shape, split):
    n = int(np.prod(shape))
    checks = BlockChecks()
    for dtype in (np.float32, np.float64):
        ht.random.seed(12345)
        x = ht.random.rand(*shape, dtype=dtype, split=split)
        if dtype == np.float32:
            assert_array_equal(x, oracle_uniform(12345, 0, shape, dtype), rtol=0, atol=0)
        checks.check(f"rand {dtype.__name__}", x, oracle_uniform(12345, 0, shape, dtype))
        assert ht.random.get_state() == ("Threefry", 12345, n, 0, 0.0)
        # the next draw continues at the advanced counter
        y = ht.random.random_sample(shape, dtype=dtype, split=split)
        checks.check(f"random_sample {dtype.__name__}", y, oracle_uniform(12345, n, shape, dtype))

        ht.random.seed(2**64 - 1)
        z = ht.random.randn(*shape, dtype=dtype, split=split)
        expected = oracle_normal(2**64 - 1, 0, shape, dtype).astype(dtype)
        tolerance = 1e-6 if dtype == np.float32 else 1e-12
        checks.check(f"randn {dtype.__name__}", z, expected, rtol=tolerance, atol=tolerance)
        per = 2 if dtype == np.float64 else 1
        assert ht.random.get_state()[2] == per * n  # the state is the same on every process
    checks.assert_all()


@pytest.mark.parametrize("split", [None, 0, 1])
def test_randn_seed5_11x3_independent_of_process_count(split):
    # HeAT 1.8 gave different numbers for this call at 1 and 3 processes
    ht.random.seed(5)
    x = ht.random.randn(11, 3, split=split)
    ht.random.seed(5)
    alone = ht.random.randn(11, 3, split=split, comm=ht.MPI_SELF)  # this process on its own
    assert alone.comm.size == 1
    values = x.numpy()
    collective_assert(np.array_equal(values, alone.numpy()), "differs from the 1-process result")
    assert_array_equal(
        x, oracle_normal(5, 0, (11, 3), np.float32).astype(np.float32), rtol=1e-6, atol=1e-6
    )
    # every rank sees the same numbers
    gathered = ht.MPI_WORLD.allgather(values.tobytes())
    collective_assert(all(g == gathered[0] for g in gathered))


@pytest.mark.parametrize("split", [None, 0])
def test_counter_wraps_modulo_2_64(split):
    set_counter(7, 2**64 - 3)
    x = ht.random.rand(6, split=split, dtype=ht.float64)
    assert_array_equal(x, oracle_uniform(7, 2**64 - 3, (6,), np.float64), rtol=0, atol=0)
    collective_assert(ht.random.get_state()[2] == 3)


@pytest.mark.parametrize("dtype", [ht.float16, ht.bfloat16])
def test_rand_small_floats(dtype):
    ht.random.seed(3)
    x = ht.random.rand(50, 3, dtype=dtype, split=0)
    assert x.dtype is dtype
    values = x.numpy().astype(np.float64)
    bits = 11 if dtype is ht.float16 else 8
    ht.random.seed(3)
    reference = ht.random.rand(50, 3, dtype=ht.float32).numpy().astype(np.float64)
    # the top `bits` bits of the same word
    collective_assert(np.array_equal(values, np.floor(reference * 2**bits) / 2**bits))
    collective_assert(values.min() >= 0 and values.max() < 1)


@pytest.mark.parametrize(
    "low, high, dtype",
    [
        (0, 10, ht.int64),
        (-5, 3, ht.int8),
        (0, 2, ht.bool),
        (-(2**31), 2**31, ht.int64),
        (-(2**63), 2**63 - 1, ht.int64),
        (-(2**31), 2**31 - 1, ht.int32),
    ],
)
def test_randint_matches_oracle(low, high, dtype):
    checks = BlockChecks()
    for shape, split in [((7,), 0), ((5, 6), None), ((5, 6), 1), ((2, 3, 4), 2), ((0, 3), 0)]:
        ht.random.seed(99)
        x = ht.random.randint(low, high, size=shape, dtype=dtype, split=split)
        expected = oracle_randint(99, 0, shape, low, high).astype(dtype.numpy_type())
        if shape == (5, 6) and split == 1:
            assert_array_equal(x, expected)
        checks.check(f"{shape} split={split}", x, expected)
    checks.assert_all()


def test_randint_single_bound_and_scalar():
    ht.random.seed(4)
    x = ht.random.randint(6, size=(4, 5), split=1)
    assert_array_equal(x, oracle_randint(4, 0, (4, 5), 0, 6))
    y = ht.random.randint(2, 9)
    assert y.shape == () and y.split is None
    collective_assert(int(y.item()) == int(oracle_randint(4, 20, (1,), 2, 9)[0]))
    assert ht.random.random_integer(3, 4, size=2).tolist() == [3, 3]


@pytest.mark.parametrize("n", [0, 1, 5, 13])
@pytest.mark.parametrize("split", [None, 0])
def test_randperm_matches_oracle(n, split):
    ht.random.seed(11)
    p = ht.random.randperm(n, split=split)
    assert_array_equal(p, oracle_perm(11, 0, n))
    collective_assert(ht.random.get_state()[2] == n)
    q = ht.random.randperm(n, dtype=ht.int32, split=split)
    assert_array_equal(q, oracle_perm(11, n, n).astype(np.int32))


@pytest.mark.parametrize(
    "shape, split",
    [
        ((9,), None),
        ((9,), 0),
        ((5, 3), 0),
        ((5, 3), 1),
        ((2, 3, 2), 0),
        ((2, 3, 2), 2),
        ((0, 3), 0),
    ],
)
def test_permutation_of_array(shape, split):
    data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = ht.array(data, split=split)
    ht.random.seed(21)
    y = ht.random.permutation(x)
    assert y.split == x.split
    assert_array_equal(y, data[oracle_perm(21, 0, shape[0])])
    assert_array_equal(x, data)  # the input is unchanged


def test_permutation_of_int_and_list():
    ht.random.seed(8)
    assert_array_equal(ht.random.permutation(10), oracle_perm(8, 0, 10))
    y = ht.random.permutation([[1, 2], [3, 4], [5, 6]])
    assert_array_equal(y, np.array([[1, 2], [3, 4], [5, 6]])[oracle_perm(8, 10, 3)])


@pytest.mark.parametrize(
    "shape, split", [((8,), 0), ((5, 3), 0), ((5, 3), 1), ((4,), None), ((2, 2), 0)]
)
def test_shuffle_in_place(shape, split):
    data = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    x = ht.array(data, split=split)
    lshape_before = x.lshape
    ht.random.seed(31)
    assert ht.random.shuffle(x) is None
    assert x.lshape == lshape_before
    assert_array_equal(x, data[oracle_perm(31, 0, shape[0])])


def test_shuffle_keeps_unbalanced_layout():
    data = np.arange(14, dtype=np.float64).reshape(7, 2)
    x = ht.array(data, split=0)
    counts = [0] * ht.MPI_WORLD.size
    counts[-1] = 7  # everything on the last process
    x = ht.redistribute(x, counts)
    ht.random.seed(32)
    ht.random.shuffle(x)
    collective_assert(x.lshape[0] == counts[ht.MPI_WORLD.rank])
    assert_array_equal(x, data[oracle_perm(32, 0, 7)])


@pytest.mark.parametrize(
    "size, split", [(None, None), (7, 0), ((3, 4), 1), ((3, 4), None), ((0,), 0)]
)
def test_choice_with_replacement(size, split):
    shape = () if size is None else ((size,) if isinstance(size, int) else size)
    n = int(np.prod(shape))
    ht.random.seed(41)
    x = ht.random.choice(6, size, split=split)
    expected = oracle_randint(41, 0, shape, 0, 6)
    assert_array_equal(x, expected)
    # from an array population (distributed), then with probabilities
    population = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0], dtype=np.float32)
    y = ht.random.choice(ht.array(population, split=0), size, split=split)
    assert y.split == split
    assert_array_equal(y, population[oracle_randint(41, n, shape, 0, 6)])
    p = np.array([0.1, 0.0, 0.2, 0.3, 0.4, 0.0])
    z = ht.random.choice(6, size, p=p, split=split)
    cdf = np.cumsum(p)
    cdf = cdf / cdf[-1]
    w0, w1 = oracle_words(41, 2 * n, n)
    assert_array_equal(z, np.searchsorted(cdf, oracle_u53(w0, w1), side="right").reshape(shape))


@pytest.mark.parametrize("size, split", [(None, None), (5, 0), ((2, 3), 1), (9, None), ((0,), 0)])
@pytest.mark.parametrize("population_split", [None, 0])
def test_choice_without_replacement(size, split, population_split):
    shape = () if size is None else ((size,) if isinstance(size, int) else size)
    m = int(np.prod(shape))
    population = np.arange(9, dtype=np.int64) * 3
    a = ht.array(population, split=population_split)
    ht.random.seed(51)
    x = ht.random.choice(a, size, replace=False, split=split)
    assert x.split == split
    expected = population[oracle_perm(51, 0, 9)[:m]].reshape(shape)
    assert_array_equal(x, expected)
    # weighted: the m smallest exponential keys -log(1 - u) / p
    p = np.array([0.05, 0.0, 0.1, 0.15, 0.2, 0.0, 0.25, 0.15, 0.1])
    if m <= 7:
        y = ht.random.choice(a, size, replace=False, p=p, split=split)
        u = oracle_u53(*oracle_words(51, 9, 9))
        with np.errstate(divide="ignore"):
            keys = np.where(p > 0, -np.log1p(-u) / p, np.inf)
        expected = population[np.argsort(keys, kind="stable")[:m]].reshape(shape)
        assert_array_equal(y, expected)


def test_choice_without_replacement_is_a_sample():
    ht.random.seed(52)
    x = ht.random.choice(100, 100, replace=False, split=0)
    collective_assert(sorted(x.tolist()) == list(range(100)))


# =============================================================================================
# normal and uniform with parameters
# =============================================================================================
@pytest.mark.parametrize("split", [None, 0, 1])
@pytest.mark.parametrize("dtype", [ht.float32, ht.float64])
def test_normal_scalar_parameters(split, dtype):
    ht.random.seed(61)
    x = ht.random.normal(3.0, 0.5, (6, 5), dtype=dtype, split=split)
    assert x.dtype is dtype
    np_type = dtype.numpy_type()
    expected = (oracle_normal(61, 0, (6, 5), np_type) * 0.5 + 3.0).astype(np_type)
    assert_array_equal(x, expected, rtol=1e-6 if dtype is ht.float32 else 1e-12)


@pytest.mark.parametrize("mean_split, std_split", [(None, None), (0, None), (None, 1), (1, 0)])
def test_normal_array_parameters_broadcast(mean_split, std_split):
    mean = np.arange(4, dtype=np.float64).reshape(4, 1) * 10
    std = np.array([[0.5, 1.0, 2.0]], dtype=np.float64)
    mean_ht = ht.array(mean, split=mean_split if mean_split != 1 else None)
    std_ht = ht.array(std, split=std_split if std_split != 0 else None)
    ht.random.seed(62)
    x = ht.random.normal(mean_ht, std_ht, dtype=ht.float64)
    z = oracle_normal(62, 0, (4, 3), np.float64)
    assert_array_equal(x, mean + std * z, rtol=1e-12)
    # an explicit shape that the parameters broadcast to, with a Python scalar mean
    ht.random.seed(62)
    y = ht.random.normal(1.0, std_ht, shape=(2, 4, 3), split=1)
    assert y.dtype is ht.float32 and y.split == 1
    assert_array_equal(
        y, (1.0 + std * oracle_normal(62, 0, (2, 4, 3), np.float32)).astype(np.float32), rtol=1e-5
    )


def test_normal_takes_split_of_parameter():
    mean = ht.zeros((5, 2), split=0)
    collective_assert(ht.random.normal(mean, 1.0).split == 0)
    collective_assert(ht.random.normal(mean, 1.0, split=1).split == 1)
    collective_assert(ht.random.normal(mean, 1.0, shape=(3, 5, 2)).split == 1)


@pytest.mark.parametrize("split", [None, 0])
def test_uniform(split):
    ht.random.seed(71)
    x = ht.random.uniform(-2.0, 3.0, (10, 3), dtype=ht.float64, split=split)
    assert_array_equal(x, -2.0 + 5.0 * oracle_uniform(71, 0, (10, 3), np.float64), rtol=1e-14)
    low = np.array([0.0, 10.0, 20.0])
    ht.random.seed(71)
    y = ht.random.uniform(ht.array(low, split=0), 25.0, dtype=ht.float64, split=split)
    assert_array_equal(y, low + (25.0 - low) * oracle_uniform(71, 0, (3,), np.float64), rtol=1e-14)
    z = ht.random.uniform(size=4)
    collective_assert(z.dtype is ht.float32 and z.shape == (4,))


def test_zero_dimensional_results():
    ht.random.seed(81)
    for x in (
        ht.random.rand(),
        ht.random.randn(),
        ht.random.random(),
        ht.random.ranf(),
        ht.random.sample(),
        ht.random.normal(),
        ht.random.uniform(),
    ):
        collective_assert(x.shape == () and x.split is None and x.dtype is ht.float32)
    collective_assert(ht.random.get_state()[2] == 7)


# =============================================================================================
# state
# =============================================================================================
def test_get_set_state_reproduces():
    ht.random.seed(91)
    ht.random.rand(4, 4, split=0)
    state = ht.random.get_state()
    assert state == ("Threefry", 91, 16, 0, 0.0)
    a = ht.random.randn(9, split=0)
    b = ht.random.randint(0, 100, size=(3, 3), split=1)
    ht.random.set_state(state)
    assert_array_equal(ht.random.randn(9, split=0), a.numpy(), rtol=0, atol=0)
    assert_array_equal(ht.random.randint(0, 100, size=(3, 3), split=None), b.numpy())
    ht.random.set_state(list(state[:3]))
    assert_array_equal(ht.random.randn(9), a.numpy(), rtol=0, atol=0)


def test_seed_none_agrees_on_all_ranks():
    ht.random.seed()
    state = ht.random.get_state()
    states = ht.MPI_WORLD.allgather(state)
    collective_assert(all(s == states[0] for s in states))
    collective_assert(state[0] == "Threefry" and state[2] == 0 and 0 <= state[1] < 2**64)
    x = ht.random.rand(5, split=0)
    assert_array_equal(x, oracle_uniform(state[1], 0, (5,), np.float32), rtol=0, atol=0)


def test_seed_resets_the_counter():
    ht.random.seed(np.int64(5))
    a = ht.random.rand(3).numpy()
    ht.random.rand(3)
    ht.random.seed(5)
    collective_assert(np.array_equal(ht.random.rand(3).numpy(), a))


# =============================================================================================
# default_rng: NumPy's Generator methods on the same stream (issue 18, item 26)
# =============================================================================================
@pytest.mark.parametrize("shape, split", LAYOUTS)
def test_generator_matches_oracle(shape, split):
    n = int(np.prod(shape))
    checks = BlockChecks()
    ht.random.seed(99)
    global_state = ht.random.get_state()
    rng = ht.random.default_rng(12345)
    # NumPy's defaults: float64
    x = rng.random(shape, split=split)
    checks.check("random", x, oracle_uniform(12345, 0, shape, np.float64))
    z = rng.standard_normal(shape, split=split)
    checks.check("standard_normal", z, oracle_normal(12345, n, shape, np.float64), 1e-12, 1e-12)
    y = rng.normal(3.0, 0.5, size=shape, split=split)
    expected = 3.0 + 0.5 * oracle_normal(12345, 3 * n, shape, np.float64)
    checks.check("normal", y, expected, 1e-12, 1e-12)
    u = rng.uniform(-2.0, 2.0, shape, split=split)
    expected = -2.0 + 4.0 * oracle_uniform(12345, 5 * n, shape, np.float64)
    checks.check("uniform", u, expected, 1e-12, 1e-12)
    i = rng.integers(1, 6, size=shape, endpoint=True, split=split)
    checks.check("integers", i, oracle_randint(12345, 6 * n, shape, 1, 7))
    f = rng.random(shape, dtype=ht.float32, split=split)
    checks.check("random float32", f, oracle_uniform(12345, 7 * n, shape, np.float32))
    checks.assert_all()
    collective_assert(rng.state == {"seed": 12345, "counter": 8 * n}, str(rng.state))
    # the global generator is untouched
    collective_assert(ht.random.get_state() == global_state)
    assert x.split == (None if split is None else split % len(shape)) and x.dtype is ht.float64


def test_generator_draws_as_the_global_generator_seeded_alike():
    population = ht.arange(10, split=0) * 10
    rows = ht.array(np.arange(24).reshape(8, 3), split=0)

    def draws(source):
        shuffled = ht.arange(9, split=0)
        source.shuffle(shuffled)
        return [
            source.choice(population, 4, replace=False, split=0).numpy(),
            source.choice(5, (2, 3), p=[0.1, 0.2, 0.3, 0.2, 0.2]).numpy(),
            source.permutation(7).numpy(),
            source.permutation(rows).numpy(),
            shuffled.numpy(),
        ]

    ht.random.seed(7)

    class GlobalAsGenerator:  # the module's functions under the Generator's names
        choice = staticmethod(
            lambda a, size, replace=True, p=None, split=None: ht.random.choice(
                a, size, replace, p, split
            )
        )
        permutation = staticmethod(ht.random.permutation)
        shuffle = staticmethod(ht.random.shuffle)

    expected = draws(GlobalAsGenerator)
    got = draws(ht.random.default_rng(7))
    same = all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
    collective_assert(same, f"{got} != {expected}")


def test_generators_are_independent():
    one, two = ht.random.default_rng(1), ht.random.default_rng(2)
    interleaved = [one.random(5, split=0), two.random(5), one.integers(10, size=3), two.random(2)]
    alone_one = ht.random.default_rng(1)
    alone_two = ht.random.default_rng(2)
    separate = [
        alone_one.random(5),
        alone_two.random(5),
        alone_one.integers(10, size=3),
        alone_two.random(2),
    ]
    for a, b in zip(interleaved, separate, strict=True):
        assert_array_equal(a, b.numpy(), rtol=0, atol=0)
    # a Generator passes through default_rng unaltered, as in NumPy
    assert ht.random.default_rng(one) is one
    assert isinstance(one, ht.random.Generator) and "seed=1" in repr(one)
    # 0-d results for size=None
    assert one.random().shape == () and one.integers(3).shape == ()


def test_generator_without_seed_agrees_on_all_ranks():
    rng = ht.random.default_rng()
    states = ht.MPI_WORLD.allgather(rng.state)
    collective_assert(all(state == states[0] for state in states), str(states))
    values = rng.random(6, split=0).numpy()
    gathered = ht.MPI_WORLD.allgather(values.tobytes())
    collective_assert(all(g == gathered[0] for g in gathered))


def test_generator_bad_input_raises_everywhere():
    for exception, args in (
        (ValueError, (-1,)),
        (ValueError, (2**64,)),
        (TypeError, (1.5,)),
        (TypeError, ("seed",)),
        (TypeError, (True,)),
    ):
        assert_raises_then_collective_works(exception, ht.random.default_rng, *args)
    rng = ht.random.default_rng(3)
    calls = [
        (ValueError, rng.choice, (5, 2), {"axis": 1}),
        (TypeError, rng.choice, (5, 2), {"shuffle": "yes"}),
        (ValueError, rng.permutation, (ht.arange(4),), {"axis": 1}),
        (ValueError, rng.shuffle, (ht.arange(4),), {"axis": -1}),
        (TypeError, rng.integers, (0, 5), {"endpoint": 1}),
        (ValueError, rng.integers, (5, 5), {}),
        (ValueError, rng.integers, (0, 300), {"dtype": ht.uint8}),
        (TypeError, rng.random, (3,), {"dtype": ht.int32}),
        (ValueError, rng.normal, (0.0, -1.0, 3), {}),
    ]
    for exception, function, args, kwargs in calls:
        assert_raises_then_collective_works(exception, function, *args, **kwargs)
    # a failed call draws nothing; the endpoint reaches the dtype's largest value
    collective_assert(rng.state["counter"] == 0, str(rng.state))
    top = rng.integers(250, 255, size=50, dtype=ht.uint8, endpoint=True)
    collective_assert(int(top.max()) == 255 and int(top.min()) >= 250)


# =============================================================================================
# complex rand / randn (HeAT 1.8 accepts complex dtypes)
# =============================================================================================
def test_float_draws_unchanged_by_complex_support():
    # values computed before complex dtypes were added: real draws keep their numbers
    expected = {
        ("rand", ht.float32): [
            0.8690483570098877,
            0.15063238143920898,
            0.5203206539154053,
            0.2499372959136963,
        ],
        ("rand", ht.float64): [
            0.8690483965743594,
            0.1506324111875399,
            0.5203206621592672,
            0.24993735448032295,
        ],
        ("randn", ht.float32): [
            -0.7452703714370728,
            0.5708326697349548,
            0.9508616328239441,
            0.48592430353164673,
        ],
        ("randn", ht.float64): [
            1.178716738511106,
            0.000477113166451928,
            -0.11741695640710231,
            -1.5202783174292742,
        ],
    }
    for (name, dtype), values in expected.items():
        ht.random.seed(42)
        x = getattr(ht.random, name)(4, dtype=dtype, split=0)
        assert x.dtype is dtype
        assert_array_equal(x, np.array(values, dtype=dtype.numpy_type()), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [ht.complex64, ht.complex128])
@pytest.mark.parametrize("shape, split", [((7,), 0), ((5, 3), 0), ((5, 3), 1), ((2, 1), 0)])
def test_complex_draws_pair_a_real_draw(dtype, shape, split):
    # element i takes the reals of flat indices 2i and 2i+1 of a real draw of shape + (2,)
    part = ht.types.real_type_of(dtype)
    n = int(np.prod(shape))
    for name, scale in (("rand", 1.0), ("randn", np.sqrt(0.5))):
        ht.random.seed(9)
        z = getattr(ht.random, name)(*shape, dtype=dtype, split=split)
        assert z.dtype is dtype and z.gshape == shape and z.split == split
        counter = ht.random.get_state()[2]
        ht.random.seed(9)
        pairs = (
            getattr(ht.random, name)(*(shape + (2,)), dtype=part).numpy().astype(np.float64) * scale
        )
        collective_assert(ht.random.get_state()[2] == counter, "advances the counter as 2n reals")
        expected = (pairs[..., 0] + 1j * pairs[..., 1]).astype(dtype.numpy_type())
        tolerance = 1e-6 if dtype is ht.complex64 else 1e-12
        assert_array_equal(z, expected, rtol=tolerance, atol=tolerance)
        assert counter == 2 * n * (2 if (name == "randn" and part is ht.float64) else 1)


@pytest.mark.parametrize("function", ["rand", "randn"])
def test_complex_independent_of_split_and_process_count(function):
    draw = getattr(ht.random, function)
    results = []
    for split in (None, 0, 1):
        ht.random.seed(77)
        results.append(draw(6, 5, dtype=ht.complex64, split=split).numpy())
    ht.random.seed(77)
    alone = draw(6, 5, dtype=ht.complex64, split=0, comm=ht.MPI_SELF).numpy()
    collective_assert(all(np.array_equal(r, results[0]) for r in results[1:] + [alone]))
    gathered = ht.MPI_WORLD.allgather(results[0].tobytes())
    collective_assert(all(g == gathered[0] for g in gathered))


def test_complex_aliases_share_the_path():
    ht.random.seed(3)
    a = ht.random.rand(4, 2, dtype=ht.complex128)
    for alias in (ht.random.random_sample, ht.random.random, ht.random.ranf, ht.random.sample):
        ht.random.seed(3)
        assert_array_equal(alias((4, 2), dtype=ht.complex128, split=0), a.numpy(), rtol=0, atol=0)
    ht.random.seed(3)
    b = ht.random.randn(4, 2, dtype=ht.complex64)
    ht.random.seed(3)
    assert_array_equal(
        ht.random.standard_normal((4, 2), dtype=ht.complex64, split=1), b.numpy(), rtol=0, atol=0
    )
    # normal, uniform and the Generator's methods stay real, as in HeAT / NumPy
    for function, args in (
        (ht.random.normal, (0.0, 1.0, (3,))),
        (ht.random.uniform, (0.0, 1.0, (3,))),
    ):
        assert_raises_then_collective_works(TypeError, function, *args, dtype=ht.complex64)
    rng = ht.random.default_rng(0)
    assert_raises_then_collective_works(TypeError, rng.random, 3, ht.complex64)
    assert_raises_then_collective_works(TypeError, rng.standard_normal, 3, ht.complex128)


def test_complex_statistics():
    ht.random.seed(106)
    for dtype in (ht.complex64, ht.complex128):
        u = ht.random.rand(20_000, dtype=dtype, split=0).numpy()
        for part in (u.real, u.imag):
            collective_assert(part.min() >= 0.0 and part.max() < 1.0)
            collective_assert(abs(part.mean() - 0.5) < 0.01 and abs(part.var() - 1 / 12) < 0.005)
        collective_assert(abs(np.corrcoef(u.real, u.imag)[0, 1]) < 0.03, "independent parts")
        z = ht.random.randn(20_000, dtype=dtype, split=0).numpy()
        for part in (z.real, z.imag):
            collective_assert(
                abs(part.mean()) < 0.02 and abs(part.var() - 0.5) < 0.02, f"{part.var()}"
            )
        collective_assert(abs((np.abs(z) ** 2).mean() - 1.0) < 0.03, "total variance 1")
        collective_assert(abs(np.corrcoef(z.real, z.imag)[0, 1]) < 0.03, "independent parts")


# =============================================================================================
# statistics
# =============================================================================================
def test_uniform_statistics():
    ht.random.seed(101)
    for dtype in (ht.float32, ht.float64):
        values = ht.random.rand(100_000, dtype=dtype, split=0).numpy().astype(np.float64)
        collective_assert(values.min() >= 0.0 and values.max() < 1.0)
        collective_assert(abs(values.mean() - 0.5) < 0.005, f"mean {values.mean()}")
        collective_assert(abs(values.std() - np.sqrt(1 / 12)) < 0.005, f"std {values.std()}")
        histogram = np.histogram(values, bins=20, range=(0, 1))[0]
        chi2 = ((histogram - 5000) ** 2 / 5000).sum()
        collective_assert(chi2 < 60, f"chi2 {chi2}")  # 19 degrees of freedom: p ~ 1e-5


def test_normal_statistics():
    ht.random.seed(102)
    for dtype in (ht.float32, ht.float64):
        values = ht.random.randn(100_000, dtype=dtype, split=0).numpy().astype(np.float64)
        mean, std = values.mean(), values.std()
        skew = ((values - mean) ** 3).mean() / std**3
        kurtosis = ((values - mean) ** 4).mean() / std**4
        collective_assert(abs(mean) < 0.015 and abs(std - 1) < 0.015, f"mean {mean} std {std}")
        collective_assert(
            abs(skew) < 0.05 and abs(kurtosis - 3) < 0.1, f"skew {skew} kurt {kurtosis}"
        )
        collective_assert(abs((np.abs(values) < 1).mean() - 0.6827) < 0.01)
    shifted = ht.random.normal(5.0, 2.0, 100_000, split=0).numpy()
    collective_assert(abs(shifted.mean() - 5) < 0.03 and abs(shifted.std() - 2) < 0.03)


def test_randint_statistics():
    ht.random.seed(103)
    values = ht.random.randint(-3, 7, size=(500, 200), split=1).numpy()
    collective_assert(values.min() == -3 and values.max() == 6)
    counts = np.bincount(values.ravel() + 3, minlength=10)
    chi2 = ((counts - 10_000) ** 2 / 10_000).sum()
    collective_assert(chi2 < 40, f"chi2 {chi2}")  # 9 degrees of freedom: p ~ 1e-5
    big = ht.random.randint(-(2**63), 2**63 - 1, size=20_000, split=0).numpy()
    collective_assert(abs((big < 0).mean() - 0.5) < 0.02)


def test_choice_statistics():
    ht.random.seed(104)
    p = np.array([0.5, 0.25, 0.0, 0.125, 0.125])
    values = ht.random.choice(5, 40_000, p=p, split=0).numpy()
    counts = np.bincount(values, minlength=5)
    collective_assert(counts[2] == 0)
    expected = 40_000 * p
    chi2 = (((counts - expected) ** 2)[p > 0] / expected[p > 0]).sum()
    collective_assert(chi2 < 30, f"chi2 {chi2}")
    # without replacement, weighted: 1000 heavy (weight 3) and 1000 light (weight 1) elements;
    # a small sample is about 3/4 heavy (a little less: the heavy ones are used up faster)
    weights = np.repeat([3.0, 1.0], 1000)
    sample = ht.random.choice(2000, 200, replace=False, p=weights / weights.sum(), split=0).numpy()
    collective_assert(len(np.unique(sample)) == 200)
    heavy = (sample < 1000).mean()
    collective_assert(0.65 < heavy < 0.8, f"heavy fraction {heavy}")


def test_permutation_statistics():
    ht.random.seed(105)
    n = 20_000
    p = ht.random.randperm(n, split=0).numpy()
    collective_assert(np.array_equal(np.sort(p), np.arange(n)))
    # elements of the first half that stay in the first half: hypergeometric, mean 1/2
    collective_assert(abs((p[: n // 2] < n // 2).mean() - 0.5) < 0.02)
    # ascents p[i] < p[i + 1]: mean 1/2; no correlation between position and value
    collective_assert(abs((np.diff(p) > 0).mean() - 0.5) < 0.02)
    collective_assert(abs(np.corrcoef(np.arange(n), p)[0, 1]) < 0.03)
    # small permutations: the position of element 0 is uniform
    positions = [int(np.argmax(ht.random.randperm(4).numpy() == 0)) for _ in range(100)]
    counts = np.bincount(positions, minlength=4)
    collective_assert(((counts - 25) ** 2 / 25).sum() < 20)


# =============================================================================================
# bad input: the same exception on every rank, and the next collective still works
# =============================================================================================
BAD_INPUT = {
    "rand": [
        (ValueError, ht.random.rand, (3, -1), {}),
        (ValueError, ht.random.randn, (-2,), {}),
        (TypeError, ht.random.rand, (2.5,), {}),
        (TypeError, ht.random.rand, (3,), {"dtype": ht.int32}),
        (TypeError, ht.random.randn, (3,), {"dtype": ht.bool}),
        (TypeError, ht.random.random_sample, ((3,),), {"dtype": ht.int64}),
        (ValueError, ht.random.rand, (3, 4), {"split": 2}),
        (ValueError, ht.random.rand, (), {"split": 0}),
        (ValueError, ht.random.random_sample, ((2, -3),), {}),
    ],
    "randint": [
        (ValueError, ht.random.randint, (5, 5), {}),
        (ValueError, ht.random.randint, (7, 2), {}),
        (ValueError, ht.random.randint, (0,), {}),
        (ValueError, ht.random.randint, (0, 5), {"size": -1}),
        (ValueError, ht.random.randint, (0, 300), {"dtype": ht.uint8}),
        (ValueError, ht.random.randint, (-1, 3), {"dtype": ht.uint8}),
        (TypeError, ht.random.randint, (0.5, 3), {}),
        (TypeError, ht.random.randint, (0, 3), {"dtype": ht.float32}),
    ],
    "normal_uniform": [
        (ValueError, ht.random.normal, (0.0, -1.0, (3,)), {}),
        (ValueError, ht.random.normal, (np.zeros(3), 1.0, (4,)), {}),
        (TypeError, ht.random.normal, ("a", 1.0), {}),
        (ValueError, ht.random.uniform, (np.zeros(3), np.ones(2)), {}),
    ],
    "permutations": [
        (ValueError, ht.random.randperm, (-1,), {}),
        (TypeError, ht.random.randperm, (3.0,), {}),
        (ValueError, ht.random.permutation, (-3,), {}),
        (ValueError, ht.random.permutation, (ht.array(3.0),), {}),
        (TypeError, ht.random.shuffle, ([1, 2, 3],), {}),
    ],
    "choice": [
        (ValueError, ht.random.choice, (5, 3), {"p": [0.5, 0.5, 0.5, 0.0, 0.0]}),
        (ValueError, ht.random.choice, (5, 3), {"p": [0.5, 0.5]}),
        (ValueError, ht.random.choice, (3, 3), {"p": [1.5, -0.5, 0.0]}),
        (ValueError, ht.random.choice, (3, 4), {"replace": False}),
        (ValueError, ht.random.choice, (3, 2), {"replace": False, "p": [1.0, 0.0, 0.0]}),
        (ValueError, ht.random.choice, (-1, 2), {}),
        (ValueError, ht.random.choice, (0, 2), {}),
        (ValueError, ht.random.choice, (np.zeros((2, 2)), 2), {}),
        (TypeError, ht.random.choice, (3, 2), {"replace": "no"}),
    ],
    "state": [
        (ValueError, ht.random.seed, (-1,), {}),
        (ValueError, ht.random.seed, (2**64,), {}),
        (TypeError, ht.random.seed, (1.5,), {}),
        (ValueError, ht.random.set_state, (("Philox", 1, 0),), {}),
        (ValueError, ht.random.set_state, (("Threefry", 1),), {}),
        (TypeError, ht.random.set_state, (("Threefry", 1.0, 0),), {}),
        (ValueError, ht.random.set_state, (("Threefry", 1, -5),), {}),
        (TypeError, ht.random.set_state, ("Threefry",), {}),
    ],
}


@pytest.mark.parametrize("family", sorted(BAD_INPUT))
def test_bad_input_raises_everywhere(family):
    for exception, function, args, kwargs in BAD_INPUT[family]:
        ht.random.seed(1)
        assert_raises_then_collective_works(exception, function, *args, **kwargs)
        # a failed call does not consume random numbers
        collective_assert(
            ht.random.get_state()[2] == 0, f"{function.__name__}{args} consumed numbers"
        )


def test_negative_std_array_raises_everywhere():
    std = ht.array(
        np.array([1.0, 2.0, 0.5, -0.1, 1.0, 1.0, 3.0]), split=0
    )  # the negative entry lives on one rank
    assert_raises_then_collective_works(ValueError, ht.random.normal, 0.0, std)
