"""Measurements of a model or kernel: taps and probes (``probes``), positional resolution (``resolution``), step
times and memory (``bench``), the kernel trial's probes (``kernel_probes``) and the statistics they share
(``stats``). Runs models through ``harness.train.loop``; never trains a claim's arms itself."""
