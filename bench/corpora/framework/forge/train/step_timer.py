"""forge: time per step and tokens per second.

Module train/step_timer.py.
"""

from forge.utils.timers import Timer


class StepTimer:
    def __init__(self, tokens_per_step):
        self.timer = Timer()
        self.tokens_per_step = tokens_per_step

    def tokens_per_second(self):
        return self.tokens_per_step / max(1e-9, self.timer.lap())
