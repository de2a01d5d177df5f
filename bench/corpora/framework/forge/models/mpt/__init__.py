from forge.models.mpt.args import FLAVORS, MptArgs
from forge.models.mpt.model import MptModel
from forge.models.mpt.parallelize import parallelize_mpt
from forge.models.mpt.state_dict_adapter import MptStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "MptArgs", "MptModel", "parallelize_mpt"]

register_train_spec(
    TrainSpec(
        name="mpt",
        model_cls=MptModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_mpt,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=MptStateDictAdapter,
    )
)
