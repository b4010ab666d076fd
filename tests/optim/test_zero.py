"""
Tests of heat/optim/zero.py and zero_checkpoint.py under 1-4 processes: ZeRO stages 1-3 train
exactly like one process with plain torch Adam on the whole batch (float64, 20 steps, parameter
counts that no process count divides); the optimizer-state and stage-3 parameter memory per
process, counted; sharded checkpoints loaded on another number of processes; composition with
DataParallel and sub-communicators; errors raised alike everywhere. Tiny models, one thread.
"""

import pytest
import torch

import heat as ht
from heat.optim import zero_checkpoint
from heat.optim.zero import shard_bounds
from tests.helpers import collective_assert

WORLD = ht.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size
F64 = torch.float64
TOLERANCE = 1e-5  # float64: the differences measured are ~1e-16
BATCH = 12  # divisible by 1, 2, 3 and 4: the mean of the processes' means is the batch mean
mse = torch.nn.functional.mse_loss


def seeded_model(widths=(5, 7, 4, 3), seed=0):
    """An MLP of float64 Linear layers (5-7-4-3: 89 parameters, divisible by none of 2, 3, 4)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        layers = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [torch.nn.Linear(a, b).double(), torch.nn.Tanh()]
        return torch.nn.Sequential(*layers[:-1])


def batch(widths=(5, 7, 4, 3), seed=1):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(BATCH, widths[0], dtype=F64, generator=generator)
    return x, torch.randn(BATCH, widths[-1], dtype=F64, generator=generator)


def own_rows(comm):
    rows = BATCH // comm.size
    return slice(comm.rank * rows, (comm.rank + 1) * rows)


def train_reference(model, steps, lr=1e-2, data=None, optimizer=None):
    """Plain torch Adam on the whole batch, one process."""
    x, y = data or batch()
    optimizer = optimizer or torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        mse(model(x), y).backward()
        optimizer.step()
    return optimizer


def train_sharded(model, optimizer, steps, comm=WORLD, data=None):
    x, y = data or batch()
    part = own_rows(comm)
    for _ in range(steps):
        optimizer.zero_grad()
        mse(model(x[part]), y[part]).backward()
        optimizer.step()


def max_difference(model, reference, optimizer):
    with optimizer.gathered_parameters():
        return max(
            (a.detach() - b.detach()).abs().max().item()
            for a, b in zip(model.parameters(), reference.parameters())
        )


def zero(model, stage, comm=WORLD, **kwargs):
    kwargs.setdefault("lr", 1e-2)
    params = model if stage == 3 else model.parameters()
    return ht.optim.ZeroRedundancyOptimizer(
        params, torch.optim.Adam, stage=stage, comm=comm, **kwargs
    )


def test_shard_bounds():
    for numel in range(0, 12):
        for processes in range(1, 6):
            counts, offsets = shard_bounds(numel, processes)
            assert sum(counts) == numel and max(counts) - min(counts) <= 1
            assert list(offsets) == [sum(counts[:r]) for r in range(processes)]
            assert list(counts) == sorted(counts, reverse=True)


@pytest.mark.parametrize("stage", [1, 2, 3])
def test_stages_train_like_one_process(stage):
    model, reference = seeded_model(), seeded_model()
    # small buckets in stages 1, 2: several per model, cut at uneven places
    optimizer = zero(model, stage, bucket_size_mb=300 / 2**20)
    collective_assert(stage == 3 or len(optimizer.buckets) > 1, "one bucket only")
    train_sharded(model, optimizer, 19)
    x, y = batch()
    optimizer.zero_grad()
    mse(model(x[own_rows(WORLD)]), y[own_rows(WORLD)]).backward()
    # the full gradients exist once: stage 1 views of the buckets' vectors, later stages none
    if stage == 1:
        vectors = {b.grad_buffer.data_ptr() for b in optimizer.buckets}
        held = all(p.grad.untyped_storage().data_ptr() in vectors for p in model.parameters())
    else:
        held = all(p.grad is None for p in model.parameters())
    collective_assert(held, f"stage {stage}: gradients after backward")
    optimizer.step()
    plain = train_reference(reference, 20)
    difference = max_difference(model, reference, optimizer)
    collective_assert(difference <= TOLERANCE, f"stage {stage}: parameters differ by {difference}")
    # the collective state_dict is torch's: equal to plain Adam's, loadable into it
    full, expected = optimizer.state_dict(), plain.state_dict()
    worst = max(
        (full["state"][i][key] - expected["state"][i][key]).abs().max().item()
        for i in expected["state"]
        for key in ("exp_avg", "exp_avg_sq")
    )
    collective_assert(worst <= TOLERANCE, f"state differs by {worst}")
    torch.optim.Adam(seeded_model().parameters(), lr=1e-2).load_state_dict(full)


def test_stage2_parameter_groups_and_accumulation():
    """Two groups with their own learning rates; gradients of two backward passes per step."""
    model, reference = seeded_model(), seeded_model()

    def groups(m):
        return [
            {"params": list(m[0].parameters()), "lr": 3e-2},
            {"params": list(m[2].parameters()) + list(m[4].parameters())},
        ]

    optimizer = ht.optim.ZeroRedundancyOptimizer(groups(model), torch.optim.Adam, stage=2, lr=1e-2)
    plain = torch.optim.Adam(groups(reference), lr=1e-2)
    x, y = batch()
    part = own_rows(WORLD)
    rows = part.stop - part.start
    pieces = [slice(part.start, part.start + rows // 2), slice(part.start + rows // 2, part.stop)]
    for _ in range(5):
        optimizer.zero_grad()
        for piece in pieces:  # two backward passes, each weighted by its share of the rows
            share = (piece.stop - piece.start) / rows
            if share > 0:
                (share * mse(model(x[piece]), y[piece])).backward()
        optimizer.step()
        plain.zero_grad()
        mse(reference(x), y).backward()
        plain.step()
    difference = max_difference(model, reference, optimizer)
    collective_assert(difference <= TOLERANCE, f"parameters differ by {difference}")


def test_stage1_behind_data_parallel():
    """DataParallel averages the gradients; the optimizer only shards the state."""
    model, reference = seeded_model(), seeded_model()
    parallel = ht.nn.DataParallel(model, blocking_parameter_updates=True)
    optimizer = zero(model, 1, average_gradients=False)
    train_sharded(parallel, optimizer, 20)
    train_reference(reference, 20)
    difference = max_difference(model, reference, optimizer)
    collective_assert(difference <= TOLERANCE, f"parameters differ by {difference}")


@pytest.mark.parametrize("stage", [2, 3])
def test_sub_communicator(stage):
    """Each half of the processes trains its own model on its own batch (e.g. one node each)."""
    color = RANK % 2 if SIZE > 1 else 0
    comm = WORLD.Split(color, key=RANK)
    try:
        model, reference = seeded_model(seed=color), seeded_model(seed=color)
        data = batch(seed=10 + color)
        optimizer = zero(model, stage, comm=comm)
        train_sharded(model, optimizer, 20, comm=comm, data=data)
        train_reference(reference, 20, data=data)
        difference = max_difference(model, reference, optimizer)
    finally:
        comm.Free()
    collective_assert(difference <= TOLERANCE, f"parameters differ by {difference}")


def state_bytes(optimizer):
    return sum(
        v.numel() * v.element_size()
        for state in optimizer.state.values()
        for v in state.values()
        if torch.is_tensor(v)
    )


@pytest.mark.parametrize("stage", [1, 2, 3])
def test_optimizer_state_is_sharded(stage):
    widths = (20, 31, 17, 5)  # 1,285 parameters
    model, reference = seeded_model(widths), seeded_model(widths)
    optimizer = zero(model, stage)
    train_sharded(model, optimizer, 1, data=batch(widths))
    total = state_bytes(train_reference(reference, 1, data=batch(widths)))
    mine = state_bytes(optimizer.optimizer)
    collective_assert(mine == optimizer.optimizer_state_bytes(), "optimizer_state_bytes")
    share = total / SIZE
    collective_assert(
        abs(mine - share) <= 0.1 * share, f"{mine} bytes of state, 1/{SIZE} of {total} is {share}"
    )


class ParameterBytes:
    """
    Counts the parameter bytes a process holds -- its blocks plus every full parameter storage
    that is allocated -- whenever a module starts its forward or its backward (after the
    optimizer's own hooks gathered, and prefetched, what it needs).
    """

    def __init__(self, model, optimizer):
        self.model, self.optimizer, self.peak = model, optimizer, 0
        for module in model.modules():
            module.register_forward_pre_hook(lambda *_: self.sample())
            module.register_forward_hook(self.hook_output)

    def hook_output(self, module, args, output):
        if output.requires_grad:
            output.register_hook(lambda grad: self.sample())

    def sample(self):
        storages = {
            p.untyped_storage().data_ptr(): p.untyped_storage().nbytes()
            for p in self.model.parameters()
        }
        blocks = sum(b.shard.numel() * b.shard.element_size() for b in self.optimizer.buckets)
        self.peak = max(self.peak, blocks + sum(storages.values()))


@pytest.mark.parametrize("prefetch", [False, True])
def test_stage3_parameter_memory(prefetch):
    widths = (9, 13, 11, 12, 7, 3)  # five layers of 130, 154, 143, 91, 24 parameters
    model, reference = seeded_model(widths), seeded_model(widths)
    optimizer = zero(model, 3, prefetch=prefetch)
    counter = ParameterBytes(model, optimizer)
    train_sharded(model, optimizer, 3, data=batch(widths))
    train_reference(reference, 3, data=batch(widths))
    layers = [b.nbytes for b in optimizer.buckets]
    blocks = sum(-(-b.numel // SIZE) * b.flat.element_size() for b in optimizer.buckets)
    if prefetch:  # the module computing and the next one arriving
        extra = max(a + b for a, b in zip(layers, layers[1:]))
    else:
        extra = max(layers)
    bound = blocks + extra  # 1/N of the model (rounded up per layer) + the largest layer(s)
    ok = counter.peak <= bound and counter.peak > blocks
    ok = ok and optimizer.peak_materialized_bytes <= extra and optimizer.materialized_bytes == 0
    collective_assert(ok, f"peak {counter.peak} / {optimizer.peak_materialized_bytes}, {bound}")
    difference = max_difference(model, reference, optimizer)
    collective_assert(difference <= TOLERANCE, f"parameters differ by {difference}")


def shared_directory(tmp_path):
    return WORLD.bcast(str(tmp_path) if RANK == 0 else None, root=0)


@pytest.mark.parametrize("stage", [1, 3])
def test_checkpoint_loads_on_fewer_processes(stage, tmp_path):
    """Saved by all processes, loaded by 2 (and the rest), training goes on identically."""
    directory = shared_directory(tmp_path)
    model, reference = seeded_model(), seeded_model()
    optimizer = zero(model, stage)
    train_sharded(model, optimizer, 10)
    plain = train_reference(reference, 10)
    optimizer.save_sharded(directory)
    manifest = zero_checkpoint._read_manifest(directory)
    collective_assert(manifest["world_size"] == SIZE and manifest["stage"] == stage, "manifest")
    # 4 -> 2 + 2, 3 -> 2 + 1, 2 -> 1 + 1, 1 -> 1
    color = 0 if RANK < max(SIZE - 2, 1) else 1
    comm = WORLD.Split(color, key=RANK)
    try:
        restored = seeded_model(seed=5)  # other values: the checkpoint must bring them back
        again = zero(restored, stage, comm=comm)
        again.load_sharded(directory)
        train_sharded(restored, again, 5, comm=comm)
        train_reference(reference, 5, optimizer=plain)
        difference = max_difference(restored, reference, again)
    finally:
        comm.Free()
    collective_assert(difference <= TOLERANCE, f"parameters differ by {difference}")


def test_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    directory = shared_directory(tmp_path)
    model = seeded_model()
    optimizer = zero(model, 2)
    train_sharded(model, optimizer, 3)
    optimizer.save_sharded(directory)
    saved = [p.detach().clone() for p in model.parameters()]
    train_sharded(model, optimizer, 3)

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(zero_checkpoint, "_publish_manifest", fail)
    message = None
    try:
        optimizer.save_sharded(directory)
    except OSError as error:
        message = str(error)
    collective_assert(message is not None and "disk full" in message, f"{message}")
    optimizer.load_sharded(directory)  # the first checkpoint, whole
    same = all(torch.equal(a, b) for a, b in zip(model.parameters(), saved))
    collective_assert(same, "the interrupted save changed the previous checkpoint")


def raises_everywhere(exception, fragment, function):
    message = None
    try:
        function()
    except exception as error:
        message = str(error)
    messages = WORLD.allgather(message)
    collective_assert(
        all(m is not None and m == messages[0] and fragment in m for m in messages),
        f"not one {exception.__name__} with {fragment!r} everywhere: {messages}",
    )


def test_bad_input_raises_everywhere(tmp_path):
    model = seeded_model()
    Zero = ht.optim.ZeroRedundancyOptimizer
    raises_everywhere(ValueError, "stage must be 1, 2 or 3", lambda: zero(model, 4))
    raises_everywhere(
        TypeError, "optimizer_class", lambda: Zero(model.parameters(), torch.nn.Linear)
    )
    raises_everywhere(TypeError, "optimizer_class", lambda: Zero(model.parameters(), "adam"))
    raises_everywhere(
        TypeError, "torch.nn.Module", lambda: Zero(model.parameters(), torch.optim.Adam, stage=3)
    )
    raises_everywhere(ValueError, "Invalid learning rate", lambda: zero(model, 1, lr=-1.0))
    raises_everywhere(
        ValueError, "average_gradients", lambda: zero(model, 2, average_gradients=False)
    )
    if SIZE > 1:  # bad on the last process only
        lr = 0.1 if RANK == SIZE - 1 else 0.01
        raises_everywhere(ValueError, "'lr' is 0.01 on", lambda: zero(model, 1, lr=lr))
        widths = (5, 7, 4, 2) if RANK == SIZE - 1 else (5, 7, 4, 3)
        raises_everywhere(ValueError, "parameter 4.weight", lambda: zero(seeded_model(widths), 3))
    raises_everywhere(
        FileNotFoundError,
        "manifest",
        lambda: zero(model, 1).load_sharded(shared_directory(tmp_path)),
    )
    zero(model, 1).save_sharded(shared_directory(tmp_path))
    other = ht.optim.ZeroRedundancyOptimizer(model.parameters(), torch.optim.SGD, lr=0.1)
    raises_everywhere(
        ValueError, "holds the state of", lambda: other.load_sharded(shared_directory(tmp_path))
    )
    # the next collective works
    collective_assert(WORLD.allreduce(1) == SIZE, "allreduce after the errors")


def test_node_local_sharding_under_daso(emulate_nodes):
    """
    ZeRO stage 1 on each node's processes as DASO's local optimizer (its node average gives the
    gradients, its cross-node averaging the parameters): the same training as DASO around plain
    SGD, with the momentum sharded over each node's processes.
    """
    emulate_nodes(2)  # 4 processes: 2 nodes of 2; 3 processes: nodes of 2 and 1
    x, y = batch(seed=100 + RANK)
    results, state = [], []
    for sharded in (False, True):
        net = seeded_model(seed=RANK)  # different everywhere: the start is rank 0's
        node_comm = WORLD.node_topology().node_comm
        options = dict(lr=0.05, momentum=0.9)
        if sharded:
            local = ht.optim.ZeroRedundancyOptimizer(
                net.parameters(),
                torch.optim.SGD,
                comm=node_comm,
                average_gradients=False,
                **options,
            )
        else:
            local = torch.optim.SGD(net.parameters(), **options)
        daso = ht.optim.DASO(local, total_epochs=2, warmup_epochs=0, cooldown_epochs=1,
                             max_global_skips=2, stability_level=0.5)  # fmt: skip
        model = ht.nn.DataParallelMultiGPU(net, daso)
        daso.last_batch = 3
        for _ in range(2):
            loss = None
            for rows in (slice(0, 4), slice(4, 8), slice(8, 12)):
                daso.zero_grad()
                loss = mse(model(x[rows]), y[rows])
                loss.backward()
                daso.step()
            daso.epoch_loss_logic(loss)
        results.append(torch.cat([p.detach().reshape(-1) for p in net.parameters()]))
        state.append(state_bytes(local.optimizer if sharded else local))
    difference = (results[0] - results[1]).abs().max().item()
    everywhere = WORLD.allgather(results[1])
    ok = difference <= TOLERANCE and all(torch.equal(everywhere[0], e) for e in everywhere)
    share = state[0] / node_comm.size
    ok = ok and abs(state[1] - share) <= 0.1 * share
    collective_assert(ok, f"difference {difference}, state {state[1]} of {state[0]}")


def _state_difference(state, expected):
    """The largest difference between two optimizer states in torch's format."""
    return max(
        (
            (value - expected["state"][index][key]).abs().max().item()
            for index, entry in state["state"].items()
            for key, value in entry.items()
            if torch.is_tensor(value) and value.dim() > 0
        ),
        default=0.0,
    ) + float(len(state["state"]) != len(expected["state"]))


@pytest.mark.timeout(60)  # before the fix: rank 0 alone asked for the collective state_dict
@pytest.mark.parametrize("wrapper", ["DataParallel", "DataParallelMultiGPU"])
def test_wrapping_an_optimizer_with_state_does_not_hang(wrapper, emulate_nodes):
    """
    A ZeroRedundancyOptimizer that has already stepped has a collective ``state_dict``; the
    data-parallel modules share rank 0's optimizer state at construction, so every process must
    take part. Afterwards every process holds rank 0's state (under DASO: node 0's, also on the
    other nodes, whose own steps differed).
    """
    emulate_nodes(2)  # 3 processes: nodes of 2 and 1; 4: two nodes of 2
    node_comm = WORLD.node_topology().node_comm
    comm = WORLD if wrapper == "DataParallel" else node_comm
    net = seeded_model()
    optimizer = ht.optim.ZeroRedundancyOptimizer(
        net.parameters(), torch.optim.SGD, comm=comm, lr=0.05, momentum=0.9
    )
    x, y = batch(seed=100 + WORLD.rank)  # each process its own rows: nodes train apart
    for _ in range(2):
        optimizer.zero_grad()
        mse(net(x), y).backward()
        optimizer.step()
    expected = WORLD.bcast(optimizer.state_dict(), root=0)  # collective over comm, everywhere
    if wrapper == "DataParallel":
        ht.nn.DataParallel(net, optimizer=optimizer)
    else:
        daso = ht.optim.DASO(optimizer, total_epochs=2, warmup_epochs=0, cooldown_epochs=1)
        ht.nn.DataParallelMultiGPU(net, daso)
    difference = _state_difference(optimizer.state_dict(), expected)
    collective_assert(difference == 0.0, f"{wrapper}: the state differs by {difference}")
    collective_assert(WORLD.allreduce(1) == SIZE, "allreduce after the wrapping")


@pytest.mark.parametrize("stage", [1, 2, 3])
def test_release_parameters(stage):
    """After release: the trained parameters whole, and a backward on one process is local."""
    model, reference = seeded_model(), seeded_model()
    optimizer = zero(model, stage)
    train_sharded(model, optimizer, 3)
    train_reference(reference, 3)
    optimizer.release_parameters()
    difference = max(
        (a.detach() - b.detach()).abs().max().item()
        for a, b in zip(model.parameters(), reference.parameters())
    )
    collective_assert(difference <= TOLERANCE, f"stage {stage}: parameters differ by {difference}")
    model.zero_grad()
    if RANK == 0:  # no hook left that would start a collective
        x, y = batch()
        mse(model(x), y).backward()
    local = RANK != 0 or all(p.grad is not None for p in model.parameters())
    collective_assert(local, f"stage {stage}: gradients after backward")
