"""
DASO inside PyTorch Lightning: a LightningModule, heat's streaming DataModule, DASOStrategy.

    mpiexec -n 2 python examples/lightning_daso.py          # two emulated nodes of one process
    mpiexec -n 4 python examples/lightning_daso.py          # HEAT_RANKS_PER_NODE=2: two of two
    mpiexec -n 2 python examples/lightning_daso.py --small  # CI size (or HEAT_EXAMPLES_SMALL=1)

Needs PyTorch Lightning (``pip install 'heat-mpi[lightning]'``). No MASTER_ADDR or other variable
is needed: heat's cluster environment takes ranks and nodes from MPI. The model code is plain
Lightning; ``DASOStrategy`` wraps it in ``ht.nn.DataParallelMultiGPU`` and drives ``ht.optim.DASO``
from the fit loop, and ``StreamingDataModule`` streams an HDF5 file larger than its window
(globally shuffled, every row once per epoch, its position saved in Lightning's checkpoints).
"""

import argparse
import os
import shutil
import tempfile
import warnings

# Emulate nodes of one process each unless the caller chose otherwise (before heat builds the
# node topology, simplest before importing heat).
os.environ.setdefault("HEAT_RANKS_PER_NODE", "1")

import lightning.pytorch as pl  # noqa: E402
import torch  # noqa: E402

import heat as ht  # noqa: E402
from heat.nn.lightning import DASOStrategy, StreamingDataModule  # noqa: E402

warnings.filterwarnings("ignore", ".*(litlogger|does not have many workers|logging interval).*")

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--small", action="store_true", help="CI sizes (also HEAT_EXAMPLES_SMALL=1)")
args = parser.parse_args()
small = args.small or os.environ.get("HEAT_EXAMPLES_SMALL") == "1"
samples, features, classes, batch_size = (1_200, 8, 3, 30) if small else (100_000, 32, 4, 128)
epochs = 4 if small else 6
torch.set_num_threads(1)

comm = ht.MPI_WORLD
say = print if comm.rank == 0 else (lambda *a, **k: None)

# -- data: one HDF5 file with a training and a validation split ------------------------------
folder = comm.bcast(tempfile.mkdtemp(prefix="heat-lightning-") if comm.rank == 0 else None)
path = os.path.join(folder, "blobs.h5")
ht.random.seed(0)
x = ht.random.randn(samples, features, dtype=ht.float32, split=0)
teacher = ht.random.randn(features, classes, dtype=ht.float32)
y = ht.argmax(x @ teacher, axis=1).astype(ht.int64)
cut = int(0.8 * samples)
for name, values in (("x_train", x[:cut]), ("y_train", y[:cut]), ("x_val", x[cut:]), ("y_val", y[cut:])):  # fmt: skip
    ht.save(values, path, name, mode="a")
data = StreamingDataModule(
    train=path,
    val=path,
    datasets={"train": ("x_train", "y_train"), "val": ("x_val", "y_val")},
    batch_size=batch_size,
    window_bytes=7 * 4 * features * 100,  # windows of ~100 rows: the file is many windows
)


# -- the model: plain Lightning ---------------------------------------------------------------
class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(features, 32), torch.nn.ReLU(), torch.nn.Linear(32, classes)
        )

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        accuracy = (self.net(x).argmax(1) == y).float().mean()
        self.log("val_acc", accuracy, sync_dist=True)  # averaged over heat's communicator

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        return {"optimizer": optimizer, "lr_scheduler": scheduler}


torch.manual_seed(0)
model = Classifier()
strategy = DASOStrategy(warmup_epochs=1, cooldown_epochs=1, max_global_skips=4)
trainer = pl.Trainer(
    strategy=strategy,
    accelerator="cpu",
    max_epochs=epochs,
    enable_progress_bar=not small,
    enable_model_summary=False,
    logger=False,
    default_root_dir=folder,
)
trainer.fit(model, datamodule=data)

# -- what happened ----------------------------------------------------------------------------
daso = strategy.daso
groups = daso.groups
say(f"{comm.size} process(es) on {groups.num_nodes} (emulated) node(s) of {groups.node_sizes}")
say(
    f"{len(data.loaders['train'])} batches per epoch and process; windows of {data.loaders['train'].window_rows} rows"
)
for epoch in range(epochs):
    actions = [r.action for r in daso.timeline if r.epoch == epoch]
    say(
        f"epoch {epoch}: {actions.count('blocking')} blocking averages, "
        f"{sum('send' in a for a in actions)} non-blocking sends of {len(actions)} batches"
    )
say(f"final train loss {float(trainer.callback_metrics['train_loss']):.4f}")
say(f"final validation accuracy {float(trainer.callback_metrics['val_acc']):.3f}")
comm.Barrier()
if comm.rank == 0:
    shutil.rmtree(folder, ignore_errors=True)
