from forge.models.llama.args import FLAVORS, LlamaArgs
from forge.models.llama.model import LlamaModel
from forge.models.llama.parallelize import parallelize_llama
from forge.models.llama.state_dict_adapter import LlamaStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "LlamaArgs", "LlamaModel", "parallelize_llama"]

register_train_spec(
    TrainSpec(
        name="llama",
        model_cls=LlamaModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_llama,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=LlamaStateDictAdapter,
    )
)
