"""forge: conversion to and from external checkpoints.

Module protocols/state_dict_adapter.py.
"""

class BaseStateDictAdapter:
    prefix_map: dict = {}

    def to_external(self, state_dict):
        out = {}
        for key, value in state_dict.items():
            for ours, theirs in self.prefix_map.items():
                key = key.replace(ours, theirs)
            out[key] = value
        return out

    def from_external(self, state_dict):
        out = {}
        for key, value in state_dict.items():
            for ours, theirs in self.prefix_map.items():
                key = key.replace(theirs, ours)
            out[key] = value
        return out
