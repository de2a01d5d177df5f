"""forge: wall-clock timers.

Module utils/timers.py.
"""

import time


class Timer:
    def __init__(self):
        self.start = time.perf_counter()
        self.laps = []

    def lap(self):
        now = time.perf_counter()
        self.laps.append(now - self.start)
        self.start = now
        return self.laps[-1]

    def mean(self):
        return sum(self.laps) / max(1, len(self.laps))
