from forge.data.tokenizers.bpe import BpeTokenizer
from forge.data.tokenizers.sentencepiece import SentencepieceTokenizer
from forge.data.tokenizers.char import CharTokenizer
from forge.data.tokenizers.byte_level import ByteLevelTokenizer
from forge.data.tokenizers.hf_tokenizer import HfTokenizerTokenizer
from forge.data.tokenizers.tiktoken_like import TiktokenLikeTokenizer

TOKENIZERS = {
    "bpe": BpeTokenizer,
    "sentencepiece": SentencepieceTokenizer,
    "char": CharTokenizer,
    "byte_level": ByteLevelTokenizer,
    "hf_tokenizer": HfTokenizerTokenizer,
    "tiktoken_like": TiktokenLikeTokenizer,
}


def build_tokenizer(name):
    return TOKENIZERS[name]()
