# Two autocast states alike but for the switch arms they were made on: the bfloat16 one of
# ``bf16()`` on both arms of ``if args.a:``; one CAL002, on the else arm, in every process.
import argparse

import torch


def bf16():
    return torch.autocast("cuda", dtype=torch.bfloat16)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", action="store_true")
    parser.add_argument("--x", action="store_true")
    args = parser.parse_args()
    model = torch.compile(torch.nn.Linear(4, 4))
    x = torch.randn(2, 4)
    if args.a:
        ctx = bf16() if args.x else torch.autocast("cuda", dtype=torch.float16)
    else:
        ctx = bf16()
    with ctx:
        loss = model(x).sum()
    with torch.autocast("cuda", dtype=torch.float16):
        loss.backward()


if __name__ == "__main__":
    main()
