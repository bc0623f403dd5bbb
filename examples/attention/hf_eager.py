"""Correct: a transformers-style eager attention function (AttentionInterface: output (B, L, H, D), weights)."""
import torch
from torch import nn


def attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        weights = weights + attention_mask[:, :, :, : key.shape[-2]]
    weights = nn.functional.softmax(weights, dim=-1, dtype=torch.float32).to(query.dtype)
    weights = nn.functional.dropout(weights, p=dropout, training=module.training)
    out = torch.matmul(weights, value).transpose(1, 2).contiguous()
    return out, weights
