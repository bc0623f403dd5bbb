"""The training loop: build a model for a task, train it at a rate and budget, evaluate it (``loop``).
Imports ``harness.data`` only."""
