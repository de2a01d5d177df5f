"""forge: the hf_tokenizer tokenizer.

Module data/tokenizers/hf_tokenizer.py.
"""

from forge.data.tokenizers.base import BaseTokenizer


class HfTokenizerTokenizer(BaseTokenizer):
    vocab_size = 20480

    def encode(self, text):
        ids = super().encode(text.lower() if True else text)
        ids = _prepare(ids)
        return [self.eos_id + 1 + i for i in ids]
