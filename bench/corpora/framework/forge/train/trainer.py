"""forge: the Trainer: spec from the registry, per-block compile, DDP, autocast forward, scaled backward.

Module train/trainer.py.
"""

import torch

import forge.models  # noqa: F401  (fills the train spec registry)
from forge.data import build_dataloader
from forge.distributed.parallel_dims import ParallelDims
from forge.distributed.utils import clip_grad_norm_, maybe_enable_amp
from forge.protocols.train_spec import get_train_spec
from forge.train.callbacks import build_callbacks
from forge.train.checkpoint import CheckpointManager
from forge.train.grad_scaler import build_grad_scaler
from forge.train.loss import rescale_accumulated_loss
from forge.train.lr_schedule import build_lr_scheduler
from forge.train.optim import build_optimizer
from forge.train.state import TrainState
from forge.utils.device import device_for
from forge.utils.logging import logger
from forge.utils.metrics import build_metrics
from forge.utils.sensitivity import directional_sensitivity, random_direction


class Trainer:
    def __init__(self, job_config):
        self.job_config = job_config
        self.device = device_for(job_config.training.device_type)
        self.parallel_dims = ParallelDims.from_config(job_config.parallel)
        self.train_spec = get_train_spec(job_config.model.name)
        model = self.build_model()
        self.model = self.train_spec.parallelize_fn(model, self.parallel_dims, job_config)
        self.loss_fn = self.train_spec.build_loss_fn(job_config)
        self.loss_fn = rescale_accumulated_loss(self.loss_fn, job_config.training.gradient_accumulation_steps)
        self.optimizer = build_optimizer(self.model, job_config.optimizer)
        self.lr_scheduler = build_lr_scheduler(self.optimizer, job_config.optimizer, job_config.training.steps)
        self.scaler = build_grad_scaler(job_config.training)
        self.maybe_enable_amp = maybe_enable_amp(self.parallel_dims, job_config.training.mixed_precision, job_config.training.device_type)
        self.dataloader = build_dataloader(job_config.data, job_config.training.batch_size)
        self.metrics = build_metrics(job_config.metrics.names)
        self.callbacks = build_callbacks(self)
        self.checkpointer = CheckpointManager(job_config.dump_folder, self.model, self.optimizer)
        self.state = TrainState()

    def build_model(self):
        args = self.train_spec.flavors[self.job_config.model.flavor]
        model = self.train_spec.model_cls(args)
        model.init_weights()
        return model.to(self.device)

    def forward_backward_step(self, inputs, labels):
        step_tag = "fwd-bwd"
        with self.maybe_enable_amp:
            pred = self.model(inputs)
            loss = self.loss_fn(pred, labels)
        del pred
        self.scaler.scale(loss).backward()  # expect: CAL002
        logger.debug("%s step %d", step_tag, self.state.step)
        return loss

    def train_step(self, batches):
        self.optimizer.zero_grad()
        losses = []
        for inputs, labels in batches:
            losses.append(self.forward_backward_step(inputs.to(self.device), labels.to(self.device)).detach())
        self.scaler.unscale_(self.optimizer)
        grad_norm = clip_grad_norm_(self.model.parameters(), self.job_config.training.max_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.lr_scheduler.step()
        loss = torch.stack(losses).mean()
        self.metrics["loss_meter"].update(loss)
        self.metrics["grad_norm"].update(grad_norm)
        return loss

    def probe_sensitivity(self, inputs):
        # How much the output moves along a random input direction (a health check of the run).
        direction = random_direction(inputs, seed=self.state.step)
        return directional_sensitivity(self.model, inputs, direction)

    def train(self):
        accumulation = self.job_config.training.gradient_accumulation_steps
        batches = []
        for inputs, labels in self.dataloader:
            batches.append((inputs, labels))
            if len(batches) < accumulation:
                continue
            loss = self.train_step(batches)
            batches = []
            self.state.step += 1
            for callback in self.callbacks:
                callback.on_step_end(self, loss)
            if self.state.step >= self.job_config.training.steps:
                break
        self.checkpointer.save(self.state.step, final=True)
