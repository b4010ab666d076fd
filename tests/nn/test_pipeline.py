"""
Tests of heat/nn/pipeline.py (and its transport) under 1-4 processes: the synchronous schedules
train exactly like one process, PipeDream like its one-process emulation with stashed weights,
activations alive per schedule as measured, collective errors, state dicts, sub-communicators.
Tiny float64 models, so that 4 processes on 2 cores stay fast.
"""

from collections import OrderedDict

import pytest
import torch

import heat as ht
from tests.helpers import collective_assert

WORLD = ht.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size
F64 = torch.float64
mse = torch.nn.functional.mse_loss


def make_layers(seed=0):
    """Seven layers: uneven stages at 2, 3 and 4 processes; Tanh stages have no parameters."""
    widths = [3, 6, 5, 4, 2]
    layers = []
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        for k, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
            layers.append(torch.nn.Linear(a, b, dtype=F64))
            if k < len(widths) - 2:
                layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers)


def batches(count, size=12, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(size, 3, generator=generator, dtype=F64),
         torch.randn(size, 2, generator=generator, dtype=F64))
        for _ in range(count)
    ]  # fmt: skip


def train_both(pipe, reference, data, lr=1e-2):
    """Train ``pipe`` and, with Adam on whole batches, ``reference``; the losses of both."""
    optimizer = torch.optim.Adam(reference.parameters(), lr=lr)
    losses, expected = [], []
    for x, y in data:
        pipe.zero_grad()
        losses.append(pipe.train_step(x, y))
        pipe.step()
        optimizer.zero_grad()
        loss = mse(reference(x), y)
        loss.backward()
        optimizer.step()
        expected.append(loss.item())
    return losses, expected


def max_difference(state, reference):
    assert list(state) == list(reference), f"keys {list(state)} != {list(reference)}"
    return max((state[k] - reference[k]).abs().max().item() for k in reference)


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


# uneven explicit cuts: single-layer stages, a parameter-free stage at 3 and 4 processes
EXPLICIT = {1: [], 2: [5], 3: [1, 2], 4: [1, 2, 6]}
# PipeDream: a stage before the last whose gradients depend on its weights (not a lone Linear)
PIPEDREAM_CUTS = {1: [], 2: [5], 3: [3, 5], 4: [1, 2, 6]}


# ------------------------------------------------------------------------------------------------
# the synchronous schedules are one process's training
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize(
    "micro_batches,cut", [(4, "balanced"), (3, "explicit"), (1, "balanced"), (2, "profiled")]
)
def test_synchronous_schedules_train_like_one_process(schedule, micro_batches, cut):
    reference = make_layers()
    options = {"balanced": {}, "explicit": {"split_points": EXPLICIT[SIZE]},
               "profiled": {"sample_input": torch.randn(6, 3, dtype=F64)}}[cut]  # fmt: skip
    pipe = ht.nn.Pipeline(
        make_layers(), mse, torch.optim.Adam, {"lr": 1e-2},
        micro_batches=micro_batches, schedule=schedule, **options,
    )  # fmt: skip
    assert len(pipe.partition.stages) == SIZE
    assert pipe.stage_module is not None and list(pipe.partition.stages[RANK]) == [
        int(name) for name in pipe.stage_module._modules
    ]
    if cut == "profiled":
        assert pipe.profile is not None and len(pipe.profile) == 7
        assert pipe.partition.bottleneck_seconds is not None
    losses, expected = train_both(pipe, reference, batches(20))
    losses_ok = all(abs(a - b) < 1e-12 for a, b in zip(losses, expected))
    loss = losses[-1]
    state = pipe.state_dict(gather="all")
    difference = max_difference(state, reference.state_dict())
    collective_assert(difference < 1e-10, f"parameters differ by {difference}")
    collective_assert(losses_ok, "the losses differ from one process's")
    everyone = WORLD.allgather(loss)
    collective_assert(all(v == everyone[0] for v in everyone), f"losses {everyone}")
    # inference: the whole model's output on every process
    x = batches(1, seed=7)[0][0]
    output = pipe(x)
    collective_assert(torch.allclose(output, reference(x), atol=1e-12), "forward differs")


def test_a_stage_keeps_only_its_parameters():
    pipe = ht.nn.Pipeline(make_layers(), mse, torch.optim.SGD, {"lr": 0.1})
    mine = set(pipe.stage_module.state_dict())
    everyone = WORLD.allgather(mine)
    collective_assert(all(not (a & b) for i, a in enumerate(everyone) for b in everyone[i + 1 :]))
    collective_assert(set().union(*everyone) == set(make_layers().state_dict()))
    collective_assert(
        {id(p) for p in pipe.parameters()} == {id(p) for p in pipe.stage_module.parameters()}
    )
    own = pipe.state_dict(gather="stage")
    collective_assert(set(own) == mine)
    rooted = pipe.state_dict()
    collective_assert((rooted is None) == (RANK != 0))
    if RANK == 0:
        assert list(rooted) == list(make_layers().state_dict())
    # inside a larger module torch collects this stage's entries, without communication
    holder = torch.nn.ModuleDict({"pipe": pipe})
    collective_assert(set(holder.state_dict()) == {f"pipe.stage_module.{k}" for k in mine})
    with pytest.raises(ValueError, match="gather must be"):
        pipe.state_dict(gather="everyone")


def test_load_state_dict_takes_each_stage_its_part():
    source = make_layers(seed=5)
    pipe = ht.nn.Pipeline(make_layers(), mse, torch.optim.SGD, {"lr": 0.1}, micro_batches=2)
    pipe.load_state_dict(source.state_dict())
    difference = max_difference(pipe.state_dict(gather="all"), source.state_dict())
    collective_assert(difference == 0.0)
    broken = dict(source.state_dict())
    del broken["6.bias"]  # the last stage's: only it misses it, every process raises
    raises_everywhere(RuntimeError, "6.bias", pipe.load_state_dict, broken)


def test_a_boundary_without_gradient():
    """An integer activation crosses a cut: no gradient goes back, the result is still exact."""

    def layers():
        with torch.random.fork_rng():
            torch.manual_seed(3)
            return torch.nn.Sequential(
                torch.nn.Linear(3, 4, dtype=F64), _Positive(), torch.nn.Embedding(2, 3, dtype=F64),
                torch.nn.Flatten(), torch.nn.Linear(12, 2, dtype=F64),
            )  # fmt: skip

    points = {1: [], 2: [2], 3: [2, 3], 4: [2, 3, 4]}[SIZE]
    pipe = ht.nn.Pipeline(
        layers(), mse, torch.optim.Adam, {"lr": 1e-2}, micro_batches=3, split_points=points
    )
    reference = layers()
    train_both(pipe, reference, batches(5))
    difference = max_difference(pipe.state_dict(gather="all"), reference.state_dict())
    collective_assert(difference < 1e-12, f"parameters differ by {difference}")


class _Positive(torch.nn.Module):
    def forward(self, x):
        return (x > 0).long()


# ------------------------------------------------------------------------------------------------
# memory
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_live_activations_measured(schedule):
    """GPipe keeps every micro-batch's activations alive, 1F1B at most p - s on stage s."""
    m = 6
    pipe = ht.nn.Pipeline(
        make_layers(), mse, torch.optim.SGD, {"lr": 0.1},
        micro_batches=m, schedule=schedule, measure_activations=True,
    )  # fmt: skip
    for x, y in batches(2):
        pipe.train_step(x, y)
    expected = m if schedule == "gpipe" else min(SIZE - RANK, m)
    peak = pipe.peak_live_micro_batches
    collective_assert(peak == expected, f"stage {RANK}: {peak} micro-batches alive, not {expected}")
    collective_assert(pipe._counter.bytes == 0 and not pipe._counter.live, "activations leaked")
    bytes_peak = pipe.peak_activation_bytes
    collective_assert(bytes_peak > 0)
    pipe.reset_activation_peaks()
    collective_assert(pipe.peak_live_micro_batches == 0 and pipe.peak_activation_bytes == 0)
    if schedule == "1f1b":
        gpipe = ht.nn.Pipeline(
            make_layers(), mse, torch.optim.SGD, {"lr": 0.1},
            micro_batches=m, schedule="gpipe", measure_activations=True,
        )  # fmt: skip
        gpipe.train_step(*batches(1)[0])
        ratio = gpipe.peak_activation_bytes / bytes_peak
        collective_assert(abs(ratio - m / expected) < 1e-9, f"GPipe/1F1B bytes {ratio}")


def test_activation_checkpointing_recomputes_instead_of_keeping():
    m = 4
    plain, checkpointed = (
        ht.nn.Pipeline(
            make_layers(), mse, torch.optim.Adam, {"lr": 1e-2},
            micro_batches=m, schedule="gpipe", checkpoint=flag, measure_activations=True,
        )
        for flag in (False, True)
    )  # fmt: skip
    for x, y in batches(4):
        for pipe in (plain, checkpointed):
            pipe.zero_grad()
            pipe.train_step(x, y)
            pipe.step()
    difference = max_difference(
        checkpointed.state_dict(gather="all"), plain.state_dict(gather="all")
    )
    collective_assert(difference < 1e-12, f"checkpointing changed the result by {difference}")
    # only the stage's input is kept per micro-batch (all a single Linear keeps anyway)
    kept, full = checkpointed.peak_activation_bytes, plain.peak_activation_bytes
    less = kept < full if len(plain.stage_module) > 1 else kept == full
    collective_assert(less, f"checkpointed {kept} bytes, plain {full}")
    per_stage = [True] * SIZE
    per_stage[-1] = False
    ht.nn.Pipeline(make_layers(), mse, checkpoint=per_stage)  # one flag per stage is accepted


# ------------------------------------------------------------------------------------------------
# PipeDream
# ------------------------------------------------------------------------------------------------


def pipedream_reference(layers, split_points, data, m, lr, stash=True):
    """
    PipeDream in one process: the stages run the same actions in an order the simulator says is
    possible; each backward uses the weights its forward used (``stash``) or, without, the
    stage's current weights (recomputing the forward).
    """
    named = list(layers.named_children())
    bounds = [0, *split_points, len(named)]
    stages = [torch.nn.Sequential(OrderedDict(named[a:b])) for a, b in zip(bounds, bounds[1:])]
    p = len(stages)
    optimizers = [
        torch.optim.Adam(stage.parameters(), lr=lr) if list(stage.parameters()) else None
        for stage in stages
    ]
    segments = [
        ht.nn.pipeline_schedule("pipedream", p, m, start=k * m, drain=False)
        for k in range(len(data))
    ] + [ht.nn.pipeline_schedule("pipedream", p, 0, start=len(data) * m)]
    order = [sum((segment[s] for segment in segments), []) for s in range(p)]
    timeline = ht.nn.simulate_schedule(order, 1.0, 2.0).timeline
    events = sorted(
        (
            (start, s, k, action)
            for s in range(p)
            for k, (action, start, _) in enumerate(timeline[s])
        ),
        key=lambda event: event[:3],
    )
    saved, activations, gradients, losses = {}, {}, {}, {}
    for _, s, _, action in events:
        i = action.micro_batch
        x_all, y_all = data[i // m]
        size = len(x_all) // m
        rows = slice((i % m) * size, (i % m + 1) * size)
        if action.kind == "forward":
            x = x_all[rows] if s == 0 else activations.pop((s - 1, i)).detach().requires_grad_(True)
            weights = {
                n: q.detach().clone().requires_grad_(True) for n, q in stages[s].named_parameters()
            }
            out = torch.func.functional_call(stages[s], weights, (x,))
            if s == p - 1:
                out = mse(out, y_all[rows])
                losses[i] = out.item()
            else:
                activations[(s, i)] = out
            saved[(s, i)] = (x, out, weights)
        elif action.kind == "backward":
            x, out, weights = saved[(s, i)]
            if not stash:  # the current weights instead of the forward's
                weights = {
                    n: q.detach().clone().requires_grad_(True)
                    for n, q in stages[s].named_parameters()
                }
                out = torch.func.functional_call(stages[s], weights, (x,))
                out = mse(out, y_all[rows]) if s == p - 1 else out
                saved[(s, i)] = (x, out, weights)
            torch.autograd.backward(out, None if s == p - 1 else gradients.pop((s, i)))
            if s > 0:
                gradients[(s - 1, i)] = x.grad
        else:
            weights = saved.pop((s, i))[2]
            if optimizers[s] is not None:
                for n, q in stages[s].named_parameters():
                    q.grad = weights[n].grad
                optimizers[s].step()
    state = OrderedDict()
    for stage in stages:
        state.update(stage.state_dict())
    return state, [sum(losses[k * m + j] for j in range(m)) / m for k in range(len(data))]


@pytest.mark.parametrize("checkpoint", [False, True])
def test_pipedream_backward_uses_the_stashed_weights(checkpoint):
    m, lr = 4, 2e-2
    data = batches(6, size=8)
    pipe = ht.nn.Pipeline(
        make_layers(), mse, torch.optim.Adam, {"lr": lr}, micro_batches=m, schedule="pipedream",
        split_points=PIPEDREAM_CUTS[SIZE], trace=True, checkpoint=checkpoint,
    )  # fmt: skip
    losses = [pipe.train_step(x, y) for x, y in data]
    pipe.flush()
    state = pipe.state_dict(gather="all")
    expected, expected_losses = pipedream_reference(
        make_layers(), PIPEDREAM_CUTS[SIZE], data, m, lr
    )
    difference = max_difference(state, expected)
    collective_assert(difference < 1e-10, f"parameters differ from PipeDream's by {difference}")
    collective_assert(
        all(abs(a - b) < 1e-12 for a, b in zip(losses, expected_losses)),
        f"losses {losses} != {expected_losses}",
    )
    # the trace: every backward used its forward's weight version, updated after each backward;
    # on every stage but the last the weights had moved on in between (so stashing mattered)
    forward_version, updates, stale = {}, 0, 0
    ok = True
    for action, version, start, end in pipe.trace:
        ok &= end >= start
        if action.kind == "forward":
            forward_version[action.micro_batch] = version
            ok &= version == updates
        elif action.kind == "backward":
            ok &= version == forward_version[action.micro_batch]
            stale += version < updates
        else:
            updates += 1
            ok &= version == updates
    collective_assert(ok, "a backward used other weights than its forward")
    collective_assert(updates == len(data) * m, f"{updates} updates")
    collective_assert((stale > 0) == (RANK < SIZE - 1), f"stage {RANK}: {stale} stale backwards")
    if SIZE > 1 and not checkpoint:  # the check tells stashed from current weights
        unstashed, _ = pipedream_reference(
            make_layers(), PIPEDREAM_CUTS[SIZE], data, m, lr, stash=False
        )
        unstashed_difference = max_difference(state, unstashed)
        collective_assert(unstashed_difference > 1e-6, f"stashing changed {unstashed_difference}")


def test_pipedream_converges():
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(128, 3, generator=generator, dtype=F64)
    y = torch.stack([torch.sin(x[:, 0] * x[:, 1]), x[:, 2] ** 2], dim=1)
    pipe = ht.nn.Pipeline(
        make_layers(), mse, torch.optim.Adam, {"lr": 1e-2}, micro_batches=4, schedule="pipedream"
    )
    losses = []
    for epoch in range(12):
        losses.append(
            sum(pipe.train_step(x[k : k + 16], y[k : k + 16]) for k in range(0, 128, 16)) / 8
        )
    pipe.flush()
    pipe.step()  # does nothing under PipeDream
    final = mse(pipe(x), y).item()
    collective_assert(final < 0.35 * losses[0], f"loss {losses[0]} -> {final} ({losses})")
    # another batch shape mid-stream agrees on new shapes and goes on
    pipe.train_step(x[:8], y[:8])
    pipe.train_step(x[:16], y[:16])
    # without the broadcast only the last stage has the loss, and nobody waits for it
    loss = pipe.train_step(x[:16], y[:16], broadcast_loss=False)
    collective_assert((loss is None) == (RANK != SIZE - 1), f"stage {RANK} returned {loss}")
    pipe.flush()
    raises_everywhere(TypeError, "broadcast_loss must be a bool", pipe.train_step, x, y,
                      broadcast_loss="no")  # fmt: skip


def test_transport_sends_each_boundary_once_and_reuses_its_buffers():
    m, size = 4, 12
    pipe = ht.nn.Pipeline(
        make_layers(),
        mse,
        torch.optim.SGD,
        {"lr": 0.1},
        micro_batches=m,
        split_points=EXPLICIT[SIZE],
    )
    data = batches(6, size=size)
    pipe.train_step(*data[0])
    allocated = pipe.link.pool.allocated
    sent = pipe.link.bytes_sent
    for x, y in data[1:]:
        pipe.train_step(x, y)
    # each batch: this stage's output activations forward, its input's gradients backward
    widths = [3, 6, 6, 5, 5, 4, 4, 2]  # features after each layer, the input first
    points = [0, *EXPLICIT[SIZE], 7]
    out_bytes = widths[points[RANK + 1]] * size * 8 if RANK < SIZE - 1 else 0
    in_bytes = widths[points[RANK]] * size * 8 if RANK > 0 else 0
    per_batch = (pipe.link.bytes_sent - sent) / 5
    collective_assert(per_batch == out_bytes + in_bytes, f"{per_batch} != {out_bytes} + {in_bytes}")
    # buffers: allocated in the first batch, reused since (at most the live micro-batches + 1)
    collective_assert(pipe.link.pool.allocated == allocated, "receive buffers were not reused")
    collective_assert(allocated <= 2 * (min(SIZE - RANK, m) + 1), f"{allocated} buffers")
    received = WORLD.allgather(pipe.link.bytes_received)
    sent_all = WORLD.allgather(pipe.link.bytes_sent)
    collective_assert(sum(received) == sum(sent_all), f"sent {sent_all}, received {received}")


# ------------------------------------------------------------------------------------------------
# communicators
# ------------------------------------------------------------------------------------------------


def test_pipelines_on_sub_communicators():
    """Halves of the world (ranks of one parity) train their own pipelines side by side."""
    color = RANK % 2
    group = WORLD.Split(color, RANK)
    data = batches(4, seed=10 + color)
    pipe = ht.nn.Pipeline(
        make_layers(seed=color), mse, torch.optim.Adam, {"lr": 1e-2},
        comm=group, micro_batches=2, schedule="1f1b",
    )  # fmt: skip
    reference = make_layers(seed=color)
    train_both(pipe, reference, data)
    collective_assert(pipe.stages == group.size and pipe.stage == group.rank)
    difference = max_difference(pipe.state_dict(gather="all"), reference.state_dict())
    collective_assert(difference < 1e-10, f"parameters differ by {difference}")


# ------------------------------------------------------------------------------------------------
# bad input: the same error on every process, and the next pipeline still works
# ------------------------------------------------------------------------------------------------


def test_bad_input_raises_the_same_error_everywhere():
    def pipeline(*args, layers=None, **kwargs):
        layers = make_layers() if layers is None else layers
        return ht.nn.Pipeline(layers, *args, **kwargs)

    too_few = torch.nn.Sequential(*[torch.nn.Linear(2, 2) for _ in range(SIZE - 1)])
    raises_everywhere(
        ValueError, f"{SIZE} stages (processes) but the module only", pipeline, layers=too_few
    )
    raises_everywhere(TypeError, "comm must be a heat communicator", pipeline, comm=WORLD.handle)
    raises_everywhere(TypeError, "comm must be a heat communicator", pipeline, comm="world")
    raises_everywhere(ValueError, "schedule must be one of", pipeline, schedule="interleaved")
    raises_everywhere(ValueError, "micro_batches must be >= 1", pipeline, micro_batches=0)
    raises_everywhere(TypeError, "layers must be", pipeline, layers=torch.nn.Linear(2, 2))
    raises_everywhere(ValueError, f"split_points must have {SIZE - 1} entries", pipeline,
                      split_points=list(range(1, SIZE + 1)))  # fmt: skip
    raises_everywhere(ValueError, "give an optimizer", pipeline, mse, schedule="pipedream")
    raises_everywhere(
        ValueError, "Invalid learning rate", pipeline, mse, torch.optim.Adam, {"lr": -1.0}
    )
    raises_everywhere(TypeError, "checkpoint must be", pipeline, checkpoint="yes")
    if SIZE > 1:  # the processes disagree: a layer more, another shape, other values
        extra = make_layers()
        if RANK == 1:
            extra.append(torch.nn.Tanh())
        raises_everywhere(ValueError, "number of layers is 7 on process 0 and 8 on process 1",
                          pipeline, layers=extra)  # fmt: skip
        shaped = make_layers()
        if RANK == SIZE - 1:
            shaped[6] = torch.nn.Linear(4, 3, dtype=F64)
        raises_everywhere(
            ValueError, "layer 6 ('6', Linear) has the tensors", pipeline, layers=shaped
        )
        raises_everywhere(ValueError, "values of layer 0 ('0', Linear)'s weight, bias differ",
                          pipeline, layers=make_layers(seed=RANK))  # fmt: skip
        raises_everywhere(ValueError, "micro_batches is 2 on process 0 and 3 on process 1",
                          pipeline, micro_batches=2 if RANK == 0 else 3)  # fmt: skip

    pipe = pipeline(mse, torch.optim.SGD, {"lr": 0.1}, micro_batches=4)
    x, y = batches(1)[0]
    raises_everywhere(ValueError, "micro_batches (4) must divide the batch size (10)",
                      pipe.train_step, x[:10], y[:10])  # fmt: skip
    raises_everywhere(ValueError, "targets must have the batch size", pipe.train_step, x, y[:8])
    raises_everywhere(TypeError, "inputs must be a torch.Tensor", pipe.train_step, x.tolist(), y)
    raises_everywhere(ValueError, "needs a loss_fn", pipeline(micro_batches=4).train_step, x, y)
    # shapes that do not fit between the stages fail on the probe, on every process alike
    wrong = make_layers()
    with torch.random.fork_rng():
        torch.manual_seed(0)  # the same values on every process
        wrong[6] = torch.nn.Linear(5, 2, dtype=F64)
    raises_everywhere(
        RuntimeError, "stage", pipeline(mse, layers=wrong, micro_batches=2).train_step, x, y
    )
    raises_everywhere(ValueError, "scalar", pipeline(_no_reduction).train_step, x, y)
    # and everything still works afterwards
    loss = pipe.train_step(x, y)
    everyone = WORLD.allgather(loss)
    collective_assert(all(v == everyone[0] for v in everyone))


def _no_reduction(output, target):
    return (output - target) ** 2
