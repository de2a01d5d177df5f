"""forge: manual garbage collection between steps.

Module utils/gc_utils.py.
"""

import gc


class GarbageCollection:
    def __init__(self, every=1000):
        self.every = every
        gc.disable()

    def run(self, step):
        if step % self.every == 0:
            gc.collect(1)
