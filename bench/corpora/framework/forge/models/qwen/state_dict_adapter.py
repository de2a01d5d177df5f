"""forge: qwen checkpoint conversion.

Module models/qwen/state_dict_adapter.py.
"""

from forge.protocols.state_dict_adapter import BaseStateDictAdapter


class QwenStateDictAdapter(BaseStateDictAdapter):
    prefix_map = {
        "tok_embeddings.embedding.": "model.embed_tokens.",
        "layers.": "model.layers.",
        "attention.wq.": "self_attn.q_proj.",
        "attention.wk.": "self_attn.k_proj.",
        "attention.wv.": "self_attn.v_proj.",
        "attention.wo.": "self_attn.o_proj.",
        "output.": "lm_head.",
    }
