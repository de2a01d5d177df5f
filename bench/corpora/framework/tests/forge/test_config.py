from forge.config import parse_args, preset


def test_overrides():
    config = parse_args(["--training.steps", "7"])
    assert config.training.steps == 7
    assert preset("llama").model.name == "llama"
