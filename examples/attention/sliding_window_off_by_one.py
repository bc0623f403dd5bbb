"""Bug, the sliding window off by one: a query sees the W keys before it as well as itself (`j >= pos - W`, W + 1
keys; the slip of a window written as flash-attn's `window_size=(W, 0)` where W - 1 was meant)."""
import torch
import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, sliding_window=None):
    L, S = query.shape[-2], key.shape[-2]
    if is_causal or sliding_window:
        pos = torch.arange(L, device=query.device)[:, None] + (S - L)
        j = torch.arange(S, device=query.device)[None, :]
        allowed = j <= pos if is_causal else torch.ones(L, S, dtype=torch.bool, device=query.device)
        if sliding_window:
            allowed = allowed & (j >= pos - sliding_window)
        if attn_mask is None:
            attn_mask = allowed
        elif attn_mask.dtype == torch.bool:
            attn_mask = attn_mask & allowed
        else:
            attn_mask = attn_mask.masked_fill(~allowed, -torch.inf)
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, scale=scale)
    return torch.nan_to_num(out)        # a row left no key (L > S) gives zeros, as flash-attn's
