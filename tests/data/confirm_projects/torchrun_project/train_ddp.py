"""Data-parallel training launched by torchrun (gloo on CPU, nccl on GPUs).

    torchrun --standalone --nproc-per-node 1 train_ddp.py --data data/series.csv --steps 200
"""

import argparse
import csv
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from model import Regressor


def read_series(path, window):
    with open(path, newline="") as handle:
        values = [float(row["value"]) for row in csv.DictReader(handle)]
    series = torch.tensor(values)
    windows = series.unfold(0, window + 1, 1)
    return windows[:, :-1].unsqueeze(-1), windows[:, -1]


def jvp_probe(model, x):
    """The regressor's directional derivative along a random input direction."""
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        out = model(fwAD.make_dual(x, torch.randn_like(x)))  # expect: CAL001
        return fwAD.unpack_dual(out).tangent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--amp-dtype", default="bfloat16", choices=["bfloat16", "float16", "none"])
    parser.add_argument("--probe", action="store_true")
    args = parser.parse_args()

    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend=backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device("cuda", local_rank) if backend == "nccl" else torch.device("cpu")
    torch.manual_seed(rank)

    inputs, targets = read_series(args.data, args.window)
    shard = torch.arange(rank, len(targets), world)
    inputs, targets = inputs[shard].to(device), targets[shard].to(device)

    model = torch.compile(Regressor(features=1).to(device))
    model = DDP(model, device_ids=[local_rank] if backend == "nccl" else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    amp = args.amp_dtype != "none"
    dtype = getattr(torch, args.amp_dtype) if amp else torch.float32
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)

    for step in range(args.steps):
        index = torch.randint(len(targets), (args.batch_size,), device=device)
        with torch.autocast(device_type=device.type, dtype=dtype, enabled=amp):
            prediction = model(inputs[index])
            loss = F.mse_loss(prediction.float(), targets[index])
        scaler.scale(loss).backward()  # expect: CAL002
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if rank == 0 and step % 50 == 0:
            print(f"step {step}: loss {loss.item():.4f}")

    if args.probe and rank == 0:
        print("probe", jvp_probe(model.module, inputs[:4]).norm().item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
