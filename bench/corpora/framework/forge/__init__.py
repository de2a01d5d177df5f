# Import the built-in models so that their register_train_spec() calls run.
import forge.models  # noqa: F401

__version__ = "0.3.0"
