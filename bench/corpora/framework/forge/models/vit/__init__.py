from forge.models.vit.args import FLAVORS, VitArgs
from forge.models.vit.model import VitModel
from forge.models.vit.parallelize import parallelize_vit
from forge.models.vit.state_dict_adapter import VitStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_mse_loss

__all__ = ["FLAVORS", "VitArgs", "VitModel", "parallelize_vit"]

register_train_spec(
    TrainSpec(
        name="vit",
        model_cls=VitModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_vit,
        build_loss_fn=build_mse_loss,
        state_dict_adapter=VitStateDictAdapter,
    )
)
