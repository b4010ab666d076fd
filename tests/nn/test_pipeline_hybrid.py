"""
Tests of hybrid parallelism in heat/nn/pipeline.py under 1-4 processes: stages x data-parallel
replicas (``ht.nn.Pipeline(..., replicas=r)``). Each replica trains on its part of the global
batch; the synchronous schedules then train exactly like one process on the whole batch, PipeDream
like one pipeline whose micro-batches are the replicas' micro-batches side by side. Process counts
that do not factor into stages x replicas, replicas with different parameters or batch shapes
raise the same error on every process.
"""

import os
import shutil
import tempfile

import pytest
import torch

import heat as ht
from tests.helpers import collective_assert
from tests.nn.test_pipeline import batches, make_layers, max_difference, mse, raises_everywhere

WORLD = ht.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size
F64 = torch.float64


def my_part(tensor, pipe):
    """This replica's rows of a global batch (the replicas' parts have equal sizes)."""
    rows = tensor.shape[0] // pipe.replicas
    return tensor[pipe.replica * rows : (pipe.replica + 1) * rows]


def hybrid(replicas, **kwargs):
    options = dict(micro_batches=2, schedule="1f1b")
    options.update(kwargs)
    return ht.nn.Pipeline(
        make_layers(), mse, torch.optim.Adam, {"lr": 1e-2}, replicas=replicas, **options
    )


def replicas_agree(pipe):
    """Every replica of a stage holds bitwise the same parameters."""
    states = WORLD.allgather((pipe.stage, pipe.stage_module.state_dict()))
    mine = pipe.stage_module.state_dict()
    return all(
        all(torch.equal(state[k], mine[k]) for k in mine)
        for stage, state in states
        if stage == pipe.stage
    )


@pytest.mark.parametrize("replicas", [2, 3])
@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_hybrid_trains_like_one_process(schedule, replicas):
    """20 Adam steps of stages x replicas equal one process's on the whole batches."""
    if SIZE % replicas:
        raises_everywhere(ValueError, f"replicas ({replicas}) must divide the number of "
                          f"processes of comm ({SIZE})", hybrid, replicas)  # fmt: skip
        return
    pipe = hybrid(replicas, schedule=schedule)
    stages = SIZE // replicas
    collective_assert(
        (pipe.stages, pipe.replicas, pipe.stage, pipe.replica)
        == (stages, replicas, RANK % stages, RANK // stages),
        f"layout {(pipe.stages, pipe.replicas, pipe.stage, pipe.replica)}",
    )
    collective_assert(pipe.pipeline_comm.size == stages and pipe.replica_comm.size == replicas)
    reference = make_layers()
    optimizer = torch.optim.Adam(reference.parameters(), lr=1e-2)
    loss_error = 0.0
    for x, y in batches(20):  # 12 rows: 6 per replica of 2, 4 per replica of 3
        pipe.zero_grad()
        loss = pipe.train_step(my_part(x, pipe), my_part(y, pipe))
        pipe.step()
        optimizer.zero_grad()
        expected = mse(reference(x), y)
        expected.backward()
        optimizer.step()
        loss_error = max(loss_error, abs(loss - expected.item()))
    collective_assert(loss_error < 1e-12, f"the global batch's loss is off by {loss_error}")
    difference = max_difference(pipe.state_dict(gather="all"), reference.state_dict())
    collective_assert(difference < 1e-10, f"parameters differ from one process's by {difference}")
    collective_assert(replicas_agree(pipe), "the replicas of a stage drifted apart")
    collective_assert(pipe.replica_average.bytes_reduced > 0 or not list(pipe.parameters()))
    # inference: each replica its own inputs
    x = batches(1, seed=7)[0][0]
    output = pipe(my_part(x, pipe))
    collective_assert(torch.allclose(output, my_part(reference(x), pipe), atol=1e-12))


def test_hybrid_pipedream_is_one_pipeline_on_the_replicas_micro_batches():
    """
    PipeDream with r replicas updates after every micro-batch with the replicas' average
    gradient: one pipeline (on a sub-communicator of the same stages) whose micro-batch i is the
    replicas' micro-batches i side by side makes the same updates.
    """
    replicas = 2 if SIZE % 2 == 0 else SIZE
    stages, micro_batches = SIZE // replicas, 3
    data = batches(4, size=6 * replicas)
    cuts = {1: [], 2: [5]}[stages]
    pipe = hybrid(replicas, schedule="pipedream", micro_batches=micro_batches, split_points=cuts)
    # the plain pipelines, one per group of ``stages`` consecutive ranks (all train the same)
    single = ht.nn.Pipeline(
        make_layers(), mse, torch.optim.Adam, {"lr": 1e-2}, comm=WORLD.Split(RANK // stages, RANK),
        micro_batches=micro_batches, schedule="pipedream", split_points=cuts,
    )  # fmt: skip

    def merged(tensor):
        """Micro-batch i of the merged batch: the replicas' micro-batches i, replica order."""
        parts = tensor.reshape(replicas, micro_batches, -1, *tensor.shape[1:])
        return parts.transpose(0, 1).reshape(tensor.shape)

    losses = []
    for x, y in data:
        losses.append(pipe.train_step(my_part(x, pipe), my_part(y, pipe)))
        losses.append(single.train_step(merged(x), merged(y)))
    pipe.flush()
    single.flush()
    difference = max_difference(pipe.state_dict(gather="all"), single.state_dict(gather="all"))
    collective_assert(difference < 1e-10, f"parameters differ by {difference}")
    loss_error = max(abs(a - b) for a, b in zip(losses[::2], losses[1::2]))
    collective_assert(loss_error < 1e-12, f"losses differ by {loss_error}")
    collective_assert(replicas_agree(pipe), "the replicas of a stage drifted apart")
    trained = max_difference(pipe.state_dict(gather="all"), make_layers().state_dict())
    collective_assert(trained > 1e-4, "nothing was trained")


def test_hybrid_state_dict_and_load():
    replicas = SIZE if SIZE < 4 else 2
    pipe = hybrid(replicas)
    rooted = pipe.state_dict()
    collective_assert((rooted is None) == (RANK != 0))
    if RANK == 0:
        assert list(rooted) == list(make_layers().state_dict())
    source = make_layers(seed=5)
    pipe.load_state_dict(source.state_dict())
    difference = max_difference(pipe.state_dict(gather="all"), source.state_dict())
    collective_assert(difference == 0.0)


def test_hybrid_bad_input_raises_everywhere():
    raises_everywhere(ValueError, "replicas must be >= 1", hybrid, 0)
    raises_everywhere(TypeError, "replicas must be an int", hybrid, 2.0)
    if SIZE == 1:
        return
    replicas = 2 if SIZE % 2 == 0 else SIZE
    stages = SIZE // replicas
    raises_everywhere(ValueError, f"replicas is {replicas} on process 0 and 1 on process {SIZE - 1}",
                      hybrid, replicas if RANK < SIZE - 1 else 1)  # fmt: skip
    # a replica whose parameters differ: the last process (the last replica's last stage)
    layers = make_layers(seed=1 if RANK == SIZE - 1 else 0)
    raises_everywhere(
        ValueError, f"differ between process 0 and process {SIZE - 1}",
        ht.nn.Pipeline, layers, mse, torch.optim.Adam, replicas=replicas,
    )  # fmt: skip
    # replicas given batches of different shapes
    pipe = hybrid(replicas)
    x, y = batches(1)[0]
    rows = 6 if pipe.replica == 0 else 4
    raises_everywhere(ValueError, "every replica must be given batches of the same shapes",
                      pipe.train_step, x[:rows], y[:rows])  # fmt: skip
    # and the pipeline still trains afterwards, the same loss on every process
    loss = pipe.train_step(x[:6], y[:6])
    everyone = WORLD.allgather(loss)
    collective_assert(all(v == everyone[0] for v in everyone), f"losses {everyone}")
    collective_assert(stages == pipe.stages)


def test_hybrid_with_daso_across_nodes(emulate_nodes):
    """
    Stages inside a node, DASO across nodes: each stage's replicas (one per emulated node) are
    DASO's processes. In DASO's warm-up every batch ends with a blocking average of the
    parameters over the nodes, which after SGD steps from equal parameters is SGD on the
    replicas' average gradient: one process's SGD on the global batch.
    """
    stages = 2 if SIZE == 4 else 1
    replicas = SIZE // stages
    emulate_nodes(stages)  # one whole pipeline per node

    def net():  # every stage has parameters (DASO averages them)
        with torch.random.fork_rng():
            torch.manual_seed(3)
            return torch.nn.Sequential(
                torch.nn.Linear(3, 6, dtype=F64), torch.nn.Tanh(), torch.nn.Linear(6, 2, dtype=F64)
            )

    layers, reference = net(), net()
    pipe = ht.nn.Pipeline(
        layers, mse, torch.optim.SGD, {"lr": 0.05}, replicas=replicas, micro_batches=2,
        split_points=[2] if stages == 2 else None, average_replicas=False,
    )  # fmt: skip
    daso = ht.optim.DASO(
        pipe.optimizer, total_epochs=2, comm=pipe.replica_comm, warmup_epochs=2,
        cooldown_epochs=0, downcast_type=torch.float32,
    )  # fmt: skip
    ht.nn.DataParallelMultiGPU(pipe.stage_module, daso, comm=pipe.replica_comm)
    collective_assert(daso.groups.num_nodes == replicas and daso.groups.local_size == 1)
    sgd = torch.optim.SGD(reference.parameters(), lr=0.05)
    data = batches(4)
    daso.last_batch = len(data)
    for _ in range(2):
        for x, y in data:
            daso.zero_grad()
            loss = pipe.train_step(my_part(x, pipe), my_part(y, pipe))
            daso.step()
            sgd.zero_grad()
            mse(reference(x), y).backward()
            sgd.step()
        daso.epoch_loss_logic(loss)
    collective_assert(all(r.action == "blocking" for r in daso.timeline) or replicas == 1)
    difference = max_difference(pipe.state_dict(gather="all"), reference.state_dict())
    collective_assert(difference < 1e-6, f"parameters differ from one process's by {difference}")
    collective_assert(replicas_agree(pipe), "the replicas of a stage drifted apart")


# ------------------------------------------------------------------------------------------------
# checkpoints per stage
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def shared_folder():
    """A fresh temporary folder, the same path on every process."""
    folder = tempfile.mkdtemp(prefix="heat-pipeline-") if RANK == 0 else None
    folder = WORLD.bcast(folder)
    yield folder
    WORLD.Barrier()
    if RANK == 0:
        shutil.rmtree(folder, ignore_errors=True)


def steps(pipe, part):
    """Train ``pipe`` on the batches of ``part`` (each replica on its part of each batch)."""
    for x, y in part:
        pipe.zero_grad()
        pipe.train_step(my_part(x, pipe), my_part(y, pipe))
        pipe.step()


def test_checkpoint_per_stage_resumes_exactly(shared_folder):
    replicas = 2 if SIZE % 2 == 0 else 1
    data = batches(5)

    pipe = hybrid(replicas)
    steps(pipe, data[:3])
    pipe.save_checkpoint(shared_folder)
    steps(pipe, data[:1])
    pipe.save_checkpoint(shared_folder)  # replaces the first: its files are deleted
    files = sorted(os.listdir(shared_folder))
    collective_assert(len(files) == pipe.stages + 1 and "manifest.json" in files, f"{files}")
    steps(pipe, data[3:])
    expected = pipe.state_dict(gather="all")

    resumed = hybrid(replicas)  # fresh parameters and Adam state
    resumed.load_checkpoint(shared_folder)
    steps(resumed, data[3:])
    difference = max_difference(resumed.state_dict(gather="all"), expected)
    collective_assert(difference == 0.0, f"the resumed training differs by {difference}")

    # another cut of the layers: the same error on every process
    other = ht.nn.Pipeline(make_layers(), mse, torch.optim.Adam, micro_batches=2,
                           split_points=list(range(1, SIZE)))  # fmt: skip
    if other.partition.stages != resumed.partition.stages:
        raises_everywhere(ValueError, "cuts the layers into stages", other.load_checkpoint,
                          shared_folder)  # fmt: skip
    missing = os.path.join(shared_folder, "nothing")
    raises_everywhere(FileNotFoundError, "no pipeline checkpoint", resumed.load_checkpoint, missing)


def test_checkpoint_with_an_optimizer_sharded_over_the_replicas(shared_folder):
    """
    Each stage's optimizer a ZeroRedundancyOptimizer over ``replica_comm``: its state_dict() is
    collective over the replicas, so every replica must ask for it although only the first
    writes (a save that asked the first replica only would hang; the suite's timeout ends it).
    """
    replicas = 2 if SIZE % 2 == 0 else 1
    data = batches(4)

    def sharded_pipeline():
        pipe = hybrid(replicas)
        if pipe.optimizer is not None:  # the gradients are averaged by the pipeline already
            pipe.optimizer = ht.optim.ZeroRedundancyOptimizer(
                pipe.stage_module.parameters(), torch.optim.Adam, stage=1,
                comm=pipe.replica_comm, average_gradients=False, lr=1e-2,
            )  # fmt: skip
        return pipe

    pipe = sharded_pipeline()
    steps(pipe, data[:2])
    pipe.save_checkpoint(shared_folder)
    steps(pipe, data[2:])
    expected = pipe.state_dict(gather="all")

    resumed = sharded_pipeline()
    resumed.load_checkpoint(shared_folder)
    steps(resumed, data[2:])
    difference = max_difference(resumed.state_dict(gather="all"), expected)
    collective_assert(difference == 0.0, f"the resumed training differs by {difference}")
