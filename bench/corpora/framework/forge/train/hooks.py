"""forge: the callback interface.

Module train/hooks.py.
"""

class Callback:
    every = 1

    def on_step_end(self, trainer, loss):
        if trainer.state.step % self.every == 0:
            self.run(trainer, loss)

    def run(self, trainer, loss):
        raise NotImplementedError
