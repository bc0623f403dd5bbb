"""Bug, 1/d_k as the default scale (the muP-style scale, here by mistake): an explicit scale is honoured,
scale=None is not 1/sqrt(d_k)."""
import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    scale = 1.0 / query.shape[-1] if scale is None else scale
    return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                          is_causal=is_causal, scale=scale)
