"""Convert a checkpoint to the external layout of its model family."""

import argparse

import torch

from forge.protocols.train_spec import get_train_spec


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
