"""forge: token and patch embeddings.

Module models/common/embedding.py.
"""

from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim)

    def forward(self, tokens):
        return self.embedding(tokens)


class PatchEmbedding(nn.Module):
    def __init__(self, in_channels, dim, patch_size):
        super().__init__()
        self.proj = nn.Conv2d(in_channels, dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, images):
        return self.proj(images).flatten(2).transpose(1, 2)
