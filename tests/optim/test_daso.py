"""
Tests of heat/optim/daso.py with heat/nn's DataParallelMultiGPU, under 1-4 processes on emulated
nodes (HEAT_RANKS_PER_NODE; 3 processes with 2 per node give nodes of 2 and 1): parameters equal
inside a node after every batch and everywhere after every epoch, the blend against a hand
simulation, resume, accuracy against synchronous data parallelism, and bad configurations.
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


def small_net(seed):
    with torch.random.fork_rng():  # leave the global generator to the other tests
        torch.manual_seed(seed)
        return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))


def flat_parameters(module):
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def blobs(samples, seed):
    """Three Gaussian classes in 6 dimensions, the same centres for every seed."""
    centres = torch.tensor([[2.0, 0, 0, 1, 0, 0], [0, 2.0, 0, 0, 1, 0], [0, 0, 2.0, 0, 0, 1]])
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 3, (samples,), generator=generator)
    features = centres[labels] + torch.randn(samples, 6, generator=generator)
    return features, labels


class ListLoader:
    """A loader over fixed batches that remembers its position (for resume tests)."""

    def __init__(self, batches):
        self.batches = batches
        self.position = 0

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        while self.position < len(self.batches):
            self.position += 1
            yield self.batches[self.position - 1]
        self.position = 0

    def state_dict(self):
        return {"position": self.position}

    def load_state_dict(self, state):
        self.position = state["position"]


def train_epochs(model, daso, loader, epochs, stop_after=None, on_batch=None):
    """Train until ``epochs`` have ended, or return after batch ``stop_after=(epoch, batch)``."""
    loss = None
    while daso.epoch < epochs:
        for x, y in loader:
            daso.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            daso.step()
            if on_batch is not None:
                on_batch()
            if stop_after == (daso.epoch, daso.current_batch - 1):
                return loss
        daso.epoch_loss_logic(loss)
    return loss


@pytest.mark.parametrize("ranks_per_node", [None, 1, 2])
@pytest.mark.parametrize("epoch_length", ["last_batch", "loader", "learned"])
def test_parameters_equal_in_node_every_batch_and_everywhere_after_each_epoch(
    emulate_nodes, ranks_per_node, epoch_length
):
    emulate_nodes(ranks_per_node)
    net = small_net(seed=RANK)  # different on every process: the start must be rank 0's
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    daso = ht.optim.DASO(
        optimizer,
        total_epochs=4,
        warmup_epochs=1,
        cooldown_epochs=1,
        max_global_skips=4,
        local_skip_factor=2,
        sending_chunk_size=17,
        stability_level=0.5,
    )
    model = ht.nn.DataParallelMultiGPU(net, daso)
    x, y = blobs(36, seed=100 + RANK)
    loader = ListLoader([(x[i : i + 6], y[i : i + 6]) for i in range(0, 36, 6)])
    if epoch_length == "last_batch":
        daso.last_batch = len(loader)
    elif epoch_length == "loader":
        daso.attach_loader(loader)
    node_comm = daso.groups.topology.node_comm
    mismatches, epoch_ends, nodes_differed = [], [], [False]
    start = WORLD.allgather(flat_parameters(net))
    same_start = all(torch.equal(start[0], s) for s in start)

    def check_node():
        mine = flat_parameters(net)
        mates = node_comm.allgather(mine)
        if not all(torch.equal(mine, m) for m in mates):
            mismatches.append((daso.epoch, daso.current_batch))
        everyone = WORLD.allgather(mine)
        nodes_differed[0] |= not all(torch.equal(everyone[0], e) for e in everyone)

    while daso.epoch < 4:
        loss = None
        for xb, yb in loader:
            daso.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            daso.step()
            check_node()
        daso.epoch_loss_logic(loss)
        everyone = WORLD.allgather(flat_parameters(net))
        epoch_ends.append(all(torch.equal(everyone[0], e) for e in everyone))
    actions = {record.action for record in daso.timeline}
    num_nodes = daso.groups.num_nodes
    ok = same_start and not mismatches and all(epoch_ends)
    ok = ok and len(daso.timeline) == 24 and "blocking" in actions
    if num_nodes > 1:  # the cycling epochs really ran asynchronously, across the nodes
        ok = ok and nodes_differed[0] and "send" in actions
        ok = ok and daso.timeline.summary()["bytes_cross_node"] > 0
    collective_assert(ok, f"rank {RANK}: {same_start} {mismatches[:3]} {epoch_ends} {actions}")
    if epoch_length == "learned":
        collective_assert(daso.batches_per_epoch() == 6, "epoch length not learned")


def simulate(node_gradients, batches, global_skip, batches_to_wait, wire=torch.bfloat16):
    """DASO by hand for one epoch of SGD (lr 1): every node's parameters after every batch."""
    nodes = len(node_gradients)

    def node_sum(deltas):  # float32 sum of the wire values; over 3+ nodes it travels back packed
        total = deltas[0].float()
        for d in deltas[1:]:
            total = total + d.float()
        return total.to(wire).float() if nodes > 2 else total

    x = [torch.zeros_like(node_gradients[0]) for _ in range(nodes)]
    reference = torch.zeros_like(x[0])
    sent = None
    for t in range(batches):
        for k in range(nodes):
            x[k] = x[k] - node_gradients[k]
        last = t == batches - 1
        if nodes == 1:
            continue  # one node: nothing to average across nodes
        if sent is not None and (last or t % global_skip == 0 or t == sent[0] + batches_to_wait):
            sent_at, deltas = sent
            waited = t - sent_at
            reference = reference + node_sum(deltas) / nodes
            x = [
                (2 * waited * x[k] + nodes * reference) / (2 * waited + nodes) for k in range(nodes)
            ]
            sent = None
        if last:
            deltas = [(x[k] - reference).to(wire) for k in range(nodes)]
            reference = reference + node_sum(deltas) / nodes
            x = [reference.clone() for _ in range(nodes)]
        elif t % global_skip == 0:
            sent = (t, [(x[k] - reference).to(wire) for k in range(nodes)])
    return x


@pytest.mark.parametrize("ranks_per_node", [1, 2])
def test_blend_in_training_matches_hand_simulation(emulate_nodes, ranks_per_node):
    emulate_nodes(ranks_per_node)
    length = 13
    parameter = torch.nn.Parameter(torch.zeros(length))
    holder = torch.nn.Module()
    holder.weight = parameter
    optimizer = torch.optim.SGD([parameter], lr=1.0)
    daso = ht.optim.DASO(
        optimizer,
        total_epochs=1,
        warmup_epochs=0,
        cooldown_epochs=0,
        max_global_skips=4,
        local_skip_factor=2,
        sending_chunk_size=5,
    )
    ht.nn.DataParallelMultiGPU(holder, daso)
    groups = daso.groups
    daso.last_batch = 9
    shape = 1.0 + (torch.arange(length) % 4) * 0.5

    def gradient(node, local_rank):  # different on every process, exact in bfloat16
        return (node + 1) * shape + local_rank * 0.25

    mine = gradient(groups.node_index, groups.local_rank)
    for _ in range(9):
        daso.zero_grad()
        (parameter * mine).sum().backward()
        daso.step()
    node_gradients = [
        sum(gradient(k, j) for j in range(size)) / size for k, size in enumerate(groups.node_sizes)
    ]
    expected = simulate(node_gradients, 9, global_skip=4, batches_to_wait=2)[groups.node_index]
    got = parameter.detach()
    actions = [r.action for r in daso.timeline]
    plan = (
        ["send", "local", "receive", "local", "send", "local", "receive", "local", "blocking"]
        if groups.num_nodes > 1
        else ["local"] * 8 + ["blocking"]
    )
    ok = torch.allclose(got, expected, rtol=1e-6, atol=1e-6) and actions == plan
    collective_assert(ok, f"rank {RANK}: {got.tolist()} != {expected.tolist()} or {actions}")


def _resume_setup(seed):
    net = small_net(seed)
    optimizer = torch.optim.SGD(
        [
            {"params": net[0].parameters(), "lr": 0.05},
            {"params": net[2].parameters(), "lr": 0.02, "momentum": 0.5},
        ],
        momentum=0.9,
    )
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.9)
    daso = ht.optim.DASO(
        optimizer,
        total_epochs=3,
        warmup_epochs=1,
        cooldown_epochs=1,
        scheduler=scheduler,
        max_global_skips=4,
        local_skip_factor=2,
        sending_chunk_size=11,
    )
    model = ht.nn.DataParallelMultiGPU(net, daso)
    x, y = blobs(42, seed=7 + RANK)
    loader = ListLoader([(x[i : i + 6], y[i : i + 6]) for i in range(0, 42, 6)])
    daso.attach_loader(loader)
    return net, model, daso, loader


@pytest.mark.parametrize("ranks_per_node", [2])
def test_resume_reproduces_uninterrupted_run(emulate_nodes, ranks_per_node):
    emulate_nodes(ranks_per_node)
    net, model, daso, loader = _resume_setup(seed=0)
    train_epochs(model, daso, loader, epochs=3)
    uninterrupted = flat_parameters(net)

    net, model, daso, loader = _resume_setup(seed=0)
    # stop in the cycling epoch right after a send (batch 4 of 7): a synchronization in flight
    train_epochs(model, daso, loader, epochs=3, stop_after=(1, 4))
    in_flight = daso._in_flight is not None
    state = copy.deepcopy(daso.state_dict())
    del net, model, daso

    net, model, daso, loader = _resume_setup(seed=123)  # different start, overwritten by the state
    daso.load_state_dict(state)
    resumed_at = (daso.epoch, daso.current_batch, loader.position)
    train_epochs(model, daso, loader, epochs=3)
    resumed = flat_parameters(net)
    ok = torch.equal(resumed, uninterrupted) and resumed_at == (1, 5, 5)
    ok = ok and (in_flight or daso.groups.num_nodes == 1)
    collective_assert(
        ok,
        f"rank {RANK}: resumed at {resumed_at}, max diff {(resumed - uninterrupted).abs().max()}",
    )


def test_state_between_epochs_resumes_on_any_process():
    net, model, daso, loader = _resume_setup(seed=0)
    train_epochs(model, daso, loader, epochs=2)
    state = WORLD.bcast(daso.state_dict() if RANK == 0 else None)  # e.g. one file from rank 0
    net2, model2, daso2, loader2 = _resume_setup(seed=5)
    daso2.load_state_dict(state)
    ok = torch.equal(flat_parameters(net2), flat_parameters(net)) and daso2.epoch == 2
    collective_assert(ok, "state from rank 0 did not resume")


def test_accuracy_close_to_synchronous_data_parallel(emulate_nodes):
    emulate_nodes(2)
    x, y = blobs(120, seed=300 + RANK)
    batches = [(x[i : i + 12], y[i : i + 12]) for i in range(0, 120, 12)]
    test_x, test_y = blobs(600, seed=999)

    def accuracy(module):
        with torch.no_grad():
            return (module(test_x).argmax(1) == test_y).float().mean().item()

    net = small_net(seed=1)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    daso = ht.optim.DASO(
        optimizer, total_epochs=6, warmup_epochs=1, cooldown_epochs=1, max_global_skips=4
    )
    model = ht.nn.DataParallelMultiGPU(net, daso)
    train_epochs(model, daso, ListLoader(batches), epochs=6)
    daso_accuracy = accuracy(net)

    reference = small_net(seed=1)
    sync_optimizer = ht.optim.DataParallelOptimizer(
        torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    )
    sync_model = ht.nn.DataParallel(reference, optimizer=sync_optimizer)
    for _ in range(6):
        for xb, yb in batches:
            sync_optimizer.zero_grad()
            torch.nn.functional.cross_entropy(sync_model(xb), yb).backward()
            sync_optimizer.step()
    sync_accuracy = accuracy(reference)
    ok = sync_accuracy > 0.8 and daso_accuracy >= sync_accuracy - 0.03
    collective_assert(ok, f"DASO {daso_accuracy:.3f} vs synchronous {sync_accuracy:.3f}")


def test_seed_usage_defaults_schedulers_and_scaler():
    num_epochs = 8
    net = small_net(seed=3)
    optimizer = torch.optim.SGD(
        [{"params": net[0].parameters()}, {"params": net[2].parameters(), "lr": 0.01}], lr=0.1
    )
    daso = ht.optim.DASO(local_optimizer=optimizer, total_epochs=num_epochs)
    model = ht.nn.DataParallelMultiGPU(net, daso)
    before = [flat_parameters(net[0]), flat_parameters(net[2])]
    x, y = blobs(12, seed=RANK)
    for i in range(3):  # last_batch not set: learned from this epoch
        daso.zero_grad()
        torch.nn.functional.cross_entropy(
            model(x[4 * i : 4 * i + 4]), y[4 * i : 4 * i + 4]
        ).backward()
        daso.step()
    daso.epoch_loss_logic(torch.tensor(1.0))
    ok = daso.batches_per_epoch() == 3 and daso.epoch == 1 and daso.schedule.phase == "warmup"
    ok = ok and [r.action for r in daso.timeline] == ["blocking"] * 3
    ok = ok and not torch.equal(before[0], flat_parameters(net[0]))
    ok = ok and not torch.equal(before[1], flat_parameters(net[2]))

    # any scheduler instance: per batch, per epoch, and ReduceLROnPlateau with the averaged loss
    for scheduler_type, interval, expected_lr in (
        ("step", "batch", 0.1 * 0.5**2),
        ("step", "epoch", 0.1 * 0.5),
        ("plateau", "batch", 0.1 * 0.5),
    ):
        net = small_net(seed=3)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        if scheduler_type == "step":
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        else:
            scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
                optimizer, factor=0.5, patience=0
            )
        daso = ht.optim.DASO(
            optimizer,
            total_epochs=2,
            warmup_epochs=1,
            cooldown_epochs=1,
            scheduler=scheduler,
            scheduler_interval=interval,
        )
        model = ht.nn.DataParallelMultiGPU(net, daso)
        daso.last_batch = 2
        for loss_value in (1.0, 2.0) if scheduler_type == "plateau" else (1.0,):
            for _ in range(2):
                daso.zero_grad()
                torch.nn.functional.cross_entropy(model(x[:4]), y[:4]).backward()
                daso.step()
            daso.epoch_loss_logic(loss_value + RANK)  # averaged over processes inside
        lr = optimizer.param_groups[0]["lr"]
        ok = ok and abs(lr - expected_lr) < 1e-12

    # a gradient scaler steps the optimizer through itself
    net = small_net(seed=3)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    daso = ht.optim.DASO(optimizer, total_epochs=2, warmup_epochs=1, cooldown_epochs=1)
    model = ht.nn.DataParallelMultiGPU(net, daso)
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    daso.add_scaler(scaler)
    before = flat_parameters(net)
    daso.zero_grad()
    scaler.scale(torch.nn.functional.cross_entropy(model(x[:4]), y[:4])).backward()
    daso.step()
    everyone = WORLD.allgather(flat_parameters(net))
    ok = (
        ok
        and not torch.equal(before, everyone[0])
        and all(torch.equal(everyone[0], e) for e in everyone)
    )
    ok = ok and "scaler" in daso.state_dict() and daso.state_dict()["scaler"]["scale"] == 4.0
    collective_assert(
        ok, f"rank {RANK}: {daso.batches_per_epoch()} {[r.action for r in daso.timeline]}"
    )


def test_bad_configurations_raise_on_every_process():
    net = small_net(seed=0)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    other = torch.optim.SGD(small_net(seed=1).parameters(), lr=0.1)
    DASO = ht.optim.DASO
    expect_errors(
        [
            (TypeError, DASO, ("not an optimizer", 10), {}),
            (ValueError, DASO, (optimizer, 6), {}),  # 6 < 4 warm-up + 4 cool-down epochs
            (TypeError, DASO, (optimizer, 10.0), {}),
            (ValueError, DASO, (optimizer, 10), {"downcast_type": torch.int8}),
            (TypeError, DASO, (optimizer, 10), {"downcast_type": "bfloat16"}),
            (ValueError, DASO, (optimizer, 10), {"sending_chunk_size": 0}),
            (ValueError, DASO, (optimizer, 10), {"max_global_skips": 0}),
            (TypeError, DASO, (optimizer, 10), {"scheduler": "cosine"}),
            (
                ValueError,
                DASO,
                (optimizer, 10),
                {"scheduler": torch.optim.lr_scheduler.StepLR(other, 2)},
            ),
            (ValueError, DASO, (optimizer, 10), {"scheduler_interval": "step"}),
            (TypeError, DASO, (optimizer, 10), {"comm": "world"}),
            (TypeError, DASO, (optimizer, 10), {"verbose": 1}),
            (TypeError, ht.nn.DataParallelMultiGPU, (net, optimizer), {}),
        ]
    )
    daso = DASO(optimizer, total_epochs=10)
    expect_errors(
        [
            (RuntimeError, daso.step, (), {}),  # no model yet
            (TypeError, ht.nn.DataParallelMultiGPU, ("net", daso), {}),
            (TypeError, daso.add_scaler, (object(),), {}),
        ]
    )
    ht.nn.DataParallelMultiGPU(net, daso)
    expect_errors([(ValueError, daso.load_state_dict, ({"model": {}},), {})])
    if SIZE > 1:  # processes that took different numbers of steps are told so, all of them
        daso.current_batch = RANK
        expect_errors([(RuntimeError, daso.epoch_loss_logic, (1.0,), {})])
    collective_assert(WORLD.allreduce(1) == SIZE, "collectives work after the errors")


@pytest.mark.parametrize(
    "name, value",
    [
        ("total_epochs", 11),
        ("warmup_epochs", 3),
        ("max_global_skips", 4),
        ("stability_level", 0.1),
        ("downcast_type", torch.float16),
        ("bucket_size_mb", 2.0),
    ],
)
def test_arguments_that_differ_between_processes_raise_everywhere(name, value):
    # before the check, a process with another total_epochs entered the cool-down's blocking
    # averaging an epoch before the others and the job hung there
    net = small_net(seed=0)
    arguments = dict(
        total_epochs=10,
        warmup_epochs=4,
        max_global_skips=8,
        stability_level=0.05,
        downcast_type=torch.bfloat16,
        bucket_size_mb=1.0,
    )
    default = repr(arguments[name])
    if RANK == SIZE - 1:
        arguments[name] = value
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    message = raised_message(ValueError, ht.optim.DASO, optimizer, **arguments)
    if SIZE == 1:
        collective_assert(message is None, str(message))
        return
    expected = (
        f"DASO's arguments differ between processes: {name} is {default} on "
        f"process{'es' if SIZE > 2 else ''} 0"
    )
    ok = message is not None and expected in message
    ok = ok and f"but {value!r} on process {SIZE - 1}" in message
    collective_assert(ok, f"rank {RANK}: {message}")
    collective_assert(WORLD.allreduce(1) == SIZE, "collectives work after the error")


def test_argument_bad_on_one_process_raises_everywhere():
    net = small_net(seed=0)
    epochs = 6 if RANK == SIZE - 1 else 10  # 6 < 4 warm-up + 4 cool-down epochs
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    assert_one_process_error_everywhere(
        ValueError, "total_epochs (6)", ht.optim.DASO, optimizer, total_epochs=epochs
    )


def test_receive_runs_the_tested_blend(emulate_nodes, monkeypatch):
    """The blend DASO applies on a receive is heat.optim.averaging's (tested above by hand), with
    the number of batches the values waited; phases of the timeline say where time went."""
    import heat.optim.daso as daso_module

    emulate_nodes(1)
    calls = []
    real = daso_module.blend_average_

    def spy(local, average, num_nodes, batches_waited):
        calls.append((num_nodes, batches_waited))
        return real(local, average, num_nodes, batches_waited)

    monkeypatch.setattr(daso_module, "blend_average_", spy)
    parameter = torch.nn.Parameter(torch.zeros(6))
    holder = torch.nn.Module()
    holder.weight = parameter
    daso = ht.optim.DASO(
        torch.optim.SGD([parameter], lr=0.1),
        total_epochs=1,
        warmup_epochs=0,
        cooldown_epochs=0,
        max_global_skips=4,
    )
    ht.nn.DataParallelMultiGPU(holder, daso)
    daso.last_batch = 6
    for _ in range(6):
        daso.zero_grad()
        (parameter * (RANK + 1.0)).sum().backward()
        daso.step()
    records = list(daso.timeline)
    if SIZE == 1:
        assert calls == [] and all(r.action in ("local", "blocking") for r in records)
        return
    # a receive is its own action, or part of the blocking average that ends the epoch
    receives = [r for r in records if "receive" in r.phases]
    assert calls and len(calls) == len(receives), (calls, [r.action for r in records])
    assert all(nodes == SIZE and waited >= 1 for nodes, waited in calls)
    assert all("receive" in r.phases for r in records if "receive" in r.action)
    assert all("send" in r.phases for r in records if "send" in r.action)
    assert "blocking" in records[-1].phases
    phases = daso.timeline.summary()["phases"]
    assert set(phases) >= {"receive", "send", "blocking"} and all(v >= 0 for v in phases.values())
