"""Fetch tokenizer files into ./assets (prints the plan only without network)."""

import os

from forge.data.tokenizers import TOKENIZERS

if __name__ == "__main__":
    for name in TOKENIZERS:
        print("would fetch", name, "into", os.path.join("assets", name))
