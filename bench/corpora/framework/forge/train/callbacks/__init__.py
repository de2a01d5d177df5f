from forge.train.callbacks.log_metrics import LogMetricsCallback
from forge.train.callbacks.save_checkpoint import SaveCheckpointCallback
from forge.train.callbacks.lr_monitor import LrMonitorCallback
from forge.train.callbacks.profiler import ProfilerCallback
from forge.train.callbacks.ema_update import EmaUpdateCallback
from forge.train.callbacks.nan_guard import NanGuardCallback
from forge.train.callbacks.throughput import ThroughputCallback
from forge.train.callbacks.sensitivity import SensitivityCallback


def build_callbacks(trainer):
    return [
        LogMetricsCallback(),
        SaveCheckpointCallback(),
        LrMonitorCallback(),
        ProfilerCallback(),
        EmaUpdateCallback(),
        NanGuardCallback(),
        ThroughputCallback(),
        SensitivityCallback(),
    ]
