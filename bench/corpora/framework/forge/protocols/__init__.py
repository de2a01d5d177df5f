from forge.protocols.train_spec import TrainSpec, get_train_spec, list_train_specs, register_train_spec

__all__ = ["TrainSpec", "get_train_spec", "list_train_specs", "register_train_spec"]
