"""forge: a tensorboard writer that degrades to nothing.

Module utils/tensorboard.py.
"""

from forge.utils.dist import is_main


class Writer:
    def __init__(self, folder, enabled):
        self.enabled = enabled and is_main()
        self.folder = folder
        self.scalars = []

    def add_scalar(self, name, value, step):
        if self.enabled:
            self.scalars.append((name, float(value), step))
