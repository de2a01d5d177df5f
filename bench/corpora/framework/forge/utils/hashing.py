"""forge: stable hashes of configs.

Module utils/hashing.py.
"""

import hashlib
import json


def config_hash(config_dict):
    return hashlib.sha256(json.dumps(config_dict, sort_keys=True, default=str).encode()).hexdigest()[:12]
