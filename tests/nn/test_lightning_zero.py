"""
Tests of heat.nn.lightning.ZeroStrategy under 1-4 processes: a float64 LightningModule trained
with ZeRO stages 1-3 (Adam, two parameter groups in stages 1 and 2, a StepLR schedule) ends with
the parameters of plain single-process torch training on the same global batches; the checkpoint
holds torch's full optimizer state (equal to the plain Adam's) and the full parameters, and a
fit resumed from it (also with another stage) continues identically; gradient accumulation and
validation; bad options raise on every process. Skipped without PyTorch Lightning
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

from heat.nn.lightning import ZeroStrategy  # noqa: E402
from tests.nn._lightning_parts import Batches, trainer  # noqa: E402
from tests.optim.test_zero import seeded_model  # noqa: E402
from tests.utils.data._files import shared_dir  # noqa: E402, F401 (fixture)

WORLD = ht.MPI_WORLD
RANK, SIZE = WORLD.rank, WORLD.size
F64 = torch.float64
TOLERANCE = 1e-6  # float64: the differences measured are ~1e-16
BATCH = 12  # global batch, divisible by 1, 2, 3 and 4: the mean of the processes' means
BATCHES = 3  # per epoch
WIDTHS = (5, 7, 4, 3)  # 89 parameters: divisible by none of 2, 3, 4
mse = torch.nn.functional.mse_loss


def mlp(seed):
    """A float64 MLP of Linear layers and Tanh."""
    return seeded_model(WIDTHS, seed)


def adam_with_schedule(net, groups):
    """Adam (two groups with their own learning rates, or one) and a halving per epoch."""
    if groups == 2:
        params = [
            {"params": net[0].parameters(), "lr": 2e-2},
            {"params": [p for layer in list(net)[1:] for p in layer.parameters()]},
        ]
    else:
        params = net.parameters()
    optimizer = torch.optim.Adam(params, lr=1e-2, betas=(0.8, 0.99))
    return optimizer, torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)


class Regressor(pl.LightningModule):
    def __init__(self, seed=0, groups=1):
        super().__init__()
        self.net = mlp(seed)
        self.groups = groups

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return mse(self(x), y)

    def configure_optimizers(self):
        optimizer, scheduler = adam_with_schedule(self.net, self.groups)
        return {"optimizer": optimizer, "lr_scheduler": scheduler}


def global_batches():
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(BATCHES * BATCH, WIDTHS[0], dtype=F64, generator=generator)
    return x, torch.randn(BATCHES * BATCH, WIDTHS[-1], dtype=F64, generator=generator)


def own_batches():
    """This process's rows of every global batch, as batches of BATCH // SIZE rows."""
    x, y = global_batches()
    rows = BATCH // SIZE
    mine = torch.cat(
        [torch.arange(b * BATCH + RANK * rows, b * BATCH + (RANK + 1) * rows) for b in range(3)]
    )
    return Batches(x[mine], y[mine], rows)


def reference(epochs, groups):
    """Plain torch on one process, whole batches: the net and the optimizer after ``epochs``."""
    net = mlp(0)
    optimizer, scheduler = adam_with_schedule(net, groups)
    x, y = global_batches()
    for _ in range(epochs):
        for b in range(BATCHES):
            rows = slice(b * BATCH, (b + 1) * BATCH)
            optimizer.zero_grad()
            mse(net(x[rows]), y[rows]).backward()
            optimizer.step()
        scheduler.step()
    return net, optimizer


def flat(tensors):
    return torch.cat([t.detach().reshape(-1) for t in tensors])


class SaveAtTrainEnd(pl.Callback):
    """A checkpoint while ZeRO still holds the shards (before the strategy's teardown)."""

    def __init__(self, path):
        self.path = path

    def on_train_end(self, trainer, pl_module):
        trainer.save_checkpoint(self.path)


@pytest.mark.parametrize("stage", [1, 2, 3])
def test_trains_like_one_process_and_resumes(stage, shared_dir):  # noqa: F811
    groups = 1 if stage == 3 else 2
    path = os.path.join(shared_dir, f"stage{stage}.ckpt")
    module = Regressor(groups=groups)
    strategy = ZeroStrategy(stage=stage, bucket_size_mb=300 / 2**20)  # several buckets
    trainer(strategy, 1, callbacks=[SaveAtTrainEnd(path)]).fit(module, own_batches())
    net, optimizer = reference(1, groups)
    difference = float((flat(module.parameters()) - flat(net.parameters())).abs().max())
    collective_assert(difference <= TOLERANCE, f"stage {stage}: parameters differ by {difference}")

    # the checkpoint: torch's full state of the plain optimizer, the full parameters
    checkpoint = torch.load(path, weights_only=False)
    saved, expected = checkpoint["optimizer_states"][0], optimizer.state_dict()
    worst = max(
        float((saved["state"][i][key] - expected["state"][i][key]).abs().max())
        for i in expected["state"]
        for key in ("exp_avg", "exp_avg_sq", "step")
    )
    lrs = [g["lr"] for g in saved["param_groups"]]
    ok = worst <= TOLERANCE and lrs == [g["lr"] for g in expected["param_groups"]]
    collective_assert(ok, f"stage {stage}: optimizer state differs by {worst}, lrs {lrs}")
    weights = checkpoint["state_dict"]
    difference = float((flat(weights.values()) - flat(net.state_dict().values())).abs().max())
    collective_assert(difference <= TOLERANCE, f"stage {stage}: saved weights differ")

    # a fresh module (other initial values) resumed from it continues as the plain training,
    # also with another stage (the checkpoint is torch's format): 1 -> 2, 2 -> 1, 3 -> 3
    resumed = Regressor(seed=1, groups=groups)
    other = {1: 2, 2: 1, 3: 3}[stage]
    trainer(ZeroStrategy(stage=other), 2).fit(resumed, own_batches(), ckpt_path=path)
    net, _ = reference(2, groups)
    difference = float((flat(resumed.parameters()) - flat(net.parameters())).abs().max())
    collective_assert(difference <= TOLERANCE, f"stage {stage}: resumed run differs")


def test_bad_options_raise_everywhere():
    last = RANK == SIZE - 1
    assert_one_process_error_everywhere(ValueError, "stage", ZeroStrategy, stage=4 if last else 1)
    assert_one_process_error_everywhere(
        TypeError, "prefetch", ZeroStrategy, prefetch="yes" if last else True
    )
    assert_one_process_error_everywhere(
        ValueError, "bucket_size_mb", ZeroStrategy, bucket_size_mb=0 if last else 1
    )
    # at fit, before the first batch, with the module untouched
    for options, groups, fragment in (
        (dict(gradient_clip_val=0.5 if last else 0.0), 1, "gradient clipping"),
        ({}, 2 if last else 1, "one parameter group"),
    ):
        module = Regressor(groups=groups)
        before = flat(module.parameters())
        fit = trainer(ZeroStrategy(stage=3), 1, **options).fit
        message = raised_message(ValueError, fit, module, own_batches())
        ok = message is not None and fragment in message
        ok = ok and torch.equal(flat(module.parameters()), before)
        collective_assert(ok, f"rank {RANK}: {message}")
    collective_assert(WORLD.allreduce(1) == SIZE, "allreduce after the errors")


class WithValidation(Regressor):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", mse(self(x), y), sync_dist=True)


@pytest.mark.parametrize("stage", [2, 3])
def test_accumulation_and_validation(stage):
    """One step of the three batches' mean gradient; evaluation (in stage 3 collective) runs."""
    module = WithValidation()
    fit = trainer(ZeroStrategy(stage=stage), 1, accumulate_grad_batches=BATCHES)
    fit.fit(module, own_batches(), own_batches())
    net, _ = reference(0, 1)
    optimizer, _ = adam_with_schedule(net, 1)
    x, y = global_batches()
    for b in range(BATCHES):  # Lightning divides each loss by the number of accumulated batches
        rows = slice(b * BATCH, (b + 1) * BATCH)
        (mse(net(x[rows]), y[rows]) / BATCHES).backward()
    optimizer.step()
    difference = float((flat(module.parameters()) - flat(net.parameters())).abs().max())
    collective_assert(difference <= TOLERANCE, f"stage {stage}: parameters differ by {difference}")
    with torch.no_grad():
        expected = sum(mse(net(x[b * BATCH : (b + 1) * BATCH]), y[b * BATCH : (b + 1) * BATCH])
                       for b in range(BATCHES)) / BATCHES  # fmt: skip
    collective_assert(
        abs(float(fit.callback_metrics["val_loss"]) - float(expected)) <= TOLERANCE,
        f"stage {stage}: validation loss",
    )
