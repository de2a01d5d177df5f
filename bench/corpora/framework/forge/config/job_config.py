"""forge: the job configuration, one dataclass per section.

Module config/job_config.py.
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
