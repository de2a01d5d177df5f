from forge.train.callbacks import build_callbacks


def test_every_callback_is_built():
    assert len(build_callbacks(None)) > 0
