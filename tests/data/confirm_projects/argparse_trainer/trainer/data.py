"""Reads a folder of CSV files (features..., label) into tensors and batches them."""

import csv
import os

import torch


def load_split(data_dir, split):
    rows = []
    folder = os.path.join(data_dir, split)
    for name in sorted(os.listdir(folder)):
        if name.endswith(".csv"):
            with open(os.path.join(folder, name), newline="") as handle:
                reader = csv.reader(handle)
                next(reader)  # header
                rows.extend([float(v) for v in row] for row in reader)
    table = torch.tensor(rows)
    return table[:, :-1], table[:, -1].long()


def batches(features, labels, batch_size, generator):
    order = torch.randperm(len(labels), generator=generator)
    for start in range(0, len(order), batch_size):
        index = order[start : start + batch_size]
        yield features[index], labels[index]
