"""What a user puts on trial, and the probes that read it: their attention kernel (``kernel``, ``--attention``;
its probes ``kernel_probes``), their model (``model``, ``--model`` or ``--model-config``: resolved, checked, built
and pre-flighted; what the claims read of it, ``model_reads``; its tap and probes ``model_probes``) and trained
weights for that model (``checkpoint``, ``--model-weights``; its per-head readings ``checkpoint_probes``; several
saves of one run and a saved init, ``checkpoint_series``).

Imports nothing here, so that ``kernel``, a leaf every layer may import, stays one. The layers (pyproject.toml):
``checkpoint_series`` over ``checkpoint`` over ``model_reads`` (beside ``harness.study``) over ``model`` (which the study never imports) over
``checkpoint_probes`` over ``kernel_probes`` and ``model_probes``, over ``harness.measure``."""
