# Import every model family here so that its register_train_spec() call runs.
import forge.models.llama  # noqa: F401
import forge.models.qwen  # noqa: F401
import forge.models.mistral  # noqa: F401
import forge.models.gemma  # noqa: F401
import forge.models.phi  # noqa: F401
import forge.models.falcon  # noqa: F401
import forge.models.mpt  # noqa: F401
import forge.models.bloom  # noqa: F401
import forge.models.gptj  # noqa: F401
import forge.models.mamba  # noqa: F401
import forge.models.vit  # noqa: F401
import forge.models.dit  # noqa: F401
import forge.models.clip  # noqa: F401
import forge.models.whisper  # noqa: F401
