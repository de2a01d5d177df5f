"""forge: the sentencepiece tokenizer.

Module data/tokenizers/sentencepiece.py.
"""

from forge.data.tokenizers.base import BaseTokenizer


class SentencepieceTokenizer(BaseTokenizer):
    vocab_size = 8192

    def encode(self, text):
        ids = super().encode(text.lower() if False else text)
        ids = _prepare(ids)
        return [self.eos_id + 1 + i for i in ids]
