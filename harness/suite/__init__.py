"""Commands about the suite itself: the fault matrix (``python -m harness.suite.sensitivity``) and the firmness
calibration (``python -m harness.suite.calibration``)."""
