"""
Tests of heat/nn/tensor_parallel_state.py under 1-4 processes: the full state dict of a
tensor-parallel model (parallelize'd, and built from ParallelSelfAttention / ParallelMLP) after a
few Adam steps loads into the unsplit torch model, which then computes what the parallel model
computes; load_full_state_dict takes the unsplit model's state dict back; uneven splits (11 rows,
10 and 5 features, 3 heads over 2-4 processes); the same error on every process for bad input.
Tiny float64 models.
"""

import copy
from collections import OrderedDict

import pytest
import torch

import heat as ht
from tests.helpers import collective_assert
from tests.nn.test_tensor_parallel import raises_everywhere, seeded

WORLD = ht.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size
F64 = torch.float64
TOLERANCE = 1e-12  # float64, the same operations up to the order of a sum


def sequential():
    """Embedding, an MLP and a head; 11 rows and 10, 5 features split unevenly."""
    return torch.nn.Sequential(OrderedDict(
        emb=torch.nn.Embedding(11, 6, dtype=F64), fc1=torch.nn.Linear(6, 10, dtype=F64),
        act=torch.nn.Tanh(), fc2=torch.nn.Linear(10, 6, dtype=F64),
        norm=torch.nn.LayerNorm(6, dtype=F64), head=torch.nn.Linear(6, 5, dtype=F64),
    ))  # fmt: skip


PLAN = {
    "emb": "embedding",
    "fc1": "column",
    "fc2": "row",
    "head": ("column", {"gather_output": True}),
}


class Block(torch.nn.Module):
    """Self-attention (3 heads) then an MLP; parallel or torch's, with the same state-dict keys."""

    def __init__(self, parallel: bool):
        super().__init__()
        self.parallel = parallel
        mha = torch.nn.MultiheadAttention(6, 3, batch_first=True, dtype=F64)
        if parallel:
            self.attn = ht.nn.ParallelSelfAttention.from_multihead_attention(mha)
            self.mlp = ht.nn.ParallelMLP(6, 10, activation=torch.nn.Tanh(), dtype=F64)
        else:
            self.attn = mha
            self.mlp = torch.nn.Sequential(OrderedDict(
                fc1=torch.nn.Linear(6, 10, dtype=F64), activation=torch.nn.Tanh(),
                fc2=torch.nn.Linear(10, 6, dtype=F64)))  # fmt: skip
        self.norm = torch.nn.LayerNorm(6, dtype=F64)

    def forward(self, x):
        attended = self.attn(x) if self.parallel else self.attn(x, x, x, need_weights=False)[0]
        return self.mlp(self.norm(x + attended))


def ids(seed=1):
    return torch.randint(0, 11, (4, 3), generator=torch.Generator().manual_seed(seed))


def tokens(seed=1):
    return torch.randn(2, 4, 6, dtype=F64, generator=torch.Generator().manual_seed(seed))


def train(model, inputs, steps=3):
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-2)
    for step in range(steps):
        optimizer.zero_grad()
        model(inputs(seed=step)).pow(2).mean().backward()
        optimizer.step()


def same_state(actual, expected, what):
    ok = list(actual) == list(expected) and all(
        actual[k].shape == expected[k].shape and torch.equal(actual[k], expected[k])
        for k in expected
    )
    collective_assert(ok, f"{what}: {list(actual)} differs from {list(expected)}")


def max_difference(a, b):
    return float((a - b).detach().abs().max())


@pytest.mark.parametrize("rank", [None, 0, SIZE - 1])
def test_parallelized_model_saves_as_the_torch_model(rank):
    model = ht.nn.parallelize(seeded(sequential), PLAN)
    train(model, ids)
    state = ht.nn.full_state_dict(model, rank=rank)
    receives = rank is None or RANK == rank
    collective_assert(receives or state == {}, f"process {RANK} got {list(state)}")
    state = state if receives else None
    states = WORLD.allgather(state)
    state = states[SIZE - 1 if rank == SIZE - 1 else 0]
    plain = seeded(sequential, seed=5)  # other values, the same structure
    expected_shapes = {k: v.shape for k, v in plain.state_dict().items()}
    collective_assert(
        list(state) == list(expected_shapes)
        and all(state[k].shape == expected_shapes[k] for k in state),
        f"keys/shapes {[(k, tuple(v.shape)) for k, v in state.items()]}",
    )
    collective_assert(all(t.device.type == "cpu" for t in state.values()))
    plain.load_state_dict(state)
    x = ids(seed=9)
    difference = max_difference(plain(x), model(x))
    collective_assert(difference < TOLERANCE, f"outputs differ by {difference}")
    # what a process held (its shards) is a part of the full state
    own = model.fc1.weight.detach()
    start = model.fc1.displs[RANK]
    collective_assert(torch.equal(state["fc1.weight"][start : start + own.shape[0]], own))


def test_attention_and_mlp_save_as_multihead_attention():
    model = seeded(lambda: Block(parallel=True))
    train(model, tokens)
    state = ht.nn.full_state_dict(model, rank=None)
    plain = seeded(lambda: Block(parallel=False), seed=5)
    collective_assert(list(state) == list(plain.state_dict()), f"keys {list(state)}")
    plain.load_state_dict(state)
    x = tokens(seed=9)
    difference = max_difference(plain(x), model(x))
    collective_assert(difference < TOLERANCE, f"outputs differ by {difference}")


@pytest.mark.parametrize("kind", ["sequential", "block"])
def test_load_full_state_dict_round_trip(kind):
    inputs = ids if kind == "sequential" else tokens

    def parallel(seed):  # a parallel model with other values than the plain one's
        if kind == "sequential":
            return ht.nn.parallelize(seeded(sequential, seed), PLAN)
        return seeded(lambda: Block(parallel=True), seed)

    plain = seeded(sequential if kind == "sequential" else lambda: Block(parallel=False), 3)
    train(plain, inputs)
    model = parallel(0)
    keys = ht.nn.load_full_state_dict(model, plain.state_dict())
    collective_assert(keys.missing_keys == [] and keys.unexpected_keys == [], f"{keys}")
    x = inputs(seed=9)
    difference = max_difference(model(x), plain(x))
    collective_assert(difference < TOLERANCE, f"outputs differ by {difference}")
    same_state(ht.nn.full_state_dict(model, rank=None), plain.state_dict(), "round trip")
    # the same from one process's state dict, broadcast entry by entry
    again = parallel(7)
    state = plain.state_dict() if RANK == SIZE - 1 else None
    ht.nn.load_full_state_dict(again, state, rank=SIZE - 1)
    same_state(ht.nn.full_state_dict(again, rank=None), plain.state_dict(), "from one process")
    # and the loaded model trains on like the torch model
    train(model, inputs)
    train(plain, inputs)
    difference = max_difference(model(x), plain(x))
    collective_assert(difference < 1e-10, f"after training, outputs differ by {difference}")


def test_single_layers_and_no_parallel_layers():
    torch_linear = seeded(lambda: torch.nn.Linear(7, 5, dtype=F64))
    layer = ht.nn.RowParallelLinear.from_linear(torch_linear, input_is_parallel=False)
    same_state(ht.nn.full_state_dict(layer, rank=None), torch_linear.state_dict(), "row layer")
    plain = seeded(lambda: torch.nn.Sequential(torch.nn.Linear(3, 2, dtype=F64)))
    state = ht.nn.full_state_dict(plain, rank=0)
    same_state(state, plain.state_dict() if RANK == 0 else {}, "a model without parallel layers")


def test_bad_input_raises_everywhere():
    model = ht.nn.parallelize(seeded(sequential), PLAN)
    full = seeded(sequential).state_dict()
    raises_everywhere(TypeError, "module must be a torch.nn.Module", ht.nn.full_state_dict, 3)
    raises_everywhere(ValueError, "rank must be <=", ht.nn.full_state_dict, model, SIZE)
    raises_everywhere(TypeError, "rank must be None or an int", ht.nn.full_state_dict, model, "0")
    raises_everywhere(TypeError, "state_dict must be", ht.nn.load_full_state_dict, model, [1])
    missing = {k: v for k, v in full.items() if k != "fc2.bias"}
    raises_everywhere(ValueError, "missing keys ['fc2.bias']", ht.nn.load_full_state_dict,
                      model, missing)  # fmt: skip
    keys = ht.nn.load_full_state_dict(model, dict(missing, extra=torch.ones(1)), strict=False)
    collective_assert(keys.missing_keys == ["fc2.bias"] and keys.unexpected_keys == ["extra"])
    wrong = dict(full, **{"fc1.weight": torch.zeros(11, 6, dtype=F64)})
    raises_everywhere(ValueError, "state_dict['fc1.weight'] has shape (11, 6), the model expects "
                      "(10, 6)", ht.nn.load_full_state_dict, model, wrong)  # fmt: skip
    only_last = missing if RANK == SIZE - 1 else None
    raises_everywhere(ValueError, "missing keys ['fc2.bias']", ht.nn.load_full_state_dict,
                      model, only_last, rank=SIZE - 1)  # fmt: skip
    raises_everywhere(ValueError, "rank must be >= 0", ht.nn.load_full_state_dict, model, full,
                      rank=-1)  # fmt: skip
    before = copy.deepcopy(model.state_dict())
    differing = dict(full, **{"head.bias": full["head.bias"] + (RANK == SIZE - 1)})
    if SIZE > 1:
        raises_everywhere(ValueError, "head.bias", ht.nn.load_full_state_dict, model, differing)
        same_state(model.state_dict(), before, "a failed load changed the model")
    mixed = torch.nn.Sequential(
        ht.nn.ColumnParallelLinear(2, 3, dtype=F64),
        ht.nn.RowParallelLinear(3, 2, comm=WORLD.Split(0, RANK), dtype=F64),
    )
    raises_everywhere(ValueError, "share one communicator", ht.nn.full_state_dict, mixed)
