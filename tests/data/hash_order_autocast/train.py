import argparse

import torch
from precision import get_autocast


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", default="amp_bf16")
    args = parser.parse_args()
    model = torch.compile(torch.nn.Linear(4, 4))
    autocast = get_autocast(args.precision)
    with autocast():
        loss = model(torch.randn(2, 4)).sum()
    loss.backward()


if __name__ == "__main__":
    main()
