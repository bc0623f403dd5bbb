"""A nanoGPT-style decoder for the tests (issue 48, item 9): its blocks call ``F.scaled_dot_product_attention`` with
``is_causal=True`` and nothing in it has an ``is_causal`` attribute, as in nanoGPT. ``causal=False`` plants the bug
nanoGPT users make: the flag forgotten."""
import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, flag: bool):
        super().__init__()
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.n_head, self.flag = n_head, flag

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.flag)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class GPT(nn.Module):
    def __init__(self, vocab_size: int = 64, n_embd: int = 32, n_head: int = 4, n_layer: int = 2, flags=(True, True)):
        super().__init__()
        self.vocab_size = vocab_size
        self.wte, self.wpe = nn.Embedding(vocab_size, n_embd), nn.Embedding(64, n_embd)
        self.ln = nn.ModuleList(nn.LayerNorm(n_embd) for _ in range(n_layer))
        self.attn = nn.ModuleList(CausalSelfAttention(n_embd, n_head, flags[i % len(flags)]) for i in range(n_layer))

    def forward(self, input_ids):
        x = self.wte(input_ids) + self.wpe(torch.arange(input_ids.shape[1]))
        for ln, attn in zip(self.ln, self.attn):
            x = x + attn(ln(x))
        return x


def build_model(n_layer: int = 2):
    return GPT(n_layer=n_layer)


def build_model_one_layer_forgets(n_layer: int = 2):
    """One block of two passes is_causal=False: the other still says the model is causal, and M0 catches the leak."""
    return GPT(n_layer=n_layer, flags=(True, False))


def build_model_forgets(n_layer: int = 2):
    """No block passes is_causal=True: nothing says the model is causal."""
    return GPT(n_layer=n_layer, flags=(False,))
