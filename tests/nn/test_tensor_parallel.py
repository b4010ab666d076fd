"""
Tests of heat/nn/tensor_parallel.py under 1-4 processes: every layer gives the output and
gradients of the torch layer it replaces, and trains like one process (20 Adam steps); uneven
splits (10 features over 3 processes, fewer features or heads than processes); the number of
all-reduces per pass; parallelize; collective errors. Tiny float64 layers, one compute thread.
"""

import copy
from collections import OrderedDict

import numpy as np
import pytest
import torch

import heat as ht
from tests.helpers import check_layout, collective_assert

WORLD = ht.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size
F64 = torch.float64
mse = torch.nn.functional.mse_loss
TOLERANCE = 1e-5  # float64: the differences measured are ~1e-15


def seeded(factory, seed=0):
    """``factory()`` with torch's generator seeded alike on every process."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return factory()


def randn(*shape, seed=1):
    return torch.randn(*shape, dtype=F64, generator=torch.Generator().manual_seed(seed))


def close(actual, expected, what, tolerance=TOLERANCE):
    actual = torch.as_tensor(np.asarray(actual) if not torch.is_tensor(actual) else actual)
    ok = tuple(actual.shape) == tuple(expected.shape) and bool(
        (actual.detach() - expected.detach()).abs().max() <= tolerance if actual.numel() else True
    )
    collective_assert(ok, f"{what}: {actual} != {expected}")


def own(t, layer, axis):
    """This process's block of ``t`` along ``axis`` in ``layer``'s layout."""
    start, count = layer.displs[layer.comm.rank], layer.counts[layer.comm.rank]
    return t.narrow(axis, start, count)


def raises_everywhere(exception, match, function, *args, **kwargs):
    """``function`` raises ``exception`` with one message on every process; return the message."""
    message = None
    try:
        function(*args, **kwargs)
    except exception as error:
        message = str(error)
    messages = WORLD.allgather(message)
    collective_assert(
        all(m is not None and m == messages[0] for m in messages),
        f"not one {exception.__name__} everywhere: {messages}",
    )
    collective_assert(match in messages[0], f"{match!r} not in {messages[0]!r}")
    return messages[0]


def train(model, data, steps=20, lr=1e-2, forward=None):
    """``steps`` Adam steps of ``model`` on ``data`` (x, target) pairs; the losses."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    forward = forward or model
    losses = []
    for step in range(steps):
        x, target = data[step % len(data)]
        optimizer.zero_grad()
        loss = mse(forward(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


# ------------------------------------------------------------------------------------------------
# the layers against torch's
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("out_features", [10, 3, 1])
@pytest.mark.parametrize("gather_output", [False, True])
def test_column_parallel_matches_linear(out_features, gather_output):
    linear = seeded(lambda: torch.nn.Linear(5, out_features, dtype=F64))
    layer = ht.nn.ColumnParallelLinear.from_linear(linear, gather_output=gather_output)
    assert sum(layer.counts) == out_features
    assert layer.counts == WORLD.counts_displs_shape((out_features,), 0)[0]
    x, upstream = randn(4, 2, 5), randn(4, 2, out_features, seed=2)
    x_parallel, x_reference = x.clone().requires_grad_(), x.clone().requires_grad_()
    y, expected = layer(x_parallel), linear(x_reference)
    if gather_output:
        close(y, expected, "gathered output")
        (y * upstream).sum().backward()
    else:
        close(y, own(expected, layer, -1), "output slice")
        (y * own(upstream, layer, -1)).sum().backward()
    (expected * upstream).sum().backward()
    close(x_parallel.grad, x_reference.grad, "input gradient")
    close(layer.weight.grad, own(linear.weight.grad, layer, 0), "weight gradient")
    close(layer.bias.grad, own(linear.bias.grad, layer, 0), "bias gradient")


@pytest.mark.parametrize("in_features", [10, 3])
@pytest.mark.parametrize("input_is_parallel", [True, False])
def test_row_parallel_matches_linear(in_features, input_is_parallel):
    linear = seeded(lambda: torch.nn.Linear(in_features, 4, dtype=F64))
    layer = ht.nn.RowParallelLinear.from_linear(linear, input_is_parallel=input_is_parallel)
    x, upstream = randn(3, in_features), randn(3, 4, seed=2)
    x_reference = x.clone().requires_grad_()
    x_parallel = (own(x, layer, -1) if input_is_parallel else x).clone().requires_grad_()
    y, expected = layer(x_parallel), linear(x_reference)
    close(y, expected, "output")
    (y * upstream).sum().backward()
    (expected * upstream).sum().backward()
    expected_grad = own(x_reference.grad, layer, -1) if input_is_parallel else x_reference.grad
    close(x_parallel.grad, expected_grad, "input gradient")
    close(layer.weight.grad, own(linear.weight.grad, layer, 1), "weight gradient")
    close(layer.bias.grad, linear.bias.grad, "bias gradient")


def test_default_initialisation_is_torchs():
    """Seeded alike, each layer holds its part of what the torch layer draws."""
    for parallel, reference in [
        (lambda: ht.nn.ColumnParallelLinear(5, 10, dtype=F64),
         lambda: torch.nn.Linear(5, 10, dtype=F64)),
        (lambda: ht.nn.RowParallelLinear(10, 5, dtype=F64),
         lambda: torch.nn.Linear(10, 5, dtype=F64)),
        (lambda: ht.nn.ParallelEmbedding(10, 3, padding_idx=4, dtype=F64),
         lambda: torch.nn.Embedding(10, 3, padding_idx=4, dtype=F64)),
    ]:  # fmt: skip
        layer, expected = seeded(parallel, seed=3), seeded(reference, seed=3)
        close(layer.weight_dndarray.numpy(), expected.weight, f"{type(layer).__name__} weight")
    mha = seeded(lambda: torch.nn.MultiheadAttention(6, 3, batch_first=True, dtype=F64), seed=4)
    attention = seeded(lambda: ht.nn.ParallelSelfAttention(6, 3, dtype=F64), seed=4)
    q, k, v = mha.in_proj_weight.chunk(3)
    close(attention.q_proj.weight_dndarray.numpy(), q, "query weight")
    close(attention.v_proj.weight_dndarray.numpy(), v, "value weight")
    close(attention.out_proj.weight_dndarray.numpy(), mha.out_proj.weight, "output weight")


def test_replicated_bias_taken_from_process_0():
    """Generators seeded differently: the shards differ, the row-parallel bias must not."""
    layer = seeded(lambda: ht.nn.RowParallelLinear(6, 3, dtype=F64), seed=RANK)
    biases = WORLD.allgather(layer.bias.detach().clone())
    collective_assert(all(torch.equal(b, biases[0]) for b in biases), f"biases {biases}")


def test_weight_dndarray_is_the_split_weight():
    linear = seeded(lambda: torch.nn.Linear(4, 10, dtype=F64))
    column = ht.nn.ColumnParallelLinear.from_linear(linear)
    row = ht.nn.RowParallelLinear.from_linear(seeded(lambda: torch.nn.Linear(10, 4, dtype=F64)))
    for layer, split in [(column, 0), (row, 1)]:
        weight = layer.weight_dndarray
        check_layout(weight)
        assert weight.split == split and weight.balanced
        assert weight.lshape_map[:, split].tolist() == list(layer.counts)
        assert weight.dtype == ht.float64
    assert column.weight_dndarray.gshape == (10, 4) and row.weight_dndarray.gshape == (4, 10)
    close(column.weight_dndarray.numpy(), linear.weight, "column weight")
    close(column.bias_dndarray.numpy(), linear.bias, "column bias")
    if SIZE == 3:
        assert column.counts == (4, 3, 3)
    # a view: an update of the shard shows in the DNDarray
    with torch.no_grad():
        column.weight.add_(1.0)
    close(column.weight_dndarray.numpy(), linear.weight + 1.0, "view of the updated weight")


def test_embedding_matches_torch():
    embedding = seeded(lambda: torch.nn.Embedding(7, 3, padding_idx=2, dtype=F64))
    table = ht.nn.ParallelEmbedding.from_embedding(embedding)
    ids = torch.tensor([[0, 6, 2, 2], [3, 3, 5, 1]])
    upstream = randn(2, 4, 3)
    out, expected = table(ids), embedding(ids)
    close(out, expected, "embeddings")
    (out * upstream).sum().backward()
    (expected * upstream).sum().backward()
    close(table.weight.grad, own(embedding.weight.grad, table, 0), "table gradient")


def test_mlp_trains_like_one_process():
    """ffn_hidden 10: uneven at 3 and 4 processes; 20 Adam steps as one process takes them."""
    reference = seeded(
        lambda: torch.nn.Sequential(
            torch.nn.Linear(6, 10, dtype=F64), torch.nn.GELU(), torch.nn.Linear(10, 6, dtype=F64)
        )
    )
    mlp = seeded(lambda: ht.nn.ParallelMLP(6, 10, dtype=F64))
    data = [(randn(8, 6, seed=s), randn(8, 6, seed=s + 100)) for s in range(4)]
    losses, expected = train(mlp, data), train(reference, data)
    close(torch.tensor(losses), torch.tensor(expected), "losses")
    close(mlp.fc1.weight_dndarray.numpy(), reference[0].weight, "fc1 weight")
    close(mlp.fc1.bias_dndarray.numpy(), reference[0].bias, "fc1 bias")
    close(mlp.fc2.weight_dndarray.numpy(), reference[2].weight, "fc2 weight")
    close(mlp.fc2.bias, reference[2].bias, "fc2 bias")


@pytest.mark.parametrize("num_heads", [3, 2])
def test_self_attention_trains_like_multihead_attention(num_heads):
    """3 heads: 1, 1, 1, 0 at 4 processes; 2 heads: 1, 1 and two processes without heads."""
    mha = seeded(lambda: torch.nn.MultiheadAttention(6, num_heads, batch_first=True, dtype=F64))
    attention = ht.nn.ParallelSelfAttention.from_multihead_attention(mha)
    assert attention.head_counts == WORLD.counts_displs_shape((num_heads,), 0)[0]
    x = randn(2, 5, 6)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.bool)
    close(attention(x), mha(x, x, x, need_weights=False)[0], "output")
    close(attention(x, is_causal=True), mha(x, x, x, attn_mask=mask, need_weights=False)[0],
          "causal output")  # fmt: skip
    data = [(randn(2, 5, 6, seed=s), randn(2, 5, 6, seed=s + 100)) for s in range(3)]
    losses = train(attention, data, forward=lambda x: attention(x, is_causal=True))
    expected = train(mha, data, forward=lambda x: mha(x, x, x, attn_mask=mask)[0])
    close(torch.tensor(losses), torch.tensor(expected), "losses")
    q, k, v = mha.in_proj_weight.chunk(3)
    close(attention.q_proj.weight_dndarray.numpy(), q, "query weight")
    close(attention.k_proj.bias_dndarray.numpy(), mha.in_proj_bias.chunk(3)[1], "key bias")
    close(attention.out_proj.weight_dndarray.numpy(), mha.out_proj.weight, "output weight")
    close(attention.out_proj.bias, mha.out_proj.bias, "output bias")


def test_one_allreduce_each_way(monkeypatch):
    """The MLP and the attention block: one all-reduce in forward, one in backward."""
    if SIZE == 1:
        pytest.skip("no communication at one process")
    calls = []
    original = WORLD.allreduce_tensor

    def counting(t, *args, **kwargs):
        calls.append(tuple(t.shape))
        return original(t, *args, **kwargs)

    monkeypatch.setattr(WORLD, "allreduce_tensor", counting)
    for block, x in [
        (seeded(lambda: ht.nn.ParallelMLP(6, 10, dtype=F64)), randn(4, 6)),
        (seeded(lambda: ht.nn.ParallelSelfAttention(6, 3, dtype=F64)), randn(2, 3, 6)),
    ]:
        calls.clear()
        y = block(x.clone().requires_grad_())
        collective_assert(len(calls) == 1, f"forward: {calls}")
        y.sum().backward()
        collective_assert(len(calls) == 2, f"forward and backward: {calls}")


def test_sub_communicators():
    """Two groups (ranks of equal parity) each train their own MLP like one process."""
    sub = ht.MPICommunication(WORLD.handle.Split(RANK % 2, RANK))
    reference = seeded(
        lambda: torch.nn.Sequential(
            torch.nn.Linear(4, 7, dtype=F64), torch.nn.ReLU(), torch.nn.Linear(7, 4, dtype=F64)
        ),
        seed=RANK % 2,
    )
    mlp = ht.nn.ParallelMLP(4, 7, activation=torch.nn.ReLU(), comm=sub, dtype=F64)
    mlp.fc1 = ht.nn.ColumnParallelLinear.from_linear(reference[0], comm=sub)
    mlp.fc2 = ht.nn.RowParallelLinear.from_linear(reference[2], comm=sub)
    data = [(randn(5, 4, seed=s), randn(5, 4, seed=s + 9)) for s in range(2)]
    losses, expected = train(mlp, data, steps=5), train(reference, data, steps=5)
    close(torch.tensor(losses), torch.tensor(expected), "losses")
    close(mlp.fc2.weight, own(reference[2].weight, mlp.fc2, 1), "fc2 weight")
    sub.Free()


# ------------------------------------------------------------------------------------------------
# parallelize
# ------------------------------------------------------------------------------------------------


class TinyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(11, 4, dtype=F64)
        self.block = torch.nn.Sequential(
            OrderedDict(
                fc1=torch.nn.Linear(4, 9, dtype=F64),
                act=torch.nn.Tanh(),
                fc2=torch.nn.Linear(9, 4, dtype=F64),
            )
        )
        self.head = torch.nn.Linear(4, 3, dtype=F64)

    def forward(self, ids):
        return self.head(self.block(self.emb(ids).mean(1)))


def test_parallelize_trains_like_one_process():
    reference = seeded(TinyModel)
    model = ht.nn.parallelize(
        copy.deepcopy(reference),
        {"emb": "embedding", "block.fc1": "column", "block.fc2": "row",
         "head": ("column", {"gather_output": True})},
    )  # fmt: skip
    assert isinstance(model.emb, ht.nn.ParallelEmbedding)
    assert isinstance(model.block.fc1, ht.nn.ColumnParallelLinear)
    assert isinstance(model.block.fc2, ht.nn.RowParallelLinear)
    assert model.head.gather_output and not model.block.fc1.gather_output
    generator = torch.Generator().manual_seed(5)
    data = [(torch.randint(0, 11, (6, 3), generator=generator), randn(6, 3, seed=s))
            for s in range(4)]  # fmt: skip
    losses, expected = train(model, data), train(reference, data)
    close(torch.tensor(losses), torch.tensor(expected), "losses")
    close(model.emb.weight_dndarray.numpy(), reference.emb.weight, "embedding")
    close(model.block.fc1.weight_dndarray.numpy(), reference.block.fc1.weight, "fc1 weight")
    close(model.block.fc2.weight_dndarray.numpy(), reference.block.fc2.weight, "fc2 weight")
    close(model.head.bias_dndarray.numpy(), reference.head.bias, "head bias")


# ------------------------------------------------------------------------------------------------
# bad input: the same exception on every process
# ------------------------------------------------------------------------------------------------


def test_bad_arguments():
    column = ht.nn.ColumnParallelLinear
    raises_everywhere(TypeError, "in_features must be an int", column, "5", 3)
    raises_everywhere(ValueError, "out_features must be >= 1", column, 5, 0)
    raises_everywhere(TypeError, "gather_output must be a bool", column, 5, 3, gather_output=1)
    raises_everywhere(ValueError, "dtype must be a floating-point", column, 5, 3, dtype=torch.int64)
    raises_everywhere(TypeError, "comm", column, 5, 3, comm="world")
    raises_everywhere(TypeError, "input_is_parallel must be a bool", ht.nn.RowParallelLinear, 5,
                      3, input_is_parallel=None)  # fmt: skip
    raises_everywhere(TypeError, "linear must be a torch.nn.Linear", column.from_linear,
                      torch.nn.Conv1d(2, 2, 1))  # fmt: skip
    raises_everywhere(ValueError, "embed_dim must be divisible by num_heads",
                      ht.nn.ParallelSelfAttention, 10, 3)  # fmt: skip
    raises_everywhere(ValueError, "padding_idx must be <= 9", ht.nn.ParallelEmbedding, 10, 3,
                      padding_idx=10)  # fmt: skip
    raises_everywhere(TypeError, "activation must be callable", ht.nn.ParallelMLP, 4, 8, "relu")
    raises_everywhere(ValueError, "embedding.max_norm must be None",
                      ht.nn.ParallelEmbedding.from_embedding, torch.nn.Embedding(5, 2, max_norm=1.0))  # fmt: skip


def test_arguments_that_differ_between_processes():
    if SIZE == 1:
        pytest.skip("needs two processes")
    message = raises_everywhere(
        ValueError, "out_features is 4 on process 0", ht.nn.ColumnParallelLinear, 5, 4 + RANK
    )
    assert "ColumnParallelLinear's arguments differ" in message
    # a bad value on one process only: its error everywhere, naming the process
    message = raises_everywhere(
        ValueError, "in_features must be >= 1", ht.nn.RowParallelLinear, 0 if RANK == 1 else 5, 3
    )
    assert message.endswith("[on process 1]")
    # different weights (generators seeded by rank)
    linear = seeded(lambda: torch.nn.Linear(3, 4), seed=RANK)
    raises_everywhere(ValueError, "weight checksum", ht.nn.RowParallelLinear.from_linear, linear)
    # and the next collective still works
    assert WORLD.allreduce(1) == SIZE


def test_bad_plans():
    model = seeded(TinyModel)
    raises_everywhere(TypeError, "plan must be a dict", ht.nn.parallelize, model, ["emb"])
    raises_everywhere(TypeError, "module must be a torch.nn.Module", ht.nn.parallelize, "m", {})
    raises_everywhere(ValueError, "plan['head'] must be one of ('column', 'row', 'embedding')",
                      ht.nn.parallelize, model, {"head": "diagonal"})  # fmt: skip
    raises_everywhere(ValueError, "plan names 'block.fc3', which is not a submodule",
                      ht.nn.parallelize, model, {"block.fc3": "row"})  # fmt: skip
    raises_everywhere(TypeError, "needs a torch.nn.Linear, but module.emb is a Embedding",
                      ht.nn.parallelize, model, {"emb": "column"})  # fmt: skip
    raises_everywhere(ValueError, "an option of plan['head'] must be one of ('gather_output',)",
                      ht.nn.parallelize, model, {"head": ("column", {"input_is_parallel": True})})  # fmt: skip
    # nothing was replaced
    assert isinstance(model.head, torch.nn.Linear) and isinstance(model.emb, torch.nn.Embedding)


def test_bad_inputs():
    layer = seeded(lambda: ht.nn.ColumnParallelLinear(5, 4, dtype=F64))
    raises_everywhere(ValueError, "input must have 5 features", layer, randn(2, 4))
    raises_everywhere(TypeError, "input must be a torch.Tensor", layer, [1.0] * 5)
    table = seeded(lambda: ht.nn.ParallelEmbedding(6, 2, dtype=F64))
    raises_everywhere(IndexError, "ids outside [0, 6)", table, torch.tensor([0, 6]))
    raises_everywhere(TypeError, "input must hold integer ids", table, torch.tensor([0.0]))
    attention = seeded(lambda: ht.nn.ParallelSelfAttention(4, 2, dtype=F64))
    raises_everywhere(ValueError, "input must be (batch, sequence, embed_dim)", attention,
                      randn(3, 4))  # fmt: skip
