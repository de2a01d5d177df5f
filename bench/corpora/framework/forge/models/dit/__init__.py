from forge.models.dit.args import FLAVORS, DitArgs
from forge.models.dit.model import DitModel
from forge.models.dit.parallelize import parallelize_dit
from forge.models.dit.state_dict_adapter import DitStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_mse_loss

__all__ = ["FLAVORS", "DitArgs", "DitModel", "parallelize_dit"]

register_train_spec(
    TrainSpec(
        name="dit",
        model_cls=DitModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_dit,
        build_loss_fn=build_mse_loss,
        state_dict_adapter=DitStateDictAdapter,
    )
)
