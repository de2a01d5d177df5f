from forge.models.whisper.args import FLAVORS, WhisperArgs
from forge.models.whisper.model import WhisperModel
from forge.models.whisper.parallelize import parallelize_whisper
from forge.models.whisper.state_dict_adapter import WhisperStateDictAdapter
from forge.protocols.train_spec import TrainSpec, register_train_spec
from forge.train.loss import build_mse_loss

__all__ = ["FLAVORS", "WhisperArgs", "WhisperModel", "parallelize_whisper"]

register_train_spec(
    TrainSpec(
        name="whisper",
        model_cls=WhisperModel,
        flavors=FLAVORS,
        parallelize_fn=parallelize_whisper,
        build_loss_fn=build_mse_loss,
        state_dict_adapter=WhisperStateDictAdapter,
    )
)
