from forge.models.gemma.args import FLAVORS, GemmaArgs
from forge.models.gemma.model import GemmaModel
from forge.models.gemma.parallelize import parallelize_gemma
from forge.models.gemma.state_dict_adapter import GemmaStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "GemmaArgs", "GemmaModel", "parallelize_gemma"]

register_train_spec(
    TrainSpec(
        name="gemma",
        model_cls=GemmaModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_gemma,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=GemmaStateDictAdapter,
    )
)
