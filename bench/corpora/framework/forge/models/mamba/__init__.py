from forge.models.mamba.args import FLAVORS, MambaArgs
from forge.models.mamba.model import MambaModel
from forge.models.mamba.parallelize import parallelize_mamba
from forge.models.mamba.state_dict_adapter import MambaStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_cross_entropy_loss

__all__ = ["FLAVORS", "MambaArgs", "MambaModel", "parallelize_mamba"]

register_train_spec(
    TrainSpec(
        name="mamba",
        model_cls=MambaModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_mamba,
        build_loss_fn=build_cross_entropy_loss,
        state_dict_adapter=MambaStateDictAdapter,
    )
)
