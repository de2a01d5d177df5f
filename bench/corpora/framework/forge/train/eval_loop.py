"""forge: evaluation without gradients.

Module train/eval_loop.py.
"""

import torch

from forge.utils.metrics import build_metrics


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
