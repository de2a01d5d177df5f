"""forge: the bpe tokenizer.

Module data/tokenizers/bpe.py.
"""

from forge.data.tokenizers.base import BaseTokenizer


class BpeTokenizer(BaseTokenizer):
    vocab_size = 4096

    def encode(self, text):
        ids = super().encode(text.lower() if True else text)
        ids = _prepare(ids)
        return [self.eos_id + 1 + i for i in ids]
