"""
Tests of heat.nn.lightning under 1-4 processes on emulated nodes (HEAT_RANKS_PER_NODE=2: at 4
processes two nodes of two, at 3 nodes of 2 and 1): the environment, the collectives, DASOStrategy
against Lightning's DDPStrategy (gloo), parameters equal inside a node every batch and
everywhere after the cool-down, a mid-epoch checkpoint and resume with every row exactly once and
the same DASO phase (4 -> 2 processes in a slow mpiexec test), HeatDataParallelStrategy, and bad
configurations. Skipped without PyTorch Lightning (``pip install 'heat-mpi[lightning]'``).
"""

import ast
import os
import pickle
import shutil
import subprocess
import sys
import tempfile

import pytest
import torch

import heat as ht
from tests.helpers import (
    assert_one_process_error_everywhere,
    collective_assert,
    fresh_job_environment,
    raised_message,
)

pytest.importorskip(
    "lightning.pytorch",
    reason="PyTorch Lightning is not installed (pip install 'heat-mpi[lightning]')",
)

from heat.nn.lightning import (  # noqa: E402
    DASOStrategy,
    HeatDataParallelStrategy,
    HeatEnvironment,
    StreamingDataModule,
)
from tests.nn._lightning_parts import (  # noqa: E402
    WINDOW_BYTES,
    Batches,
    CheckpointAndStop,
    Classifier,
    Stop,
    blobs,
    daso_position,
    rows_of_epoch,
    trainer,
    write_rows,
)

WORLD = ht.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def shared_dir():
    path = WORLD.bcast(tempfile.mkdtemp(prefix="heat-lightning-") if RANK == 0 else None)
    yield path
    WORLD.handle.Barrier()
    if RANK == 0:
        shutil.rmtree(path, ignore_errors=True)


def flat(module):
    return torch.cat([p.detach().reshape(-1) for p in module.parameters()])


def spread(values, comm):
    """The largest difference of ``values`` over the processes of ``comm``."""
    gathered = comm.allgather(values)
    return max(float((g - gathered[0]).abs().max()) for g in gathered)


def test_importing_heat_does_not_import_lightning():
    # every module of heat outside heat.nn.lightning: no import of lightning in its source
    if ht.MPI_WORLD.size != 1:
        pytest.skip("a check of the source files: once, at MPI size 1")
    for name, module in list(sys.modules.items()):
        if not name.startswith("heat") or name.startswith("heat.nn.lightning"):
            continue
        source_file = getattr(module, "__file__", None)
        if not source_file or not source_file.endswith(".py"):
            continue
        with open(source_file) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for imported in names:
                assert "lightning" not in imported, f"{name} imports {imported}"


def test_environment_from_heat_topology(emulate_nodes):
    emulate_nodes(2)
    env = HeatEnvironment()
    topology = WORLD.node_topology()
    assert (env.global_rank(), env.world_size()) == (RANK, SIZE)
    assert (env.local_rank(), env.node_rank()) == (RANK % 2, RANK // 2)
    assert env.num_nodes == topology.num_nodes == (SIZE + 1) // 2
    assert env.creates_processes_externally
    assert torch.distributed.is_initialized() and torch.distributed.get_rank() == RANK
    assert env.main_address and env.main_port > 0
    env.set_global_rank(7)  # the MPI job decides
    assert env.global_rank() == RANK


def test_collectives_on_heat_communicator():
    strategy = HeatDataParallelStrategy()
    value = torch.tensor([float(RANK), 1.0])
    expected_sum = torch.tensor([SIZE * (SIZE - 1) / 2, SIZE])
    assert torch.equal(strategy.reduce(value, reduce_op="sum"), expected_sum)
    assert torch.allclose(strategy.reduce(value), expected_sum / SIZE)
    mean_of_ints = strategy.reduce(torch.tensor(RANK), reduce_op="mean")
    assert float(mean_of_ints) == pytest.approx((SIZE - 1) / 2)
    assert int(strategy.reduce(torch.tensor(RANK), reduce_op=torch.distributed.ReduceOp.MAX)) == (
        SIZE - 1
    )
    gathered = strategy.all_gather(torch.tensor([RANK, 2 * RANK]))
    assert gathered.shape == (SIZE, 2) and gathered[:, 1].tolist() == [2 * r for r in range(SIZE)]
    assert strategy.broadcast({"from": RANK}, src=SIZE - 1) == {"from": SIZE - 1}
    assert strategy.reduce_boolean_decision(RANK == 0, all=False)
    assert strategy.reduce_boolean_decision(RANK == 0) == (SIZE == 1)
    strategy.barrier()
    assert "not-an-op" in raised_message(ValueError, strategy.reduce, value, None, "not-an-op")


def _node_spreads():
    """A callback recording, after every batch, how far the parameters differ inside the node."""
    import lightning.pytorch as pl

    class Spreads(pl.Callback):
        def __init__(self):
            self.values = []

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            node_comm = trainer.strategy.daso.groups.topology.node_comm
            self.values.append(spread(flat(pl_module), node_comm))

    return Spreads()


def test_daso_strategy_matches_ddp_accuracy(emulate_nodes):
    import lightning.pytorch as pl

    emulate_nodes(2)
    x, y = blobs(240, seed=RANK)  # each process its own rows
    x_test, y_test = blobs(3000, seed=1000)
    epochs = 5

    def accuracy(module):
        with torch.no_grad():
            return float((module(x_test).argmax(1) == y_test).float().mean())

    # Lightning's own DDP (gloo), in this MPI job: heat's environment gives it the ranks and a
    # torch.distributed initialised from MPI
    reference = Classifier()
    ddp = pl.strategies.DDPStrategy(
        cluster_environment=HeatEnvironment(),
        parallel_devices=[torch.device("cpu")] * SIZE,
        process_group_backend="gloo",
    )
    trainer(ddp, epochs).fit(reference, train_dataloaders=Batches(x, y, 20))

    module = Classifier()
    spreads = _node_spreads()
    strategy = DASOStrategy(warmup_epochs=1, cooldown_epochs=1, max_global_skips=4)
    fit = trainer(strategy, epochs, callbacks=[spreads])
    fit.fit(module, train_dataloaders=Batches(x, y, 20))
    daso = strategy.daso

    actions = [record.action for record in daso.timeline]
    assert len(actions) == epochs * 12
    if daso.groups.num_nodes > 1:  # the middle epochs synchronize across nodes without blocking
        assert any("send" in a for a in actions[12:-12]), actions
    collective_assert(max(spreads.values) == 0.0, f"parameters differ inside a node: {spreads}")
    collective_assert(spread(flat(module), WORLD) == 0.0, "parameters differ after cool-down")
    # sync_dist=True reduced over heat's communicator
    assert float(fit.callback_metrics["rank_mean"]) == pytest.approx((SIZE - 1) / 2)
    daso_accuracy, ddp_accuracy = accuracy(module), accuracy(reference)
    assert ddp_accuracy > 0.9
    assert abs(daso_accuracy - ddp_accuracy) <= 0.005, (daso_accuracy, ddp_accuracy)


def test_daso_strategy_bf16_clipping_accumulation_scheduler(emulate_nodes):
    emulate_nodes(2)
    x, y = blobs(100, seed=RANK)
    module = Classifier(step_lr=True)
    spreads = _node_spreads()
    strategy = DASOStrategy(warmup_epochs=0, cooldown_epochs=1, max_global_skips=2)
    fit = trainer(
        strategy,
        3,
        callbacks=[spreads],
        precision="bf16-mixed",
        gradient_clip_val=0.5,
        accumulate_grad_batches=2,
    )
    fit.fit(module, train_dataloaders=Batches(x, y, 20))  # 5 batches: 3 steps per epoch
    daso = strategy.daso
    assert len(daso.timeline) == 3 * 3 and daso.last_batch == 3
    assert daso.epoch == 3
    assert daso.local_optimizer.param_groups[0]["lr"] == pytest.approx(0.1 * 0.5**3)
    collective_assert(max(spreads.values) == 0.0, f"parameters differ inside a node: {spreads}")
    collective_assert(spread(flat(module), WORLD) == 0.0, "parameters differ after cool-down")


def test_heat_data_parallel_strategy(emulate_nodes):
    import lightning.pytorch as pl

    emulate_nodes(2)
    x, y = blobs(80, seed=RANK)
    module = Classifier()
    values = []

    class Spread(pl.Callback):
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            values.append(spread(flat(pl_module), WORLD))

    strategy = HeatDataParallelStrategy(
        compression=torch.bfloat16, hierarchical=True, bucket_size_mb=0.001
    )
    trainer(strategy, 2, callbacks=[Spread()], accumulate_grad_batches=2).fit(
        module, train_dataloaders=Batches(x, y, 20)
    )
    assert strategy.data_parallel_options["compression"] is torch.bfloat16
    collective_assert(max(values) == 0.0, f"parameters differ between processes: {values}")
    assert strategy.model is module  # unwrapped after fit


def _streaming_fit(path, folder, stop=None, ckpt_path=None, callbacks=()):
    module = Classifier()
    data = StreamingDataModule(
        train=path, batch_size=10, return_indices=True, window_bytes=WINDOW_BYTES
    )
    strategy = DASOStrategy(warmup_epochs=0, cooldown_epochs=1, max_global_skips=2)
    fit = trainer(strategy, 3, callbacks=[c for c in (stop, *callbacks) if c is not None])
    try:
        fit.fit(module, datamodule=data, ckpt_path=ckpt_path)
    except Stop:
        pass
    return module, strategy


def test_daso_resume_mid_epoch_exactly_once(emulate_nodes, shared_dir):
    import lightning.pytorch as pl

    emulate_nodes(2)
    path = write_rows(shared_dir, rows=200)
    checkpoint = os.path.join(shared_dir, "mid.ckpt")

    uninterrupted, _ = _streaming_fit(path, shared_dir)
    stop = CheckpointAndStop(checkpoint, epoch=1, batch=2)
    first, _ = _streaming_fit(path, shared_dir, stop=stop)
    resumed_at = {}

    class Note(pl.Callback):
        def on_train_start(self, trainer, pl_module):
            resumed_at.update(daso_position(trainer.strategy.daso))

    second, strategy = _streaming_fit(path, shared_dir, ckpt_path=checkpoint, callbacks=[Note()])

    rows = torch.cat([rows_of_epoch(first, 1), rows_of_epoch(second, 1)])
    everyone = torch.cat(WORLD.allgather(rows)).sort().values
    collective_assert(torch.equal(everyone, torch.arange(200)), "epoch 1 not exactly once")
    assert resumed_at == stop.daso_state  # the same DASO phase, skips and position
    assert strategy.daso.epoch == 3
    # the same layout resumes exactly where it stopped: the run ends as the uninterrupted one
    collective_assert(
        torch.allclose(flat(second), flat(uninterrupted), atol=1e-6),
        "the resumed run differs from the uninterrupted one",
    )


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_daso_resume_4_then_2_processes_with_mpiexec(shared_dir):
    if SIZE != 1:
        pytest.skip("starts its own mpiexec jobs: runs only at MPI size 1")
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(mpiexec):
        pytest.skip("no mpiexec beside the Python interpreter")
    folder = os.path.join(shared_dir, "job")
    os.makedirs(folder)
    script = os.path.join(ROOT, "tests", "nn", "_lightning_parts.py")
    env = fresh_job_environment(HEAT_RANKS_PER_NODE="2", OMP_NUM_THREADS="1")
    for procs, phase in ((4, "first"), (2, "second")):
        done = subprocess.run(
            [mpiexec, "-n", str(procs), sys.executable, script, phase, folder],
            env=env,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(os.path.join(folder, "first.pkl"), "rb") as f:
        first = pickle.load(f)
    with open(os.path.join(folder, "second.pkl"), "rb") as f:
        second = pickle.load(f)
    rows = torch.cat([r["rows"] for r in first + second]).sort().values
    assert torch.equal(rows, torch.arange(240))  # epoch 1: every row exactly once across both
    before, after = first[0]["daso"], second[0]["daso"]
    assert after == before, (before, after)  # phase, skips and position kept


def test_bad_configuration_raises_everywhere(emulate_nodes, shared_dir):
    emulate_nodes(2)
    last = RANK == SIZE - 1
    assert_one_process_error_everywhere(
        ValueError,
        "warmup_epochs",
        DASOStrategy,
        warmup_epochs=-1 if last else 1,
    )
    assert_one_process_error_everywhere(
        ValueError,
        "downcast_type",
        DASOStrategy,
        downcast_type=torch.float64 if last else torch.bfloat16,
    )
    assert_one_process_error_everywhere(
        ValueError,
        "compression",
        HeatDataParallelStrategy,
        compression=torch.int8 if last else None,
    )
    if SIZE > 1:  # a communicator without every process of the job
        half = WORLD.Split(RANK % 2, RANK)
        message = raised_message(ValueError, DASOStrategy, comm=half)
        collective_assert(message is not None and "every process" in message, message)
    # at fit, before the first batch
    x, y = blobs(40, seed=RANK)
    module = Classifier()
    before = flat(module)
    message = raised_message(
        ValueError,
        trainer(DASOStrategy(warmup_epochs=2, cooldown_epochs=2), 3).fit,
        module,
        train_dataloaders=Batches(x, y, 20),
    )
    collective_assert(message is not None and "max_epochs=3" in message, message)
    assert torch.equal(flat(module), before)
    missing = os.path.join(shared_dir, "no-such-file.h5")
    message = raised_message(
        FileNotFoundError,
        trainer(DASOStrategy(warmup_epochs=0, cooldown_epochs=0), 1).fit,
        Classifier(),
        datamodule=StreamingDataModule(train=missing),
    )
    collective_assert(message is not None and "no-such-file.h5" in message, message)
    with pytest.raises(ValueError, match="at least one"):
        StreamingDataModule()
