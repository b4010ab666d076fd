"""
:class:`ZeroStrategy`: Lightning training with :class:`heat.optim.ZeroRedundancyOptimizer`
(ZeRO stages 1-3) in place of the optimizer the LightningModule configures.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import torch

from ...core.communication import MPICommunication, torch_process_group, verdicts
from ...core.communication.node_groups import broadcast_tensors
from ...core.sanitation import check_bool
from ...optim.gradients import bucket_bytes
from ...optim.zero import ZeroRedundancyOptimizer
from ..data_parallel import _agree_on_model
from ._imports import pl
from .strategies import _HeatParallelStrategy

__all__ = ["ZeroStrategy"]


class ZeroStrategy(_HeatParallelStrategy):
    """
    A Lightning strategy that trains with ZeRO (:class:`heat.optim.ZeroRedundancyOptimizer`):
    every process its part of the data, and the optimizer the LightningModule configures is
    replaced by a ``ZeroRedundancyOptimizer`` of the same class, parameter groups and options,
    so that its state (stage 1), also the gradients (stage 2) and the parameters (stage 3) are
    sharded over the processes. ZeRO averages the gradients itself: an all-reduce in ``step``
    (stage 1), reduce-scatters during backward (stages 2, 3). The result of every step is that
    of one process training on the whole batch.

    Learning-rate schedulers are pointed at the replacement (they change ``lr`` in its parameter
    groups); gradient accumulation and ``precision="bf16-mixed"`` work.

    Parameters
    ----------
    comm : MPICommunication, optional
        Must hold every process of the job (default: heat's default communicator).
    stage : int
        1, 2 or 3 (default 1).
    bucket_size_mb : float
        Largest parameter bucket in stages 1 and 2 (default 25).
    prefetch : bool
        Stage 3: gather the next module's parameters while the current one computes (default
        True).
    accelerator, checkpoint_io, precision_plugin
        As for Lightning's strategies (usually set through the Trainer).

    Attributes
    ----------
    zero_optimizers : list of ZeroRedundancyOptimizer
        The replacements, during ``trainer.fit``.

    Raises
    ------
    TypeError, ValueError
        On every process, at construction, for a bad argument or a ``comm`` that does not hold
        every process. At ``trainer.fit``, before the first batch, on every process: gradient
        clipping (its norm would be that of this process's shard), ``precision="16-mixed"`` (its
        gradient scaler may skip a step on some processes only), stage 3 with more than one
        optimizer or parameter group or with parameters outside the optimizer, processes with
        different models, and options the optimizer class rejects.

    Notes
    -----
    Checkpoints: Lightning's checkpoints hold the *full* optimizer state in torch's format (the
    shards all-gathered by :meth:`ZeroRedundancyOptimizer.state_dict`, collective: every process
    takes part in ``trainer.save_checkpoint``, as Lightning's callbacks do) and, in stage 3, the
    full parameters. So a checkpoint is the one plain single-process training with the configured
    optimizer would write: it resumes on any number of processes, with any stage, or without
    heat. Each process holds the full state for a moment while a checkpoint is taken; for models
    whose optimizer state does not fit one process, use
    :meth:`ZeroRedundancyOptimizer.save_sharded` instead.

    In stage 3 a module's parameters exist only during its forward and backward (and in
    evaluation, where every process must then run the same number of batches); parameters of the
    LightningModule itself, outside its submodules, are gathered around its ``forward``. After
    ``trainer.fit`` every process holds the whole trained model again.

    Examples
    --------
    >>> from heat.nn.lightning import ZeroStrategy
    >>> trainer = lightning.pytorch.Trainer(strategy=ZeroStrategy(stage=2), max_epochs=3)
    >>> trainer.fit(model, datamodule)  # mpiexec -n 4 python fit.py
    """

    _owner = "ZeroStrategy"

    def __init__(
        self,
        comm: Optional[MPICommunication] = None,
        *,
        stage: int = 1,
        bucket_size_mb: float = 25,
        prefetch: bool = True,
        accelerator: Any = None,
        checkpoint_io: Any = None,
        precision_plugin: Any = None,
    ):
        options = dict(stage=stage, bucket_size_mb=bucket_size_mb, prefetch=prefetch)

        def check():
            if isinstance(stage, bool) or stage not in (1, 2, 3):
                raise ValueError(f"stage must be 1, 2 or 3, got {stage!r}")
            check_bool(prefetch, "prefetch")
            bucket_bytes(bucket_size_mb)

        super().__init__(comm, accelerator, checkpoint_io, precision_plugin)
        self._agree_on_options(check, options)
        self.zero_options = options
        self.zero_optimizers: List[ZeroRedundancyOptimizer] = []

    @property
    def stage(self) -> int:
        return self.zero_options["stage"]

    # -- setup -----------------------------------------------------------------------------------

    def _setup_training(self, trainer: "pl.Trainer") -> None:
        clip = trainer.gradient_clip_val
        module = self.lightning_module

        def check():
            if clip is not None and clip > 0:
                raise ValueError(
                    f"ZeroStrategy does not support gradient clipping (gradient_clip_val={clip}): "
                    "each process holds only its shard of the gradients"
                )
            self._refuse_gradient_scaler()

        verdicts.agree(self.comm, check)
        self.setup_optimizers(trainer)  # the module's own optimizers and schedulers
        optimizers = list(self.optimizers)

        def stage3_layout():
            if self.stage < 3:
                return
            if len(optimizers) != 1 or len(optimizers[0].param_groups) != 1:
                raise ValueError(
                    "ZeroStrategy(stage=3) shards the whole module with one optimizer of one "
                    f"parameter group; configure_optimizers returned {len(optimizers)} "
                    f"optimizer(s) with {[len(o.param_groups) for o in optimizers]} group(s)"
                )
            trained = {id(p) for p in optimizers[0].param_groups[0]["params"]}
            if trained != {id(p) for p in module.parameters()}:
                raise ValueError(
                    "ZeroStrategy(stage=3): the optimizer must hold every parameter of the "
                    "LightningModule (its modules' parameters are sharded and gathered around "
                    "their forward and backward)"
                )

        # the same model everywhere (buffers included), the same outcome of the checks
        _agree_on_model(self.comm, self._owner, stage3_layout, module, lambda _: {})
        buffers = list(module.buffers())
        if buffers and self.comm.size > 1:  # rank 0's (ZeRO shares rank 0's parameters itself)
            broadcast_tensors(buffers, self.comm, torch_process_group(self.comm))
        replacements = {id(o): self._sharded(o, module) for o in optimizers}
        for config in self.lr_scheduler_configs:
            replacement = replacements.get(id(config.scheduler.optimizer))
            if replacement is not None:
                config.scheduler.optimizer = replacement
                _mark_steps_for_schedulers(replacement)
        self.zero_optimizers = [replacements[id(o)] for o in optimizers]
        self.optimizers = list(self.zero_optimizers)

    def _sharded(
        self, optimizer: torch.optim.Optimizer, module: torch.nn.Module
    ) -> ZeroRedundancyOptimizer:
        """A ZeroRedundancyOptimizer of ``optimizer``'s class, groups and options."""
        groups = [dict(group) for group in optimizer.param_groups]
        zero = ZeroRedundancyOptimizer(
            module if self.stage == 3 else groups,
            type(optimizer),
            stage=self.stage,
            comm=self.comm,
            bucket_size_mb=self.zero_options["bucket_size_mb"],
            prefetch=self.zero_options["prefetch"],
            **optimizer.defaults,
        )
        # every group's own options, also those the constructor does not take (a scheduler's
        # 'initial_lr'); the inner optimizer keeps the groups in the given order
        for mine, group in zip(zero.param_groups, groups):
            mine.update({key: value for key, value in group.items() if key != "params"})
        return zero

    # -- checkpoints -------------------------------------------------------------------------------

    def lightning_module_state_dict(self) -> Dict[str, Any]:
        """The module's state; in stage 3 with the full parameters (collective)."""
        if self.stage < 3 or not self.zero_optimizers:
            return super().lightning_module_state_dict()
        with self.zero_optimizers[0].gathered_parameters():
            return {
                name: value.clone() if isinstance(value, torch.Tensor) else value
                for name, value in self.lightning_module.state_dict().items()
            }

    def load_model_state_dict(self, checkpoint: Any, strict: bool = True) -> None:
        if self.stage < 3 or not self.zero_optimizers:
            return super().load_model_state_dict(checkpoint, strict=strict)
        with self.zero_optimizers[0].gathered_parameters():  # written back to the shards
            super().load_model_state_dict(checkpoint, strict=strict)

    # -- end -------------------------------------------------------------------------------------

    def teardown(self) -> None:
        # every process the whole trained model, without ZeRO's hooks (collective in stage 3)
        for zero in self.zero_optimizers:
            zero.release_parameters()
        self.zero_optimizers = []
        super().teardown()


def _mark_steps_for_schedulers(optimizer: torch.optim.Optimizer) -> None:
    """
    torch's learning-rate schedulers check at their first step that the optimizer stepped
    before; they learn it from a marker they put on the ``step`` of the optimizer they were built
    with. A scheduler pointed at another optimizer needs the same marker on that one's ``step``,
    or it warns wrongly.
    """
    step = optimizer.step
    if getattr(step, "_wrapped_by_lr_sched", False):
        return

    def marked_step(*args: Any, **kwargs: Any) -> Any:
        optimizer._opt_called = True
        return step(*args, **kwargs)

    marked_step._wrapped_by_lr_sched = True
    optimizer.step = marked_step
