"""A claim's procedure over seeds and rates: train, measure, return frames. The shared sweep of C3, C4 and R1
(``sweeps``), rate tuning on held-out data (``tuning``), and the procedures owned by one claim, named as its own:
``transduction`` and ``corpus`` (C1's), ``multihead`` (C5's). Returns data to the claim module; writes no evidence
and draws no figure."""
