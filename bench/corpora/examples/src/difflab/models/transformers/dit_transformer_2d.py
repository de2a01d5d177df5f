"""The class-conditional diffusion transformer (DiT) over latent patches."""

from torch import nn

from ...configuration_utils import register_to_config
from ..attention import BasicTransformerBlock
from ..embeddings import PatchEmbed
from ..modeling_utils import ModelMixin
from .transformer_2d import Transformer2DModelOutput


class DiTTransformer2DModel(ModelMixin):
    _supports_gradient_checkpointing = True
    _repeated_blocks = ("transformer_blocks",)

    @register_to_config
    def __init__(
        self,
        num_attention_heads=16,
        attention_head_dim=72,
        in_channels=4,
        out_channels=None,
        num_layers=28,
        sample_size=32,
        patch_size=2,
        num_embeds_ada_norm=1000,
    ):
        super().__init__()
        self.inner_dim = num_attention_heads * attention_head_dim
        self.out_channels = out_channels or in_channels
        self.patch_size = patch_size
        self.pos_embed = PatchEmbed(sample_size, sample_size, patch_size, in_channels, self.inner_dim)
        self.transformer_blocks = nn.ModuleList(
            [
                BasicTransformerBlock(
                    self.inner_dim,
                    num_attention_heads,
                    attention_head_dim,
                    activation_fn="gelu-approximate",
                    num_embeds_ada_norm=num_embeds_ada_norm,
                    norm_type="ada_norm_zero",
                )
                for _ in range(num_layers)
            ]
        )
        self.norm_out = nn.LayerNorm(self.inner_dim, elementwise_affine=False, eps=1e-6)
        self.proj_out_1 = nn.Linear(self.inner_dim, 2 * self.inner_dim)
        self.proj_out_2 = nn.Linear(self.inner_dim, patch_size * patch_size * self.out_channels)

    def forward(self, hidden_states, timestep=None, class_labels=None, return_dict=True):
        height = hidden_states.shape[-2] // self.patch_size
        width = hidden_states.shape[-1] // self.patch_size
        hidden_states = self.pos_embed(hidden_states)
        for block in self.transformer_blocks:
            hidden_states = self._checkpointed(block, hidden_states, None, timestep, class_labels)
        conditioning = self.transformer_blocks[0].norm1.emb(timestep, class_labels, hidden_dtype=hidden_states.dtype)
        shift, scale = self.proj_out_1(nn.functional.silu(conditioning)).chunk(2, dim=1)
        hidden_states = self.norm_out(hidden_states) * (1 + scale[:, None]) + shift[:, None]
        hidden_states = self.proj_out_2(hidden_states)
        p, c = self.patch_size, self.out_channels
        hidden_states = hidden_states.reshape(-1, height, width, p, p, c)
        hidden_states = hidden_states.permute(0, 5, 1, 3, 2, 4).reshape(-1, c, height * p, width * p)
        if not return_dict:
            return (hidden_states,)
        return Transformer2DModelOutput(sample=hidden_states)
