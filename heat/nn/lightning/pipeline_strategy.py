"""
:class:`PipelineStrategy`: Lightning training of a LightningModule's ``nn.Sequential`` with
:class:`heat.nn.Pipeline` (stages on the processes, micro-batches on a GPipe, 1F1B or PipeDream
schedule, optionally stages x data-parallel replicas).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import torch

from ...core.communication import MPI, MPICommunication, verdicts
from ...core.sanitation import check_int
from ..pipeline import Pipeline
from ..pipeline_plan import SCHEDULES, _layer_list
from ._imports import pl
from .strategies import _HeatParallelStrategy
from .zero_strategy import _mark_steps_for_schedulers

__all__ = ["PipelineStrategy"]


class PipelineStrategy(_HeatParallelStrategy):
    """
    A Lightning strategy that trains the LightningModule's layers as a pipeline
    (:class:`heat.nn.Pipeline`): each process holds one stage (consecutive layers) and only its
    parameters; every batch is cut into ``micro_batches`` that flow through the stages on the
    ``schedule``. With ``replicas > 1`` the processes form ``stages x replicas``: each replica is
    a whole pipeline that trains on its own part of the data, and each stage's gradients are
    averaged among its replicas.

    The contract with the LightningModule:

    * its attribute ``layers`` (default ``"net"``) is a ``torch.nn.Sequential``, the same on
      every process (seed torch alike or load one state dict). During ``trainer.fit`` /
      ``validate`` / ``test`` / ``predict`` that attribute *is* the :class:`heat.nn.Pipeline`
      (this process's stage; the other stages' layers are moved to the ``meta`` device to free
      their memory); afterwards it is the ``nn.Sequential`` again, with the trained values on
      every process.
    * its attribute ``loss_fn(output, target)`` returns the scalar loss (a function, a method or
      e.g. ``torch.nn.MSELoss()``); the pipeline evaluates it on the last stage.
    * ``training_step`` returns ``self.trainer.strategy.train_step(inputs, targets)``: the
      forward and backward passes of the whole batch through the pipeline. It returns the
      batch's loss (detached, the same value on every process), which may also be logged. The
      batch size must be divisible by ``micro_batches``.
    * ``validation_step`` / ``test_step`` / ``predict_step`` call ``self.net(x)`` as usual: the
      pipeline's inference (collective), whose output is on every process, so a loss logged
      with ``sync_dist=True`` is the same everywhere. Every process must run the same number of
      evaluation batches, of sizes divisible by ``micro_batches``.
    * ``configure_optimizers`` returns one optimizer over exactly the layers' trainable
      parameters (parameter groups and options allowed) and optionally LR schedulers. The
      optimizer becomes each stage's optimizer (same class, the stage's part of each parameter
      group, the same options); the schedulers are pointed at the stage's optimizer.

    Lightning's backward is a no-op (``train_step`` runs forward and backward), its optimizer
    step is the pipeline's :meth:`~heat.nn.Pipeline.step`, and the gradients are cleared by the
    first ``train_step`` after each step (Lightning's ``zero_grad`` comes after the training
    step and is therefore ignored). The data is split among the replicas (Lightning's
    distributed sampler gets ``num_replicas=replicas, rank=replica``): all stages of a replica
    see the same batches (the first stage reads the inputs, the last the targets).

    With ``"gpipe"`` and ``"1f1b"`` a step is the update one process makes on the whole (global)
    batch. Gradient accumulation (``accumulate_grad_batches``) and gradient clipping (by
    value, or by norm with the global norm over all stages: one all-reduce of a scalar) work as
    in Lightning. ``"pipedream"`` updates each stage after every micro-batch's backward inside
    ``train_step`` and runs the stream of micro-batches on from batch to batch; it is flushed
    before every evaluation, every checkpoint and at the end of training. It supports neither
    accumulation nor clipping (refused).

    Parameters
    ----------
    micro_batches : int
        Micro-batches per batch (default 1).
    schedule : str
        ``"gpipe"``, ``"1f1b"`` (default) or ``"pipedream"``.
    split_points : sequence of int, optional
        The first layer of every stage but the first (default: equal numbers of layers).
    replicas : int
        Data-parallel replicas of the pipeline; must divide the number of processes (default 1).
    checkpoint : bool or sequence of bool
        Activation checkpointing, for all stages or one flag per stage (default False).
    layers : str
        The LightningModule's attribute that holds the ``nn.Sequential`` (default ``"net"``).
    comm : MPICommunication, optional
        Must hold every process of the job (default: heat's default communicator).
    accelerator, checkpoint_io, precision_plugin
        As for Lightning's strategies (usually set through the Trainer).

    Attributes
    ----------
    pipeline : heat.nn.Pipeline or None
        The pipeline, while the Trainer runs.

    Raises
    ------
    TypeError, ValueError
        On every process, at construction, for a bad argument (also when it is bad on one
        process only) or a ``comm`` that does not hold every process. At ``trainer.fit`` (or
        validate, test, predict), before the first batch, on every process: no ``nn.Sequential``
        under ``layers``, no ``loss_fn``, not one optimizer over exactly the layers' trainable
        parameters, manual optimization, ``precision="16-mixed"``, PipeDream with gradient
        clipping or accumulation, and everything :class:`heat.nn.Pipeline` refuses (more stages
        than layers, bad ``split_points``, processes with different layers). A
        ``training_step`` that does not call :meth:`train_step` raises a RuntimeError.

    Notes
    -----
    Checkpoints hold what one-process Lightning training would write: the whole model's state
    (gathered from the stages onto process 0) and the configured optimizer's state in torch's
    format (the stages' states merged, under the parameter numbers of the configured
    optimizer). Taking one is collective (every process takes part in ``trainer.save_checkpoint``,
    as Lightning's callbacks do). So ``trainer.fit(..., ckpt_path=...)`` resumes on any number of
    processes, stages, replicas or schedule, or without heat. The Trainer's ``num_nodes`` is
    ignored: the MPI job decides.

    A fit that raised (on every process: an error on one stage only leaves the others waiting,
    as with any distributed strategy) does no collective at its end: the module then keeps the
    :class:`heat.nn.Pipeline` (this process's stage) under ``layers``; restore the model from a
    checkpoint. Not exposed: the pipeline's profiling (``sample_input``), ``average_replicas``
    and its measurement options; ``precision="bf16-mixed"`` is untested.

    Examples
    --------
    >>> class Regressor(lightning.pytorch.LightningModule):
    ...     def __init__(self):
    ...         super().__init__()
    ...         torch.manual_seed(0)  # the same layers on every process
    ...         self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
    ...                                        torch.nn.Linear(8, 1))
    ...         self.loss_fn = torch.nn.functional.mse_loss
    ...     def training_step(self, batch, batch_idx):
    ...         x, y = batch
    ...         return self.trainer.strategy.train_step(x, y)
    ...     def validation_step(self, batch, batch_idx):
    ...         x, y = batch
    ...         self.log("val_loss", self.loss_fn(self.net(x), y), sync_dist=True)
    ...     def configure_optimizers(self):
    ...         return torch.optim.Adam(self.net.parameters(), lr=1e-2)
    >>> from heat.nn.lightning import PipelineStrategy
    >>> strategy = PipelineStrategy(micro_batches=4, schedule="1f1b")
    >>> trainer = lightning.pytorch.Trainer(strategy=strategy, max_epochs=3)
    >>> trainer.fit(Regressor(), datamodule)  # mpiexec -n 3 python fit.py: 3 stages
    """

    _owner = "PipelineStrategy"

    def __init__(
        self,
        micro_batches: int = 1,
        *,
        schedule: str = "1f1b",
        split_points: Optional[Sequence[int]] = None,
        replicas: int = 1,
        checkpoint: Union[bool, Sequence[bool]] = False,
        layers: str = "net",
        comm: Optional[MPICommunication] = None,
        accelerator: Any = None,
        checkpoint_io: Any = None,
        precision_plugin: Any = None,
    ):
        options = dict(
            micro_batches=micro_batches,
            schedule=schedule,
            split_points=split_points,
            replicas=replicas,
            checkpoint=checkpoint,
            layers=layers,
        )
        super().__init__(comm, accelerator, checkpoint_io, precision_plugin)
        processes = self.comm.size

        def check():
            check_int(micro_batches, "micro_batches", 1)
            if schedule not in SCHEDULES:
                raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
            check_int(replicas, "replicas", 1)
            if processes % replicas:
                raise ValueError(
                    f"replicas ({replicas}) must divide the number of processes ({processes})"
                )
            if split_points is not None and (
                not isinstance(split_points, (list, tuple))
                or any(isinstance(p, bool) or not isinstance(p, int) for p in split_points)
            ):
                raise TypeError(f"split_points must be None or a list of int, got {split_points!r}")
            if not isinstance(checkpoint, bool) and not (
                isinstance(checkpoint, (list, tuple))
                and all(isinstance(c, bool) for c in checkpoint)
            ):
                raise TypeError(
                    f"checkpoint must be a bool or a list of bool (one per stage), got {checkpoint!r}"
                )
            if not isinstance(layers, str) or not layers.isidentifier():
                raise TypeError(f"layers must be the name of an attribute, got {layers!r}")

        self._agree_on_options(check, options)
        self.pipeline_options = options
        self.pipeline: Optional[Pipeline] = None
        self._sequential: Optional[torch.nn.Sequential] = None
        self._moved_to_meta: List[torch.nn.Module] = []
        self._accumulation = 1
        self._zero_pending = True  # the next train_step clears the gradients first
        self._trained = False  # whether training_step called train_step
        self._failed = False
        self._steps: Optional[_PipelineSteps] = None
        # the configured optimizer's layout, for checkpoints in its format
        self._groups: List[Dict[str, Any]] = []
        self._global_indices: List[int] = []  # the stage optimizer's parameters' numbers

    @property
    def replicas(self) -> int:
        return self.pipeline_options["replicas"]

    @property
    def replica(self) -> int:
        """This process's replica (pipeline)."""
        return self.comm.rank // (self.comm.size // self.replicas)

    @property
    def distributed_sampler_kwargs(self) -> Dict[str, int]:
        """The replicas share the data; the stages of a replica see the same batches."""
        return {"num_replicas": self.replicas, "rank": self.replica}

    # -- setup -----------------------------------------------------------------------------------

    def setup(self, trainer: "pl.Trainer") -> None:
        self.accelerator.setup(trainer)
        self.model = self.precision_plugin.convert_module(self.model)
        self.model_to_device()
        fitting = self._fitting(trainer)
        self._failed = False
        module = self.lightning_module
        name = self.pipeline_options["layers"]

        def check():
            layers = getattr(module, name, None)
            if not isinstance(layers, torch.nn.Sequential):
                raise ValueError(
                    f"PipelineStrategy(layers={name!r}): the LightningModule's attribute {name!r} "
                    f"must be a torch.nn.Sequential, got {type(layers).__name__}"
                )
            if fitting:
                self._check_fit(trainer, module, layers)

        verdicts.agree(self.comm, check)
        sequential = getattr(module, name)
        options = dict(self.pipeline_options)
        options.pop("layers")
        if not fitting and options["schedule"] == "pipedream":
            options["schedule"] = "1f1b"  # inference only: the schedule plays no part
        optimizer = self._stage_optimizer_factory(self.optimizers[0]) if fitting else None
        self.pipeline = Pipeline(
            sequential,
            self._loss_fn(module) if fitting else None,
            optimizer,
            comm=self.comm,
            **options,
        )
        self._sequential = sequential
        named = _layer_list(sequential)
        owned = set(self.pipeline.partition.stages[self.pipeline.stage])
        self._moved_to_meta = [layer for k, (_, layer) in enumerate(named) if k not in owned]
        for layer in self._moved_to_meta:  # only this stage's layers are kept
            layer.to("meta")
        setattr(module, name, self.pipeline)
        if fitting:
            self._setup_steps()
        self.setup_precision_plugin()
        if fitting:
            for optimizer in self.optimizers:
                for state in optimizer.state.values():
                    for key, value in state.items():
                        if isinstance(value, torch.Tensor):
                            state[key] = value.to(self.root_device)

    def _check_fit(self, trainer: "pl.Trainer", module: Any, layers: torch.nn.Sequential) -> None:
        """Everything that must hold for training; raises on this process."""
        if not module.automatic_optimization:
            raise ValueError("PipelineStrategy needs automatic optimization")
        if not callable(getattr(module, "loss_fn", None)):
            raise ValueError(
                "PipelineStrategy: the LightningModule needs a callable attribute loss_fn(output, "
                "target), evaluated on the last stage"
            )
        self._refuse_gradient_scaler()
        clip = trainer.gradient_clip_val
        accumulation = trainer.accumulate_grad_batches
        if self.pipeline_options["schedule"] == "pipedream":
            if clip is not None and clip > 0:
                raise ValueError(
                    f"PipelineStrategy(schedule='pipedream') does not support gradient clipping "
                    f"(gradient_clip_val={clip}): each stage updates after every micro-batch's "
                    "backward, inside train_step"
                )
            if accumulation != 1:
                raise ValueError(
                    "PipelineStrategy(schedule='pipedream') does not support gradient "
                    f"accumulation (accumulate_grad_batches={accumulation}): each stage updates "
                    "after every micro-batch's backward"
                )
        self._accumulation = accumulation
        self.setup_optimizers(trainer)
        if len(self.optimizers) != 1:
            raise ValueError(
                "PipelineStrategy trains with one optimizer; configure_optimizers returned "
                f"{len(self.optimizers)} (put all parameter groups into one optimizer)"
            )
        held = [p for group in self.optimizers[0].param_groups for p in group["params"]]
        trainable = [p for p in layers.parameters() if p.requires_grad]
        if len(held) != len({id(p) for p in held}) or {id(p) for p in held} != {
            id(p) for p in trainable
        }:
            raise ValueError(
                f"PipelineStrategy: the optimizer must hold exactly the trainable parameters of "
                f"the LightningModule's {self.pipeline_options['layers']!r} (each once); the "
                "pipeline trains nothing else"
            )

    def _loss_fn(self, module: Any) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
        loss_fn, accumulation = module.loss_fn, self._accumulation
        if accumulation == 1:
            return loss_fn

        def accumulated(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            # Lightning divides each accumulated batch's loss by their number before backward
            return loss_fn(output, target) / accumulation

        return accumulated

    def _stage_optimizer_factory(self, optimizer: torch.optim.Optimizer) -> Callable:
        """The stage optimizer: ``optimizer``'s class and options, the stage's part of each group."""
        cls, defaults = type(optimizer), dict(optimizer.defaults)
        groups = [dict(group) for group in optimizer.param_groups]
        number = {}
        for group in groups:
            for p in group["params"]:
                number[id(p)] = len(number)
        self._groups = [
            dict(
                {k: v for k, v in group.items() if k != "params"},
                params=[number[id(p)] for p in group["params"]],
            )
            for group in groups
        ]

        def factory(parameters: List[torch.nn.Parameter]) -> torch.optim.Optimizer:
            if not any(id(p) in number for p in parameters):
                # the pipeline's check of the options, or a stage of frozen parameters only
                self._global_indices = []
                return cls(parameters, **defaults)
            mine = {id(p) for p in parameters}
            stage_groups = [
                dict(
                    {k: v for k, v in group.items() if k != "params"},
                    params=[p for p in group["params"] if id(p) in mine],
                )
                for group in groups
            ]  # every group, empty ones too: schedulers see the configured groups
            self._global_indices = [number[id(p)] for g in stage_groups for p in g["params"]]
            return cls(stage_groups, **defaults)

        return factory

    def _setup_steps(self) -> None:
        original = self.optimizers[0]
        steps = _PipelineSteps(self, original)
        for config in self.lr_scheduler_configs:
            if config.scheduler.optimizer is original:
                config.scheduler.optimizer = steps
        _mark_steps_for_schedulers(steps)
        self.optimizers = [steps]
        self._steps = steps
        self._zero_pending = True
        if self.pipeline.optimizer is None:
            self._global_indices = []
        # gradient clipping: by the global norm over the stages; by value also on a stage
        # without parameters (torch's clip_grad_value_ refuses an empty list)
        self.precision_plugin.clip_grad_by_norm = self._clip_grad_by_global_norm
        self.precision_plugin.clip_grad_by_value = self._clip_grad_by_value

    # -- training --------------------------------------------------------------------------------

    def train_step(self, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """
        The forward and backward passes of one batch through the pipeline (collective): call it
        from ``training_step`` and return its result.

        Parameters
        ----------
        inputs, targets : torch.Tensor
            The batch (the first stage reads ``inputs``, the last ``targets``); the batch size
            must be divisible by ``micro_batches``.

        Returns
        -------
        torch.Tensor
            The batch's loss (float64, detached), the same on every process (with replicas: the
            mean over the replicas).

        Examples
        --------
        >>> def training_step(self, batch, batch_idx):
        ...     x, y = batch
        ...     loss = self.trainer.strategy.train_step(x, y)
        ...     self.log("train_loss", loss)
        ...     return loss
        """
        pipe = self.pipeline
        if pipe is None or self._steps is None:
            raise RuntimeError(
                "PipelineStrategy.train_step runs only inside training_step, during trainer.fit"
            )
        if self._zero_pending:
            pipe.zero_grad(set_to_none=True)
            self._zero_pending = False
        loss = pipe.train_step(inputs, targets)
        self._trained = True
        return torch.tensor(loss * self._accumulation, dtype=torch.float64)

    def training_step(self, *args: Any, **kwargs: Any) -> Any:
        self._trained = False
        output = super().training_step(*args, **kwargs)
        if not self._trained:
            raise RuntimeError(
                "PipelineStrategy: training_step must run the pipeline and return its loss: "
                "return self.trainer.strategy.train_step(inputs, targets)"
            )
        return output

    def backward(self, closure_loss: torch.Tensor, optimizer: Any, *args: Any, **kwargs: Any):
        """Nothing to do: :meth:`train_step` ran the backward passes; the hooks around it run."""
        module = self.lightning_module
        closure_loss = self.precision_plugin.pre_backward(closure_loss, module)
        return self.precision_plugin.post_backward(closure_loss, module)

    def _step(self) -> None:
        self.pipeline.step()
        self._zero_pending = True

    def _stage_gradients(self) -> List[torch.Tensor]:
        return [p.grad for p in self.pipeline.stage_module.parameters() if p.grad is not None]

    def _clip_grad_by_value(self, optimizer: Any, clip_val: Union[int, float]) -> None:
        for gradient in self._stage_gradients():
            gradient.clamp_(-clip_val, clip_val)

    def _clip_grad_by_global_norm(self, optimizer: Any, clip_val: Union[int, float]) -> None:
        """``torch.nn.utils.clip_grad_norm_`` with the norm over all stages (one all-reduce)."""
        pipe = self.pipeline
        gradients = self._stage_gradients()
        squares = torch.zeros(1, dtype=torch.float64)
        for gradient in gradients:
            squares += gradient.detach().double().pow(2).sum().cpu()
        if pipe.pipeline_comm.size > 1:
            squares = pipe.pipeline_comm.allreduce_tensor(squares, MPI.SUM)
        factor = min(float(clip_val) / (float(squares.sqrt()) + 1e-6), 1.0)
        for gradient in gradients:
            gradient.mul_(factor)

    # -- evaluation, end -------------------------------------------------------------------------

    def _flush(self) -> None:
        """PipeDream: finish the micro-batches in flight (collective)."""
        if self.pipeline is not None:
            self.pipeline.flush()

    def on_validation_start(self) -> None:
        self._flush()

    def on_test_start(self) -> None:
        self._flush()

    def on_predict_start(self) -> None:
        self._flush()

    def on_train_end(self) -> None:
        self._flush()

    def on_exception(self, exception: BaseException) -> None:
        self._failed = True
        super().on_exception(exception)

    def teardown(self) -> None:
        """The ``nn.Sequential`` back in the module, the trained values on every process."""
        module = self.lightning_module
        pipe = self.pipeline
        if pipe is not None and module is not None and not self._failed:
            # after an exception the processes may be out of step: no collective, the module
            # keeps its Pipeline (this process's stage)
            pipe.flush()
            if self._steps is not None:  # for a trainer.save_checkpoint after fit
                self._steps.final_state = self.optimizer_state(self._steps)
            full = pipe.state_dict(gather="all")
            device = self.root_device
            for layer in self._moved_to_meta:
                layer.to_empty(device=device)
            self._sequential.load_state_dict(full)
            setattr(module, self.pipeline_options["layers"], self._sequential)
        for name in ("clip_grad_by_norm", "clip_grad_by_value"):
            self.precision_plugin.__dict__.pop(name, None)
        self.pipeline, self._sequential, self._moved_to_meta = None, None, []
        self._steps = None
        super().teardown()

    # -- checkpoints -------------------------------------------------------------------------------

    def lightning_module_state_dict(self) -> Dict[str, Any]:
        """The whole module's state on process 0, as without the pipeline (collective)."""
        pipe = self.pipeline
        module = self.lightning_module
        if pipe is None or getattr(module, self.pipeline_options["layers"], None) is not pipe:
            return super().lightning_module_state_dict()
        pipe.flush()
        gathered = pipe.state_dict(gather="root")
        if not self.is_global_zero:
            return {}
        prefix = self.pipeline_options["layers"] + "."
        state = {prefix + key: value for key, value in gathered.items()}
        for key, value in module.state_dict().items():
            if not key.startswith(prefix):
                state[key] = value
        return state

    def load_model_state_dict(self, checkpoint: Any, strict: bool = True) -> None:
        pipe = self.pipeline
        module = self.lightning_module
        name = self.pipeline_options["layers"]
        if pipe is None or getattr(module, name, None) is not pipe:
            return super().load_model_state_dict(checkpoint, strict=strict)
        prefix = name + "."
        state = checkpoint["state_dict"]
        pipe.load_state_dict(
            {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}, strict
        )
        module.load_state_dict(
            {k: v for k, v in state.items() if not k.startswith(prefix)}, strict=False
        )

    def optimizer_state(self, optimizer: Any) -> Dict[str, Any]:
        """
        The configured optimizer's whole state in torch's format on process 0 (the stages'
        states merged; collective), ``{}`` elsewhere.
        """
        steps = getattr(optimizer, "_optimizer", optimizer)
        if steps is not self._steps or self._steps is None:
            return super().optimizer_state(optimizer)
        pipe = self.pipeline
        self._flush()
        if pipe.replica > 0:
            return {}
        local = {}
        if pipe.optimizer is not None and self._global_indices:
            own = pipe.optimizer.state_dict()["state"]
            local = {self._global_indices[i]: value for i, value in own.items()}
        parts = pipe.pipeline_comm.gather(local, root=0) if pipe.stages > 1 else [local]
        if not self.is_global_zero:
            return {}
        state = {}
        for part in parts:
            state.update(part)
        groups = [
            dict({k: v for k, v in mine.items() if k != "params"}, params=list(saved["params"]))
            for mine, saved in zip(steps.param_groups, self._groups)
        ]
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def _load_optimizer_state(self, full: Dict[str, Any]) -> None:
        """Load the configured optimizer's whole state (torch's format) into the stage's."""
        pipe = self.pipeline
        saved = full.get("param_groups", [])
        if len(saved) != len(self._groups) or any(
            len(s["params"]) != len(g["params"]) for s, g in zip(saved, self._groups)
        ):
            raise ValueError(
                "PipelineStrategy: the checkpoint's optimizer has other parameter groups than the "
                "configured optimizer"
            )
        options = [{k: v for k, v in group.items() if k != "params"} for group in saved]
        if pipe.optimizer is None or not self._global_indices:
            for mine, option in zip(self._steps._own_groups, options):
                mine.update(option)
            return
        local_groups, start = [], 0
        for group, option in zip(pipe.optimizer.param_groups, options):
            count = len(group["params"])
            local_groups.append(dict(option, params=list(range(start, start + count))))
            start += count
        state = {
            i: full["state"][number]
            for i, number in enumerate(self._global_indices)
            if number in full["state"]
        }
        pipe.optimizer.load_state_dict({"state": state, "param_groups": local_groups})


class _PipelineSteps(torch.optim.Optimizer):
    """
    What Lightning steps instead of the configured optimizer: the closure (the training step,
    which runs the pipeline, and gradient clipping), then the pipeline's ``step``. Parameter
    groups and state are the stage optimizer's (the configured groups' options on a stage
    without parameters), so LR schedulers change the stage's learning rates.
    """

    def __init__(self, strategy: PipelineStrategy, original: torch.optim.Optimizer):
        # no Optimizer.__init__: everything is the stage optimizer's
        self.strategy = strategy
        self.final_state: Optional[Dict[str, Any]] = None  # merged at the end of fit
        self._defaults = dict(original.defaults)
        self._own_groups = [
            {k: v for k, v in group.items() if k != "params"} | {"params": []}
            for group in original.param_groups
        ]

    @property
    def _stage_optimizer(self) -> Optional[torch.optim.Optimizer]:
        pipe = self.strategy.pipeline
        if pipe is None or pipe.optimizer is None or not self.strategy._global_indices:
            return None
        return pipe.optimizer

    @property
    def param_groups(self) -> List[Dict[str, Any]]:
        stage = self._stage_optimizer
        return stage.param_groups if stage is not None else self._own_groups

    @param_groups.setter
    def param_groups(self, groups: List[Dict[str, Any]]) -> None:
        raise RuntimeError("PipelineStrategy: the stage optimizer's groups cannot be replaced")

    @property
    def state(self) -> Dict[Any, Any]:
        stage = self._stage_optimizer
        return stage.state if stage is not None else {}

    @property
    def defaults(self) -> Dict[str, Any]:
        return self._defaults

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self.strategy._step()
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        # Lightning calls it after the training step, which already ran the backward passes:
        # the pipeline's gradients are cleared by the first train_step after each step instead
        pass

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        raise RuntimeError("PipelineStrategy: parameter groups cannot be added during training")

    def state_dict(self) -> Dict[str, Any]:
        """
        This stage's optimizer state (the checkpoints hold the merged one); after fit, the
        merged one on process 0 (``{}`` elsewhere).
        """
        if self.strategy.pipeline is None and self.final_state is not None:
            return self.final_state
        stage = self._stage_optimizer
        return stage.state_dict() if stage is not None else {"state": {}, "param_groups": []}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """The configured optimizer's whole state (from a checkpoint): this stage's part."""
        self.strategy._load_optimizer_state(state_dict)

    def __repr__(self) -> str:
        return f"Pipeline({self._stage_optimizer!r})"
