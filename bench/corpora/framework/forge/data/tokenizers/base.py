"""forge: the tokenizer interface.

Module data/tokenizers/base.py.
"""

class BaseTokenizer:
    vocab_size = 256
    eos_id = 0

    def encode(self, text):
        return [b % self.vocab_size for b in text.encode("utf-8")]

    def decode(self, ids):
        return bytes(i % 256 for i in ids).decode("utf-8", errors="replace")
