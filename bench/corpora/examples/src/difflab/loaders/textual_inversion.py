"""Textual inversion: new tokens whose embeddings were learned, added to a pipeline's tokenizer and encoder."""

import torch

from ..utils.logging import get_logger

logger = get_logger(__name__)


class TextualInversionLoaderMixin:
    def maybe_convert_prompt(self, prompt, tokenizer):
        prompts = [prompt] if not isinstance(prompt, list) else prompt
        return [self._maybe_convert_prompt(p, tokenizer) for p in prompts]

    def _maybe_convert_prompt(self, prompt, tokenizer):
        """Spell multi-vector tokens out: ``<cat-toy>`` becomes ``<cat-toy> <cat-toy>_1 ...``."""
        for token in tokenizer.tokenize(prompt) if hasattr(tokenizer, "tokenize") else ():
            if token in getattr(tokenizer, "added_tokens_encoder", {}):
                replacement, i = token, 1
                while f"{token}_{i}" in tokenizer.added_tokens_encoder:
                    replacement += f" {token}_{i}"
                    i += 1
                prompt = prompt.replace(token, replacement)
        return prompt

    def load_textual_inversion(self, path, token=None, tokenizer=None, text_encoder=None):
        tokenizer = tokenizer or self.tokenizer
        text_encoder = text_encoder or self.text_encoder
        state = torch.load(path, map_location="cpu", weights_only=True)
        if len(state) == 1:
            token, embedding = next(iter(state.items()))
        else:
            embedding = state["string_to_param"]["*"]
        tokens = [token] if embedding.dim() == 1 else [token] + [f"{token}_{i}" for i in range(1, embedding.shape[0])]
        tokenizer.add_tokens(tokens)
        text_encoder.resize_token_embeddings(len(tokenizer))
        weights = text_encoder.get_input_embeddings().weight
        for tok, vector in zip(tokens, embedding.reshape(len(tokens), -1)):
            weights.data[tokenizer.convert_tokens_to_ids(tok)] = vector.to(weights.dtype)
        logger.info("loaded textual inversion %s (%d vectors)", token, len(tokens))
