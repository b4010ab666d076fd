"""
Tests of heat/nn/pipeline_plan.py: the profile, PipeDream's partitioner (against brute force),
the schedules and their simulator. Pure: no communication, the same on every process.
"""

import itertools
import math
import random

import pytest
import torch

import heat as ht
from heat.nn.pipeline_plan import _one_f_one_b

F, B, U = "forward", "backward", "update"


def actions(text):
    """``"F0 F1 B0"`` -> actions."""
    kinds = {"F": F, "B": B, "U": U}
    return [ht.nn.PipelineAction(kinds[word[0]], int(word[1:])) for word in text.split()]


# ------------------------------------------------------------------------------------------------
# schedules
# ------------------------------------------------------------------------------------------------


def test_schedules_by_hand():
    assert ht.nn.pipeline_schedule("gpipe", 2, 3) == [actions("F0 F1 F2 B0 B1 B2")] * 2
    assert ht.nn.pipeline_schedule("1f1b", 3, 4) == [
        actions("F0 F1 F2 B0 F3 B1 B2 B3"),
        actions("F0 F1 B0 F2 B1 F3 B2 B3"),
        actions("F0 B0 F1 B1 F2 B2 F3 B3"),
    ]
    assert ht.nn.pipeline_schedule("pipedream", 3, 2) == [
        actions("F0 F1 B0 U0 B1 U1"),
        actions("F0 F1 B0 U0 B1 U1"),
        actions("F0 B0 U0 F1 B1 U1"),
    ]
    # a segment of the stream: micro-batches 2 and 3, the pipeline stays filled
    assert ht.nn.pipeline_schedule("pipedream", 3, 2, start=2, drain=False) == [
        actions("F2 B0 U0 F3 B1 U1"),
        actions("F2 B1 U1 F3 B2 U2"),
        actions("F2 B2 U2 F3 B3 U3"),
    ]
    assert ht.nn.pipeline_schedule("pipedream", 3, 0, start=4) == [
        actions("B2 U2 B3 U3"),
        actions("B3 U3"),
        [],
    ]
    assert repr(ht.nn.PipelineAction(F, 3)) == "F3"


@pytest.mark.parametrize("name", ["gpipe", "1f1b", "pipedream"])
@pytest.mark.parametrize("stages", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("micro_batches", [1, 2, 3, 7])
def test_every_stage_runs_every_micro_batch_once(name, stages, micro_batches):
    schedule = ht.nn.pipeline_schedule(name, stages, micro_batches)
    assert len(schedule) == stages
    for stage_actions in schedule:
        for i in range(micro_batches):
            order = [a.kind for a in stage_actions if a.micro_batch == i]
            assert order == ([F, B, U] if name == "pipedream" else [F, B])
        assert [a.micro_batch for a in stage_actions if a.kind == F] == list(range(micro_batches))
        assert [a.micro_batch for a in stage_actions if a.kind == B] == list(range(micro_batches))


@pytest.mark.parametrize("stages", [1, 2, 3, 4])
def test_pipedream_segments_make_one_stream(stages):
    """Batches of a stream, drained at the end, are the one long 1F1B order with updates."""
    sizes = [3, 1, 4, 2]
    segments, start = [], 0
    for k, size in enumerate(sizes):
        drain = k == len(sizes) - 1
        segments.append(
            ht.nn.pipeline_schedule("pipedream", stages, size, start=start, drain=drain)
        )
        start += size
    joined = [sum((seg[s] for seg in segments), []) for s in range(stages)]
    assert joined == ht.nn.pipeline_schedule("pipedream", stages, sum(sizes))
    # the same order as 1F1B once the updates are left out
    one_f_one_b = ht.nn.pipeline_schedule("1f1b", stages, sum(sizes))
    assert [[a for a in s if a.kind != U] for s in joined] == one_f_one_b


def test_schedule_arguments():
    with pytest.raises(ValueError, match="schedule must be one of"):
        ht.nn.pipeline_schedule("zero-bubble", 2, 2)
    with pytest.raises(TypeError, match="stages must be an int"):
        ht.nn.pipeline_schedule("gpipe", 2.0, 2)
    with pytest.raises(ValueError, match="micro_batches must be >= 1"):
        ht.nn.pipeline_schedule("1f1b", 2, 0)
    with pytest.raises(ValueError, match="start must be 0 and drain True"):
        ht.nn.pipeline_schedule("1f1b", 2, 2, start=2)
    with pytest.raises(ValueError, match="start must be 0 and drain True"):
        ht.nn.pipeline_schedule("gpipe", 2, 2, drain=False)
    with pytest.raises(ValueError, match="micro_batches must be >= 1"):
        ht.nn.pipeline_schedule("pipedream", 2, 0, drain=False)
    with pytest.raises(TypeError, match="drain must be a bool"):
        ht.nn.pipeline_schedule("pipedream", 2, 1, drain=1)


# ------------------------------------------------------------------------------------------------
# simulation
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gpipe", "1f1b"])
@pytest.mark.parametrize("stages", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("micro_batches", [1, 2, 5, 16])
@pytest.mark.parametrize("forward,backward", [(1.0, 1.0), (1.0, 2.0), (0.25, 0.5)])
def test_synchronous_makespan_is_m_plus_p_minus_1_stage_times(
    name, stages, micro_batches, forward, backward
):
    """Equal stages: (m + p - 1) / m times the m micro-batches' compute of one stage."""
    sim = ht.nn.simulate_schedule(
        ht.nn.pipeline_schedule(name, stages, micro_batches), forward, backward
    )
    stage_time = micro_batches * (forward + backward)
    assert sim.makespan == pytest.approx((micro_batches + stages - 1) / micro_batches * stage_time)
    assert sim.bubble_fraction == pytest.approx((stages - 1) / (micro_batches + stages - 1))
    assert sim.busy_seconds == pytest.approx([stage_time] * stages)


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("micro_batches", [1, 2, 5, 16])
def test_live_activations(stages, micro_batches):
    """GPipe keeps all m micro-batches alive on every stage, 1F1B at most p (p - s on stage s)."""
    gpipe = ht.nn.simulate_schedule(ht.nn.pipeline_schedule("gpipe", stages, micro_batches), 1, 2)
    assert gpipe.peak_live == (micro_batches,) * stages
    one_f_one_b = ht.nn.simulate_schedule(
        ht.nn.pipeline_schedule("1f1b", stages, micro_batches), 1, 2
    )
    assert one_f_one_b.peak_live == tuple(min(stages - s, micro_batches) for s in range(stages))
    assert max(one_f_one_b.peak_live) <= stages


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_pipedream_steady_state_has_no_bubble(stages):
    """Each further batch of a PipeDream stream adds exactly m stage times: no bubble."""
    m, forward, backward = 4, 1.0, 2.0

    def stream(batches):
        segments = [
            ht.nn.pipeline_schedule("pipedream", stages, m, start=k * m, drain=k == batches - 1)
            for k in range(batches)
        ]
        return [sum((seg[s] for seg in segments), []) for s in range(stages)]

    spans = [ht.nn.simulate_schedule(stream(n), forward, backward).makespan for n in (4, 5, 6)]
    assert spans[1] - spans[0] == pytest.approx(m * (forward + backward))
    assert spans[2] - spans[1] == pytest.approx(m * (forward + backward))
    # while GPipe pays the fill and drain in every batch
    gpipe = ht.nn.simulate_schedule(ht.nn.pipeline_schedule("gpipe", stages, m), forward, backward)
    assert gpipe.makespan == pytest.approx((m + stages - 1) * (forward + backward))
    assert max(ht.nn.simulate_schedule(stream(5), forward, backward).peak_live) == stages


def test_simulation_with_unequal_stages_and_transfers():
    # two stages, the second twice as slow: the steady state runs at its pace
    sim = ht.nn.simulate_schedule(ht.nn.pipeline_schedule("gpipe", 2, 3), [1.0, 2.0], [1.0, 2.0])
    # forwards: stage 1 runs F0 at 1-3, F1 3-5, F2 5-7; backwards: B0 7-9, B1 9-11, B2 11-13;
    # stage 0: B0 9-10, B1 11-12, B2 13-14
    assert sim.makespan == pytest.approx(14.0)
    timeline = {(s, a): (start, end) for s in range(2) for a, start, end in sim.timeline[s]}
    assert timeline[(0, ht.nn.PipelineAction(B, 2))] == (13.0, 14.0)
    with_transfer = ht.nn.simulate_schedule(ht.nn.pipeline_schedule("gpipe", 2, 1), 1.0, 1.0, 0.5)
    assert with_transfer.makespan == pytest.approx(1 + 0.5 + 1 + 1 + 0.5 + 1)


def test_simulation_finds_deadlocks_and_bad_input():
    crossed = [actions("F0 B0 F1 B1"), actions("F0 F1 B0 B1")]  # stage 0 waits for F1 of itself
    with pytest.raises(ValueError, match="deadlocks"):
        ht.nn.simulate_schedule(crossed, 1.0, 1.0)
    with pytest.raises(ValueError, match="twice"):
        ht.nn.simulate_schedule([actions("F0 F0")], 1.0, 1.0)
    with pytest.raises(ValueError, match="deadlocks"):
        ht.nn.simulate_schedule([actions("B0 F0")], 1.0, 1.0)
    with pytest.raises(ValueError, match="3 entries, got 2"):
        ht.nn.simulate_schedule(ht.nn.pipeline_schedule("gpipe", 3, 2), [1.0, 2.0], 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        ht.nn.simulate_schedule(ht.nn.pipeline_schedule("gpipe", 2, 2), -1.0, 1.0)
    with pytest.raises(TypeError, match="PipelineAction"):
        ht.nn.simulate_schedule([["F0"]], 1.0, 1.0)


# ------------------------------------------------------------------------------------------------
# partition
# ------------------------------------------------------------------------------------------------


def brute_force(profile, stages, bandwidth, overlap, limit):
    """The least bottleneck over every cut (math.inf if none fits the limit)."""
    n = len(profile)
    best = math.inf
    for points in itertools.combinations(range(1, n), stages - 1):
        bounds = (0,) + points + (n,)
        value = 0.0
        for a, b in zip(bounds[:-1], bounds[1:]):
            if limit is not None and sum(p.parameter_bytes for p in profile[a:b]) > limit:
                value = math.inf
            seconds = sum(p.seconds for p in profile[a:b])
            if not overlap:
                seconds += sum(2 * profile[k - 1].activation_bytes / bandwidth
                               for k in (a, b) if 0 < k < n)  # fmt: skip
            value = max(value, seconds)
        if overlap:
            value = max([value] + [2 * profile[k - 1].activation_bytes / bandwidth for k in points])
        best = min(best, value)
    return best


def random_profile(rng, n):
    return [
        ht.nn.LayerProfile(
            name=str(k),
            forward_seconds=rng.choice([0.0, rng.random(), float(rng.randint(1, 4))]),
            backward_seconds=rng.random() * 2,
            activation_bytes=rng.randint(0, 1000),
            parameter_bytes=rng.randint(0, 100),
        )
        for k in range(n)
    ]


def test_partitioner_equals_brute_force():
    rng = random.Random(19)
    cases = 0
    for _ in range(300):
        n = rng.randint(1, 8)
        stages = rng.randint(1, n)
        profile = random_profile(rng, n)
        bandwidth = rng.choice([math.inf, 100.0, 1000.0, 1e4])
        overlap = rng.random() < 0.5
        limit = rng.choice([None, None, 150, 300])
        expected = brute_force(profile, stages, bandwidth, overlap, limit)
        if expected == math.inf:
            with pytest.raises(ValueError, match="max_parameter_bytes"):
                ht.nn.partition_layers(
                    profile, stages, bandwidth=bandwidth, overlap=overlap, max_parameter_bytes=limit
                )
            continue
        part = ht.nn.partition_layers(
            profile, stages, bandwidth=bandwidth, overlap=overlap, max_parameter_bytes=limit
        )
        assert part.bottleneck_seconds == pytest.approx(expected, rel=1e-12, abs=1e-12)
        # the reported costs are those of the cut it returns
        again = ht.nn.Partition.from_split_points(
            part.split_points, n, profile, bandwidth=bandwidth, overlap=overlap
        )
        assert again == part
        assert len(part.stages) == stages and all(len(r) > 0 for r in part.stages)
        cases += 1
    assert cases > 200


def test_partition_by_hand():
    times = [1.0, 1.0, 4.0, 1.0, 1.0]
    profile = [ht.nn.LayerProfile(str(k), t / 3, 2 * t / 3, 8, 0) for k, t in enumerate(times)]
    part = ht.nn.partition_layers(profile, 3)
    assert part.split_points == (2, 3)
    assert part.stages == (range(0, 2), range(2, 3), range(3, 5))
    assert part.stage_seconds == pytest.approx((2.0, 4.0, 2.0))
    # a huge activation after layer 0 moves the cut away from it
    heavy = [ht.nn.LayerProfile("0", 1.0, 0.0, 10**6, 0)] + [
        ht.nn.LayerProfile(str(k), 1.0, 0.0, 1, 0) for k in range(1, 4)
    ]
    assert ht.nn.partition_layers(heavy, 2).split_points == (2,)
    assert ht.nn.partition_layers(heavy, 2, bandwidth=1e3).split_points != (1,)
    # the memory limit forces a stage of its own for the big layer
    sizes = [10, 10, 100, 10]
    memory = [ht.nn.LayerProfile(str(k), 1.0, 1.0, 0, b) for k, b in enumerate(sizes)]
    assert ht.nn.partition_layers(memory, 3, max_parameter_bytes=100).split_points == (2, 3)


def test_partition_arguments():
    profile = [ht.nn.LayerProfile(str(k), 1.0, 1.0, 8, 8) for k in range(3)]
    with pytest.raises(ValueError, match="must not exceed the number of layers"):
        ht.nn.partition_layers(profile, 4)
    with pytest.raises(TypeError, match="LayerProfile"):
        ht.nn.partition_layers([1.0, 2.0], 1)
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        ht.nn.partition_layers(profile, 2, bandwidth=0)
    with pytest.raises(TypeError, match="overlap must be a bool"):
        ht.nn.partition_layers(profile, 2, overlap="yes")
    with pytest.raises(ValueError, match="increase strictly"):
        ht.nn.Partition.from_split_points([2, 2], 4)
    with pytest.raises(ValueError, match="increase strictly"):
        ht.nn.Partition.from_split_points([0], 4)
    with pytest.raises(ValueError, match="increase strictly"):
        ht.nn.Partition.from_split_points([4], 4)
    with pytest.raises(TypeError, match="hold ints"):
        ht.nn.Partition.from_split_points([1.5], 4)
    with pytest.raises(ValueError, match="profile has 3 layers"):
        ht.nn.Partition.from_split_points([1], 4, profile)
    assert ht.nn.Partition.from_split_points([], 3).stages == (range(0, 3),)


# ------------------------------------------------------------------------------------------------
# profile
# ------------------------------------------------------------------------------------------------


def test_profile_layers_measures_without_side_effects():
    torch.manual_seed(3)
    net = torch.nn.Sequential(
        torch.nn.Linear(6, 10),
        _Counting(),  # a buffer changed by every forward, like batch-norm statistics
        torch.nn.Dropout(0.5),
        torch.nn.ReLU(),
        _ToDouble(),
        torch.nn.Linear(10, 2, dtype=torch.float64),
    )
    before = {k: v.clone() for k, v in net.state_dict().items()}
    sample = torch.randn(5, 6)
    rng_before = torch.get_rng_state()
    profile = ht.nn.profile_layers(net, sample, repeats=2)
    assert [p.name for p in profile] == ["0", "1", "2", "3", "4", "5"]
    assert [p.activation_bytes for p in profile] == [200, 200, 200, 200, 400, 80]
    assert [p.parameter_bytes for p in profile] == [280, 0, 0, 0, 0, 176]
    assert all(p.forward_seconds >= 0 and p.backward_seconds >= 0 for p in profile)
    assert all(p.seconds == p.forward_seconds + p.backward_seconds for p in profile)
    assert all(p.grad is None for p in net.parameters())
    assert all(torch.equal(v, before[k]) for k, v in net.state_dict().items())  # the buffer
    assert torch.equal(torch.get_rng_state(), rng_before)  # dropout drew from a fork
    # a list of modules works alike; integer outputs have no backward
    ints = ht.nn.profile_layers([_ToLong(), torch.nn.Embedding(4, 3)], torch.randn(2, 5))
    assert ints[0].backward_seconds == 0 and ints[1].activation_bytes == 2 * 5 * 3 * 4


def test_profile_layers_arguments():
    with pytest.raises(TypeError, match="layers must be"):
        ht.nn.profile_layers(torch.nn.Linear(2, 2), torch.randn(1, 2))
    with pytest.raises(TypeError, match=r"layers\[1\]"):
        ht.nn.profile_layers([torch.nn.Linear(2, 2), "relu"], torch.randn(1, 2))
    with pytest.raises(TypeError, match="sample_input"):
        ht.nn.profile_layers([torch.nn.Linear(2, 2)], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="repeats"):
        ht.nn.profile_layers([torch.nn.Linear(2, 2)], torch.randn(1, 2), repeats=0)
    with pytest.raises(TypeError, match="one tensor"):
        ht.nn.profile_layers([_Pair()], torch.randn(1, 2))


def test_one_f_one_b_warm_up_is_bounded_by_the_micro_batches():
    # more stages than micro-batches: stage 0 runs every forward first
    assert _one_f_one_b(0, 5, 0, 2, True, False) == actions("F0 F1 B0 B1")
    assert _one_f_one_b(1, 3, 2, 4, False, True) == actions("F2 B1 U1 F3 B2 U2")


class _Counting(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        self.calls += 1
        return x * 1.0


class _ToDouble(torch.nn.Module):
    def forward(self, x):
        return x.double()


class _ToLong(torch.nn.Module):
    def forward(self, x):
        return (x > 0).long()


class _Pair(torch.nn.Module):
    def forward(self, x):
        return x, x
