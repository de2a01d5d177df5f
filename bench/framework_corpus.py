"""A generated corpus with the shape of a real training framework (bench/README.md, "framework").

The layout follows what large PyTorch training code bases look like (read from torchtitan,
nanoGPT and vjepa2; nothing is copied from them): a top-level package with ``config/``,
``protocols/`` (a registry of train specs filled by ``register_train_spec`` calls when the model
packages are imported), ``models/`` (shared layers in ``models/common`` and one sub-package per
model family, each registering its spec), ``distributed/`` (per-block compile, DDP wrapping after
the compile, ``maybe_enable_amp`` returning an autocast), ``train/`` (a ``Trainer`` class whose
forward runs under that autocast and whose ``scaler.scale(loss).backward()`` runs outside it,
callbacks, checkpointing), ``data/`` (dataset modules registering themselves, transforms,
tokenizers, loaders), ``utils/`` (logging, metrics, a forward-mode sensitivity probe),
``experiments/`` (training scripts and trainer subclasses, some nanoGPT-style loops, some correct,
some not), plus ``scripts/`` and ``tests/``. The packages import each other the way such code
bases do (package ``__init__`` files re-export their modules; the trainer reaches the data,
metrics, model and distributed packages), so an analysis of one entry point reaches far.

Everything is deterministic: the same arguments give byte-identical files. The hazards the
analyzer should report are marked in the generated code with ``# expect: CALnnn`` comments on the
reported line; ``generate`` returns them as ``expected``.

``copies`` > 1 generates the same framework again as sibling packages of the same project
(``forge``, ``forge2``, ``forge3``, ...; each with its own ``scripts/<pkg>/`` and ``tests/<pkg>/``),
each importing only itself, so every copy's cross-package reach is that of the 1x framework and
the project grows by whole frameworks (the scaling check of run_bench.py uses 1x, 2x and 4x).

Usage: ``python bench/framework_corpus.py OUT_DIR [--copies N] [--package NAME]``.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
import zlib
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PACKAGE = "forge"
_EXPECT = re.compile(r"#\s*expect:\s*((?:CAL\d+[,\s]*)+)")

# -- the framework's vocabulary -------------------------------------------------------------------

#: (family, kind): decoder families keep their blocks in ``self.layers`` (an nn.ModuleDict) and
#: compile them per block in place or by ``register_module``; vision/audio families keep them in an
#: nn.ModuleList ``self.blocks`` and compile by assigning back.
FAMILIES = (
    ("llama", "decoder"),
    ("qwen", "decoder"),
    ("mistral", "decoder"),
    ("gemma", "decoder"),
    ("phi", "decoder"),
    ("falcon", "decoder"),
    ("mpt", "decoder"),
    ("bloom", "decoder"),
    ("gptj", "decoder"),
    ("mamba", "decoder"),
    ("vit", "vision"),
    ("dit", "vision"),
    ("clip", "vision"),
    ("whisper", "audio"),
)

#: (dataset, modality)
DATASETS = (
    ("c4", "text"),
    ("wikitext", "text"),
    ("openwebtext", "text"),
    ("pile", "text"),
    ("slimpajama", "text"),
    ("redpajama", "text"),
    ("fineweb", "text"),
    ("the_stack", "text"),
    ("arxiv", "text"),
    ("books", "text"),
    ("pg19", "text"),
    ("tinystories", "text"),
    ("mmlu", "text"),
    ("hellaswag", "text"),
    ("gsm8k", "text"),
    ("humaneval", "text"),
    ("alpaca", "text"),
    ("dolly", "text"),
    ("oasst", "text"),
    ("ultrachat", "text"),
    ("sharegpt", "text"),
    ("lambada", "text"),
    ("squad", "text"),
    ("imagenet", "image"),
    ("cifar10", "image"),
    ("cifar100", "image"),
    ("coco", "image"),
    ("laion", "image"),
    ("cc3m", "image"),
    ("cc12m", "image"),
    ("kinetics", "video"),
    ("ssv2", "video"),
    ("ego4d", "video"),
    ("librispeech", "audio"),
    ("commonvoice", "audio"),
    ("audioset", "audio"),
)

#: (transform, modality)
TRANSFORMS = (
    ("random_crop", "image"),
    ("resize", "image"),
    ("normalize", "image"),
    ("flip", "image"),
    ("color_jitter", "image"),
    ("mixup", "image"),
    ("cutmix", "image"),
    ("randaugment", "image"),
    ("tubelet", "video"),
    ("frame_sample", "video"),
    ("spec_augment", "audio"),
    ("mel", "audio"),
    ("text_clean", "text"),
    ("dedup", "text"),
    ("mask_tokens", "text"),
    ("truncate", "text"),
)

TOKENIZERS = ("bpe", "sentencepiece", "char", "byte_level", "hf_tokenizer", "tiktoken_like")

METRICS = (
    "accuracy",
    "top_k",
    "perplexity",
    "loss_meter",
    "throughput",
    "mfu",
    "grad_norm",
    "param_norm",
    "token_count",
    "bleu",
    "rouge",
    "f1",
    "precision_recall",
    "calibration",
    "auc",
    "confusion",
    "iou",
    "psnr",
    "ssim",
    "wer",
)

CALLBACKS = (
    "log_metrics",
    "save_checkpoint",
    "lr_monitor",
    "profiler",
    "ema_update",
    "nan_guard",
    "throughput",
    "sensitivity",
)

#: (experiment, kind). Kinds: ``script`` (a nanoGPT-style loop: compile, DDP, autocast forward,
#: scaled backward outside it: CAL002), ``subclass`` (a Trainer subclass using the inherited step),
#: ``override`` (a Trainer subclass with its own autocast step: CAL002), ``fp32`` (compiled, no
#: autocast: nothing to report), ``eager`` (autocast, no compile: nothing), ``fixed`` (autocast and
#: compile with backward_pass_autocast patched off: nothing), ``forward_ad`` (forward-mode AD
#: through a compiled module: CAL001).
EXPERIMENTS = (
    ("long_context", "script"),
    ("moe_sweep", "subclass"),
    ("lora_ft", "override"),
    ("distill", "script"),
    ("pinn", "forward_ad"),
    ("fwd_grad", "forward_ad"),
    ("vit_pretrain", "script"),
    ("mae", "fp32"),
    ("dino", "eager"),
    ("jepa", "override"),
    ("contrastive", "fixed"),
    ("speech_ctc", "subclass"),
    ("seq2seq", "fp32"),
    ("sft_chat", "script"),
    ("reward_model", "subclass"),
    ("dpo", "override"),
    ("curriculum", "subclass"),
    ("mup", "eager"),
    ("low_precision", "script"),
    ("sparse_attn", "fixed"),
    ("retrieval", "subclass"),
    ("diffusion", "script"),
    ("flow_match", "fp32"),
    ("tiny_baseline", "eager"),
)

#: The line of Trainer.forward_backward_step that run_bench.py's language-server client edits.
EDIT_LINE_TEXT = '        step_tag = "fwd-bwd"\n'


def _seed(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def _pick(options: tuple | list, *key: object):
    return options[_seed(*key) % len(options)]


def _code(text: str, pkg: str) -> str:
    """A template: dedented, ``PKG`` replaced by the package name, one trailing newline."""
    return textwrap.dedent(text).lstrip("\n").replace("PKG", pkg).rstrip("\n") + "\n"


def _header(pkg: str, path: str, what: str) -> str:
    return f'"""{pkg}: {what}\n\nModule {path}.\n"""\n\n'


# -- filler: the helper functions and classes every real module has ---------------------------------
#
# Real framework modules are mostly code that a given entry point never reaches: validation,
# conversion, bookkeeping and debugging helpers. Every generated module gets a deterministic set of
# them (the bytes a parser and outliner must get through); modules on the training path call the
# first one, ``_prepare``, so part of it is reached too. None of them compiles, autocasts, runs a
# backward or enters forward-mode AD: they never change what the analyzer reports.

_VERBS = (
    "normalize",
    "summarize",
    "validate",
    "bucketize",
    "accumulate",
    "project",
    "smooth",
    "select",
    "merge",
    "split",
    "clip",
    "rescale",
    "describe",
    "gather",
)
_NOUNS = (
    "batch",
    "tokens",
    "logits",
    "weights",
    "grads",
    "stats",
    "shards",
    "frames",
    "features",
    "masks",
    "scores",
    "buffers",
    "records",
    "offsets",
)

_HELPER_TEMPLATES = (
    '''
def {name}(x, eps={eps}):
    """{Verb} the {noun} along the last dimension.

    Values whose magnitude is below ``eps`` are treated as zero; non-tensors are converted first.
    """
    if not isinstance(x, torch.Tensor):
        x = torch.as_tensor(x, dtype=torch.float32)
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(eps)
    out = x / scale
    if out.dim() > {k}:
        out = out.flatten(0, out.dim() - {k})
    return {call}
''',
    '''
def {name}(items, limit={k}):
    """Keep at most ``limit * 8`` {noun}, dropping missing entries, and report how many were kept."""
    kept = []
    for index, item in enumerate(items if isinstance(items, (list, tuple)) else [items]):
        if index >= limit * 8:
            break
        if item is None:
            continue
        kept.append(item)
    summary = {{"count": len(kept), "limit": limit, "kind": "{noun}"}}
    if not kept:
        return summary
    out = kept if len(kept) > 1 else kept[0]
    return {call}
''',
    '''
class {camel}:
    """Running {noun} statistics with exponential smoothing."""

    def __init__(self, momentum={eps}):
        self.momentum = momentum
        self.value = None
        self.steps = 0

    def update(self, x):
        out = x
        out = {call}
        self.value = out if self.value is None else self.momentum * self.value + (1 - self.momentum) * out
        self.steps += 1
        return self.value

    def state_dict(self):
        return {{"value": self.value, "steps": self.steps, "momentum": self.momentum}}

    def load_state_dict(self, state):
        self.value, self.steps, self.momentum = state["value"], state["steps"], state["momentum"]
''',
    '''
def {name}(a, b=None, dim=-1):
    """Cosine similarity of {noun} ``a`` and ``b`` (``a`` with itself by default), clamped to [-1, 1]."""
    if not isinstance(a, torch.Tensor):
        return a
    b = a if b is None else b
    num = (a * b).sum(dim)
    den = a.norm(dim=dim) * b.norm(dim=dim)
    out = (num / den.clamp_min({eps})).clamp(-1.0, 1.0)
    return {call}
''',
    '''
def {name}(config, prefix="{noun}", sep="."):
    """Flatten ``config`` (a dataclass, a namespace or a dict) into ``prefix.key`` pairs for logging."""
    if hasattr(config, "__dict__"):
        config = vars(config)
    if not isinstance(config, dict):
        return {{prefix: config}}
    flat = {{}}
    for key, value in sorted(config.items(), key=lambda kv: str(kv[0])):
        name = f"{{prefix}}{{sep}}{{key}}"
        if isinstance(value, dict) or hasattr(value, "__dict__"):
            flat.update({name}(value, name, sep))
        else:
            flat[name] = value
    return flat
''',
    '''
def {name}(x, buckets={k}, low=0.0, high=1.0):
    """Histogram of the {noun} in ``buckets`` equal bins between ``low`` and ``high``."""
    if not isinstance(x, torch.Tensor):
        return x
    width = (high - low) / buckets
    index = ((x.float() - low) / width).floor().clamp(0, buckets - 1).long()
    counts = torch.bincount(index.flatten(), minlength=buckets)
    out = counts.float() / max(1, index.numel())
    return {call}
''',
    '''
def {name}(sizes, world_size={k}):
    """Split {noun} of the given ``sizes`` over ``world_size`` ranks as evenly as possible."""
    if isinstance(sizes, torch.Tensor):
        sizes = sizes.flatten().tolist()
    if not isinstance(sizes, (list, tuple)):
        return sizes
    loads = [0] * world_size
    owners = []
    for size in sorted(sizes, reverse=True):
        rank = loads.index(min(loads))
        loads[rank] += size
        owners.append(rank)
    out = owners
    return {call}
''',
)


def _helpers(key: str, count: int) -> str:
    """``count`` helpers for the module ``key``; the first is ``_prepare`` (one argument), chained to a few others."""
    seed = _seed("helpers", key)
    names, templates = [], []
    for j in range(count):
        verb = _VERBS[(seed >> (j % 16)) % len(_VERBS)]
        noun = _NOUNS[(seed // (j + 3)) % len(_NOUNS)]
        template = _HELPER_TEMPLATES[(seed // (j + 1)) % len(_HELPER_TEMPLATES)]
        if j == 0:  # one positional argument and a plain return: callable as _prepare(x) anywhere
            template = _HELPER_TEMPLATES[(0, 1, 3, 5)[seed % 4]]
        names.append("_prepare" if j == 0 else f"{verb}_{noun}_{j}")
        templates.append((template, verb, noun))
    chunks = []
    for j, (template, verb, noun) in enumerate(templates):
        chained = (
            j + 1 < count
            and j < 3
            and "def {name}(config" not in _HELPER_TEMPLATES[(seed // (j + 2)) % len(_HELPER_TEMPLATES)]
        )
        nxt = names[j + 1] if j + 1 < count else None
        next_is_function = (
            nxt is not None
            and not templates[j + 1][0].lstrip().startswith("class ")
            and "def {name}(config" not in templates[j + 1][0]
        )
        call = f"{nxt}(out)" if chained and next_is_function else "out"
        camel = "".join(part.capitalize() for part in names[j].strip("_").split("_"))
        chunks.append(
            template.format(
                name=names[j],
                camel=camel,
                Verb=verb.capitalize(),
                noun=noun,
                k=2 + (seed + j) % 5,
                eps=f"{(1 + (seed + j) % 9) / 10:.1f}",
                call=call,
            )
        )
    return "\n".join(chunk.strip("\n") + "\n\n" for chunk in chunks).rstrip("\n") + "\n"


def _with_helpers(relative: str, text: str) -> str:
    """``text`` with the module's helpers appended (and ``import torch`` if the helpers need it)."""
    if relative.endswith("__init__.py") or relative.startswith(("tests/", "scripts/")):
        return text
    count = 4 + _seed("count", relative) % 11
    helpers = _helpers(relative, count)
    if "import torch\n" not in text:
        lines = text.splitlines(keepends=True)
        at = next((i for i, line in enumerate(lines) if line.startswith(("import ", "from "))), None)
        if at is None:  # no imports: after the module docstring
            at = next((i + 1 for i, line in enumerate(lines) if i > 0 and line.rstrip().endswith('"""')), 0)
            lines.insert(at, "\nimport torch\n")
        else:
            lines.insert(at, "import torch\n")
        text = "".join(lines)
    if "\ndef _prepare(" in text or "\nclass _prepare" in text:
        raise AssertionError(relative)
    return text.rstrip("\n") + "\n\n\n" + helpers


# -- config ----------------------------------------------------------------------------------------


def _config_files(pkg: str) -> dict[str, str]:
    files = {}
    files["config/__init__.py"] = _code(
        """
        from PKG.config.job_config import (
            ActivationCheckpointConfig,
            CompileConfig,
            DataConfig,
            JobConfig,
            MetricsConfig,
            ModelConfig,
            OptimizerConfig,
            ParallelConfig,
            TrainingConfig,
        )
        from PKG.config.parse import parse_args
        from PKG.config.presets import preset

        __all__ = [
            "ActivationCheckpointConfig",
            "CompileConfig",
            "DataConfig",
            "JobConfig",
            "MetricsConfig",
            "ModelConfig",
            "OptimizerConfig",
            "ParallelConfig",
            "TrainingConfig",
            "parse_args",
            "preset",
        ]
        """,
        pkg,
    )
    files["config/job_config.py"] = _header(
        pkg, "config/job_config.py", "the job configuration, one dataclass per section."
    ) + _code(
        """
        from dataclasses import dataclass, field


        @dataclass
        class ModelConfig:
            name: str = "llama"
            flavor: str = "debug"
            vocab_size: int = 32000


        @dataclass
        class CompileConfig:
            enable: bool = True
            backend: str = "inductor"
            fullgraph: bool = True
            components: tuple = ("model", "loss")


        @dataclass
        class ActivationCheckpointConfig:
            mode: str = "none"
            selective_ratio: int = 2


        @dataclass
        class ParallelConfig:
            data_parallel_replicate_degree: int = 1
            data_parallel_shard_degree: int = -1
            tensor_parallel_degree: int = 1
            pipeline_parallel_degree: int = 1


        @dataclass
        class TrainingConfig:
            steps: int = 1000
            batch_size: int = 8
            seq_len: int = 2048
            mixed_precision: str = "bfloat16"
            device_type: str = "cuda"
            gradient_accumulation_steps: int = 1
            max_norm: float = 1.0
            seed: int = 0


        @dataclass
        class OptimizerConfig:
            name: str = "AdamW"
            lr: float = 3e-4
            weight_decay: float = 0.1
            warmup_steps: int = 200


        @dataclass
        class DataConfig:
            dataset: str = "c4"
            tokenizer: str = "bpe"
            num_workers: int = 4
            shuffle: bool = True


        @dataclass
        class MetricsConfig:
            log_freq: int = 10
            enable_tensorboard: bool = False
            names: tuple = ("loss_meter", "throughput", "grad_norm")


        @dataclass
        class JobConfig:
            model: ModelConfig = field(default_factory=ModelConfig)
            compile: CompileConfig = field(default_factory=CompileConfig)
            activation_checkpoint: ActivationCheckpointConfig = field(default_factory=ActivationCheckpointConfig)
            parallel: ParallelConfig = field(default_factory=ParallelConfig)
            training: TrainingConfig = field(default_factory=TrainingConfig)
            optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
            data: DataConfig = field(default_factory=DataConfig)
            metrics: MetricsConfig = field(default_factory=MetricsConfig)
            dump_folder: str = "./outputs"
        """,
        pkg,
    )
    files["config/defaults.py"] = _header(pkg, "config/defaults.py", "default values shared by the presets.") + _code(
        """
        DEFAULT_LR = 3e-4
        DEFAULT_WARMUP = 200
        DEFAULT_SEQ_LEN = 2048
        DEFAULT_DTYPE = "bfloat16"
        DTYPE_NAMES = ("float32", "bfloat16", "float16")


        def default_dump_folder(name):
            return f"./outputs/{name}"
        """,
        pkg,
    )
    files["config/parse.py"] = _header(pkg, "config/parse.py", "command line to JobConfig.") + _code(
        """
        import argparse
        import dataclasses

        from PKG.config.job_config import JobConfig
        from PKG.config.override import apply_overrides
        from PKG.config.validate import validate


        def _add_section(parser, prefix, section):
            for item in dataclasses.fields(section):
                parser.add_argument(f"--{prefix}.{item.name}", default=None)


        def parse_args(argv=None):
            config = JobConfig()
            parser = argparse.ArgumentParser()
            parser.add_argument("--preset", default=None)
            for item in dataclasses.fields(config):
                value = getattr(config, item.name)
                if dataclasses.is_dataclass(value):
                    _add_section(parser, item.name, value)
            args = parser.parse_args(argv)
            overrides = {k: v for k, v in vars(args).items() if v is not None and "." in k}
            config = apply_overrides(config, overrides)
            validate(config)
            return config
        """,
        pkg,
    )
    files["config/override.py"] = _header(
        pkg, "config/override.py", "dotted overrides applied to a JobConfig."
    ) + _code(
        """
        import dataclasses


        def _convert(old, value):
            if isinstance(old, bool):
                return str(value).lower() in ("1", "true", "yes")
            if isinstance(old, int):
                return int(value)
            if isinstance(old, float):
                return float(value)
            if isinstance(old, tuple):
                return tuple(str(value).split(","))
            return value


        def apply_overrides(config, overrides):
            for dotted, value in sorted(overrides.items()):
                section_name, key = dotted.split(".", 1)
                section = getattr(config, section_name)
                old = getattr(section, key)
                section = dataclasses.replace(section, **{key: _convert(old, value)})
                config = dataclasses.replace(config, **{section_name: section})
            return config
        """,
        pkg,
    )
    presets = "\n".join(f'    "{name}": {{"model.name": "{name}", "model.flavor": "debug"}},' for name, _ in FAMILIES)
    files["config/presets.py"] = _header(pkg, "config/presets.py", "named presets per model family.") + _code(
        """
        from PKG.config.job_config import JobConfig
        from PKG.config.override import apply_overrides

        PRESETS = {
        @@PRESETS@@
        }


        def preset(name):
            return apply_overrides(JobConfig(), PRESETS[name])
        """,
        pkg,
    ).replace("@@PRESETS@@", presets)
    files["config/validate.py"] = _header(pkg, "config/validate.py", "consistency checks of a JobConfig.") + _code(
        """
        from PKG.config.defaults import DTYPE_NAMES


        class ConfigError(ValueError):
            pass


        def validate(config):
            if config.training.mixed_precision not in DTYPE_NAMES:
                raise ConfigError(f"unknown dtype {config.training.mixed_precision}")
            if config.training.gradient_accumulation_steps < 1:
                raise ConfigError("gradient_accumulation_steps must be positive")
            if config.parallel.pipeline_parallel_degree > 1 and config.compile.enable:
                raise ConfigError("compile with pipeline parallelism is not supported here")
            return config
        """,
        pkg,
    )
    files["config/env_vars.py"] = _header(
        pkg, "config/env_vars.py", "environment variables the launcher reads."
    ) + _code(
        """
        import os


        def local_rank():
            return int(os.environ.get("LOCAL_RANK", "0"))


        def world_size():
            return int(os.environ.get("WORLD_SIZE", "1"))


        def is_distributed():
            return world_size() > 1
        """,
        pkg,
    )
    return files


# -- protocols -------------------------------------------------------------------------------------


def _protocol_files(pkg: str) -> dict[str, str]:
    files = {}
    files["protocols/__init__.py"] = _code(
        """
        from PKG.protocols.train_spec import TrainSpec, get_train_spec, list_train_specs, register_train_spec

        __all__ = ["TrainSpec", "get_train_spec", "list_train_specs", "register_train_spec"]
        """,
        pkg,
    )
    files["protocols/train_spec.py"] = _header(
        pkg, "protocols/train_spec.py", "train specs in a module-level registry."
    ) + _code(
        """
        from collections.abc import Callable
        from dataclasses import dataclass
        from typing import TypeAlias

        import torch.nn as nn

        ParallelizeFunction: TypeAlias = Callable[..., nn.Module]
        LossFunctionBuilder: TypeAlias = Callable[..., Callable]


        @dataclass
        class TrainSpec:
            name: str
            model_cls: type
            flavors: dict
            parallelize_fn: ParallelizeFunction
            build_loss_fn: LossFunctionBuilder
            state_dict_adapter: type | None = None


        _train_specs: dict[str, TrainSpec] = {}


        def register_train_spec(train_spec: TrainSpec) -> None:
            if train_spec.name in _train_specs:
                raise ValueError(f"train spec {train_spec.name} is already registered")
            _train_specs[train_spec.name] = train_spec


        def get_train_spec(name: str) -> TrainSpec:
            if name not in _train_specs:
                raise ValueError(f"train spec {name} is not registered")
            return _train_specs[name]


        def list_train_specs() -> list[str]:
            return sorted(_train_specs)
        """,
        pkg,
    )
    files["protocols/model.py"] = _header(pkg, "protocols/model.py", "what a model of the framework provides.") + _code(
        """
        from typing import Protocol

        import torch


        class ModelProtocol(Protocol):
            def init_weights(self, buffer_device: torch.device | None = None) -> None: ...

            def forward(self, tokens: torch.Tensor) -> torch.Tensor: ...
        """,
        pkg,
    )
    files["protocols/state_dict_adapter.py"] = _header(
        pkg, "protocols/state_dict_adapter.py", "conversion to and from external checkpoints."
    ) + _code(
        """
        class BaseStateDictAdapter:
            prefix_map: dict = {}

            def to_external(self, state_dict):
                out = {}
                for key, value in state_dict.items():
                    for ours, theirs in self.prefix_map.items():
                        key = key.replace(ours, theirs)
                    out[key] = value
                return out

            def from_external(self, state_dict):
                out = {}
                for key, value in state_dict.items():
                    for ours, theirs in self.prefix_map.items():
                        key = key.replace(theirs, ours)
                    out[key] = value
                return out
        """,
        pkg,
    )
    return files


# -- models ----------------------------------------------------------------------------------------


def _common_model_files(pkg: str) -> dict[str, str]:
    files = {}
    files["models/common/__init__.py"] = _code(
        """
        from PKG.models.common.attention import Attention
        from PKG.models.common.block import TransformerBlock
        from PKG.models.common.embedding import PatchEmbedding, TokenEmbedding
        from PKG.models.common.mlp import FeedForward
        from PKG.models.common.norms import RMSNorm, build_norm
        from PKG.models.common.rope import RotaryEmbedding

        __all__ = ["Attention", "FeedForward", "PatchEmbedding", "RMSNorm", "RotaryEmbedding", "TokenEmbedding", "TransformerBlock", "build_norm"]
        """,
        pkg,
    )
    files["models/common/attention.py"] = _header(
        pkg, "models/common/attention.py", "multi-head attention with rotary positions."
    ) + _code(
        """
        import torch
        import torch.nn.functional as F
        from torch import nn

        from PKG.models.common.rope import RotaryEmbedding


        class Attention(nn.Module):
            def __init__(self, dim, n_heads, n_kv_heads=None, rope=True):
                super().__init__()
                self.n_heads = n_heads
                self.n_kv_heads = n_kv_heads or n_heads
                self.head_dim = dim // n_heads
                self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
                self.wk = nn.Linear(dim, self.n_kv_heads * self.head_dim, bias=False)
                self.wv = nn.Linear(dim, self.n_kv_heads * self.head_dim, bias=False)
                self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
                self.rope = RotaryEmbedding(self.head_dim) if rope else None

            def forward(self, x):
                bsz, seqlen, _ = x.shape
                q = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
                k = self.wk(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
                v = self.wv(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
                if self.rope is not None:
                    q, k = self.rope(q), self.rope(k)
                if self.n_kv_heads != self.n_heads:
                    repeat = self.n_heads // self.n_kv_heads
                    k = k.repeat_interleave(repeat, dim=2)
                    v = v.repeat_interleave(repeat, dim=2)
                out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
                return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))
        """,
        pkg,
    )
    files["models/common/mlp.py"] = _header(pkg, "models/common/mlp.py", "gated feed-forward layers.") + _code(
        """
        import torch.nn.functional as F
        from torch import nn


        class FeedForward(nn.Module):
            def __init__(self, dim, hidden_dim, multiple_of=256):
                super().__init__()
                hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
                self.w1 = nn.Linear(dim, hidden_dim, bias=False)
                self.w2 = nn.Linear(hidden_dim, dim, bias=False)
                self.w3 = nn.Linear(dim, hidden_dim, bias=False)

            def forward(self, x):
                return self.w2(F.silu(self.w1(x)) * self.w3(x))


        class MLP(nn.Module):
            def __init__(self, dim, hidden_dim):
                super().__init__()
                self.fc1 = nn.Linear(dim, hidden_dim)
                self.fc2 = nn.Linear(hidden_dim, dim)

            def forward(self, x):
                return self.fc2(F.gelu(self.fc1(x)))
        """,
        pkg,
    )
    files["models/common/norms.py"] = _header(pkg, "models/common/norms.py", "normalization layers.") + _code(
        """
        import torch
        from torch import nn


        class RMSNorm(nn.Module):
            def __init__(self, dim, eps=1e-6):
                super().__init__()
                self.eps = eps
                self.weight = nn.Parameter(torch.ones(dim))

            def forward(self, x):
                # Normalize in float32 and cast back, as most decoder stacks do.
                normed = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
                return normed.type_as(x) * self.weight


        def build_norm(kind, dim):
            if kind == "rmsnorm":
                return RMSNorm(dim)
            if kind == "layernorm":
                return nn.LayerNorm(dim)
            raise ValueError(f"unknown norm {kind}")
        """,
        pkg,
    )
    files["models/common/embedding.py"] = _header(
        pkg, "models/common/embedding.py", "token and patch embeddings."
    ) + _code(
        """
        from torch import nn


        class TokenEmbedding(nn.Module):
            def __init__(self, vocab_size, dim):
                super().__init__()
                self.embedding = nn.Embedding(vocab_size, dim)

            def forward(self, tokens):
                return self.embedding(tokens)


        class PatchEmbedding(nn.Module):
            def __init__(self, in_channels, dim, patch_size):
                super().__init__()
                self.proj = nn.Conv2d(in_channels, dim, kernel_size=patch_size, stride=patch_size)

            def forward(self, images):
                return self.proj(images).flatten(2).transpose(1, 2)
        """,
        pkg,
    )
    files["models/common/rope.py"] = _header(pkg, "models/common/rope.py", "rotary position embeddings.") + _code(
        """
        import torch
        from torch import nn


        class RotaryEmbedding(nn.Module):
            def __init__(self, head_dim, theta=10000.0, max_seq_len=8192):
                super().__init__()
                freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
                angles = torch.outer(torch.arange(max_seq_len).float(), freqs)
                self.register_buffer("cos", angles.cos(), persistent=False)
                self.register_buffer("sin", angles.sin(), persistent=False)

            def forward(self, x):
                seqlen = x.shape[1]
                x1, x2 = x[..., ::2], x[..., 1::2]
                cos = self.cos[:seqlen, None, :]
                sin = self.sin[:seqlen, None, :]
                return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)
        """,
        pkg,
    )
    files["models/common/block.py"] = _header(
        pkg, "models/common/block.py", "the transformer block every family builds on."
    ) + _code(
        """
        from torch import nn

        from PKG.models.common.attention import Attention
        from PKG.models.common.mlp import FeedForward
        from PKG.models.common.norms import build_norm


        class TransformerBlock(nn.Module):
            def __init__(self, layer_id, dim, n_heads, hidden_dim, norm="rmsnorm", n_kv_heads=None):
                super().__init__()
                self.layer_id = layer_id
                self.attention_norm = build_norm(norm, dim)
                self.attention = Attention(dim, n_heads, n_kv_heads)
                self.ffn_norm = build_norm(norm, dim)
                self.feed_forward = FeedForward(dim, hidden_dim)

            def forward(self, x):
                x = x + self.attention(self.attention_norm(x))
                return x + self.feed_forward(self.ffn_norm(x))
        """,
        pkg,
    )
    files["models/common/init.py"] = _header(pkg, "models/common/init.py", "weight initialization helpers.") + _code(
        """
        import math

        from torch import nn


        def depth_scaled_std(base, layer_id):
            return base / math.sqrt(2 * (layer_id + 1))


        def init_linear(module, std):
            nn.init.trunc_normal_(module.weight, mean=0.0, std=std, a=-3 * std, b=3 * std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)


        def init_block(block, layer_id, base_std=0.02):
            for module in block.modules():
                if isinstance(module, nn.Linear):
                    init_linear(module, depth_scaled_std(base_std, layer_id))
        """,
        pkg,
    )
    files["models/common/moe.py"] = _header(pkg, "models/common/moe.py", "a token-choice mixture of experts.") + _code(
        """
        import torch
        from torch import nn

        from PKG.models.common.mlp import FeedForward


        class MoE(nn.Module):
            def __init__(self, dim, hidden_dim, num_experts=8, top_k=2):
                super().__init__()
                self.router = nn.Linear(dim, num_experts, bias=False)
                self.experts = nn.ModuleList([FeedForward(dim, hidden_dim) for _ in range(num_experts)])
                self.top_k = top_k

            def forward(self, x):
                scores = self.router(x).softmax(-1)
                weights, chosen = scores.topk(self.top_k, dim=-1)
                out = torch.zeros_like(x)
                for slot in range(self.top_k):
                    for index, expert in enumerate(self.experts):
                        mask = (chosen[..., slot] == index).unsqueeze(-1)
                        out = out + mask * weights[..., slot : slot + 1] * expert(x)
                return out
        """,
        pkg,
    )
    files["models/common/utils.py"] = _header(
        pkg, "models/common/utils.py", "parameter counting and FLOP estimates."
    ) + _code(
        """
        def count_parameters(model, exclude_embeddings=False):
            total = 0
            for name, param in model.named_parameters():
                if exclude_embeddings and "embedding" in name:
                    continue
                total += param.numel()
            return total


        def flops_per_token(n_params, n_layers, dim, seq_len):
            return 6 * n_params + 12 * n_layers * dim * seq_len
        """,
        pkg,
    )
    return files


def _family_files(pkg: str, family: str, kind: str, index: int) -> dict[str, str]:
    base = f"models/{family}"
    cls = "".join(part.capitalize() for part in family.split("_"))
    files = {}
    dim = 256 + 64 * (index % 4)
    n_heads = 8 if index % 2 else 16
    files[f"{base}/__init__.py"] = _code(
        f"""
        from PKG.models.{family}.args import FLAVORS, {cls}Args
        from PKG.models.{family}.model import {cls}Model
        from PKG.models.{family}.parallelize import parallelize_{family}
        from PKG.models.{family}.state_dict_adapter import {cls}StateDictAdapter
        from PKG.protocols.train_spec import TrainSpec, register_train_spec
        from PKG.train.loss import {"build_cross_entropy_loss" if kind == "decoder" else "build_mse_loss"}

        __all__ = ["FLAVORS", "{cls}Args", "{cls}Model", "parallelize_{family}"]

        register_train_spec(
            TrainSpec(
                name="{family}",
                model_cls={cls}Model,
                flavors=FLAVORS,
                parallelize_fn=parallelize_{family},
                build_loss_fn={"build_cross_entropy_loss" if kind == "decoder" else "build_mse_loss"},
                state_dict_adapter={cls}StateDictAdapter,
            )
        )
        """,
        pkg,
    )
    files[f"{base}/args.py"] = _header(pkg, f"{base}/args.py", f"{family} model arguments and flavors.") + _code(
        f"""
        from dataclasses import dataclass


        @dataclass
        class {cls}Args:
            dim: int = {dim}
            n_layers: int = {4 + index % 5}
            n_heads: int = {n_heads}
            n_kv_heads: int | None = {n_heads // 2 if index % 3 == 0 else None}
            hidden_dim: int = {dim * 4}
            vocab_size: int = 32000
            norm: str = "{"rmsnorm" if kind == "decoder" else "layernorm"}"
            in_channels: int = 3
            patch_size: int = 16
            num_classes: int = 1000


        FLAVORS = {{
            "debug": {cls}Args(dim=128, n_layers=2, n_heads=4, hidden_dim=512),
            "small": {cls}Args(),
            "large": {cls}Args(dim={dim * 4}, n_layers={16 + index}, n_heads=32, hidden_dim={dim * 16}),
        }}
        """,
        pkg,
    )
    if kind == "decoder":
        model = _code(
            f"""
            import torch
            from torch import nn

            from PKG.models.common.embedding import TokenEmbedding
            from PKG.models.common.init import init_block
            from PKG.models.common.norms import build_norm
            from PKG.models.{family}.layers import {cls}Block


            class {cls}Model(nn.Module):
                def __init__(self, args):
                    super().__init__()
                    self.args = args
                    self.tok_embeddings = TokenEmbedding(args.vocab_size, args.dim)
                    self.layers = nn.ModuleDict()
                    for layer_id in range(args.n_layers):
                        self.layers[str(layer_id)] = {cls}Block(layer_id, args)
                    self.norm = build_norm(args.norm, args.dim)
                    self.output = nn.Linear(args.dim, args.vocab_size, bias=False)

                def init_weights(self, buffer_device=None):
                    for layer_id, block in self.layers.items():
                        init_block(block, int(layer_id))

                def forward(self, tokens):
                    h = self.tok_embeddings(tokens)
                    for layer in self.layers.values():
                        h = layer(h)
                    return self.output(self.norm(h))
            """,
            pkg,
        )
        layers = _code(
            f"""
            from PKG.models.common.block import TransformerBlock


            class {cls}Block(TransformerBlock):
                def __init__(self, layer_id, args):
                    super().__init__(layer_id, args.dim, args.n_heads, args.hidden_dim, norm=args.norm, n_kv_heads=args.n_kv_heads)
                    self.residual_scale = {1.0 if index % 2 else 0.5}

                def forward(self, x):
                    x = x + self.residual_scale * self.attention(self.attention_norm(x))
                    return x + self.feed_forward(self.ffn_norm(x))
            """,
            pkg,
        )
    else:
        embed = (
            "PatchEmbedding(args.in_channels, args.dim, args.patch_size)"
            if kind == "vision"
            else "nn.Conv1d(80, args.dim, kernel_size=3, padding=1)"
        )
        model = _code(
            f"""
            import torch
            from torch import nn

            from PKG.models.common.embedding import PatchEmbedding
            from PKG.models.common.init import init_block
            from PKG.models.common.norms import build_norm
            from PKG.models.{family}.layers import {cls}Block


            class {cls}Model(nn.Module):
                def __init__(self, args):
                    super().__init__()
                    self.args = args
                    self.embed = {embed}
                    self.blocks = nn.ModuleList([{cls}Block(i, args) for i in range(args.n_layers)])
                    self.norm = build_norm(args.norm, args.dim)
                    self.head = nn.Linear(args.dim, args.num_classes)

                def init_weights(self, buffer_device=None):
                    for layer_id, block in enumerate(self.blocks):
                        init_block(block, layer_id)

                def forward(self, inputs):
                    h = self.embed(inputs)
                    {"h = h.transpose(1, 2)" if kind == "audio" else "h = h"}
                    for block in self.blocks:
                        h = block(h)
                    return self.head(self.norm(h).mean(1))
            """,
            pkg,
        )
        layers = _code(
            f"""
            from torch import nn

            from PKG.models.common.attention import Attention
            from PKG.models.common.mlp import MLP


            class {cls}Block(nn.Module):
                def __init__(self, layer_id, args):
                    super().__init__()
                    self.norm1 = nn.LayerNorm(args.dim)
                    self.attn = Attention(args.dim, args.n_heads, rope=False)
                    self.norm2 = nn.LayerNorm(args.dim)
                    self.mlp = MLP(args.dim, args.hidden_dim)

                def forward(self, x):
                    x = x + self.attn(self.norm1(x))
                    return x + self.mlp(self.norm2(x))
            """,
            pkg,
        )
    files[f"{base}/model.py"] = _header(pkg, f"{base}/model.py", f"the {family} model.") + model
    files[f"{base}/layers.py"] = _header(pkg, f"{base}/layers.py", f"the {family} block.") + layers
    # Per-block compile: the shared in-place helper, register_module, or assignment back into the list.
    if kind != "decoder":
        compile_code = """
            def apply_compile(model, compile_config):
                # Compile each block and put it back: the repeated structure compiles once.
                for i, block in enumerate(model.blocks):
                    model.blocks[i] = torch.compile(block, backend=compile_config.backend, fullgraph=compile_config.fullgraph)
            """
        compile_import = ""
    elif index % 2 == 0:
        compile_code = ""
        compile_import = "from PKG.distributed.compile import apply_compile\n"
    else:
        compile_code = """
            def apply_compile(model, compile_config):
                for layer_id, block in model.layers.named_children():
                    block = torch.compile(block, backend=compile_config.backend, fullgraph=True)
                    model.layers.register_module(layer_id, block)
            """
        compile_import = ""
    compile_code = textwrap.indent("\n" + textwrap.dedent(compile_code), " " * 8) if compile_code else ""
    files[f"{base}/parallelize.py"] = _header(
        pkg, f"{base}/parallelize.py", f"activation checkpointing, per-block compile and DDP for {family}."
    ) + _code(
        f"""
        import torch

        from PKG.distributed.activation_checkpoint import apply_ac
        {compile_import.strip() or "from PKG.distributed.compile import log_compile"}
        from PKG.distributed.ddp import apply_ddp
        {compile_code}

        def parallelize_{family}(model, parallel_dims, job_config):
            if job_config.activation_checkpoint.mode != "none":
                apply_ac(model, job_config.activation_checkpoint)
            if job_config.compile.enable and "model" in job_config.compile.components:
                apply_compile(model, job_config.compile)
            if parallel_dims.dp_replicate_enabled:
                # DDP wraps the model after its blocks were compiled.
                model = apply_ddp(model, parallel_dims, enable_compiled_autograd=False)
            return model
        """,
        pkg,
    )
    files[f"{base}/state_dict_adapter.py"] = _header(
        pkg, f"{base}/state_dict_adapter.py", f"{family} checkpoint conversion."
    ) + _code(
        f"""
        from PKG.protocols.state_dict_adapter import BaseStateDictAdapter


        class {cls}StateDictAdapter(BaseStateDictAdapter):
            prefix_map = {{
                "tok_embeddings.embedding.": "model.embed_tokens.",
                "layers.": "model.layers.",
                "attention.wq.": "self_attn.q_proj.",
                "attention.wk.": "self_attn.k_proj.",
                "attention.wv.": "self_attn.v_proj.",
                "attention.wo.": "self_attn.o_proj.",
                "output.": "lm_head.",
            }}
        """,
        pkg,
    )
    return files


def _model_files(pkg: str) -> dict[str, str]:
    files = {}
    imports = "\n".join(f"import PKG.models.{family}  # noqa: F401" for family, _ in FAMILIES)
    files["models/__init__.py"] = (
        "# Import every model family here so that its register_train_spec() call runs.\n" + _code(imports, pkg)
    )
    files.update(_common_model_files(pkg))
    for index, (family, kind) in enumerate(FAMILIES):
        files.update(_family_files(pkg, family, kind, index))
    return files


# -- distributed -----------------------------------------------------------------------------------


def _distributed_files(pkg: str) -> dict[str, str]:
    files = {}
    files["distributed/__init__.py"] = _code(
        """
        from PKG.distributed.parallel_dims import ParallelDims
        from PKG.distributed.utils import maybe_enable_amp

        __all__ = ["ParallelDims", "maybe_enable_amp"]
        """,
        pkg,
    )
    files["distributed/parallel_dims.py"] = _header(
        pkg, "distributed/parallel_dims.py", "the parallelism degrees of a job."
    ) + _code(
        """
        from dataclasses import dataclass

        from PKG.config.env_vars import world_size


        @dataclass
        class ParallelDims:
            dp_replicate: int
            dp_shard: int
            tp: int
            pp: int

            @classmethod
            def from_config(cls, parallel):
                shard = parallel.data_parallel_shard_degree
                if shard < 0:
                    shard = max(1, world_size() // (parallel.data_parallel_replicate_degree * parallel.tensor_parallel_degree))
                return cls(parallel.data_parallel_replicate_degree, shard, parallel.tensor_parallel_degree, parallel.pipeline_parallel_degree)

            @property
            def dp_replicate_enabled(self):
                return self.dp_replicate > 1

            @property
            def fsdp_enabled(self):
                return self.dp_shard > 1

            @property
            def tp_enabled(self):
                return self.tp > 1

            @property
            def pp_enabled(self):
                return self.pp > 1
        """,
        pkg,
    )
    files["distributed/compile.py"] = _header(
        pkg, "distributed/compile.py", "per-block torch.compile, in place."
    ) + _code(
        """
        import torch

        from PKG.utils.logging import logger


        def apply_compile(model, compile_config):
            # Compile each block in place: the repeated structure makes compilation efficient.
            for block in model.layers.values():
                block.compile(backend=compile_config.backend, fullgraph=compile_config.fullgraph)
            log_compile(model)


        def log_compile(model):
            logger.info("compiled %d blocks of %s", len(getattr(model, "layers", ())), type(model).__name__)
        """,
        pkg,
    )
    files["distributed/ddp.py"] = _header(pkg, "distributed/ddp.py", "DistributedDataParallel wrapping.") + _code(
        """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        from PKG.config.env_vars import local_rank


        def apply_ddp(model, parallel_dims, enable_compiled_autograd=False):
            if enable_compiled_autograd:
                torch._dynamo.config.optimize_ddp = "python_reducer"
            else:
                torch._dynamo.config.optimize_ddp = "ddp_optimizer"
            return DDP(model, device_ids=[local_rank()], bucket_cap_mb=100)


        def unwrap(model):
            return model.module if isinstance(model, DDP) else model
        """,
        pkg,
    )
    files["distributed/fsdp.py"] = _header(
        pkg, "distributed/fsdp.py", "sharded data parallelism (placeholder policy)."
    ) + _code(
        """
        def fsdp_policy(model, min_params=1_000_000):
            return [name for name, module in model.named_modules() if sum(p.numel() for p in module.parameters(recurse=False)) >= min_params]
        """,
        pkg,
    )
    files["distributed/activation_checkpoint.py"] = _header(
        pkg, "distributed/activation_checkpoint.py", "activation checkpointing of blocks."
    ) + _code(
        """
        from torch.utils.checkpoint import checkpoint


        class CheckpointWrapper:
            def __init__(self, block):
                self.block = block

            def __call__(self, *args):
                return checkpoint(self.block, *args, use_reentrant=False)


        def apply_ac(model, ac_config):
            if ac_config.mode == "full":
                model.ac_wrappers = [CheckpointWrapper(block) for block in model.modules() if hasattr(block, "feed_forward")]
            return model
        """,
        pkg,
    )
    files["distributed/utils.py"] = _header(
        pkg, "distributed/utils.py", "mixed precision selection and small collectives."
    ) + _code(
        """
        import contextlib

        import torch

        TORCH_DTYPE_MAP = {"float16": torch.float16, "float32": torch.float32, "bfloat16": torch.bfloat16}


        def maybe_enable_amp(parallel_dims, mixed_precision, device_type):
            if parallel_dims.fsdp_enabled:
                # FSDP casts parameters itself.
                return contextlib.nullcontext()
            if parallel_dims.tp_enabled or parallel_dims.pp_enabled:
                return contextlib.nullcontext()
            # DDP or a single device: autocast the forward.
            return torch.autocast(device_type, dtype=TORCH_DTYPE_MAP[mixed_precision])


        def clip_grad_norm_(parameters, max_norm):
            return torch.nn.utils.clip_grad_norm_(parameters, max_norm)
        """,
        pkg,
    )
    files["distributed/collectives.py"] = _header(
        pkg, "distributed/collectives.py", "reductions across ranks."
    ) + _code(
        """
        import torch
        import torch.distributed as dist


        def all_reduce_mean(value):
            if not (dist.is_available() and dist.is_initialized()):
                return value
            tensor = torch.as_tensor(value, dtype=torch.float64)
            dist.all_reduce(tensor)
            return (tensor / dist.get_world_size()).item()


        def all_reduce_max(value):
            if not (dist.is_available() and dist.is_initialized()):
                return value
            tensor = torch.as_tensor(value, dtype=torch.float64)
            dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
            return tensor.item()
        """,
        pkg,
    )
    return files


# -- utils -----------------------------------------------------------------------------------------


def _utils_files(pkg: str) -> dict[str, str]:
    files = {}
    files["utils/__init__.py"] = _code(
        """
        from PKG.utils.logging import logger
        from PKG.utils.seed import set_seed
        from PKG.utils.timers import Timer

        __all__ = ["Timer", "logger", "set_seed"]
        """,
        pkg,
    )
    files["utils/logging.py"] = _header(pkg, "utils/logging.py", "the framework logger.") + _code(
        """
        import logging
        import os

        logger = logging.getLogger("PKG")


        def init_logger(rank=None):
            rank = int(os.environ.get("RANK", "0")) if rank is None else rank
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter(f"[rank{rank}] %(asctime)s %(levelname)s %(message)s"))
            logger.addHandler(handler)
            logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)
            return logger
        """,
        pkg,
    )
    simple = {
        "timers": (
            "wall-clock timers.",
            """
            import time


            class Timer:
                def __init__(self):
                    self.start = time.perf_counter()
                    self.laps = []

                def lap(self):
                    now = time.perf_counter()
                    self.laps.append(now - self.start)
                    self.start = now
                    return self.laps[-1]

                def mean(self):
                    return sum(self.laps) / max(1, len(self.laps))
            """,
        ),
        "seed": (
            "seeding every generator.",
            """
            import random

            import numpy as np
            import torch


            def set_seed(seed, deterministic=False):
                random.seed(seed)
                np.random.seed(seed)
                torch.manual_seed(seed)
                if deterministic:
                    torch.use_deterministic_algorithms(True)
            """,
        ),
        "io": (
            "file helpers.",
            """
            import json
            import os


            def read_json(path):
                with open(path, encoding="utf-8") as handle:
                    return json.load(handle)


            def write_json(path, value):
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                with open(path, "w", encoding="utf-8") as handle:
                    json.dump(value, handle, indent=2)


            def list_shards(folder, suffix=".bin"):
                return sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(suffix))
            """,
        ),
        "dist": (
            "rank helpers.",
            """
            import torch.distributed as dist

            from PKG.distributed.collectives import all_reduce_max, all_reduce_mean


            def rank():
                return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


            def is_main():
                return rank() == 0


            def reduce_scalar(value, op="mean"):
                return all_reduce_mean(value) if op == "mean" else all_reduce_max(value)
            """,
        ),
        "env": (
            "environment information for the run log.",
            """
            import platform

            import torch


            def describe():
                return {
                    "python": platform.python_version(),
                    "torch": torch.__version__,
                    "cuda": torch.cuda.is_available(),
                }
            """,
        ),
        "profiling": (
            "the torch profiler around a few steps.",
            """
            import contextlib

            import torch


            @contextlib.contextmanager
            def maybe_profile(enabled, folder, wait=1, warmup=1, active=3):
                if not enabled:
                    yield None
                    return
                schedule = torch.profiler.schedule(wait=wait, warmup=warmup, active=active)
                with torch.profiler.profile(schedule=schedule, on_trace_ready=torch.profiler.tensorboard_trace_handler(folder)) as profiler:
                    yield profiler
            """,
        ),
        "device": (
            "device selection.",
            """
            import torch

            from PKG.config.env_vars import local_rank


            def device_for(device_type):
                if device_type == "cuda" and torch.cuda.is_available():
                    return torch.device("cuda", local_rank())
                return torch.device("cpu")
            """,
        ),
        "memory": (
            "memory statistics.",
            """
            import torch


            def peak_memory_gib():
                if not torch.cuda.is_available():
                    return 0.0
                return torch.cuda.max_memory_allocated() / 2**30


            def reset_peak():
                if torch.cuda.is_available():
                    torch.cuda.reset_peak_memory_stats()
            """,
        ),
        "hashing": (
            "stable hashes of configs.",
            """
            import hashlib
            import json


            def config_hash(config_dict):
                return hashlib.sha256(json.dumps(config_dict, sort_keys=True, default=str).encode()).hexdigest()[:12]
            """,
        ),
        "retry": (
            "retries for flaky storage.",
            """
            import time


            def retry(fn, attempts=3, delay=1.0):
                for attempt in range(attempts):
                    try:
                        return fn()
                    except OSError:
                        if attempt == attempts - 1:
                            raise
                        time.sleep(delay * (attempt + 1))
            """,
        ),
        "tensorboard": (
            "a tensorboard writer that degrades to nothing.",
            """
            from PKG.utils.dist import is_main


            class Writer:
                def __init__(self, folder, enabled):
                    self.enabled = enabled and is_main()
                    self.folder = folder
                    self.scalars = []

                def add_scalar(self, name, value, step):
                    if self.enabled:
                        self.scalars.append((name, float(value), step))
            """,
        ),
        "flops": (
            "model FLOP utilization.",
            """
            from PKG.models.common.utils import flops_per_token

            PEAK_FLOPS = {"a100": 312e12, "h100": 989e12, "cpu": 1e12}


            def mfu(n_params, n_layers, dim, seq_len, tokens_per_second, device="h100"):
                return flops_per_token(n_params, n_layers, dim, seq_len) * tokens_per_second / PEAK_FLOPS[device]
            """,
        ),
        "gc_utils": (
            "manual garbage collection between steps.",
            """
            import gc


            class GarbageCollection:
                def __init__(self, every=1000):
                    self.every = every
                    gc.disable()

                def run(self, step):
                    if step % self.every == 0:
                        gc.collect(1)
            """,
        ),
    }
    for name, (what, body) in simple.items():
        files[f"utils/{name}.py"] = _header(pkg, f"utils/{name}.py", what) + _code(body, pkg)
    files["utils/sensitivity.py"] = _header(
        pkg, "utils/sensitivity.py", "directional sensitivity of the model output (forward-mode AD)."
    ) + _code(
        """
        import torch
        import torch.autograd.forward_ad as fwAD


        def directional_sensitivity(model, inputs, direction):
            # A Jacobian-vector product of the model's output along ``direction``.
            with fwAD.dual_level():
                out = model(fwAD.make_dual(inputs, direction))  # expect: CAL001
                return fwAD.unpack_dual(out).tangent


        def random_direction(inputs, seed=0):
            generator = torch.Generator().manual_seed(seed)
            return torch.randn(inputs.shape, generator=generator, dtype=inputs.dtype)
        """,
        pkg,
    )
    # metrics: a package whose __init__ re-exports every metric (as real frameworks do).
    names = ", ".join(f'"{m}"' for m in METRICS)
    imports = "\n".join(f"from PKG.utils.metrics.{m} import {_camel(m)}Metric" for m in METRICS)
    table = "\n".join(f'    "{m}": {_camel(m)}Metric,' for m in METRICS)
    files["utils/metrics/__init__.py"] = _code(imports, pkg) + _code(
        """

        METRICS = {
        @@TABLE@@
        }
        NAMES = (@@NAMES@@)


        def build_metrics(names):
            return {name: METRICS[name]() for name in names}
        """,
        pkg,
    ).replace("@@TABLE@@", table).replace("@@NAMES@@", names)
    for i, metric in enumerate(METRICS):
        other = METRICS[(i + 7) % len(METRICS)]
        reduce = "mean" if i % 3 else "max"
        files[f"utils/metrics/{metric}.py"] = _header(
            pkg, f"utils/metrics/{metric}.py", f"the {metric} metric."
        ) + _code(
            f"""
            import torch

            from PKG.utils.dist import reduce_scalar
            from PKG.utils.logging import logger


            class {_camel(metric)}Metric:
                name = "{metric}"
                related = "{other}"

                def __init__(self):
                    self.total = 0.0
                    self.count = 0

                @torch.no_grad()
                def update(self, value, weight=1):
                    value = _prepare(value)
                    if isinstance(value, torch.Tensor):
                        value = value.detach().float().mean().item()
                    self.total += float(value) * weight
                    self.count += weight

                def compute(self):
                    local = self.total / max(1, self.count)
                    value = reduce_scalar(local, op="{reduce}")
                    logger.debug("%s = %.4f over %d", self.name, value, self.count)
                    return value

                def reset(self):
                    self.total, self.count = 0.0, 0
            """,
            pkg,
        )
    return files


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


# -- data ------------------------------------------------------------------------------------------


def _data_files(pkg: str) -> dict[str, str]:
    files = {}
    files["data/__init__.py"] = _code(
        """
        from PKG.data.loader import build_dataloader
        from PKG.data.registry import DATASETS, build_dataset

        __all__ = ["DATASETS", "build_dataloader", "build_dataset"]
        """,
        pkg,
    )
    files["data/registry.py"] = _header(
        pkg, "data/registry.py", "datasets by name, filled when data.datasets is imported."
    ) + _code(
        """
        DATASETS = {}


        def register_dataset(name, cls):
            if name in DATASETS:
                raise ValueError(f"dataset {name} registered twice")
            DATASETS[name] = cls
            return cls


        def build_dataset(data_config, tokenizer, split="train"):
            import PKG.data.datasets  # noqa: F401  (fills DATASETS)

            return DATASETS[data_config.dataset](split=split, tokenizer=tokenizer)
        """,
        pkg,
    )
    files["data/loader.py"] = _header(pkg, "data/loader.py", "the training data loader.") + _code(
        """
        from torch.utils.data import DataLoader

        from PKG.data.collate import collate_tokens
        from PKG.data.registry import build_dataset
        from PKG.data.samplers import build_sampler
        from PKG.data.tokenizers import build_tokenizer


        def build_dataloader(data_config, batch_size, split="train"):
            tokenizer = build_tokenizer(data_config.tokenizer)
            dataset = build_dataset(data_config, tokenizer, split=split)
            sampler = build_sampler(dataset, shuffle=data_config.shuffle)
            return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=data_config.num_workers, collate_fn=collate_tokens)
        """,
        pkg,
    )
    files["data/samplers.py"] = _header(pkg, "data/samplers.py", "distributed samplers.") + _code(
        """
        from torch.utils.data import DistributedSampler, RandomSampler, SequentialSampler

        from PKG.config.env_vars import is_distributed


        def build_sampler(dataset, shuffle=True):
            if is_distributed():
                return DistributedSampler(dataset, shuffle=shuffle)
            return RandomSampler(dataset) if shuffle else SequentialSampler(dataset)
        """,
        pkg,
    )
    files["data/collate.py"] = _header(pkg, "data/collate.py", "batch collation.") + _code(
        """
        import torch


        def collate_tokens(samples, pad_id=0):
            length = max(len(s["input_ids"]) for s in samples)
            inputs = torch.full((len(samples), length), pad_id, dtype=torch.long)
            labels = torch.full((len(samples), length), -100, dtype=torch.long)
            for row, sample in enumerate(samples):
                ids = torch.as_tensor(sample["input_ids"])
                inputs[row, : len(ids)] = ids
                labels[row, : len(ids) - 1] = ids[1:]
            return inputs, labels
        """,
        pkg,
    )
    files["data/packing.py"] = _header(pkg, "data/packing.py", "sequence packing.") + _code(
        """
        def pack(sequences, seq_len, eos_id):
            buffer, packed = [], []
            for sequence in sequences:
                buffer.extend(sequence + [eos_id])
                while len(buffer) >= seq_len:
                    packed.append(buffer[:seq_len])
                    buffer = buffer[seq_len:]
            return packed
        """,
        pkg,
    )
    files["data/streaming.py"] = _header(pkg, "data/streaming.py", "streaming from shards.") + _code(
        """
        from torch.utils.data import IterableDataset

        from PKG.data.packing import pack
        from PKG.utils.io import list_shards


        class ShardStream(IterableDataset):
            def __init__(self, folder, seq_len, eos_id=0):
                self.shards = list_shards(folder)
                self.seq_len = seq_len
                self.eos_id = eos_id

            def __iter__(self):
                for shard in self.shards:
                    with open(shard, "rb") as handle:
                        tokens = list(handle.read())
                    yield from pack([tokens], self.seq_len, self.eos_id)
        """,
        pkg,
    )
    files["data/prefetch.py"] = _header(pkg, "data/prefetch.py", "moving batches to the device ahead of time.") + _code(
        """
        import torch


        class Prefetcher:
            def __init__(self, loader, device):
                self.loader = loader
                self.device = device

            def __iter__(self):
                for inputs, labels in self.loader:
                    yield inputs.to(self.device, non_blocking=True), labels.to(self.device, non_blocking=True)
        """,
        pkg,
    )
    # tokenizers
    files["data/tokenizers/__init__.py"] = _code(
        "\n".join(f"from PKG.data.tokenizers.{t} import {_camel(t)}Tokenizer" for t in TOKENIZERS)
        + "\n\nTOKENIZERS = {\n"
        + "\n".join(f'    "{t}": {_camel(t)}Tokenizer,' for t in TOKENIZERS)
        + "\n}\n\n\ndef build_tokenizer(name):\n    return TOKENIZERS[name]()\n",
        pkg,
    )
    files["data/tokenizers/base.py"] = _header(pkg, "data/tokenizers/base.py", "the tokenizer interface.") + _code(
        """
        class BaseTokenizer:
            vocab_size = 256
            eos_id = 0

            def encode(self, text):
                return [b % self.vocab_size for b in text.encode("utf-8")]

            def decode(self, ids):
                return bytes(i % 256 for i in ids).decode("utf-8", errors="replace")
        """,
        pkg,
    )
    for i, tok in enumerate(TOKENIZERS):
        files[f"data/tokenizers/{tok}.py"] = _header(pkg, f"data/tokenizers/{tok}.py", f"the {tok} tokenizer.") + _code(
            f"""
            from PKG.data.tokenizers.base import BaseTokenizer


            class {_camel(tok)}Tokenizer(BaseTokenizer):
                vocab_size = {256 * (i + 1) * 16}

                def encode(self, text):
                    ids = super().encode(text.lower() if {i % 2 == 0} else text)
                    ids = _prepare(ids)
                    return [self.eos_id + 1 + i for i in ids]
            """,
            pkg,
        )
    # transforms
    files["data/transforms/__init__.py"] = _code(
        "\n".join(f"from PKG.data.transforms.{t} import {t}" for t, _ in TRANSFORMS)
        + "\n\nBY_MODALITY = {\n"
        + "\n".join(
            f'    "{m}": [{", ".join(t for t, tm in TRANSFORMS if tm == m)}],'
            for m in ("image", "video", "audio", "text")
        )
        + "\n}\n",
        pkg,
    )
    transform_bodies = {
        "image": "x = x.float()\n    return x.flip(-1) if x.dim() >= 3 and x.shape[-1] % 2 == {n} else x",
        "video": "x = x.float()\n    return x[:, :: max(1, {n} + 1)]",
        "audio": "x = x.float()\n    return torch.log1p(x.abs()) * {n}",
        "text": "return [t for i, t in enumerate(x) if (i + {n}) % 97 != 0]",
    }
    for i, (name, modality) in enumerate(TRANSFORMS):
        body = transform_bodies[modality].replace("{n}", str(i % 3))
        files[f"data/transforms/{name}.py"] = _header(
            pkg, f"data/transforms/{name}.py", f"the {name} transform ({modality})."
        ) + _code(
            f"""
            import torch


            def {name}(x):
                x = _prepare(x)
                {body.replace(chr(10) + "    ", chr(10) + "                ")}
            """,
            pkg,
        )
    # datasets
    files["data/datasets/__init__.py"] = "# Importing a dataset module registers it.\n" + _code(
        "\n".join(f"import PKG.data.datasets.{d}  # noqa: F401" for d, _ in DATASETS), pkg
    )
    modality_transforms = {m: [t for t, tm in TRANSFORMS if tm == m] for m in ("image", "video", "audio", "text")}
    for i, (name, modality) in enumerate(DATASETS):
        transforms = modality_transforms[modality]
        chosen = [transforms[(i + k) % len(transforms)] for k in range(2)]
        imports = "\n".join(f"from PKG.data.transforms.{t} import {t}" for t in dict.fromkeys(chosen))
        apply = "".join(f"{t}(" for t in chosen) + "sample" + ")" * len(chosen)
        if modality == "text":
            load = 'sample = self.tokenizer.encode(self.records[index]["text"])'
            ret = 'return {"input_ids": ' + apply + "}"
        else:
            shape = {"image": "(3, 224, 224)", "video": "(3, 16, 224, 224)", "audio": "(80, 3000)"}[modality]
            load = f"sample = torch.zeros({shape})"
            ret = f'return {{"pixel_values": {apply}, "label": index % {10 + i}}}'
        files[f"data/datasets/{name}.py"] = _header(
            pkg, f"data/datasets/{name}.py", f"the {name} dataset ({modality})."
        ) + _code(
            f"""
            import os

            import torch
            from torch.utils.data import Dataset

            from PKG.data.registry import register_dataset
            {imports.replace(chr(10), chr(10) + "            ")}
            from PKG.utils.io import read_json
            from PKG.utils.logging import logger

            ROOT = os.environ.get("{name.upper()}_ROOT", "/datasets/{name}")


            class {_camel(name)}Dataset(Dataset):
                def __init__(self, split="train", tokenizer=None):
                    self.split = split
                    self.tokenizer = tokenizer
                    index_file = os.path.join(ROOT, f"{{split}}.json")
                    self.records = read_json(index_file) if os.path.exists(index_file) else []
                    logger.info("{name}: %d records (%s)", len(self.records), split)

                def __len__(self):
                    return len(self.records)

                def __getitem__(self, index):
                    {load}
                    sample = _prepare(sample)
                    {ret}


            register_dataset("{name}", {_camel(name)}Dataset)
            """,
            pkg,
        )
    return files


# -- train -----------------------------------------------------------------------------------------


def _train_files(pkg: str) -> dict[str, str]:
    files = {}
    files["train/__init__.py"] = _code(
        """
        from PKG.train.trainer import Trainer

        __all__ = ["Trainer"]
        """,
        pkg,
    )
    files["train/trainer.py"] = _header(
        pkg,
        "train/trainer.py",
        "the Trainer: spec from the registry, per-block compile, DDP, autocast forward, scaled backward.",
    ) + _code(
        """
        import torch

        import PKG.models  # noqa: F401  (fills the train spec registry)
        from PKG.data import build_dataloader
        from PKG.distributed.parallel_dims import ParallelDims
        from PKG.distributed.utils import clip_grad_norm_, maybe_enable_amp
        from PKG.protocols.train_spec import get_train_spec
        from PKG.train.callbacks import build_callbacks
        from PKG.train.checkpoint import CheckpointManager
        from PKG.train.grad_scaler import build_grad_scaler
        from PKG.train.loss import rescale_accumulated_loss
        from PKG.train.lr_schedule import build_lr_scheduler
        from PKG.train.optim import build_optimizer
        from PKG.train.state import TrainState
        from PKG.utils.device import device_for
        from PKG.utils.logging import logger
        from PKG.utils.metrics import build_metrics
        from PKG.utils.sensitivity import directional_sensitivity, random_direction


        class Trainer:
            def __init__(self, job_config):
                self.job_config = job_config
                self.device = device_for(job_config.training.device_type)
                self.parallel_dims = ParallelDims.from_config(job_config.parallel)
                self.train_spec = get_train_spec(job_config.model.name)
                model = self.build_model()
                self.model = self.train_spec.parallelize_fn(model, self.parallel_dims, job_config)
                self.loss_fn = self.train_spec.build_loss_fn(job_config)
                self.loss_fn = rescale_accumulated_loss(self.loss_fn, job_config.training.gradient_accumulation_steps)
                self.optimizer = build_optimizer(self.model, job_config.optimizer)
                self.lr_scheduler = build_lr_scheduler(self.optimizer, job_config.optimizer, job_config.training.steps)
                self.scaler = build_grad_scaler(job_config.training)
                self.maybe_enable_amp = maybe_enable_amp(self.parallel_dims, job_config.training.mixed_precision, job_config.training.device_type)
                self.dataloader = build_dataloader(job_config.data, job_config.training.batch_size)
                self.metrics = build_metrics(job_config.metrics.names)
                self.callbacks = build_callbacks(self)
                self.checkpointer = CheckpointManager(job_config.dump_folder, self.model, self.optimizer)
                self.state = TrainState()

            def build_model(self):
                args = self.train_spec.flavors[self.job_config.model.flavor]
                model = self.train_spec.model_cls(args)
                model.init_weights()
                return model.to(self.device)

            def forward_backward_step(self, inputs, labels):
                step_tag = "fwd-bwd"
                with self.maybe_enable_amp:
                    pred = self.model(inputs)
                    loss = self.loss_fn(pred, labels)
                del pred
                self.scaler.scale(loss).backward()  # expect: CAL002
                logger.debug("%s step %d", step_tag, self.state.step)
                return loss

            def train_step(self, batches):
                self.optimizer.zero_grad()
                losses = []
                for inputs, labels in batches:
                    losses.append(self.forward_backward_step(inputs.to(self.device), labels.to(self.device)).detach())
                self.scaler.unscale_(self.optimizer)
                grad_norm = clip_grad_norm_(self.model.parameters(), self.job_config.training.max_norm)
                self.scaler.step(self.optimizer)
                self.scaler.update()
                self.lr_scheduler.step()
                loss = torch.stack(losses).mean()
                self.metrics["loss_meter"].update(loss)
                self.metrics["grad_norm"].update(grad_norm)
                return loss

            def probe_sensitivity(self, inputs):
                # How much the output moves along a random input direction (a health check of the run).
                direction = random_direction(inputs, seed=self.state.step)
                return directional_sensitivity(self.model, inputs, direction)

            def train(self):
                accumulation = self.job_config.training.gradient_accumulation_steps
                batches = []
                for inputs, labels in self.dataloader:
                    batches.append((inputs, labels))
                    if len(batches) < accumulation:
                        continue
                    loss = self.train_step(batches)
                    batches = []
                    self.state.step += 1
                    for callback in self.callbacks:
                        callback.on_step_end(self, loss)
                    if self.state.step >= self.job_config.training.steps:
                        break
                self.checkpointer.save(self.state.step, final=True)
        """,
        pkg,
    )
    files["train/loss.py"] = _header(pkg, "train/loss.py", "loss builders (the loss may be compiled too).") + _code(
        """
        import functools

        import torch
        import torch.nn.functional as F


        def cross_entropy_loss(pred, labels):
            return F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1), ignore_index=-100)


        def mse_loss(pred, target):
            return F.mse_loss(pred.float(), target.float())


        def build_cross_entropy_loss(job_config):
            loss_fn = cross_entropy_loss
            if job_config.compile.enable and "loss" in job_config.compile.components:
                loss_fn = torch.compile(loss_fn, backend=job_config.compile.backend)
            return loss_fn


        def build_mse_loss(job_config):
            return mse_loss


        def rescale_accumulated_loss(unwrapped_loss_fn, accumulation_steps):
            @functools.wraps(unwrapped_loss_fn)
            def accumulated_loss_fn(*args, **kwargs):
                return unwrapped_loss_fn(*args, **kwargs) / accumulation_steps

            return accumulated_loss_fn
        """,
        pkg,
    )
    files["train/optim.py"] = _header(pkg, "train/optim.py", "optimizers.") + _code(
        """
        import torch


        def param_groups(model, weight_decay):
            decay, no_decay = [], []
            for name, param in model.named_parameters():
                if not param.requires_grad:
                    continue
                (no_decay if param.dim() < 2 or "norm" in name else decay).append(param)
            return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


        def build_optimizer(model, optimizer_config):
            groups = param_groups(model, optimizer_config.weight_decay)
            if optimizer_config.name == "SGD":
                return torch.optim.SGD(groups, lr=optimizer_config.lr, momentum=0.9)
            return torch.optim.AdamW(groups, lr=optimizer_config.lr, betas=(0.9, 0.95), fused=False)
        """,
        pkg,
    )
    files["train/lr_schedule.py"] = _header(pkg, "train/lr_schedule.py", "warmup and cosine decay.") + _code(
        """
        import math

        from torch.optim.lr_scheduler import LambdaLR


        def warmup_cosine(step, warmup, total):
            if step < warmup:
                return (step + 1) / warmup
            progress = (step - warmup) / max(1, total - warmup)
            return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


        def build_lr_scheduler(optimizer, optimizer_config, total_steps):
            return LambdaLR(optimizer, lambda step: warmup_cosine(step, optimizer_config.warmup_steps, total_steps))
        """,
        pkg,
    )
    files["train/grad_scaler.py"] = _header(pkg, "train/grad_scaler.py", "the gradient scaler for float16.") + _code(
        """
        import torch


        def build_grad_scaler(training_config):
            # A no-op scaler unless the forward runs in float16.
            return torch.amp.GradScaler(training_config.device_type, enabled=training_config.mixed_precision == "float16")
        """,
        pkg,
    )
    files["train/checkpoint.py"] = _header(pkg, "train/checkpoint.py", "saving and loading checkpoints.") + _code(
        """
        import os

        import torch

        from PKG.distributed.ddp import unwrap
        from PKG.utils.dist import is_main
        from PKG.utils.retry import retry


        class CheckpointManager:
            def __init__(self, folder, model, optimizer, keep=3):
                self.folder = os.path.join(folder, "checkpoints")
                self.model = model
                self.optimizer = optimizer
                self.keep = keep

            def save(self, step, final=False):
                if not is_main():
                    return
                os.makedirs(self.folder, exist_ok=True)
                state = {"model": unwrap(self.model).state_dict(), "optimizer": self.optimizer.state_dict(), "step": step}
                path = os.path.join(self.folder, "final.pt" if final else f"step-{step}.pt")
                retry(lambda: torch.save(state, path))

            def load(self, path):
                state = torch.load(path, map_location="cpu", weights_only=True)
                unwrap(self.model).load_state_dict(state["model"])
                self.optimizer.load_state_dict(state["optimizer"])
                return state["step"]
        """,
        pkg,
    )
    files["train/eval_loop.py"] = _header(pkg, "train/eval_loop.py", "evaluation without gradients.") + _code(
        """
        import torch

        from PKG.utils.metrics import build_metrics


        @torch.no_grad()
        def evaluate(model, loss_fn, dataloader, amp_context, max_batches=50):
            metrics = build_metrics(("loss_meter", "perplexity"))
            model.eval()
            for index, (inputs, labels) in enumerate(dataloader):
                if index >= max_batches:
                    break
                with amp_context:
                    loss = loss_fn(model(inputs), labels)
                metrics["loss_meter"].update(loss)
                metrics["perplexity"].update(torch.exp(loss))
            model.train()
            return {name: metric.compute() for name, metric in metrics.items()}
        """,
        pkg,
    )
    files["train/hooks.py"] = _header(pkg, "train/hooks.py", "the callback interface.") + _code(
        """
        class Callback:
            every = 1

            def on_step_end(self, trainer, loss):
                if trainer.state.step % self.every == 0:
                    self.run(trainer, loss)

            def run(self, trainer, loss):
                raise NotImplementedError
        """,
        pkg,
    )
    files["train/grad_clip.py"] = _header(pkg, "train/grad_clip.py", "gradient clipping variants.") + _code(
        """
        import torch


        def clip_by_value(parameters, limit):
            for param in parameters:
                if param.grad is not None:
                    param.grad.clamp_(-limit, limit)


        def global_norm(parameters):
            norms = [p.grad.detach().norm() for p in parameters if p.grad is not None]
            return torch.stack(norms).norm() if norms else torch.tensor(0.0)
        """,
        pkg,
    )
    files["train/ema.py"] = _header(pkg, "train/ema.py", "an exponential moving average of the weights.") + _code(
        """
        import copy

        import torch


        class EMA:
            def __init__(self, model, decay=0.999):
                self.shadow = copy.deepcopy(model).eval()
                self.decay = decay
                for param in self.shadow.parameters():
                    param.requires_grad_(False)

            @torch.no_grad()
            def update(self, model):
                for ours, theirs in zip(self.shadow.parameters(), model.parameters()):
                    ours.mul_(self.decay).add_(theirs.detach(), alpha=1 - self.decay)
        """,
        pkg,
    )
    files["train/state.py"] = _header(pkg, "train/state.py", "the resumable training state.") + _code(
        """
        from dataclasses import dataclass, field


        @dataclass
        class TrainState:
            step: int = 0
            tokens_seen: int = 0
            losses: list = field(default_factory=list)

            def state_dict(self):
                return {"step": self.step, "tokens_seen": self.tokens_seen}

            def load_state_dict(self, state):
                self.step = state["step"]
                self.tokens_seen = state["tokens_seen"]
        """,
        pkg,
    )
    files["train/step_timer.py"] = _header(pkg, "train/step_timer.py", "time per step and tokens per second.") + _code(
        """
        from PKG.utils.timers import Timer


        class StepTimer:
            def __init__(self, tokens_per_step):
                self.timer = Timer()
                self.tokens_per_step = tokens_per_step

            def tokens_per_second(self):
                return self.tokens_per_step / max(1e-9, self.timer.lap())
        """,
        pkg,
    )
    files["train/early_stopping.py"] = _header(
        pkg, "train/early_stopping.py", "stopping when the loss stalls."
    ) + _code(
        """
        class EarlyStopping:
            def __init__(self, patience=10, min_delta=1e-3):
                self.patience = patience
                self.min_delta = min_delta
                self.best = float("inf")
                self.bad = 0

            def should_stop(self, loss):
                if loss < self.best - self.min_delta:
                    self.best, self.bad = loss, 0
                else:
                    self.bad += 1
                return self.bad >= self.patience
        """,
        pkg,
    )
    files["train/launcher.py"] = _header(
        pkg, "train/launcher.py", "the entry point: config, logger, seed, Trainer."
    ) + _code(
        """
        from PKG.config import parse_args
        from PKG.train.trainer import Trainer
        from PKG.utils.logging import init_logger
        from PKG.utils.seed import set_seed


        def main(argv=None):
            config = parse_args(argv)
            init_logger()
            set_seed(config.training.seed)
            trainer = Trainer(config)
            trainer.train()
            return trainer
        """,
        pkg,
    )
    files["train/callbacks/__init__.py"] = _code(
        "\n".join(f"from PKG.train.callbacks.{c} import {_camel(c)}Callback" for c in CALLBACKS)
        + "\n\n\ndef build_callbacks(trainer):\n    return [\n"
        + "\n".join(f"        {_camel(c)}Callback()," for c in CALLBACKS)
        + "\n    ]\n",
        pkg,
    )
    callback_bodies = {
        "log_metrics": "for name, metric in trainer.metrics.items():\n    logger.info('%s %.4f', name, metric.compute())",
        "save_checkpoint": "trainer.checkpointer.save(trainer.state.step)",
        "lr_monitor": "logger.info('lr %.6f', trainer.lr_scheduler.get_last_lr()[0])",
        "profiler": "logger.debug('profiling step %d', trainer.state.step)",
        "ema_update": "trainer.state.losses.append(float(loss))",
        "nan_guard": "if not torch.isfinite(loss):\n    raise FloatingPointError(f'loss is {loss} at step {trainer.state.step}')",
        "throughput": "trainer.metrics['throughput'].update(trainer.job_config.training.batch_size)",
        "sensitivity": "inputs, _ = next(iter(trainer.dataloader))\nlogger.info('sensitivity %.4f', float(trainer.probe_sensitivity(inputs).abs().mean()))",
    }
    for i, callback in enumerate(CALLBACKS):
        body = textwrap.indent(callback_bodies[callback], " " * 8)
        every = (1, 10, 100, 50)[i % 4]
        files[f"train/callbacks/{callback}.py"] = (
            _header(pkg, f"train/callbacks/{callback}.py", f"the {callback} callback.")
            + _code(
                """
            import torch

            from PKG.train.hooks import Callback
            from PKG.utils.logging import logger


            """,
                pkg,
            )
            + f"class {_camel(callback)}Callback(Callback):\n    every = {every}\n\n    def run(self, trainer, loss):\n        _prepare(loss)\n{body}\n"
        )
    return files


# -- experiments -----------------------------------------------------------------------------------


def _experiment_files(pkg: str) -> dict[str, str]:
    files = {"experiments/__init__.py": '"""Research experiments built on the framework."""\n'}
    for i, (name, kind) in enumerate(EXPERIMENTS):
        base = f"experiments/{name}"
        family, fkind = FAMILIES[i % len(FAMILIES)]
        cls = _camel(family)
        files[f"{base}/__init__.py"] = f'"""Experiment {name} ({kind})."""\n'
        files[f"{base}/config.py"] = _header(pkg, f"{base}/config.py", f"settings of the {name} experiment.") + _code(
            f"""
            from PKG.config.presets import preset


            def experiment_config():
                config = preset("{family}")
                config.training.steps = {200 * (i + 1)}
                config.optimizer.lr = {1e-4 * (1 + i % 5):.5f}
                config.metrics.names = ("loss_meter", "{METRICS[i % len(METRICS)]}")
                return config


            BATCH_SIZE = {4 * (1 + i % 4)}
            SEQ_LEN = {512 * (1 + i % 4)}
            """,
            pkg,
        )
        files[f"{base}/model.py"] = _header(pkg, f"{base}/model.py", f"the {name} model variant.") + _code(
            f"""
            import torch
            from torch import nn

            from PKG.models.{family}.args import FLAVORS
            from PKG.models.{family}.model import {cls}Model


            class {_camel(name)}Model(nn.Module):
                def __init__(self, flavor="debug"):
                    super().__init__()
                    self.backbone = {cls}Model(FLAVORS[flavor])
                    self.extra = nn.Linear(FLAVORS[flavor].{"vocab_size" if fkind == "decoder" else "num_classes"}, {16 + i})

                def forward(self, inputs):
                    return self.extra(self.backbone(inputs))


            def build(flavor="debug"):
                return {_camel(name)}Model(flavor)
            """,
            pkg,
        )
        files[f"{base}/train.py"] = _header(
            pkg, f"{base}/train.py", f"training for {name} ({kind})."
        ) + _experiment_train(pkg, name, kind, i)
    return files


def _experiment_train(pkg: str, name: str, kind: str, i: int) -> str:
    camel = _camel(name)
    dtype = ("torch.bfloat16", "torch.float16")[i % 2]
    head = _code(
        f"""
        import torch
        import torch.nn.functional as F
        from torch.nn.parallel import DistributedDataParallel as DDP

        from PKG.experiments.{name}.config import BATCH_SIZE, experiment_config
        from PKG.experiments.{name}.model import build
        from PKG.data import build_dataloader
        from PKG.utils.logging import logger
        from PKG.utils.seed import set_seed
        """,
        pkg,
    )
    if kind == "script":
        body = f"""
            def main(local_rank=0, compile_model=True):
                config = experiment_config()
                set_seed(config.training.seed)
                device = torch.device("cuda", local_rank)
                model = build().to(device)
                if compile_model:
                    model = torch.compile(model)
                model = DDP(model, device_ids=[local_rank])
                raw_model = model.module
                optimizer = torch.optim.AdamW(raw_model.parameters(), lr=config.optimizer.lr)
                scaler = torch.amp.GradScaler("cuda", enabled={dtype == "torch.float16"})
                ctx = torch.amp.autocast(device_type="cuda", dtype={dtype})
                loader = build_dataloader(config.data, BATCH_SIZE)
                for step, (x, y) in enumerate(loader):
                    with ctx:
                        logits = model(x.to(device))
                        loss = F.cross_entropy(logits.float(), y.to(device).flatten()[: logits.shape[0]] % logits.shape[-1])
                    scaler.scale(loss).backward()  # expect: CAL002
                    scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(raw_model.parameters(), 1.0)
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad(set_to_none=True)
                    if step % 100 == 0:
                        logger.info("{name} step %d loss %.4f", step, loss.item())
            """
    elif kind == "fp32":
        body = f"""
            def main(local_rank=0):
                config = experiment_config()
                set_seed(config.training.seed)
                device = torch.device("cuda", local_rank)
                model = torch.compile(build().to(device))
                model = DDP(model, device_ids=[local_rank])
                optimizer = torch.optim.AdamW(model.parameters(), lr=config.optimizer.lr)
                for step, (x, y) in enumerate(build_dataloader(config.data, BATCH_SIZE)):
                    logits = model(x.to(device))
                    loss = F.cross_entropy(logits, y.to(device).flatten()[: logits.shape[0]] % logits.shape[-1])
                    loss.backward()  # ok: float32 forward and backward, no autocast
                    optimizer.step()
                    optimizer.zero_grad()
                    if step % 100 == 0:
                        logger.info("{name} step %d loss %.4f", step, loss.item())
            """
    elif kind == "eager":
        body = f"""
            def main(local_rank=0):
                config = experiment_config()
                device = torch.device("cuda", local_rank)
                model = DDP(build().to(device), device_ids=[local_rank])
                optimizer = torch.optim.AdamW(model.parameters(), lr=config.optimizer.lr)
                scaler = torch.amp.GradScaler("cuda")
                for step, (x, y) in enumerate(build_dataloader(config.data, BATCH_SIZE)):
                    with torch.autocast("cuda", dtype={dtype}):
                        logits = model(x.to(device))
                        loss = F.cross_entropy(logits.float(), y.to(device).flatten()[: logits.shape[0]] % logits.shape[-1])
                    scaler.scale(loss).backward()  # ok: nothing here is compiled
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """
    elif kind == "fixed":
        body = f"""
            from torch._functorch import config as functorch_config


            def main(local_rank=0):
                config = experiment_config()
                device = torch.device("cuda", local_rank)
                model = DDP(torch.compile(build().to(device)), device_ids=[local_rank])
                optimizer = torch.optim.AdamW(model.parameters(), lr=config.optimizer.lr)
                scaler = torch.amp.GradScaler("cuda")
                for step, (x, y) in enumerate(build_dataloader(config.data, BATCH_SIZE)):
                    with functorch_config.patch(backward_pass_autocast="off"):
                        with torch.autocast("cuda", dtype={dtype}):
                            logits = model(x.to(device))
                            loss = F.cross_entropy(logits.float(), y.to(device).flatten()[: logits.shape[0]] % logits.shape[-1])
                    scaler.scale(loss).backward()  # ok: the compiled backward was traced with autocast off
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
            """
    elif kind == "forward_ad":
        body = f"""
            import torch.autograd.forward_ad as fwAD
            from torch import nn


            class Field(nn.Module):
                def __init__(self, width={64 + 16 * i}):
                    super().__init__()
                    self.net = nn.Sequential(nn.Linear(2, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 1))

                def forward(self, xt):
                    return self.net(xt)


            class {camel}Solver(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.u = torch.compile(Field())

                def forward(self, xt):
                    return self.u(xt)

                def time_derivative(self, xt):
                    direction = torch.zeros_like(xt)
                    direction[:, 1] = 1.0
                    with fwAD.dual_level():
                        out = self.u(fwAD.make_dual(xt, direction))  # expect: CAL001
                        return fwAD.unpack_dual(out).tangent


            def main(steps=1000):
                set_seed(0)
                solver = {camel}Solver()
                optimizer = torch.optim.Adam(solver.parameters(), lr=1e-3)
                for step in range(steps):
                    xt = torch.rand(256, 2, requires_grad=True)
                    residual = solver.time_derivative(xt) - solver(xt)
                    loss = residual.pow(2).mean()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    if step % 100 == 0:
                        logger.info("{name} step %d residual %.4e", step, loss.item())
            """
    elif kind == "subclass":
        body = f"""
            from PKG.train.trainer import Trainer


            class {camel}Trainer(Trainer):
                def build_model(self):
                    model = super().build_model()
                    logger.info("{name}: %d parameters", sum(p.numel() for p in model.parameters()))
                    return model


            def main():
                config = experiment_config()
                set_seed(config.training.seed)
                trainer = {camel}Trainer(config)
                trainer.train()
                return trainer
            """
    elif kind == "override":
        body = f"""
            from PKG.train.trainer import Trainer


            class {camel}Trainer(Trainer):
                def forward_backward_step(self, inputs, labels):
                    with torch.autocast("cuda", dtype={dtype}):
                        pred = self.model(inputs)
                        loss = self.loss_fn(pred, labels) + {0.01 * (i + 1):.2f} * pred.float().pow(2).mean()
                    self.scaler.scale(loss).backward()  # expect: CAL002
                    return loss


            def main():
                config = experiment_config()
                set_seed(config.training.seed)
                trainer = {camel}Trainer(config)
                trainer.train()
                return trainer
            """
    else:  # pragma: no cover - a new kind without a template
        raise ValueError(kind)
    return head + "\n\n" + _code(body, pkg)


# -- scripts, tests, top level ---------------------------------------------------------------------


def _top_files(pkg: str) -> dict[str, str]:
    files = {}
    files[f"{pkg}/__init__.py"] = _code(
        """
        # Import the built-in models so that their register_train_spec() calls run.
        import PKG.models  # noqa: F401

        __version__ = "0.3.0"
        """,
        pkg,
    )
    files[f"scripts/{pkg}/train.py"] = _code(
        """
        \"\"\"Launch training: python scripts/PKG/train.py --model.name llama\"\"\"

        import sys

        from PKG.train.launcher import main

        if __name__ == "__main__":
            main(sys.argv[1:])
        """,
        pkg,
    )
    files[f"scripts/{pkg}/convert_checkpoint.py"] = _code(
        """
        \"\"\"Convert a checkpoint to the external layout of its model family.\"\"\"

        import argparse

        import torch

        from PKG.protocols.train_spec import get_train_spec


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("model")
            parser.add_argument("source")
            parser.add_argument("target")
            args = parser.parse_args()
            adapter = get_train_spec(args.model).state_dict_adapter()
            state = torch.load(args.source, map_location="cpu", weights_only=True)
            torch.save(adapter.to_external(state["model"]), args.target)


        if __name__ == "__main__":
            main()
        """,
        pkg,
    )
    files[f"scripts/{pkg}/estimate_mfu.py"] = _code(
        """
        \"\"\"Print the model FLOP utilization of a flavor at a given throughput.\"\"\"

        import sys

        from PKG.models.common.utils import count_parameters
        from PKG.protocols.train_spec import get_train_spec
        from PKG.utils.flops import mfu

        if __name__ == "__main__":
            spec = get_train_spec(sys.argv[1])
            args = spec.flavors[sys.argv[2]]
            model = spec.model_cls(args)
            print(mfu(count_parameters(model), args.n_layers, args.dim, 2048, float(sys.argv[3])))
        """,
        pkg,
    )
    files[f"scripts/{pkg}/download_assets.py"] = _code(
        """
        \"\"\"Fetch tokenizer files into ./assets (prints the plan only without network).\"\"\"

        import os

        from PKG.data.tokenizers import TOKENIZERS

        if __name__ == "__main__":
            for name in TOKENIZERS:
                print("would fetch", name, "into", os.path.join("assets", name))
        """,
        pkg,
    )
    # tests: small eager forward/backward checks (anchors with nothing compiled), one through the Trainer.
    for family, kind in FAMILIES:
        cls = _camel(family)
        files[f"tests/{pkg}/test_{family}.py"] = _code(
            f"""
            import torch

            from PKG.models.{family}.args import FLAVORS
            from PKG.models.{family}.model import {cls}Model


            def test_{family}_forward_backward():
                model = {cls}Model(FLAVORS["debug"])
                inputs = {"torch.randint(0, 32000, (2, 16))" if kind == "decoder" else ("torch.randn(2, 3, 32, 32)" if kind == "vision" else "torch.randn(2, 80, 50)")}
                out = model(inputs)
                out.float().pow(2).mean().backward()  # ok: eager
                assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
            """,
            pkg,
        )
    for name in ("metrics", "data", "config", "checkpoint", "callbacks", "trainer"):
        files[f"tests/{pkg}/test_{name}.py"] = _test_file(pkg, name)
    return files


def _test_file(pkg: str, name: str) -> str:
    bodies = {
        "metrics": """
            from PKG.utils.metrics import METRICS, build_metrics


            def test_every_metric_computes():
                metrics = build_metrics(sorted(METRICS))
                for metric in metrics.values():
                    metric.update(1.0)
                    assert metric.compute() == 1.0
            """,
        "data": """
            from PKG.data.collate import collate_tokens
            from PKG.data.packing import pack


            def test_pack_and_collate():
                packed = pack([[1, 2, 3], [4, 5]], 3, 0)
                inputs, labels = collate_tokens([{"input_ids": p} for p in packed])
                assert inputs.shape[0] == len(packed)
            """,
        "config": """
            from PKG.config import parse_args, preset


            def test_overrides():
                config = parse_args(["--training.steps", "7"])
                assert config.training.steps == 7
                assert preset("llama").model.name == "llama"
            """,
        "checkpoint": """
            from torch import nn

            from PKG.train.checkpoint import CheckpointManager


            def test_roundtrip(tmp_path):
                model = nn.Linear(2, 2)
                optimizer = __import__("torch").optim.SGD(model.parameters(), lr=0.1)
                manager = CheckpointManager(str(tmp_path), model, optimizer)
                manager.save(3)
                assert manager.load(str(tmp_path / "checkpoints" / "step-3.pt")) == 3
            """,
        "callbacks": """
            from PKG.train.callbacks import build_callbacks


            def test_every_callback_is_built():
                assert len(build_callbacks(None)) > 0
            """,
        "trainer": """
            import torch

            from PKG.config import preset
            from PKG.train.trainer import Trainer


            def test_one_step_on_cpu():
                config = preset("llama")
                config.training.device_type = "cpu"
                trainer = Trainer(config)
                batch = [(torch.randint(0, 100, (2, 8)), torch.randint(0, 100, (2, 8)))]
                assert torch.isfinite(trainer.train_step(batch))
            """,
    }
    return _code(bodies[name], pkg)


def _pyproject(packages: list[str]) -> str:
    listed = ", ".join(f'"{p}*"' for p in packages)
    return textwrap.dedent(
        f"""\
        [project]
        name = "forge-framework"
        version = "0.3.0"
        requires-python = ">=3.10"
        dependencies = ["torch", "numpy"]

        [tool.setuptools.packages.find]
        include = [{listed}]

        [tool.compile-ad-lint]
        select = ["ALL"]
        """
    )


# -- the corpus ------------------------------------------------------------------------------------


@dataclass
class Generated:
    root: Path
    packages: list[str]
    files: list[str]  # relative paths of every generated file, sorted
    expected: list[tuple[str, int, str]]  # (relative path, 1-based line, code) of each marked hazard
    trainer: str  # relative path of the first package's trainer (the file the LSP client opens)
    edit_line: int  # 1-based line of EDIT_LINE_TEXT in the trainer
    bytes: int = 0
    by_package: dict[str, int] = field(default_factory=dict)

    def edit_text(self, k: int) -> str:
        """The edited line for edit ``k`` (a real code change, same length in lines)."""
        return EDIT_LINE_TEXT.replace('"fwd-bwd"', f'"fwd-bwd-{k}"')


def package_names(copies: int, package: str = DEFAULT_PACKAGE) -> list[str]:
    return [package if k == 1 else f"{package}{k}" for k in range(1, copies + 1)]


def framework_files(pkg: str) -> dict[str, str]:
    """Every file of one framework copy whose package is ``pkg``: relative path -> text."""
    parts: dict[str, str] = {}
    for group in (
        _config_files(pkg),
        _protocol_files(pkg),
        _model_files(pkg),
        _distributed_files(pkg),
        _utils_files(pkg),
        _data_files(pkg),
        _train_files(pkg),
        _experiment_files(pkg),
    ):
        for relative, text in group.items():
            parts[f"{pkg}/{relative}"] = _with_helpers(relative, text)
    parts.update(_top_files(pkg))
    return parts


def generate(root: Path, copies: int = 1, package: str = DEFAULT_PACKAGE) -> Generated:
    """Write the framework (``copies`` sibling packages) under ``root``; deterministic."""
    if copies < 1:
        raise ValueError("copies must be at least 1")
    root = Path(root)
    packages = package_names(copies, package)
    everything: dict[str, str] = {"pyproject.toml": _pyproject(packages)}
    by_package = {}
    for pkg in packages:
        files = framework_files(pkg)
        by_package[pkg] = sum(1 for name in files if name.endswith(".py"))
        everything.update(files)
    expected: list[tuple[str, int, str]] = []
    size = 0
    for relative in sorted(everything):
        text = everything[relative]
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        size += len(data)
        if relative.endswith(".py"):
            for number, line in enumerate(text.splitlines(), start=1):
                match = _EXPECT.search(line)
                if match:
                    expected.extend((relative, number, code) for code in re.findall(r"CAL\d+", match.group(1)))
    trainer = f"{packages[0]}/train/trainer.py"
    edit_line = everything[trainer].splitlines(keepends=True).index(EDIT_LINE_TEXT) + 1
    return Generated(
        root=root,
        packages=packages,
        files=sorted(everything),
        expected=sorted(expected),
        trainer=trainer,
        edit_line=edit_line,
        bytes=size,
        by_package=by_package,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", help="directory to write the project into (created)")
    parser.add_argument("--copies", type=int, default=1, help="sibling copies of the framework package (default 1)")
    parser.add_argument(
        "--package", default=DEFAULT_PACKAGE, help=f"name of the first package (default {DEFAULT_PACKAGE})"
    )
    args = parser.parse_args(argv)
    generated = generate(Path(args.out), args.copies, args.package)
    py = sum(1 for f in generated.files if f.endswith(".py"))
    print(
        f"{py} Python files ({generated.bytes / 1024:.0f} KiB) in {args.out}; packages {', '.join(generated.packages)}"
    )
    print(f"{len(generated.expected)} expected findings:")
    for relative, line, code in generated.expected:
        print(f"  {relative}:{line}: {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
