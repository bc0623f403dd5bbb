"""A claim's record and its judgement: evidence, decision rules, firmness, verdicts, results.json and the gate.

Pure Python, numpy and scipy: it never imports torch (an import-linter contract), so a results file can be judged,
gated and rendered where torch is not installed. Every other layer may import it; it imports none of them."""
