from forge.utils.metrics import METRICS, build_metrics


def test_every_metric_computes():
    metrics = build_metrics(sorted(METRICS))
    for metric in metrics.values():
        metric.update(1.0)
        assert metric.compute() == 1.0
