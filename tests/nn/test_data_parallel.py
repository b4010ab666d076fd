"""
Tests of heat/nn/data_parallel.py (DataParallel; DataParallelMultiGPU is exercised with DASO in
tests/optim/test_daso.py) and of heat/nn's torch names, under 1-4 processes, with emulated nodes
for the hierarchical all-reduce.
"""

import copy

import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_one_process_error_everywhere,
    collective_assert,
    expect_errors,
    raised_message,
)

WORLD = ht.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size


class TwoBranches(torch.nn.Module):
    """An MLP plus a branch that only odd ranks use (a parameter without gradient elsewhere)."""

    def __init__(self, seed):
        super().__init__()
        with torch.random.fork_rng():  # leave the global generator to the other tests
            torch.manual_seed(seed)
            self.body = torch.nn.Sequential(
                torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 2)
            )
            self.extra = torch.nn.Linear(5, 2)

    def forward(self, x, use_extra=False):
        out = self.body(x)
        return out + self.extra(x) if use_extra else out


def gradients(module):
    return torch.cat(
        [
            (p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
            for p in module.parameters()
        ]
    )


MODES = {
    "overlapped": dict(),
    "blocking": dict(blocking_parameter_updates=True),
    "small-buckets": dict(bucket_size_mb=1e-4),
    "hierarchical": dict(hierarchical=True, bucket_size_mb=1e-4),
    "bfloat16": dict(compression=torch.bfloat16, bucket_size_mb=1e-4),
    "hierarchical-float16": dict(hierarchical=True, compression=torch.float16),
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("ranks_per_node", [1, 2])
def test_gradients_are_the_average_of_per_process_gradients(emulate_nodes, mode, ranks_per_node):
    emulate_nodes(ranks_per_node)
    model = ht.nn.DataParallel(TwoBranches(seed=RANK), **MODES[mode])
    local = copy.deepcopy(model.module)  # rank 0's parameters, no communication
    generator = torch.Generator().manual_seed(10 + RANK)
    x = torch.randn(6, 5, generator=generator)
    use_extra = RANK % 2 == 1
    model(x, use_extra).pow(2).mean().backward()
    local(x, use_extra).pow(2).mean().backward()
    expected = sum(WORLD.allgather(gradients(local))) / SIZE
    got = gradients(model.module)
    compressed = "compression" in MODES[mode]
    tolerance = 2e-2 * expected.abs().max().item() if compressed else 1e-6
    ok = torch.allclose(got, expected, rtol=1e-5, atol=tolerance)
    ok = ok and all(p.grad is not None for p in model.module.parameters())  # the unused branch too
    everyone = WORLD.allgather(got)
    ok = ok and all(torch.equal(everyone[0], g) for g in everyone)  # the same bits everywhere
    reduction = model.reducer.reduction
    sent = reduction.bytes_local + reduction.bytes_cross_node
    # a hierarchical average on one node of CPU processes goes through shared memory: no bytes
    in_memory = getattr(reduction, "shared", None) is not None and reduction.groups.num_nodes == 1
    ok = ok and (sent > 0) == (SIZE > 1 and not in_memory)
    if compressed and SIZE > 1:  # 2 bytes per value on the wire instead of 4
        plain = ht.nn.DataParallel(
            TwoBranches(seed=RANK), **{k: v for k, v in MODES[mode].items() if k != "compression"}
        )
        plain(x, use_extra).sum().backward()
        plain_sent = plain.reducer.reduction.bytes_local + plain.reducer.reduction.bytes_cross_node
        cross = reduction.bytes_cross_node, plain.reducer.reduction.bytes_cross_node
        halved = (sent, plain_sent) if not MODES[mode].get("hierarchical") else cross
        ok = ok and abs(2 * halved[0] - halved[1]) <= 8  # up to rounding of the byte model
    collective_assert(ok, f"rank {RANK} {mode}: max error {(got - expected).abs().max().item()}")


def test_start_from_rank0_parameters_and_optimizer_state():
    net = TwoBranches(seed=RANK)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1 * (RANK + 1), momentum=0.9)
    net(torch.ones(2, 5), True).sum().backward()
    optimizer.step()  # momentum buffers that differ between processes
    wrapped = ht.optim.DataParallelOptimizer(optimizer, blocking=True)
    model = ht.nn.DataParallel(net, optimizer=wrapped)
    params = WORLD.allgather(torch.cat([p.detach().reshape(-1) for p in net.parameters()]))
    momenta = WORLD.allgather(
        torch.cat([optimizer.state[p]["momentum_buffer"].reshape(-1) for p in net.parameters()])
    )
    ok = all(torch.equal(params[0], p) for p in params) and all(
        torch.equal(momenta[0], m) for m in momenta
    )
    ok = ok and optimizer.param_groups[0]["lr"] == 0.1
    ok = (
        ok and wrapped.blocking is False and model.blocking_parameter_updates is False
    )  # module decides
    collective_assert(ok, f"rank {RANK}: start differs")


def test_a_list_of_optimizers():
    # HeAT accepted optimizer=[opt1, opt2]: each one's state from rank 0, each one's blocking
    # from the module, and training with both keeps the replicas identical
    net = TwoBranches(seed=RANK)
    body = torch.optim.SGD(net.body.parameters(), lr=0.1 * (RANK + 1), momentum=0.9)
    extra = torch.optim.Adam(net.extra.parameters(), lr=1e-2 * (RANK + 1))
    net(torch.ones(2, 5), True).sum().backward()
    body.step()
    extra.step()  # states that differ between processes
    first = ht.optim.DataParallelOptimizer(body, blocking=False)
    second = ht.optim.DataParallelOptimizer(extra, blocking=False)
    model = ht.nn.DataParallel(net, optimizer=[first, second], blocking_parameter_updates=True)
    ok = model.optimizer == [first, second] and first.blocking is True and second.blocking is True
    ok = ok and body.param_groups[0]["lr"] == 0.1 and extra.param_groups[0]["lr"] == 1e-2
    momenta = WORLD.allgather(
        torch.cat([body.state[p]["momentum_buffer"].reshape(-1) for p in net.body.parameters()])
    )
    ok = ok and all(torch.equal(momenta[0], m) for m in momenta)
    generator = torch.Generator().manual_seed(RANK)
    for _ in range(3):
        first.zero_grad()
        second.zero_grad()
        model(torch.randn(6, 5, generator=generator), True).pow(2).mean().backward()
        first.step()
        second.step()
    everyone = WORLD.allgather(torch.cat([p.detach().reshape(-1) for p in net.parameters()]))
    ok = ok and all(torch.equal(everyone[0], p) for p in everyone)
    collective_assert(ok, f"rank {RANK}: a list of optimizers is not honoured")
    expect_errors(
        [
            (TypeError, ht.nn.DataParallel, (TwoBranches(0),), {"optimizer": [first, "sgd"]}),
            (ValueError, ht.nn.DataParallel, (TwoBranches(0),), {"optimizer": []}),
        ]
    )


def test_training_keeps_replicas_identical_and_broadcasts_buffers():
    with torch.random.fork_rng():
        torch.manual_seed(RANK)
        net = torch.nn.Sequential(
            torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(), torch.nn.Linear(6, 1)
        )
    optimizer = ht.optim.DataParallelOptimizer(torch.optim.Adam(net.parameters(), lr=1e-2))
    model = ht.nn.DataParallel(net, optimizer=optimizer)
    generator = torch.Generator().manual_seed(RANK)
    for _ in range(4):
        optimizer.zero_grad()
        model(torch.randn(8, 4, generator=generator)).pow(2).mean().backward()
        optimizer.step()
    # batch-norm statistics differ now (each process saw its own data) until the next forward
    # pass takes rank 0's; with the same input everywhere they stay equal after it
    stats = WORLD.allgather(net[1].running_mean.clone())
    differed = SIZE == 1 or not all(torch.equal(stats[0], s) for s in stats)
    model(torch.linspace(-1, 1, 12).reshape(3, 4))
    state = torch.cat([t.detach().reshape(-1).float() for t in net.state_dict().values()])
    everyone = WORLD.allgather(state)
    ok = differed and all(torch.equal(everyone[0], s) for s in everyone)
    collective_assert(ok, f"rank {RANK}: replicas differ")


def test_no_sync_accumulates_locally():
    net = TwoBranches(seed=0)
    model = ht.nn.DataParallel(net)
    local = copy.deepcopy(net)
    generator = torch.Generator().manual_seed(RANK)
    batches = [torch.randn(4, 5, generator=generator) for _ in range(3)]
    with model.no_sync():
        model(batches[0]).sum().backward()
        model(batches[1]).sum().backward()
    inside = gradients(net).clone()
    local(batches[0]).sum().backward()
    local(batches[1]).sum().backward()
    ok = torch.allclose(inside, gradients(local), rtol=1e-6, atol=1e-7)  # local sums, not averaged
    model(batches[2]).sum().backward()  # the sync covers the accumulated gradients
    local(batches[2]).sum().backward()
    expected = sum(WORLD.allgather(gradients(local))) / SIZE
    ok = ok and torch.allclose(gradients(net), expected, rtol=1e-5, atol=1e-6)
    collective_assert(ok, f"rank {RANK}: accumulated gradients wrong")


def test_heat_nn_functional_is_an_importable_module():
    # HeAT's heat.nn.functional: a module (import heat.nn.functional as F) forwarding to torch's
    import heat.nn.functional as F
    from heat.nn.functional import cross_entropy

    ok = F is ht.nn.functional and cross_entropy is torch.nn.functional.cross_entropy
    ok = ok and all(
        getattr(F, name) is getattr(torch.nn.functional, name)
        for name in ("relu", "softmax", "conv2d", "mse_loss")
    )
    ok = ok and "log_softmax" in dir(F)
    collective_assert(ok, "heat.nn.functional does not forward torch.nn.functional")
    with pytest.raises(AttributeError, match="heat.nn.functional"):
        F.no_such_function


def test_torch_names_and_errors():
    ok = ht.nn.Linear is torch.nn.Linear and ht.nn.functional.relu is torch.nn.functional.relu
    ok = (
        ok
        and ht.optim.Adam is torch.optim.Adam
        and ht.optim.lr_scheduler is torch.optim.lr_scheduler
    )
    ok = ok and ht.nn.DataParallel is not torch.nn.DataParallel
    collective_assert(ok, "torch names")
    with pytest.raises(AttributeError):
        ht.nn.NoSuchLayer
    with pytest.raises(AttributeError):
        ht.optim.NoSuchOptimizer
    net = TwoBranches(seed=0)
    expect_errors(
        [
            (TypeError, ht.nn.DataParallel, ("not a module",), {}),
            (TypeError, ht.nn.DataParallel, (net,), {"comm": 3}),
            (TypeError, ht.nn.DataParallel, (net,), {"optimizer": "sgd"}),
            (TypeError, ht.nn.DataParallel, (net,), {"blocking_parameter_updates": 0}),
            (ValueError, ht.nn.DataParallel, (net,), {"compression": torch.int8}),
            (ValueError, ht.nn.DataParallel, (net,), {"bucket_size_mb": 0}),
            (TypeError, ht.optim.DataParallelOptimizer, ("sgd",), {}),
            (
                TypeError,
                ht.optim.DataParallelOptimizer,
                (torch.optim.SGD(net.parameters(), lr=1),),
                {"blocking": None},
            ),
        ]
    )


# a model that differs on the last process; before the check, a different count of parameters
# hung in the first broadcast and a different shape aborted the job inside torch (no exception)
MISMATCHES = {
    "shape": (
        lambda net: setattr(net, "extra", torch.nn.Linear(5, 3)),
        "parameter 'extra.weight' is float32 (2, 5) on process",
        "but float32 (3, 5) on process",
    ),
    "count": (
        lambda net: net.body.append(torch.nn.Linear(2, 2)),
        "parameter 'body.3.weight' is missing on process",
        "but float32 (2, 2) on process",
    ),
    "dtype": (
        lambda net: net.extra.double(),
        "parameter 'extra.weight' is float32 (2, 5) on process",
        "but float64 (2, 5) on process",
    ),
    "frozen": (
        lambda net: net.extra.bias.requires_grad_(False),
        "parameter 'extra.bias' is float32 (2,) on process",
        "but float32 (2,) (requires_grad=False) on process",
    ),
    "buffer": (
        lambda net: net.register_buffer("scale", torch.ones(3)),
        "buffer 'scale' is missing on process",
        "but float32 (3,) on process",
    ),
}


@pytest.mark.parametrize("wrapper", ["DataParallel", "DataParallelMultiGPU"])
@pytest.mark.parametrize("kind", list(MISMATCHES))
def test_models_that_differ_between_processes_raise_everywhere(kind, wrapper):
    change, first, second = MISMATCHES[kind]
    odd = SIZE - 1  # the process whose model differs
    net = TwoBranches(seed=0)
    if RANK == odd and SIZE > 1:
        change(net)

    def wrap():
        if wrapper == "DataParallel":
            return ht.nn.DataParallel(net)
        daso = ht.optim.DASO(torch.optim.SGD(net.parameters(), lr=0.1), total_epochs=8)
        return ht.nn.DataParallelMultiGPU(net, daso)

    if SIZE == 1:
        collective_assert(wrap().module is net, "one process: nothing to disagree with")
        return
    message = raised_message(ValueError, wrap)
    others = "processes 0" if SIZE > 2 else "process 0"
    ok = message is not None and "differ between processes" in message
    ok = ok and first in message and second in message
    ok = ok and f"{second} {odd}" in message and others in message
    collective_assert(ok, f"rank {RANK}: {message}")
    collective_assert(WORLD.allreduce(1) == SIZE, "collectives work after the error")


def test_arguments_that_differ_between_processes_raise_everywhere():
    net = TwoBranches(seed=0)
    message = raised_message(
        ValueError, ht.nn.DataParallel, net, bucket_size_mb=1 + (RANK == SIZE - 1)
    )
    if SIZE == 1:
        collective_assert(message is None, str(message))
    else:
        expected = f"bucket_size_mb is 1.0 on process{'es' if SIZE > 2 else ''} 0"
        ok = (
            message is not None
            and expected in message
            and f"but 2.0 on process {SIZE - 1}" in message
        )
        collective_assert(ok, f"rank {RANK}: {message}")
    ht.nn.DataParallel(net, bucket_size_mb=1 if RANK == 0 else 1.0)  # the same size, written apart
    # an argument that is bad on one process only: that process's error, on every process
    compression = torch.int8 if RANK == SIZE - 1 else None
    assert_one_process_error_everywhere(
        ValueError, "compression must be", ht.nn.DataParallel, net, compression=compression
    )
