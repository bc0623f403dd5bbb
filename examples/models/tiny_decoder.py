"""A user's own decoder, not a transformers model: ``F.scaled_dot_product_attention`` with ``is_causal=True``,
PyTorch's default init. It takes ``head_dim=`` and ``width=`` so the trial can sweep its family, and says it is
causal with ``is_causal = True``."""
import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int, head_dim: int, causal: bool):
        super().__init__()
        self.heads, self.head_dim, self.causal = width // head_dim, head_dim, causal
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * self.heads * head_dim)
        self.out = nn.Linear(self.heads * head_dim, width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        B, L, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, L, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        x = x + self.out(a.transpose(1, 2).reshape(B, L, -1))
        return x + self.mlp(self.norm2(x))


class TinyDecoder(nn.Module):
    is_causal = True

    def __init__(self, vocab_size=256, width=64, head_dim=16, layers=2, causal=True):
        super().__init__()
        self.vocab_size = vocab_size
        self.embed = nn.Embedding(vocab_size, width)
        self.pos = nn.Parameter(torch.randn(512, width) * 0.02)
        self.blocks = nn.ModuleList(Block(width, head_dim, causal) for _ in range(layers))
        self.norm = nn.LayerNorm(width)

    def forward(self, input_ids):
        x = self.embed(input_ids) + self.pos[: input_ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


def build_model(width: int = 64, head_dim: int = 16, **overrides):
    return TinyDecoder(width=width, head_dim=head_dim, **overrides)
