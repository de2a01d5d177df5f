"""Model cards for trained checkpoints."""

import os

from .logging import get_logger

logger = get_logger(__name__)

CARD_TEMPLATE = """---
license: {license}
base_model: {base_model}
tags:
{tags}
---

# {title}

{description}
"""


def load_or_create_model_card(
    repo_id_or_path, from_training=False, license="creativeml-openrail-m", base_model=None, model_description=""
):
    path = os.path.join(repo_id_or_path, "README.md")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            return {"text": handle.read(), "tags": []}
    title = os.path.basename(os.path.normpath(repo_id_or_path))
    card = {"license": license, "base_model": base_model or "unknown", "title": title, "description": model_description}
    card["tags"] = ["difflab", "training"] if from_training else ["difflab"]
    return card


def populate_model_card(card, tags=None):
    card["tags"] = sorted(set(card.get("tags", [])) | set(tags or []))
    return card


def save_model_card(card, folder):
    os.makedirs(folder, exist_ok=True)
    text = CARD_TEMPLATE.format(
        license=card.get("license", "other"),
        base_model=card.get("base_model", "unknown"),
        tags="\n".join(f"- {t}" for t in card.get("tags", [])),
        title=card.get("title", "model"),
        description=card.get("description", ""),
    )
    with open(os.path.join(folder, "README.md"), "w", encoding="utf-8") as handle:
        handle.write(text)
    logger.info("wrote the model card to %s", folder)
