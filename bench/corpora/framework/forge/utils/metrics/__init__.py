from forge.utils.metrics.accuracy import AccuracyMetric
from forge.utils.metrics.top_k import TopKMetric
from forge.utils.metrics.perplexity import PerplexityMetric
from forge.utils.metrics.loss_meter import LossMeterMetric
from forge.utils.metrics.throughput import ThroughputMetric
from forge.utils.metrics.mfu import MfuMetric
from forge.utils.metrics.grad_norm import GradNormMetric
from forge.utils.metrics.param_norm import ParamNormMetric
from forge.utils.metrics.token_count import TokenCountMetric
from forge.utils.metrics.bleu import BleuMetric
from forge.utils.metrics.rouge import RougeMetric
from forge.utils.metrics.f1 import F1Metric
from forge.utils.metrics.precision_recall import PrecisionRecallMetric
from forge.utils.metrics.calibration import CalibrationMetric
from forge.utils.metrics.auc import AucMetric
from forge.utils.metrics.confusion import ConfusionMetric
from forge.utils.metrics.iou import IouMetric
from forge.utils.metrics.psnr import PsnrMetric
from forge.utils.metrics.ssim import SsimMetric
from forge.utils.metrics.wer import WerMetric
METRICS = {
    "accuracy": AccuracyMetric,
    "top_k": TopKMetric,
    "perplexity": PerplexityMetric,
    "loss_meter": LossMeterMetric,
    "throughput": ThroughputMetric,
    "mfu": MfuMetric,
    "grad_norm": GradNormMetric,
    "param_norm": ParamNormMetric,
    "token_count": TokenCountMetric,
    "bleu": BleuMetric,
    "rouge": RougeMetric,
    "f1": F1Metric,
    "precision_recall": PrecisionRecallMetric,
    "calibration": CalibrationMetric,
    "auc": AucMetric,
    "confusion": ConfusionMetric,
    "iou": IouMetric,
    "psnr": PsnrMetric,
    "ssim": SsimMetric,
    "wer": WerMetric,
}
NAMES = ("accuracy", "top_k", "perplexity", "loss_meter", "throughput", "mfu", "grad_norm", "param_norm", "token_count", "bleu", "rouge", "f1", "precision_recall", "calibration", "auc", "confusion", "iou", "psnr", "ssim", "wer")


def build_metrics(names):
    return {name: METRICS[name]() for name in names}
