from forge.models.falcon.args import FLAVORS, FalconArgs
from forge.models.falcon.model import FalconModel
from forge.models.falcon.parallelize import parallelize_falcon
from forge.models.falcon.state_dict_adapter import FalconStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "FalconArgs", "FalconModel", "parallelize_falcon"]

register_train_spec(
    TrainSpec(
        name="falcon",
        model_cls=FalconModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_falcon,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=FalconStateDictAdapter,
    )
)
