"""
heat inside PyTorch Lightning: strategies on heat's data-parallel training, a cluster environment
from heat's communicator, and the streaming loader as a resumable DataModule.

* :class:`HeatEnvironment` -- ranks, world size and node layout from heat's communicator (MPI,
  node topology, ``HEAT_RANKS_PER_NODE``); ``torch.distributed`` initialised from MPI without
  ``MASTER_ADDR``;
* :class:`DASOStrategy` -- the LightningModule in :class:`heat.nn.DataParallelMultiGPU` with
  :class:`heat.optim.DASO` around its optimizer, driven by the fit loop; DASO's state in
  Lightning's checkpoints;
* :class:`HeatDataParallelStrategy` -- :class:`heat.nn.DataParallel` (buckets overlapped with
  backward, bf16/fp16 wire compression, hierarchical all-reduce);
* :class:`ZeroStrategy` -- :class:`heat.optim.ZeroRedundancyOptimizer` (ZeRO stages 1-3) in
  place of the optimizer the LightningModule configures; full optimizer state in the checkpoints;
* :class:`PipelineStrategy` -- the LightningModule's ``nn.Sequential`` trained as a
  :class:`heat.nn.Pipeline` (GPipe, 1F1B or PipeDream; stages x replicas); checkpoints in the
  format of one-process training;
* :class:`StreamingDataModule` -- :class:`heat.utils.data.StreamingDataLoader` for train / val /
  test / predict, its position in the checkpoint, so a fit resumes mid-epoch with every row
  exactly once, also on another number of processes.

The strategies' ``reduce``, ``all_gather``, ``broadcast`` and ``barrier`` (``self.log(...,
sync_dist=True)``, callbacks) go through heat's communicator. Run scripts under MPI::

    mpiexec -n 8 python fit.py

Needs PyTorch Lightning (``pip install 'heat-mpi[lightning]'``); ``import heat`` does not import
it, only ``import heat.nn.lightning`` does.
"""

from ._imports import INSTALL_HINT  # noqa: F401  (raises ImportError naming the extra)
from .datamodule import StreamingDataModule
from .environment import HeatEnvironment
from .pipeline_strategy import PipelineStrategy
from .strategies import DASOStrategy, HeatDataParallelStrategy
from .zero_strategy import ZeroStrategy

__all__ = [
    "HeatEnvironment",
    "DASOStrategy",
    "HeatDataParallelStrategy",
    "ZeroStrategy",
    "PipelineStrategy",
    "StreamingDataModule",
]
