from forge.models.mistral.args import FLAVORS, MistralArgs
from forge.models.mistral.model import MistralModel
from forge.models.mistral.parallelize import parallelize_mistral
from forge.models.mistral.state_dict_adapter import MistralStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "MistralArgs", "MistralModel", "parallelize_mistral"]

register_train_spec(
    TrainSpec(
        name="mistral",
        model_cls=MistralModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_mistral,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=MistralStateDictAdapter,
    )
)
