"""Measurements of a model or kernel: taps and probes (``probes``), positional resolution (``resolution``), step
times and memory (``bench``) and the statistics they share (``stats``); the probes of what a user puts on trial
build on them (``harness.trial``). Runs models through ``harness.train.loop``; never trains a claim's arms itself."""
