from forge.models.phi.args import FLAVORS, PhiArgs
from forge.models.phi.model import PhiModel
from forge.models.phi.parallelize import parallelize_phi
from forge.models.phi.state_dict_adapter import PhiStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "PhiArgs", "PhiModel", "parallelize_phi"]

register_train_spec(
    TrainSpec(
        name="phi",
        model_cls=PhiModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_phi,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=PhiStateDictAdapter,
    )
)
