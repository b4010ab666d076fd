"""
Unit tests of heat/optim/gradients.py's GradientReducer with a recording stand-in for the
collective (no communication): bucket order and sizes, buckets started during the backward pass
(overlapped) or only after it (blocking), no_sync, the values written back, the errors. The same on
every process, so they run under any process count. And the node's shared-memory average, whose
thread averages buckets during the backward pass.
"""

import os
from types import SimpleNamespace

import pytest
import torch

import heat as ht
from heat.core.communication.node_groups import NodeGroups
from heat.optim.gradients import (
    GradientReducer,
    Reduction,
    SharedMemoryAverage,
    bucket_bytes,
    node_average,
    shared_memory_average,
)
from tests.helpers import collective_assert


class Recording(Reduction):
    """Scales every bucket by ``factor`` and records when each bucket started: while the
    backward pass still ran (from a gradient hook), or in the reducer's end-of-backward step."""

    def __init__(self, factor=0.5):
        super().__init__()
        self.factor = factor
        self.events = []  # ("start", bucket numel, during backward?) and ("finish", count)
        self.finishing = False

    def start(self, bucket):
        self.events.append(("start", bucket.numel(), not self.finishing))
        return bucket

    def finish_all(self, handles):
        self.events.append(("finish", len(handles)))
        for bucket in handles:
            bucket.mul_(self.factor)


def watched(reducer, reduction):
    """Let ``reduction`` know when ``reducer``'s end-of-backward step runs."""
    end_of_backward = reducer._finish

    def finish():
        reduction.finishing = True
        try:
            end_of_backward()
        finally:
            reduction.finishing = False

    reducer._finish = finish  # queued from the first gradient hook of every backward pass
    return reducer


def net():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8), torch.nn.ReLU(),
        torch.nn.Linear(8, 2),
    )  # fmt: skip


def run(model, reduction, x):
    model(x).sum().backward()


def test_buckets_in_reverse_registration_order_and_capacity():
    model = net()
    reduction = Recording()
    # room for 50 float32 per bucket: the last layer's 18 values and the middle layer's 72 apart
    reducer = GradientReducer(model.parameters(), reduction, bucket_bytes=200)
    sizes = [sum(p.numel() for p in bucket) for bucket in reducer.buckets]
    order = [p for bucket in reducer.buckets for p in bucket]
    assert order == list(reversed(list(model.parameters())))  # backward produces late layers first
    assert all(size <= 50 or len(bucket) == 1 for size, bucket in zip(sizes, reducer.buckets))
    assert sum(sizes) == sum(p.numel() for p in model.parameters())


def test_overlapped_buckets_start_during_backward_blocking_after():
    x = torch.randn(3, 4)
    for blocking in (False, True):
        model = net()
        reduction = Recording()
        reducer = watched(
            GradientReducer(model.parameters(), reduction, bucket_bytes=200, blocking=blocking),
            reduction,
        )
        run(model, reduction, x)
        starts = [e for e in reduction.events if e[0] == "start"]
        assert len(starts) == len(reducer.buckets)
        assert [e[1] for e in starts] == [layout.numel for layout in reducer.layouts]  # in order
        assert reduction.events[-1] == ("finish", len(reducer.buckets))
        during = [e[2] for e in starts]
        if blocking:
            assert not any(during)  # nothing started before the backward pass ended
        else:
            assert during[0]  # the last layer's bucket started while backward still ran


def test_values_written_back_and_no_sync_accumulates_locally():
    x = torch.randn(3, 4)
    plain = net()
    plain(x).sum().backward()
    expected = [p.grad.clone() * 0.5 for p in plain.parameters()]
    model = net()
    reduction = Recording(factor=0.5)
    reducer = GradientReducer(model.parameters(), reduction, bucket_bytes=200)
    run(model, reduction, x)
    assert all(torch.allclose(p.grad, e) for p, e in zip(model.parameters(), expected))
    # inside no_sync: no collective, gradients accumulate as torch's
    before = len(reduction.events)
    with reducer.no_sync():
        model(x).sum().backward()
    assert len(reduction.events) == before
    assert all(torch.allclose(p.grad, e + e / 0.5) for p, e in zip(model.parameters(), expected))
    # the next synchronized backward averages what accumulated
    reducer.synchronize()
    assert reduction.events[-1][0] == "finish"


def test_unused_parameter_gets_zeros_a_reused_layer_and_remove():
    model = net()
    unused = torch.nn.Parameter(torch.ones(3))
    parameters = list(model.parameters()) + [unused]
    reduction = Recording()
    GradientReducer(parameters, reduction, bucket_bytes=1 << 20)
    run(model, reduction, torch.randn(2, 4))
    assert unused.grad is not None and torch.equal(unused.grad, torch.zeros(3))
    # a layer used twice in one graph: autograd accumulates both uses before the hook fires once
    shared = torch.nn.Linear(2, 2)
    reduction = Recording(factor=1.0)
    reducer = GradientReducer(shared.parameters(), reduction, bucket_bytes=1 << 20)
    x = torch.randn(1, 2)
    (shared(x) + shared(x)).sum().backward()
    assert torch.allclose(shared.bias.grad, torch.full((2,), 2.0))
    reducer.remove()  # no hooks: the next backward is plain torch
    shared.zero_grad()
    shared(x).sum().backward()
    assert reduction.events.count(("finish", 1)) == 1


def test_bucket_bytes_checks():
    assert bucket_bytes(1) == 2**20 and bucket_bytes(0.5) == 2**19
    with pytest.raises(TypeError, match="bucket_size_mb"):
        bucket_bytes("25")
    with pytest.raises(ValueError, match="bucket_size_mb"):
        bucket_bytes(0)


@pytest.mark.parametrize("ranks_per_node", [None, 2])
def test_node_average_in_the_background_equals_the_end_of_backward_sum(
    emulate_nodes, ranks_per_node
):
    """node_average's shared-memory path averages each bucket in a thread as it starts during
    the backward pass; the gradients have the bits of the path that sums every bucket after the
    backward pass, on every process of the node."""
    emulate_nodes(ranks_per_node)
    groups = NodeGroups(ht.MPI_WORLD)
    models = [net().double(), net().double()]
    overlapped = node_average(groups, list(models[0].parameters()), background=True)
    at_the_end = shared_memory_average(groups, list(models[1].parameters()))
    ok, message = True, ""
    if groups.local_size > 1 and at_the_end is not None:
        ok = isinstance(overlapped, SharedMemoryAverage) and overlapped.background is not None
        message = f"node_average gave {overlapped!r} without a background thread"
        phase, during_backward = SimpleNamespace(finishing=False), []
        submit = overlapped.background.submit

        def recording_submit(*args):
            during_backward.append(not phase.finishing)
            submit(*args)

        overlapped.background.submit = recording_submit
        watched(GradientReducer(models[0].parameters(), overlapped, bucket_bytes=320), phase)
        GradientReducer(models[1].parameters(), at_the_end, bucket_bytes=320)
        for step in range(2):
            seed = torch.Generator().manual_seed(10 * step + groups.comm.rank)
            x = torch.randn(5, 4, generator=seed, dtype=torch.float64)
            for model in models:
                model.zero_grad()
                run(model, None, x)
            for (name, a), b in zip(models[0].named_parameters(), models[1].parameters()):
                if not torch.equal(a.grad, b.grad):
                    ok, message = False, f"step {step}: {name}'s gradients differ"
        if ok and not any(during_backward):
            ok, message = False, f"no bucket was averaged during backward: {during_backward}"
    collective_assert(ok, message)


@pytest.mark.parametrize("ranks_per_node", [None, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_node_average_packs_gradients_into_the_nodes_slot(emulate_nodes, ranks_per_node, dtype):
    """The shared-memory path packs each bucket straight into this process's slot of the node's
    segment (no copy into it when the bucket starts) and writes the scaled node sum back into
    the gradients: the node mates' gradients summed in rank order, times 1 / node size, bit for
    bit, over rounds that reuse the segment."""
    emulate_nodes(ranks_per_node)
    groups = NodeGroups(ht.MPI_WORLD)
    node = groups.topology.node_comm
    model, alone = net().to(dtype), net().to(dtype)
    reduction = node_average(groups, list(model.parameters()))
    if not isinstance(reduction, SharedMemoryAverage):
        # only a node of one process, or shared memory turned off, takes another path
        off = os.environ.get("HEAT_NODE_SHARED_MEMORY", "1").strip() == "0"
        collective_assert(groups.local_size == 1 or off, f"{reduction!r} on a shared node")
        return
    reducer = GradientReducer(model.parameters(), reduction, bucket_bytes=200)
    ok, message = True, ""
    for flat in reducer.flats:
        summer = reduction.summers[flat.dtype]
        offset = reduction._offsets[id(flat)]
        if flat.data_ptr() != summer.slot(offset, flat.numel()).data_ptr():
            ok, message = False, f"bucket at {offset} is not a piece of the slot"
    for step in range(3):
        seed = torch.Generator().manual_seed(10 * step + groups.comm.rank)
        x = torch.randn(3 + groups.comm.rank, 4, generator=seed, dtype=dtype)
        for one in (model, alone):
            one.zero_grad(set_to_none=step == 1)  # a round with fresh gradient tensors
            run(one, None, x)
        mates = node.allgather([p.grad for p in alone.parameters()])
        for k, (name, p) in enumerate(model.named_parameters()):
            expected = mates[0][k].clone()
            for other in mates[1:]:
                expected += other[k]
            expected = torch.mul(expected, 1.0 / node.size)
            if not torch.equal(p.grad, expected):
                ok, message = False, f"step {step}: {name}: {p.grad.flatten()[:3]} != {expected}"
    collective_assert(ok, f"rank {groups.comm.rank}: {message}")
