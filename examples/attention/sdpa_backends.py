"""Correct: PyTorch's SDPA held to one backend (flash, memory-efficient, math), built by a factory:
``--attention examples.attention.sdpa_backends:flash --attention-factory`` (scripts/gpu_check.sh runs all three)."""
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def _on(backend):
    def attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                                  is_causal=is_causal, scale=scale)
    return attention


def flash():
    return _on(SDPBackend.FLASH_ATTENTION)


def efficient():
    return _on(SDPBackend.EFFICIENT_ATTENTION)


def math():
    return _on(SDPBackend.MATH)
