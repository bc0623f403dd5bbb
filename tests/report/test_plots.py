"""harness.report.plots (issue 37): the matplotlib backend is set once, there, and the claim modules draw with its
``plt`` instead of choosing a backend themselves."""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_backend_is_agg_once_plots_is_imported():
    import matplotlib

    from harness.report import plots

    assert matplotlib.get_backend().lower() == "agg" and plots.plt.get_backend().lower() == "agg"


def test_no_claim_module_chooses_a_backend():
    users = [p.name for p in sorted((REPO / "claims").glob("test_*.py")) if "matplotlib.use(" in p.read_text()]
    assert users == [], f"set by harness.report.plots; import plt from there instead: {users}"


def test_the_shared_lr_figure_reads_tuned_choices_by_attribute():
    """No harness.study import (it brings torch into the report layer): any object with a Tuned's attributes."""
    from types import SimpleNamespace

    from harness.report.plots import figure_loss_vs_lr

    t = SimpleNamespace(arm="a", d_k=8, lr=2e-3, grid=(1e-3, 2e-3, 4e-3), mean_loss=(1.0, 0.5, float("inf")),
                        setting="d_k")
    fig = figure_loss_vs_lr({("a", 8): t}, "which rate?")
    assert [ax.get_title() for ax in fig.axes] == ["d_k = 8"]
