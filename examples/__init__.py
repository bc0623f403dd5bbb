"""Examples shipped with attention-claims (importable from the repository root)."""
