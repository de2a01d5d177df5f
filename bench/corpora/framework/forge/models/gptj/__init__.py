from forge.models.gptj.args import FLAVORS, GptjArgs
from forge.models.gptj.model import GptjModel
from forge.models.gptj.parallelize import parallelize_gptj
from forge.models.gptj.state_dict_adapter import GptjStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "GptjArgs", "GptjModel", "parallelize_gptj"]

register_train_spec(
    TrainSpec(
        name="gptj",
        model_cls=GptjModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_gptj,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=GptjStateDictAdapter,
    )
)
