"""
Pieces of the heat.nn.lightning tests, shared with the mpiexec job of the 4 -> 2 process resume
(``python tests/nn/_lightning_parts.py first|second FOLDER``): a tiny classifier, an in-memory
loader, a callback that checkpoints in the middle of an epoch and stops, the data file.
"""

import os
import pickle
import sys
import warnings

import h5py
import lightning.pytorch as pl  # noqa: I001  (after heat: the tests skip without it)
import torch

import heat as ht

WORLD = ht.MPI_WORLD
CENTRES = 3.0 * torch.tensor(
    [[1.0, 0, 0, 0.5, 0, 0], [0, 1.0, 0, 0, 0.5, 0], [0, 0, 1.0, 0, 0, 0.5]]
)

#: 20-row windows of the data file's rows (6 float32 + 1 int64): several rounds per epoch
WINDOW_BYTES = 7 * 20 * 32

warnings.filterwarnings("ignore", ".*does not have many workers.*")
warnings.filterwarnings("ignore", ".*smaller than the logging interval.*")
warnings.filterwarnings("ignore", ".*litlogger.*")


def blobs(samples, seed):
    """Three Gaussian classes in 6 dimensions, well apart (the same centres for every seed)."""
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 3, (samples,), generator=generator)
    return CENTRES[labels] + torch.randn(samples, 6, generator=generator), labels


class Batches:
    """Fixed batches with a length (a list would be taken for several loaders)."""

    def __init__(self, x, y, batch_size):
        self.batches = [
            (x[i : i + batch_size], y[i : i + batch_size]) for i in range(0, len(x), batch_size)
        ]

    def __len__(self):
        return len(self.batches)

    def __iter__(self):
        return iter(self.batches)


class Classifier(pl.LightningModule):
    """A 6-8-3 MLP; records the rows it trained on when batches carry their indices."""

    def __init__(self, seed=0, lr=0.1, step_lr=False):
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            self.net = torch.nn.Sequential(
                torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)
            )
        self.lr, self.step_lr = lr, step_lr
        self.seen = []  # (epoch, row numbers) per batch

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch[0], batch[1]
        if len(batch) == 3:
            self.seen.append((self.current_epoch, batch[2].clone()))
        loss = torch.nn.functional.cross_entropy(self(x.float()), y.long())
        self.log("rank_mean", float(WORLD.rank), sync_dist=True, on_step=False, on_epoch=True)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)
        if not self.step_lr:
            return optimizer
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
        return {"optimizer": optimizer, "lr_scheduler": scheduler}


class Stop(Exception):
    """Ends a fit after its checkpoint (on every process at the same batch)."""


class CheckpointAndStop(pl.Callback):
    """Save a checkpoint after batch ``batch`` of epoch ``epoch``, note DASO's state, stop."""

    def __init__(self, path, epoch, batch):
        self.path, self.epoch, self.batch = path, epoch, batch
        self.daso_state = None

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if (trainer.current_epoch, batch_idx) == (self.epoch, self.batch):
            trainer.save_checkpoint(self.path)
            daso = trainer.strategy.daso
            self.daso_state = daso_position(daso)
            raise Stop()


def daso_position(daso):
    """The schedule and the position in the epoch: what a resume must reproduce."""
    return {
        "schedule": daso.schedule.state_dict(),
        "phase": daso.schedule.phase,
        "current_batch": daso.current_batch,
        "global_skip": daso.global_skip,
    }


def trainer(strategy, max_epochs, **kwargs):
    kwargs.setdefault("enable_checkpointing", False)
    return pl.Trainer(
        strategy=strategy,
        accelerator="cpu",
        max_epochs=max_epochs,
        enable_progress_bar=False,
        enable_model_summary=False,
        logger=False,
        **kwargs,
    )


def write_rows(folder, rows=240, name="rows.h5"):
    """An HDF5 file of ``rows`` blob samples (x, y); collective, rank 0 writes."""
    path = os.path.join(folder, name)
    if WORLD.rank == 0:
        x, y = blobs(rows, seed=7)
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=x.numpy())
            f.create_dataset("y", data=y.numpy())
    return WORLD.bcast(path if WORLD.rank == 0 else None)


def rows_of_epoch(module, epoch):
    """The row numbers this process trained on in ``epoch``."""
    parts = [rows for e, rows in module.seen if e == epoch]
    return torch.cat(parts) if parts else torch.empty(0, dtype=torch.int64)


def _job(phase, folder):
    """The 4 -> 2 process resume: 'first' checkpoints mid-epoch at 4, 'second' resumes at 2."""
    from heat.nn.lightning import DASOStrategy, StreamingDataModule

    torch.set_num_threads(1)
    path = write_rows(folder) if phase == "first" else os.path.join(folder, "rows.h5")
    data = StreamingDataModule(
        train=path, batch_size=10, return_indices=True, window_bytes=WINDOW_BYTES
    )
    module = Classifier()
    strategy = DASOStrategy(warmup_epochs=0, cooldown_epochs=1, max_global_skips=2)
    checkpoint = os.path.join(folder, "mid.ckpt")
    if phase == "first":
        stop = CheckpointAndStop(checkpoint, epoch=1, batch=2)
        try:
            trainer(strategy, 3, callbacks=[stop]).fit(module, datamodule=data)
        except Stop:
            pass
        result = {"rows": rows_of_epoch(module, 1), "daso": stop.daso_state}
    else:
        resumed = {}

        class Note(pl.Callback):
            def on_train_start(self, trainer, pl_module):
                resumed.update(daso_position(trainer.strategy.daso))

        trainer(strategy, 3, callbacks=[Note()]).fit(module, datamodule=data, ckpt_path=checkpoint)
        result = {"rows": rows_of_epoch(module, 1), "daso": resumed}
    gathered = WORLD.gather(result, root=0)
    if WORLD.rank == 0:
        with open(os.path.join(folder, phase + ".pkl"), "wb") as f:
            pickle.dump(gathered, f)


if __name__ == "__main__":
    _job(sys.argv[1], sys.argv[2])
