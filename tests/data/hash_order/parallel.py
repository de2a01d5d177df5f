import torch


def compile_blocks(model):
    for index, block in enumerate(model.layers):
        model.layers[index] = torch.compile(block)
