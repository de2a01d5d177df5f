from forge.models.clip.args import FLAVORS, ClipArgs
from forge.models.clip.model import ClipModel
from forge.models.clip.parallelize import parallelize_clip
from forge.models.clip.state_dict_adapter import ClipStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_mse_loss

__all__ = ["FLAVORS", "ClipArgs", "ClipModel", "parallelize_clip"]

register_train_spec(
    TrainSpec(
        name="clip",
        model_cls=ClipModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_clip,
        build_loss_fn=build_mse_loss,
        state_dict_adapter=ClipStateDictAdapter,
    )
)
