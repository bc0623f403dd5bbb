"""Bug, heads mixed by a view (a layout bug: (B, L, H, D) -> (B, H, L, D) with .view where .transpose was meant,
so heads and positions are interleaved)."""
import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    B, H, L, D = query.shape
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                         is_causal=is_causal, scale=scale)
    merged = out.transpose(1, 2).contiguous()             # (B, L, H, D), as a fused kernel would hand it back
    return merged.view(B, H, L, D)                        # the bug: view, not .transpose(1, 2)
