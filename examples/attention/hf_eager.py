"""Correct: a transformers-style eager attention function (AttentionInterface: output (B, L, H, D), weights; GQA
through ``module.num_key_value_groups``, as transformers' ``repeat_kv``)."""
import torch
from torch import nn


def repeat_kv(hidden_states, n_rep):
    """(B, H_kv, S, D) -> (B, H_kv * n_rep, S, D), each key/value head serving n_rep consecutive query heads."""
    batch, kv_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    return hidden_states[:, :, None].expand(batch, kv_heads, n_rep, slen, head_dim).reshape(batch, kv_heads * n_rep,
                                                                                             slen, head_dim)


def attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    key, value = repeat_kv(key, module.num_key_value_groups), repeat_kv(value, module.num_key_value_groups)
    weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        weights = weights + attention_mask[:, :, :, : key.shape[-2]]
    weights = nn.functional.softmax(weights, dim=-1, dtype=torch.float32).to(query.dtype)
    weights = nn.functional.dropout(weights, p=dropout, training=module.training)
    out = torch.matmul(weights, value).transpose(1, 2).contiguous()
    return out, weights
