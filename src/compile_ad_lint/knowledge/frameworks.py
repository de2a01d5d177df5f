"""What training frameworks do for the user, as data: which autocast they enter, where they run the
backward, what their ``prepare``/``setup`` return, and whether they compile.

The frameworks are not installed for the static analysis; they are known by qualified name. Each
row says which file of the framework's source it was read from and what that code does (read with
``git show HEAD:<file>`` on the snapshots named below). The interpreter implements a handful of
generic effects (``EFFECTS``); a row only picks one. ``tests/knowledge/test_frameworks.py`` has a case per row.

Sources read (newest snapshots available here):

* accelerate ``huggingface/accelerate`` at 16cb6eb8 (2026-07-24)
* Lightning ``Lightning-AI/pytorch-lightning`` at 7f0c3436 (2026-07-20)
* transformers ``huggingface/transformers`` ``src/transformers/trainer.py`` at 000945a9 and
  ``training_args.py`` (read through the code search; the snapshot is too large to fetch)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from .spelling import Anchor, Preceded


class FrameworkEffect(enum.Enum):
    """The effects a framework method can have (one handler each in ``linking/effects/frameworks.py``)."""

    #: Returns an autocast context manager with the object's precision.
    AUTOCAST = "autocast"
    #: Runs the backward of its ``argument``, in the caller's autocast context.
    BACKWARD = "backward"
    #: Returns its positional arguments (a tuple when several, positions kept; else ``argument``);
    #: each module among them is wrapped so its calls run under the object's autocast, and compiled
    #: by the framework afterwards when it compiles (``compile_backend``).
    PREPARE = "prepare"
    #: Like ``prepare`` (Fabric: the ``_FabricModule`` enters autocast around the module, compiled
    #: or not; Fabric re-applies a user's ``torch.compile`` *inside* that wrapper).
    SETUP = "setup"
    #: Lightning ``Trainer.fit(model)``: runs the module's ``step`` method under the precision's
    #: autocast and, with automatic optimization, the backward of its loss at the ``fit`` call,
    #: outside autocast; a compiled LightningModule gets its ``step`` compiled.
    FIT = "fit"
    #: A trainer's own training loop (Hugging Face ``Trainer.train()``, composer ``Trainer.fit()``):
    #: prepares the held model like accelerate's ``prepare`` (the trainer's autocast around its calls,
    #: its compile) and runs the backward of its output at the call, outside autocast.
    TRAIN = "train"
    #: Returns its ``argument`` unchanged (``unwrap_model``).
    SAME = "same"
    #: Returns a context manager that changes nothing here (``accumulate``).
    NULL_CONTEXT = "null_context"


EFFECTS = frozenset(FrameworkEffect)


@dataclass(frozen=True)
class Precision:
    """How a constructor argument selects the autocast the framework enters.

    ``values`` maps a literal argument value to the autocast dtype (None: no autocast). A value
    not in the map, or an argument that is not a literal, means "may be autocast" with an unknown
    dtype; ``absent`` is the dtype when the argument is not given at all (``"unknown"`` when it
    comes from the environment, e.g. ``accelerate launch --mixed_precision``).
    """

    argument: str
    values: tuple[tuple[object, str | None], ...]
    absent: str | None
    #: Constructor argument naming the accelerator (``"cpu"``, ``"gpu"``) that selects the device.
    device_argument: str | None = None
    device_values: tuple[tuple[str, str], ...] = ()
    #: Other boolean flags that select a dtype when true (``TrainingArguments(bf16=True)``).
    flags: tuple[tuple[str, str], ...] = ()
    #: What sets it when the code does not (``absent == "unknown"``), as a message names it, and the
    #: environment variable it sets: a run-time switch a finding that needs the autocast names.
    set_elsewhere: str = ""
    environment: str = ""
    #: ``(device, dtype, dtype used)``: a dtype the framework replaces on a device.
    device_dtypes: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class Compilation:
    """How constructor arguments make the framework compile the models it prepares."""

    #: Arguments whose literal value names the backend (``"no"`` means none).
    backend_arguments: tuple[str, ...] = ()
    #: Boolean arguments that switch compilation on (the backend then comes from ``backend_arguments``
    #: or is ``default_backend``).
    flags: tuple[str, ...] = ()
    #: Arguments holding a plugin object that carries the backend (accelerate ``dynamo_plugin``).
    plugin_arguments: tuple[str, ...] = ()
    default_backend: str = "inductor"
    #: The backend when no argument says (None: no compilation; ``"<unknown>"``: from the environment).
    absent_backend: str | None = None
    #: The environment variable that sets the backend when no argument does (a launcher's switch:
    #: ``accelerate launch --dynamo_backend`` sets ``ACCELERATE_DYNAMO_BACKEND``); findings name it.
    environment: str = ""
    #: Boolean arguments that, literally True, make it compile the model's repeated blocks and the
    #: other children one by one instead of the whole model (``use_regional_compilation``): its
    #: autocast wrapper then runs outside the compiled regions.
    regional_arguments: tuple[str, ...] = ()
    #: Arguments that make it compile when given anything but None (composer's ``compile_config={}``
    #: compiles with torch.compile's defaults), the backend from a literal dict's ``"backend"``.
    config_arguments: tuple[str, ...] = ()
    #: It enters its autocast around the model it compiled (composer runs ``model(batch)`` inside
    #: ``get_precision_context``): the graph is traced under that autocast, unlike accelerate's.
    autocast_around: bool = False


@dataclass(frozen=True)
class FrameworkClass:
    kind: str
    names: frozenset[str]
    source: str
    precision: Precision | None = None
    compilation: Compilation | None = None
    #: Constructor arguments whose values the object holds (``Trainer(model=...)``), by keyword,
    #: with the positional index they may also be passed at.
    holds: tuple[tuple[str, int], ...] = ()
    #: Constructor keyword arguments holding another framework object whose settings apply
    #: (``Trainer(args=TrainingArguments(...))``), with their positional index.
    settings_from: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class FrameworkMethod:
    kind: str
    method: str
    effect: FrameworkEffect
    source: str
    #: The argument the effect reads, as ``(keyword, position)`` (position None: by keyword only).
    argument: tuple[str, int | None] | None = None
    #: ``fit``: the method of the module it runs (under autocast), and the attribute that turns its
    #: automatic backward off when False.
    step: str | None = None
    automatic_flag: str | None = None
    #: ``train``: how chains name the held model the trainer calls.
    calls: str | None = None
    #: The text that marks code using it as worth analyzing.
    anchors: tuple[Anchor, ...] = ()
    #: PREPARE: it puts its autocast on the module by replacing the module's ``forward``, which a
    #: module compiled in place calls from inside its compiled ``_call_impl``: there the autocast
    #: runs inside the graph (a wrapper's autocast, Fabric's, stays around the compiled call).
    replaces_forward: bool = False
    #: Where a ``TRAIN`` effect's framework runs the backward, as a finding names it.
    backward_at: str = ""
    #: A ``TRAIN`` effect's framework calls the model on one positional batch (composer's
    #: ``model(batch)``), not on keyword inputs (Hugging Face's ``model(**inputs)``).
    positional_batch: bool = False


_ACCELERATE_PRECISION = Precision(
    "mixed_precision",
    (("no", None), ("fp16", "float16"), ("bf16", "bfloat16"), ("fp8", "bfloat16")),
    absent="unknown",
    set_elsewhere="`accelerate launch`/`accelerate config`",
    environment="ACCELERATE_MIXED_PRECISION",
)
_LIGHTNING_PRECISION = Precision(
    "precision",
    (
        ("16-mixed", "float16"),
        ("bf16-mixed", "bfloat16"),
        ("16", "float16"),
        (16, "float16"),
        ("bf16", "bfloat16"),
        ("32-true", None),
        ("32", None),
        (32, None),
        ("64-true", None),
        ("64", None),
        (64, None),
        ("bf16-true", None),
        ("16-true", None),
        ("transformer-engine", None),
        ("transformer-engine-float16", None),
    ),
    absent=None,
    device_argument="accelerator",
    device_values=(("cpu", "cpu"), ("mps", "mps"), ("gpu", "cuda"), ("cuda", "cuda")),
    # src/lightning/fabric/connector.py and .../pytorch/trainer/connectors/accelerator_connector.py
    # ``_check_and_init_precision``: "16-mixed" on the CPU becomes "bf16-mixed" (with a warning).
    device_dtypes=(("cpu", "float16", "bfloat16"),),
)

_COMPOSER_PRECISION = Precision(
    "precision",
    (("amp_bf16", "bfloat16"), ("amp_fp16", "float16"), ("fp32", None)),
    # No ``precision``: amp_fp16 on a GPU, fp32 on the CPU (the device is not known here).
    absent=None,
    device_argument="device",
    device_values=(("gpu", "cuda"), ("cuda", "cuda"), ("cpu", "cpu"), ("mps", "mps")),
)

FRAMEWORK_CLASSES: tuple[FrameworkClass, ...] = (
    FrameworkClass(
        "accelerate.Accelerator",
        frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"}),
        "accelerate src/accelerate/accelerator.py `Accelerator.__init__`: `mixed_precision` "
        "('no'/'fp16'/'bf16'/'fp8', else from the environment or `accelerate config`) sets `native_amp`; "
        "`dynamo_backend=` becomes `TorchDynamoPlugin(backend=...)`, `dynamo_plugin=` is used as given, "
        "neither gives `TorchDynamoPlugin()`, whose backend is ACCELERATE_DYNAMO_BACKEND (what "
        "`accelerate launch --dynamo_backend` and `accelerate config` set), else 'no'. "
        "src/accelerate/utils/modeling.py `get_mixed_precision_context_manager`: "
        "`torch.autocast(device_type=state.device.type, dtype=float16|bfloat16)` when native_amp, else nullcontext.",
        precision=_ACCELERATE_PRECISION,
        compilation=Compilation(
            backend_arguments=("dynamo_backend",),
            plugin_arguments=("dynamo_plugin",),
            absent_backend="<unknown>",
            environment="ACCELERATE_DYNAMO_BACKEND",
        ),
    ),
    FrameworkClass(
        "accelerate.TorchDynamoPlugin",
        frozenset({"accelerate.utils.TorchDynamoPlugin", "accelerate.utils.dataclasses.TorchDynamoPlugin"}),
        "accelerate src/accelerate/utils/dataclasses.py `TorchDynamoPlugin`: `backend` defaults to "
        "the ACCELERATE_DYNAMO_BACKEND environment variable, else 'no'. `use_regional_compilation=True`: "
        "src/accelerate/accelerator.py `prepare_model` calls `compile_regions(model, ...)` instead of "
        "`torch.compile(model, ...)`; src/accelerate/utils/other.py `compile_regions` compiles each repeated "
        "block and every other child separately and copies the model's `__dict__` (its autocast `forward`) "
        "into the new module, whose forward then runs eagerly around the compiled children.",
        compilation=Compilation(
            backend_arguments=("backend",),
            absent_backend="<unknown>",
            environment="ACCELERATE_DYNAMO_BACKEND",
            regional_arguments=("use_regional_compilation",),
        ),
    ),
    FrameworkClass(
        "lightning.Trainer",
        frozenset(
            {
                "lightning.Trainer",
                "lightning.pytorch.Trainer",
                "lightning.pytorch.trainer.Trainer",
                "lightning.pytorch.trainer.trainer.Trainer",
                "pytorch_lightning.Trainer",
                "pytorch_lightning.trainer.Trainer",
                "pytorch_lightning.trainer.trainer.Trainer",
            }
        ),
        "Lightning src/lightning/pytorch/trainer/connectors/accelerator_connector.py "
        "`_check_and_init_precision`: '16-mixed'/'bf16-mixed' (aliases 16/'16'/'bf16' from "
        "src/lightning/fabric/plugins/precision/precision.py `_PRECISION_INPUT_STR_ALIAS_CONVERSION`) "
        "give `MixedPrecision(precision, device)`, device 'cpu'/'mps' when `accelerator=` says so, "
        "else 'cuda' ('16-mixed' on cpu becomes 'bf16-mixed'); "
        "src/lightning/pytorch/plugins/precision/amp.py `MixedPrecision.forward_context`: "
        "`torch.autocast(self.device, dtype=bfloat16 if 'bf16-mixed' else half)`.",
        precision=_LIGHTNING_PRECISION,
    ),
    FrameworkClass(
        "lightning.Fabric",
        frozenset(
            {
                "lightning.Fabric",
                "lightning.fabric.Fabric",
                "lightning.fabric.fabric.Fabric",
                "lightning_fabric.Fabric",
                "lightning_fabric.fabric.Fabric",
            }
        ),
        "Lightning src/lightning/fabric/connector.py `_check_and_init_precision`: '16-mixed'/'bf16-mixed' "
        "give `MixedPrecision(precision, device)` ('cpu'/'mps' from `accelerator=`, else 'cuda'); "
        "src/lightning/fabric/plugins/precision/amp.py `MixedPrecision.forward_context`: "
        "`torch.autocast(self.device, dtype=self._desired_input_dtype)`; `_Connector.__init__`: "
        "`precision = self._argument_from_env('precision', precision, default=None)` reads LT_PRECISION, "
        "which `fabric run --precision` (src/lightning/fabric/cli.py) sets: a Fabric without `precision=` "
        "may still run under autocast.",
        precision=replace(
            _LIGHTNING_PRECISION,
            absent="unknown",
            set_elsewhere="`fabric run --precision` (LT_PRECISION)",
            environment="LT_PRECISION",
        ),
    ),
    FrameworkClass(
        "transformers.TrainingArguments",
        frozenset({"transformers.TrainingArguments", "transformers.training_args.TrainingArguments"}),
        "transformers src/transformers/training_args.py `TrainingArguments.__post_init__`: "
        "`mixed_precision` is 'fp16' with `fp16=True`, 'bf16' with `bf16=True`, else "
        "ACCELERATE_MIXED_PRECISION (default 'no'); `torch_compile=True` (or a `torch_compile_backend`/"
        "`torch_compile_mode`) selects a dynamo backend ('inductor' by default) that accelerate applies.",
        precision=Precision("mixed_precision", (), absent=None, flags=(("fp16", "float16"), ("bf16", "bfloat16"))),
        compilation=Compilation(backend_arguments=("torch_compile_backend",), flags=("torch_compile",)),
    ),
    FrameworkClass(
        "composer.Trainer",
        frozenset({"composer.Trainer", "composer.trainer.Trainer", "composer.trainer.trainer.Trainer"}),
        "mosaicml/composer composer/trainer/trainer.py (6405188) `Trainer.__init__`: `precision` None is "
        "amp_fp16 on a GPU device, fp32 on the CPU; with `compile_config` not None, `compiled_model = "
        "torch.compile(self.state.model, **compile_config)` and `self.state.model.forward = "
        "compiled_model.dynamo_ctx(self.state.model.forward)`; `_train_microbatch` runs "
        "`self.state.model(self.state.batch)` inside `get_precision_context(self.state.precision, ...)` and "
        "`microbatch_loss.backward(...)` outside it; composer/core/precision.py `get_precision_context`: "
        "amp_fp16 `torch.autocast('cuda', enabled=True)`, amp_bf16 `torch.autocast('cuda', dtype=torch.bfloat16)`, "
        "fp32 `torch.autocast('cuda', enabled=False)`.",
        precision=_COMPOSER_PRECISION,
        compilation=Compilation(config_arguments=("compile_config",), autocast_around=True),
        holds=(("model", 0),),
    ),
    FrameworkClass(
        "transformers.Trainer",
        frozenset({"transformers.Trainer", "transformers.trainer.Trainer"}),
        "transformers src/transformers/trainer.py: `create_accelerator_and_postprocess` builds the "
        "`Accelerator` (mixed precision and dynamo from the `TrainingArguments`); the training loop "
        "prepares the model with `self.accelerator.prepare(...)` (autocast wrapper, then accelerate's "
        "compile) and `training_step` calls `self.accelerator.backward(loss)` outside any autocast.",
        holds=(("model", 0),),
        settings_from=(("args", 1),),
    ),
)

FRAMEWORK_METHODS: tuple[FrameworkMethod, ...] = (
    FrameworkMethod(
        "accelerate.Accelerator",
        "autocast",
        FrameworkEffect.AUTOCAST,
        "accelerate src/accelerate/accelerator.py `Accelerator.autocast`: enters "
        "`get_mixed_precision_context_manager(self.native_amp, ...)` around the block.",
    ),
    FrameworkMethod(
        "accelerate.Accelerator",
        "backward",
        FrameworkEffect.BACKWARD,
        "accelerate src/accelerate/accelerator.py `Accelerator.backward(self, loss, **kwargs)`: "
        "`self.scaler.scale(loss).backward()` or `loss.backward()`; it enters no autocast.",
        argument=("loss", 0),
    ),
    FrameworkMethod(
        "accelerate.Accelerator",
        "prepare",
        FrameworkEffect.PREPARE,
        "accelerate src/accelerate/accelerator.py `Accelerator.prepare` returns its arguments prepared, "
        "in order (one object alone); `prepare_model`: with native_amp, `model.forward = "
        "convert_outputs_to_fp32(autocast_context(model.forward))` (autocast outside an already compiled "
        "module), then last `torch.compile(model, **dynamo_plugin.to_kwargs())` unless `is_compiled_module(model)` "
        "(the autocast wrapper is inside accelerate's own compile). A module compiled in place "
        "(`model.compile()`: `_compiled_call_impl` calls `self.forward`) calls the replaced forward "
        "from inside its graph.",
        replaces_forward=True,
    ),
    FrameworkMethod(
        "accelerate.Accelerator",
        "prepare_model",
        FrameworkEffect.PREPARE,
        "accelerate src/accelerate/accelerator.py `Accelerator.prepare_model(self, model, device_placement=None, "
        "evaluation_mode=False)` (see `prepare`).",
        argument=("model", 0),
        replaces_forward=True,
    ),
    FrameworkMethod(
        "accelerate.Accelerator",
        "unwrap_model",
        FrameworkEffect.SAME,
        "accelerate src/accelerate/accelerator.py `Accelerator.unwrap_model(self, model, keep_fp32_wrapper=True, "
        "keep_torch_compile=True)`: removes DDP/FSDP, keeps the autocast forward and torch.compile by default.",
        argument=("model", 0),
    ),
    FrameworkMethod(
        "accelerate.Accelerator",
        "accumulate",
        FrameworkEffect.NULL_CONTEXT,
        "accelerate src/accelerate/accelerator.py `Accelerator.accumulate`: gradient sync only, no autocast.",
    ),
    FrameworkMethod(
        "lightning.Trainer",
        "fit",
        FrameworkEffect.FIT,
        "Lightning src/lightning/pytorch/trainer/trainer.py `fit`: `model = _maybe_unwrap_optimized(model)`; "
        "src/lightning/pytorch/utilities/compile.py `from_compiled` replaces `training_step` by "
        "`model.dynamo_ctx(orig_module.training_step)`; src/lightning/pytorch/strategies/strategy.py "
        "`training_step`: `with self.precision_plugin.train_step_context(): return self.lightning_module.training_step(...)`; "
        "src/lightning/pytorch/loops/optimization/automatic.py `Closure.closure`: `self._backward_fn(step_output.closure_loss)` "
        "after the step returned (outside the step's autocast); src/lightning/pytorch/core/module.py: "
        "`automatic_optimization` (default True) turns that backward off when False.",
        argument=("model", 0),
        step="training_step",
        automatic_flag="automatic_optimization",
        anchors=(Anchor(("fit", "("), "fit", Preceded.ATTRIBUTE),),
    ),
    FrameworkMethod(
        "lightning.LightningModule",
        "manual_backward",
        FrameworkEffect.BACKWARD,
        "Lightning src/lightning/pytorch/core/module.py `manual_backward`: `self.trainer.strategy.backward(loss, None, ...)`, "
        "called inside `training_step`, i.e. inside the precision's autocast.",
        argument=("loss", 0),
    ),
    FrameworkMethod(
        "lightning.Fabric",
        "setup",
        FrameworkEffect.SETUP,
        "Lightning src/lightning/fabric/fabric.py `Fabric.setup`: returns `_FabricModule(module, ...)` "
        "(then the optimizers, in order); a compiled module is unwrapped and `torch.compile` re-applied to the "
        "strategy-wrapped module *inside* the `_FabricModule` (`_reapply_compile=True`); src/lightning/fabric/wrappers.py "
        "`_FabricModule.forward`: `with precision.forward_context(): output = self._forward_module(*args, **kwargs)`.",
        argument=("module", 0),
    ),
    FrameworkMethod(
        "lightning.Fabric",
        "setup_module",
        FrameworkEffect.SETUP,
        "Lightning src/lightning/fabric/fabric.py `Fabric.setup_module(self, module, move_to_device=True, "
        "_reapply_compile=True)` (see `setup`).",
        argument=("module", 0),
    ),
    FrameworkMethod(
        "lightning.Fabric",
        "autocast",
        FrameworkEffect.AUTOCAST,
        "Lightning src/lightning/fabric/fabric.py `Fabric.autocast`: `return self._precision.forward_context()`.",
    ),
    FrameworkMethod(
        "lightning.Fabric",
        "backward",
        FrameworkEffect.BACKWARD,
        "Lightning src/lightning/fabric/fabric.py `Fabric.backward`: `self._strategy.backward(tensor, module, ...)` "
        "(src/lightning/fabric/plugins/precision/amp.py `MixedPrecision.backward`: scaler then `tensor.backward`); no autocast.",
        argument=("tensor", 0),
    ),
    FrameworkMethod(
        "composer.Trainer",
        "fit",
        FrameworkEffect.TRAIN,
        "mosaicml/composer composer/trainer/trainer.py (6405188) `fit` -> `_train_loop` -> `_train_microbatch`: "
        "`self.state.model(self.state.batch)` under `get_precision_context`, then `microbatch_loss.backward(...)`.",
        calls="model",
        backward_at="microbatch_loss.backward in _train_microbatch",
        positional_batch=True,
        # ``.fit(`` is an anchor already (Lightning's ``Trainer.fit``).
    ),
    FrameworkMethod(
        "transformers.Trainer",
        "train",
        FrameworkEffect.TRAIN,
        "transformers src/transformers/trainer.py `train` -> `_inner_training_loop`: the model is prepared by "
        "`self.accelerator.prepare` and `training_step` runs `compute_loss` then `self.accelerator.backward(loss)`; "
        "`compute_loss` calls `model(**inputs)`.",
        calls="model",
        backward_at="accelerator.backward in training_step",
        # ``.train()`` is also every module's mode switch: the Trainer's settings mark the code instead.
        anchors=(Anchor(("TrainingArguments", "("), "TrainingArguments", Preceded.WORD_BOUNDARY),),
    ),
)


@dataclass(frozen=True)
class FrameworkHook:
    """A method of a user's module that the framework calls before the training steps (when the
    module defines it), with literal positional arguments: what it compiles or stores runs."""

    kind: str
    method: str
    arguments: tuple[str, ...]
    source: str


_LIGHTNING_FIT_ORDER = (
    "Lightning docs/source-pytorch/common/lightning_module.rst (Hooks, `fit`): `setup('fit')`, "
    "`configure_model()`, `configure_optimizers()`, `on_fit_start()`, `on_train_start()`, then the fit loop "
    "(`training_step`); src/lightning/pytorch/trainer/call.py `_call_configure_model` calls "
    "`configure_sharded_model` then `configure_model` when the module overrides them"
)

#: What ``Trainer.fit`` calls on the LightningModule before its first ``training_step``, in order.
FIT_HOOKS: tuple[FrameworkHook, ...] = tuple(
    FrameworkHook("lightning.LightningModule", method, arguments, _LIGHTNING_FIT_ORDER)
    for method, arguments in (
        ("setup", ("fit",)),
        ("configure_sharded_model", ()),
        ("configure_model", ()),
        ("on_fit_start", ()),
        ("on_train_start", ()),
    )
)

#: Framework base classes of user modules: the class is an ``nn.Module`` and inherits these methods
#: (Lightning src/lightning/pytorch/core/module.py: ``class LightningModule(..., torch.nn.Module)``;
#: ``automatic_optimization`` defaults to True).
FRAMEWORK_BASES: dict[str, str] = {
    name: "lightning.LightningModule"
    for name in (
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule",
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.module.LightningModule",
    )
}

#: Library base classes that are ``torch.nn.Module`` subclasses, by every public spelling: a project
#: class built on one is a module (accelerate's ``prepare`` and composer's ``Trainer`` compile it), and
#: so is an instance of one built directly (``ComposerClassifier(net, num_classes=10)``).
MODULE_BASES: dict[str, str] = {
    name: source
    for names, source in (
        (
            ("composer.ComposerModel", "composer.models.ComposerModel", "composer.models.base.ComposerModel"),
            "mosaicml/composer composer/models/base.py: `class ComposerModel(torch.nn.Module, abc.ABC)`",
        ),
        (
            ("composer.models.HuggingFaceModel", "composer.models.huggingface.HuggingFaceModel"),
            "mosaicml/composer composer/models/huggingface.py: `class HuggingFaceModel(ComposerModel)`",
        ),
        (
            (
                "composer.models.ComposerClassifier",
                "composer.models.tasks.ComposerClassifier",
                "composer.models.tasks.classification.ComposerClassifier",
            ),
            "mosaicml/composer composer/models/tasks/classification.py: `class ComposerClassifier(ComposerModel)`, "
            "whose `forward` calls the module it wraps",
        ),
        (
            ("transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel"),
            "transformers src/transformers/modeling_utils.py: `class PreTrainedModel(nn.Module, ...)`",
        ),
        (
            ("diffusers.ModelMixin", "diffusers.models.ModelMixin", "diffusers.models.modeling_utils.ModelMixin"),
            "diffusers src/diffusers/models/modeling_utils.py: `class ModelMixin(torch.nn.Module, PushToHubMixin)`",
        ),
        (
            ("tensordict.nn.TensorDictModuleBase", "tensordict.nn.common.TensorDictModuleBase"),
            "pytorch/tensordict tensordict/nn/common.py: `class TensorDictModuleBase(nn.Module)`; pytorch/rl's "
            "losses (`class LossModule(TensorDictModuleBase, ...)`) and modules build on it",
        ),
    )
    for name in names
}

CLASS_BY_NAME: dict[str, FrameworkClass] = {name: cls for cls in FRAMEWORK_CLASSES for name in cls.names}
CLASS_BY_KIND: dict[str, FrameworkClass] = {cls.kind: cls for cls in FRAMEWORK_CLASSES}
#: The top-level packages these rows describe. They are external even when their sources are in the
#: checked tree (a clone of accelerate or Lightning, a vendored copy): their classes are known by
#: these rows, and walking their sources from every example script instead took seconds per script.
FRAMEWORK_PACKAGES = frozenset(name.split(".", 1)[0] for name in [*CLASS_BY_NAME, *FRAMEWORK_BASES])
METHODS: dict[tuple[str, str], FrameworkMethod] = {(m.kind, m.method): m for m in FRAMEWORK_METHODS}
