from forge.config.job_config import (
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
from forge.config.parse import parse_args
from forge.config.presets import preset

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
