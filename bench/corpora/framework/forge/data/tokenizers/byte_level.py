"""forge: the byte_level tokenizer.

Module data/tokenizers/byte_level.py.
"""

from forge.data.tokenizers.base import BaseTokenizer


class ByteLevelTokenizer(BaseTokenizer):
    vocab_size = 16384

    def encode(self, text):
        ids = super().encode(text.lower() if False else text)
        ids = _prepare(ids)
        return [self.eos_id + 1 + i for i in ids]
