"""Bug, the mask dropped (transformers PR 45811: an attention function registered without a mask function gets
mask=None, so padding and causal masks are silently lost); is_causal still works."""
import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    return F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=dropout_p,
                                          is_causal=is_causal, scale=scale)
