"""
Tests of heat.nn.lightning.PipelineStrategy under 1-4 processes: a float64 LightningModule whose
nn.Sequential is trained as a pipeline (GPipe and 1F1B, uneven layers per stage, replicas) ends
with the parameters of plain single-process torch training on the same global batches (Adam, two
parameter groups, a StepLR schedule); the checkpoint holds the whole model and torch's state of
the configured optimizer, and a fit resumed from it (with another schedule) continues
identically; accumulation, gradient clipping (global norm and value) and validation; PipeDream
converges; bad configurations raise on every process. Skipped without PyTorch Lightning
(``pip install 'heat-mpi[lightning]'``).
"""

import os

import pytest
import torch

import heat as ht
from tests.helpers import assert_one_process_error_everywhere, collective_assert, raised_message

pytest.importorskip(
    "lightning.pytorch",
    reason="PyTorch Lightning is not installed (pip install 'heat-mpi[lightning]')",
)

import lightning.pytorch as pl  # noqa: E402

from heat.nn.lightning import PipelineStrategy  # noqa: E402
from tests.nn._lightning_parts import Batches, trainer  # noqa: E402
from tests.optim.test_zero import seeded_model  # noqa: E402
from tests.utils.data._files import shared_dir  # noqa: E402, F401 (fixture)

WORLD = ht.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size
F64 = torch.float64
TOLERANCE = 1e-5  # float64: the differences measured are ~1e-16
BATCH = 12  # global batch: 2 replicas x 2 micro-batches of 3 rows
BATCHES = 3  # per epoch
WIDTHS = (5, 7, 4, 3)  # Linear, Tanh, Linear, Tanh, Linear: uneven stages at 2, 3 and 4
mse = torch.nn.functional.mse_loss


def adam_with_schedule(net, sgd=False):
    """
    Adam (or SGD: not blind to the gradients' scale, for clipping) with two parameter groups
    (their own learning rates) and a halving per epoch.
    """
    params = [
        {"params": net[0].parameters(), "lr": 2e-2},
        {"params": [p for layer in list(net)[1:] for p in layer.parameters()]},
    ]
    if sgd:
        optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    else:
        optimizer = torch.optim.Adam(params, lr=1e-2, betas=(0.8, 0.99))
    return optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)


class Regressor(pl.LightningModule):
    def __init__(self, seed=0, sgd=False):
        super().__init__()
        self.net = seeded_model(WIDTHS, seed)
        self.loss_fn = mse
        self.sgd = sgd

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.trainer.strategy.train_step(x, y)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", self.loss_fn(self(x), y), sync_dist=True)

    def configure_optimizers(self):
        optimizer, scheduler = adam_with_schedule(self.net, self.sgd)
        return {"optimizer": optimizer, "lr_scheduler": scheduler}


def global_batches(seed=3, batches=BATCHES):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(batches * BATCH, WIDTHS[0], dtype=F64, generator=generator)
    return x, torch.randn(batches * BATCH, WIDTHS[-1], dtype=F64, generator=generator)


def whole_batches(seed=3):
    """The global batches, the same on every process (one replica)."""
    x, y = global_batches(seed)
    return Batches(x, y, BATCH)


def loader(replicas, seed=3):
    """
    The global batches in a DataLoader, to which Lightning adds a DistributedSampler over the
    replicas: replica r gets rows r, r + replicas, ... of the (in training shuffled) rows, so
    the replicas' batches b together are global batch b.
    """
    dataset = torch.utils.data.TensorDataset(*global_batches(seed))
    return torch.utils.data.DataLoader(dataset, batch_size=BATCH // replicas)


def expected_loss(net, seed):
    """The mean loss of ``net`` over the global batches of ``seed``."""
    x, y = global_batches(seed)
    with torch.no_grad():
        losses = [
            mse(net(x[b * BATCH : (b + 1) * BATCH]), y[b * BATCH : (b + 1) * BATCH])
            for b in range(BATCHES)
        ]
    return float(sum(losses) / BATCHES)


def reference(epochs, accumulate=1, clip=None, sgd=False, shuffled=False):
    """
    Plain torch on one process, whole batches: the net and the optimizer after ``epochs``.
    ``shuffled``: in the order of Lightning's DistributedSampler (seed 0, shuffled per epoch),
    whose shares of the replicas together make each global batch.
    """
    net = seeded_model(WIDTHS, 0)
    optimizer, scheduler = adam_with_schedule(net, sgd)
    x, y = global_batches()
    for epoch in range(epochs):
        order = torch.arange(len(x))
        if shuffled:
            order = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch))
        for b in range(BATCHES):
            rows = order[b * BATCH : (b + 1) * BATCH]
            (mse(net(x[rows]), y[rows]) / accumulate).backward()
            if (b + 1) % accumulate == 0 or b == BATCHES - 1:
                if clip == "norm":
                    torch.nn.utils.clip_grad_norm_(net.parameters(), 0.05)
                elif clip == "value":
                    torch.nn.utils.clip_grad_value_(net.parameters(), 0.01)
                optimizer.step()
                optimizer.zero_grad()
        scheduler.step()
    return net, optimizer


def flat(tensors):
    return torch.cat([t.detach().reshape(-1) for t in tensors])


def uneven_split():
    """The first layer of every stage but the first: the last stage holds only the last layer."""
    return list(range(6 - SIZE, 5)) if SIZE > 1 else None


def check_checkpoint(path, net, optimizer):
    """The checkpoint holds ``net``'s state and ``optimizer``'s, in torch's format."""
    checkpoint = torch.load(path, weights_only=False)
    saved, expected = checkpoint["optimizer_states"][0], optimizer.state_dict()
    worst = max(
        float((saved["state"][i][key] - expected["state"][i][key]).abs().max())
        for i in expected["state"]
        for key in ("exp_avg", "exp_avg_sq", "step")
    )
    ok = sorted(saved["state"]) == sorted(expected["state"]) and worst <= TOLERANCE
    ok = ok and [g["lr"] for g in saved["param_groups"]] == [0.01, 0.005]
    ok = ok and [g["params"] for g in saved["param_groups"]] == [
        g["params"] for g in expected["param_groups"]
    ]
    collective_assert(ok, f"{path}: optimizer state differs by {worst}")
    weights = checkpoint["state_dict"]
    expected_weights = {"net." + k: v for k, v in net.state_dict().items()}
    ok = list(weights) == list(expected_weights)
    difference = (flat(weights.values()) - flat(expected_weights.values())).abs().max()
    collective_assert(ok and float(difference) <= TOLERANCE, f"{path}: saved weights differ")


class CheckStages(pl.Callback):
    """During fit the module holds the Pipeline; the other stages' layers hold no memory."""

    def __init__(self):
        self.ok = False

    def on_train_start(self, trainer, pl_module):
        pipe = pl_module.net
        kept = {id(p) for p in pipe.stage_module.parameters()}
        others = [p for p in trainer.strategy._sequential.parameters() if id(p) not in kept]
        self.ok = isinstance(pipe, ht.nn.Pipeline) and all(p.is_meta for p in others)
        self.ok = self.ok and len(others) + len(kept) == len(
            list(seeded_model(WIDTHS).parameters())
        )


class SaveAtTrainEnd(pl.Callback):
    """A checkpoint while the pipeline still holds the stages (before the strategy's teardown)."""

    def __init__(self, path):
        self.path = path

    def on_train_end(self, trainer, pl_module):
        trainer.save_checkpoint(self.path)


@pytest.mark.parametrize(
    "schedule, replicas, uneven",
    [("gpipe", 1, False), ("1f1b", 1, True), ("1f1b", 2, False)],
)
def test_trains_like_one_process_and_resumes(schedule, replicas, uneven, shared_dir):  # noqa: F811
    if SIZE % replicas:
        pytest.skip(f"replicas={replicas} needs a process count divisible by it")
    split = uneven_split() if uneven else None
    path = os.path.join(shared_dir, f"{schedule}-{replicas}.ckpt")
    module = Regressor()
    strategy = PipelineStrategy(
        micro_batches=2, schedule=schedule, replicas=replicas, split_points=split
    )
    stages = CheckStages()
    fit = trainer(strategy, 1, callbacks=[SaveAtTrainEnd(path), stages])
    fit.fit(module, loader(replicas), loader(replicas, seed=4))  # sanity check, validation
    collective_assert(stages.ok, "the module did not hold the Pipeline, or other stages' layers")
    net, optimizer = reference(1, shuffled=True)
    collective_assert(isinstance(module.net, torch.nn.Sequential), "no Sequential after fit")
    difference = float((flat(module.net.parameters()) - flat(net.parameters())).abs().max())
    collective_assert(difference <= TOLERANCE, f"{schedule}: parameters differ by {difference}")
    measured = float(fit.callback_metrics["val_loss"])  # the replicas' mean, the same everywhere
    ok = abs(measured - expected_loss(net, 4)) <= TOLERANCE
    collective_assert(ok and WORLD.allgather(measured) == [measured] * SIZE, "validation loss")

    # the checkpoint: the whole model and torch's state of the configured optimizer; also one
    # taken after fit
    after = os.path.join(shared_dir, f"{schedule}-{replicas}-after.ckpt")
    fit.save_checkpoint(after)
    for saved_path in (path, after):
        check_checkpoint(saved_path, net, optimizer)

    # a fresh module (other initial values) resumed from it, with the other schedule and an
    # even cut, continues as the plain training
    resumed = Regressor(seed=1)
    other = "1f1b" if schedule == "gpipe" else "gpipe"
    strategy = PipelineStrategy(micro_batches=3, schedule=other)
    trainer(strategy, 2).fit(resumed, loader(1), ckpt_path=path)
    net, _ = reference(2, shuffled=True)
    difference = float((flat(resumed.net.parameters()) - flat(net.parameters())).abs().max())
    collective_assert(difference <= TOLERANCE, f"{schedule}: resumed run differs by {difference}")


@pytest.mark.parametrize("clip, accumulate", [("norm", BATCHES), ("value", 1)])
def test_accumulation_clipping_validation(clip, accumulate):
    module = Regressor(sgd=True)
    fit = trainer(
        PipelineStrategy(micro_batches=3),
        1,
        accumulate_grad_batches=accumulate,
        gradient_clip_val=0.05 if clip == "norm" else 0.01,
        gradient_clip_algorithm=clip,
        num_sanity_val_steps=0,
    )
    fit.fit(module, whole_batches(), whole_batches(seed=4))
    net, _ = reference(1, accumulate, clip, sgd=True)
    difference = float((flat(module.net.parameters()) - flat(net.parameters())).abs().max())
    collective_assert(difference <= TOLERANCE, f"{clip}: parameters differ by {difference}")
    measured = float(fit.callback_metrics["val_loss"])
    collective_assert(abs(measured - expected_loss(net, 4)) <= TOLERANCE, "validation loss")


class Linear(pl.LightningModule):
    """y = x A on a 4-layer net: PipeDream's stale weights still converge."""

    def __init__(self):
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(5)
            self.net = torch.nn.Sequential(
                torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.Linear(8, 2)
            ).double()
        self.loss_fn = mse
        self.losses = []

    def training_step(self, batch, batch_idx):
        loss = self.trainer.strategy.train_step(*batch)
        self.losses.append(float(loss))
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self.loss_fn(self.net(batch[0]), batch[1]), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.net.parameters(), lr=0.05, momentum=0.5)


def linear_task():
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(96, 4, dtype=F64, generator=generator)
    return x, x @ torch.randn(4, 2, dtype=F64, generator=generator)


def test_pipedream_converges():
    x, y = linear_task()
    module = Linear()
    fit = trainer(PipelineStrategy(micro_batches=4, schedule="pipedream"), 6)
    fit.fit(module, Batches(x, y, 16), Batches(x[:32], y[:32], 16))
    first, last = module.losses[0], sum(module.losses[-6:]) / 6
    ok = last < 0.2 * first and float(fit.callback_metrics["val_loss"]) < 0.2 * first
    collective_assert(ok, f"pipedream: loss {first} -> {last}")
    # every process holds the same trained model afterwards
    parameters = flat(module.net.parameters())
    collective_assert(
        all(torch.equal(parameters, p) for p in WORLD.allgather(parameters)), "models differ"
    )
    # evaluation alone (a pipeline without optimizer) gives the trained model's loss
    (metrics,) = fit.validate(module, Batches(x[:32], y[:32], 16), verbose=False)
    with torch.no_grad():
        expected = float(sum(mse(module.net(x[i : i + 16]), y[i : i + 16]) for i in (0, 16)) / 2)
    collective_assert(abs(metrics["val_loss"] - expected) <= TOLERANCE, "validate alone")


def test_pipedream_resumes_like_uninterrupted(shared_dir):  # noqa: F811
    """
    The stream is flushed before every validation (and checkpoint): with a validation per
    epoch, a fit resumed from the checkpoint of an epoch's end continues as the uninterrupted.
    """
    x, y = linear_task()
    train, val = Batches(x[:48], y[:48], 16), Batches(x[:16], y[:16], 16)
    path = os.path.join(shared_dir, "pipedream.ckpt")
    modules = [Linear(), Linear(), Linear()]
    with torch.random.fork_rng():
        torch.manual_seed(7)
        for p in modules[2].parameters():  # other initial values: the checkpoint must set them
            p.data.normal_()
    for module, epochs, options in (
        (modules[0], 2, {}),
        (modules[1], 1, dict(callbacks=[SaveAtTrainEnd(path)])),
        (modules[2], 2, None),
    ):
        strategy = PipelineStrategy(micro_batches=4, schedule="pipedream")
        if options is None:
            trainer(strategy, epochs).fit(module, train, val, ckpt_path=path)
        else:
            trainer(strategy, epochs, **options).fit(module, train, val)
    difference = float((flat(modules[0].parameters()) - flat(modules[2].parameters())).abs().max())
    collective_assert(difference <= TOLERANCE, f"pipedream: resumed run differs by {difference}")
    moved = float((flat(modules[0].parameters()) - flat(modules[1].parameters())).abs().max())
    collective_assert(moved > 1e-3, "the second epoch changed nothing")


class NoPipeline(Regressor):
    def training_step(self, batch, batch_idx):
        x, y = batch
        return mse(self(x), y)


def test_bad_configurations_raise_everywhere():
    last = RANK == SIZE - 1
    assert_one_process_error_everywhere(
        ValueError, "schedule", PipelineStrategy, schedule="zigzag" if last else "gpipe"
    )
    assert_one_process_error_everywhere(
        ValueError, "micro_batches", PipelineStrategy, micro_batches=0 if last else 1
    )
    assert_one_process_error_everywhere(
        ValueError, "replicas", PipelineStrategy, replicas=SIZE + 1 if last else 1
    )
    assert_one_process_error_everywhere(
        TypeError, "layers", PipelineStrategy, layers=3 if last else "net"
    )
    # at fit, before the first batch, with the module untouched
    pipedream = dict(schedule="pipedream")
    for options, strategy_options, change, fragment in (
        (dict(gradient_clip_val=0.5 if last else 0.0), pipedream, None, "gradient clipping"),
        (dict(accumulate_grad_batches=2 if last else 1), pipedream, None, "accumulation"),
        ({}, {}, "loss", "loss_fn"),
        ({}, {}, "optimizer", "exactly the trainable parameters"),
        ({}, dict(split_points=[99]), None, "split_points"),  # checked by the Pipeline
    ):
        module = Regressor()
        if change == "loss" and last:
            module.loss_fn = None
        if change == "optimizer" and last:
            module.configure_optimizers = lambda: torch.optim.SGD(module.net[0].parameters(), 0.1)
        before = flat(module.parameters())
        fit = trainer(PipelineStrategy(**strategy_options), 1, **options).fit
        message = raised_message(ValueError, fit, module, whole_batches())
        ok = message is not None and fragment in message
        ok = ok and isinstance(module.net, torch.nn.Sequential)
        ok = ok and torch.equal(flat(module.parameters()), before)
        collective_assert(ok, f"rank {RANK}: {message}")
    # a training_step that does not run the pipeline
    fit = trainer(PipelineStrategy(), 1).fit
    message = raised_message(RuntimeError, fit, NoPipeline(), whole_batches())
    collective_assert(message is not None and "train_step" in message, f"rank {RANK}: {message}")
    collective_assert(WORLD.allreduce(1) == SIZE, "allreduce after the errors")
