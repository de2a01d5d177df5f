"""forge: the tiktoken_like tokenizer.

Module data/tokenizers/tiktoken_like.py.
"""

from forge.data.tokenizers.base import BaseTokenizer


class TiktokenLikeTokenizer(BaseTokenizer):
    vocab_size = 24576

    def encode(self, text):
        ids = super().encode(text.lower() if False else text)
        ids = _prepare(ids)
        return [self.eos_id + 1 + i for i in ids]
