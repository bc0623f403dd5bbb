"""Correct: attention as an nn.Module (its convention read off ``forward``): ``attention`` is an instance,
``SDPAttention`` a class to build with ``--attention examples.attention.sdpa_module:SDPAttention --attention-factory``.
"""
import torch.nn.functional as F
from torch import nn


class SDPAttention(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = dropout

    def forward(self, query, key, value, attn_mask=None, dropout_p=None, is_causal=False, scale=None):
        p = (self.dropout if dropout_p is None else dropout_p) if self.training else 0.0
        return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=p,
                                              is_causal=is_causal, scale=scale)


attention = SDPAttention()
