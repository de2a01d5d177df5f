from dataclasses import dataclass

from ...utils.outputs import BaseOutput


@dataclass
class StableDiffusionPipelineOutput(BaseOutput):
    images: list = None
    nsfw_content_detected: list = None
