from forge.models.qwen.args import FLAVORS, QwenArgs
from forge.models.qwen.model import QwenModel
from forge.models.qwen.parallelize import parallelize_qwen
from forge.models.qwen.state_dict_adapter import QwenStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "QwenArgs", "QwenModel", "parallelize_qwen"]

register_train_spec(
    TrainSpec(
        name="qwen",
        model_cls=QwenModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_qwen,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=QwenStateDictAdapter,
    )
)
