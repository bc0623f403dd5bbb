"""Rendering only: the self-contained page (``html``), the findings in words (``findings``), figures (``plots``) and
the page's browser check (``browser``). Reads records (``harness.record``), never torch.

``python -m harness.report`` rebuilds the page from a results file; ``compare`` and ``findings`` are its
subcommands (``harness.report.html.main``)."""
