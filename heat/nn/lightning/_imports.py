"""Where PyTorch Lightning comes from: the ``lightning`` package, else ``pytorch_lightning``."""

from __future__ import annotations

INSTALL_HINT = (
    "heat.nn.lightning needs PyTorch Lightning: pip install 'heat-mpi[lightning]' "
    "(or pip install lightning)"
)

try:  # the unified package first; both expose the same classes under the same names
    import lightning.pytorch as pl
    from lightning.fabric.plugins import ClusterEnvironment
    from lightning.fabric.utilities.distributed import (
        _all_gather_ddp_if_available,
        _sync_ddp_if_available,
    )
    from lightning.pytorch.plugins.precision import MixedPrecision
    from lightning.pytorch.strategies import ParallelStrategy
    from lightning.pytorch.utilities.rank_zero import rank_zero_only
except ImportError:
    try:
        import pytorch_lightning as pl
        from lightning_fabric.plugins import ClusterEnvironment
        from lightning_fabric.utilities.distributed import (
            _all_gather_ddp_if_available,
            _sync_ddp_if_available,
        )
        from pytorch_lightning.plugins.precision import MixedPrecision
        from pytorch_lightning.strategies import ParallelStrategy
        from pytorch_lightning.utilities.rank_zero import rank_zero_only
    except ImportError:
        raise ImportError(INSTALL_HINT) from None

__all__ = [
    "pl",
    "ClusterEnvironment",
    "MixedPrecision",
    "ParallelStrategy",
    "rank_zero_only",
    "_all_gather_ddp_if_available",
    "_sync_ddp_if_available",
]
