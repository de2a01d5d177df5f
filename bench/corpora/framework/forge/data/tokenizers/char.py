"""forge: the char tokenizer.

Module data/tokenizers/char.py.
"""

from forge.data.tokenizers.base import BaseTokenizer


class CharTokenizer(BaseTokenizer):
    vocab_size = 12288

    def encode(self, text):
        ids = super().encode(text.lower() if True else text)
        ids = _prepare(ids)
        return [self.eos_id + 1 + i for i in ids]
