"""forge: file helpers.

Module utils/io.py.
"""

import json
import os


def read_json(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def write_json(path, value):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2)


def list_shards(folder, suffix=".bin"):
    return sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(suffix))
