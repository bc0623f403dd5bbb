"""nanoGPT's ``model.py`` (https://github.com/karpathy/nanoGPT), its model code as upstream writes it (issue 65, item
5): the trial must read this ``GPT`` unmodified, called as ``forward(idx, targets=None)``, and its ``{'model': ...}``
saves. ``build_model(**overrides)`` is the builder a user writes beside it: ``GPT(GPTConfig(**overrides))``.

nanoGPT is MIT licensed: Copyright (c) 2022 Andrej Karpathy. The MIT licence's terms: permission is granted to use,
copy, modify, merge, publish, distribute, sublicense and sell copies, provided that the copyright notice and this
permission notice are included; the software is provided "as is", without warranty of any kind.
"""
from tests.model_trial.nanogpt_upstream.model import GPT, GPTConfig


def build_model(**overrides):
    """The builder a user writes for nanoGPT (``--model pkg:build_model``): a ``GPTConfig`` with the overrides."""
    return GPT(GPTConfig(**overrides))
