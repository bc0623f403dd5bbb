"""A claim's procedure over seeds and rates: train, measure, return frames. The shared sweep of C3, C4, R1, R3 and
the kernel trial (``sweeps``), rate tuning on held-out data (``tuning``), and the procedures owned by one claim,
named as its own: ``transduction`` and ``corpus`` (C1's), ``path_length`` (C2's), ``scaling`` (C4's),
``multihead`` (C5's), ``default_scale`` (R1's). Returns data to the claim module, which declares the criteria,
records the evidence and draws the figures; writes no evidence and draws no figure."""
