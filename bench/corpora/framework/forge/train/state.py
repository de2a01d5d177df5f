"""forge: the resumable training state.

Module train/state.py.
"""

from dataclasses import dataclass, field


@dataclass
class TrainState:
    step: int = 0
    tokens_seen: int = 0
    losses: list = field(default_factory=list)

    def state_dict(self):
        return {"step": self.step, "tokens_seen": self.tokens_seen}

    def load_state_dict(self, state):
        self.step = state["step"]
        self.tokens_seen = state["tokens_seen"]
