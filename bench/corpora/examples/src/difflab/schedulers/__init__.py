from .scheduling_ddim import DDIMScheduler
from .scheduling_ddpm import DDPMScheduler
from .scheduling_dpmsolver_multistep import DPMSolverMultistepScheduler
from .scheduling_euler_discrete import EulerDiscreteScheduler
from .scheduling_flow_match_euler_discrete import FlowMatchEulerDiscreteScheduler
from .scheduling_lcm import LCMScheduler
from .scheduling_utils import KarrasDiffusionSchedulers, SchedulerMixin

__all__ = [
    "DDIMScheduler",
    "DDPMScheduler",
    "DPMSolverMultistepScheduler",
    "EulerDiscreteScheduler",
    "FlowMatchEulerDiscreteScheduler",
    "KarrasDiffusionSchedulers",
    "LCMScheduler",
    "SchedulerMixin",
]
