"""Bug, 1/sqrt(64) hard-coded (gemma-triton-flash-attn issue 6: 1/sqrt(D) fixed where the model's scaling
differs): right at d_k = 64 with scale=None, wrong everywhere else."""
import torch.nn.functional as F


def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                          is_causal=is_causal, scale=0.125)
