from forge.models.bloom.args import FLAVORS, BloomArgs
from forge.models.bloom.model import BloomModel
from forge.models.bloom.parallelize import parallelize_bloom
from forge.models.bloom.state_dict_adapter import BloomStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "BloomArgs", "BloomModel", "parallelize_bloom"]

register_train_spec(
    TrainSpec(
        name="bloom",
        model_cls=BloomModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_bloom,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=BloomStateDictAdapter,
    )
)
