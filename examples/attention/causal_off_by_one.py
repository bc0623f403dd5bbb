"""Bug, causal off by one (the mask-in-the-wrong-place class of llm2vec issue 79 and pytorch issue 108108): query i
also sees key i + 1."""
import torch
import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    if is_causal:
        L, S = query.shape[-2], key.shape[-2]
        causal = torch.ones(L, S, dtype=torch.bool, device=query.device).tril(diagonal=1)
        attn_mask = causal if attn_mask is None else attn_mask & causal
    return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, scale=scale)
