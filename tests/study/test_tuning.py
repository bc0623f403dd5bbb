"""harness.study.tuning (issue 17): tuning seeds are disjoint, the grid is geometric, the rate with the lowest held-out
loss is chosen, an edge is named, and a diverged run never wins."""
import math

import pandas as pd
import pytest

from harness.study import tuning


def test_tuning_seeds_are_disjoint_from_every_evaluation_seed_set():
    ev = [0, 1, 2]
    tune = tuning.tuning_seeds(ev, 2)
    assert tune == [tuning.TUNING_SEED_OFFSET, tuning.TUNING_SEED_OFFSET + 1]
    for master in range(0, 500):
        assert not set(tune) & {master * 1000 + i for i in range(25)}
    assert len(tuning.tuning_seeds([7], 3)) == 3
    with pytest.raises(ValueError):
        tuning.tuning_seeds(ev, 0)


def test_grid_is_geometric_around_the_base():
    g = tuning.lr_grid(1e-3, 3, 4.0)
    assert g == pytest.approx([5e-4, 1e-3, 2e-3])
    g5 = tuning.lr_grid(1e-3, 5, 16.0)
    assert g5[-1] / g5[0] == pytest.approx(16.0) and g5[2] == pytest.approx(1e-3)
    with pytest.raises(ValueError):
        tuning.lr_grid(1e-3, 2, 4.0)


def test_the_lowest_loss_is_chosen_and_an_edge_is_named(monkeypatch):
    """A fake sweep: loss is a bowl in log lr whose bottom is 'a''s middle rate and beyond 'b''s highest; the
    lowest rate diverges for 'a' (it must never be chosen, even with a low loss)."""
    def fake_sweep(arms, d_ks, block, seeds, device="cpu", progress=None):
        lr = block["train"]["lr"]
        rows = []
        for v in arms:
            for d_k in d_ks:
                for s in seeds:
                    best = 1e-3 if v == "a" else 1.0
                    loss = (math.log(lr / best)) ** 2 + 0.01 * s
                    diverged = v == "a" and lr < 6e-4
                    rows.append({"arm": v, "d_k": d_k, "seed": s, "final_loss": 0.0 if diverged else loss,
                                 "diverged": diverged})
        return pd.DataFrame(rows).assign(val_loss=lambda d: d.final_loss)   # tuning reads the validation part

    monkeypatch.setattr(tuning, "attention_sweep", fake_sweep)
    grid = tuning.lr_grid(1e-3, 3, 4.0)
    table, chosen = tuning.tune({"a": {}, "b": {}}, [8], {"train": {"lr": 1e-3}}, [500_000, 500_001], grid)
    assert chosen[("a", 8)].lr == pytest.approx(1e-3) and chosen[("a", 8)].edge is None
    assert chosen[("a", 8)].edge_reason == ""
    b = chosen[("b", 8)]
    assert b.lr == pytest.approx(2e-3) and b.edge == "highest"
    assert "b at d_k=8" in b.edge_reason and "highest" in b.edge_reason and "widen the grid" in b.edge_reason
    assert set(table["lr"]) == set(grid) and len(table) == 2 * 3 * 2
    t = tuning.tuned_table(chosen)
    assert t[t.chosen].set_index("arm")["edge"].to_dict() == {"a": "", "b": "highest"}
    evaluated = tuning.evaluate_at_tuned({"a": {}, "b": {}}, [8], {"train": {"lr": 1e-3}}, [0, 1], chosen)
    assert evaluated.groupby("arm")["lr"].first().to_dict() == pytest.approx({"a": 1e-3, "b": 2e-3})
    assert evaluated.groupby("arm")["lr_edge"].first().to_dict() == {"a": "", "b": "highest"}


def test_tuned_sweep_centres_the_grid_on_the_shared_rate_and_names_the_task(monkeypatch):
    def fake_sweep(arms, d_ks, block, seeds, device="cpu", progress=None):
        lr = block["train"]["lr"]
        return pd.DataFrame([{"arm": v, "d_k": d, "seed": s, "final_loss": (math.log(lr / 1e-3)) ** 2 + 0.01 * s,
                              "final_accuracy": 0.5, "diverged": False, "cached": False}
                             for v in arms for d in d_ks for s in seeds]).assign(val_loss=lambda d: d.final_loss)

    monkeypatch.setattr(tuning, "attention_sweep", fake_sweep)
    block = {"task": {"name": "delayed_copy"}, "train": {"lr": 1e-3}}
    s = tuning.tuned_sweep({"a": {}}, [8], block, [0, 1], {"points": 3, "span": 16.0, "seeds": 2})
    assert s.task == "delayed_copy" and s.tuned[("a", 8)].lr == 1e-3 and s.tuned[("a", 8)].edge is None
    assert set(s.tuning.seed) == {tuning.TUNING_SEED_OFFSET, tuning.TUNING_SEED_OFFSET + 1} and set(s.runs.seed) == {0, 1}
    assert list(s.cell("a", 8)) == pytest.approx([0.0, 0.01])
    assert s.invalid(("a", 8)) == "" and len(s.fixed_lr()) == 1
    with pytest.raises(ValueError):
        tuning.tuned_sweep({"a": {}}, [8], block, [0, 1], {"points": 4, "span": 16.0, "seeds": 2})
    edged = tuning.TunedSweep.from_runs("kv_lookup", s.runs, edge={("a", 8)})
    assert "kv_lookup: a at d_k=8" in edged.invalid(("a", 8))
    merged = tuning.merge(s, tuning.tuned_sweep({"b": {}}, [2], block, [0, 1], {"points": 3, "span": 4.0,
                                                                                 "seeds": 2}))
    assert set(merged.tuned) == {("a", 8), ("b", 2)}
    # issue 17's metric names, returned for the claim to record (tuning writes no evidence)
    assert tuning.tuned_metrics("C3", s, {"a": "arm_a"}) == {"tuned_lr/C3/arm_a/8/delayed_copy": 1e-3,
                                                             "tuned_loss/C3/arm_a/8/delayed_copy": pytest.approx(0.005)}


def test_sweep_tasks_reads_the_first_and_second_task():
    block = {"sweep": {"task": {"name": "kv_lookup"}}, "sweep_d_ks": [8, 256], "small_d_ks": [2, 8],
             "task2": {"sweep": {"task": {"name": "delayed_copy"}}, "sweep_d_ks": [8]}}
    tasks = tuning.sweep_tasks(block)
    assert list(tasks) == ["kv_lookup", "delayed_copy"]
    assert tasks["kv_lookup"]["small_d_ks"] == [2, 8] and tasks["delayed_copy"]["d_ks"] == [8]


def test_an_edge_choice_extends_the_grid_on_the_tuning_seeds_until_interior_or_the_cap(monkeypatch):
    """'b''s bowl bottoms at 1.0: two extensions past the top (2e-3 -> 4e-3 -> 8e-3) leave it at the edge still,
    named; 'c''s bottoms at 2.5e-4, one step below the grid: one extension makes it interior. Only the tuning
    seeds train (the evaluation seeds never decide the grid)."""
    trained = []

    def fake_sweep(arms, d_ks, block, seeds, device="cpu", progress=None):
        lr = block["train"]["lr"]
        trained.append((tuple(arms), lr, tuple(seeds)))
        best = {"b": 1.0, "c": 2.5e-4}
        return pd.DataFrame([{"arm": v, "d_k": d, "seed": s, "final_loss": (math.log(lr / best[v])) ** 2,
                              "diverged": False} for v in arms for d in d_ks for s in seeds]
                            ).assign(val_loss=lambda d: d.final_loss)

    monkeypatch.setattr(tuning, "attention_sweep", fake_sweep)
    grid = tuning.lr_grid(1e-3, 3, 4.0)
    table, chosen = tuning.tune({"b": {}, "c": {}}, [8], {"train": {"lr": 1e-3}}, [500_000], grid, extend=2)
    b, c = chosen[("b", 8)], chosen[("c", 8)]
    assert b.grid == pytest.approx((5e-4, 1e-3, 2e-3, 4e-3, 8e-3)) and b.lr == pytest.approx(8e-3)
    assert b.edge == "highest" and "widen the grid" in b.edge_reason
    assert c.lr == pytest.approx(2.5e-4) and c.grid[0] == pytest.approx(1.25e-4) and c.edge is None
    assert {seeds for _, _, seeds in trained} == {(500_000,)}
    assert len(table) == 5 + 5     # b: 3 + 2 extensions; c: 3 + 2 (2.5e-4 was an edge too, then 1.25e-4 is worse)
    _, no_ext = tuning.tune({"b": {}}, [8], {"train": {"lr": 1e-3}}, [500_000], grid)
    assert no_ext[("b", 8)].grid == pytest.approx(tuple(grid))


def test_choose_rate_over_any_training_function():
    """choose_rate (for arms outside the sweep, e.g. C1's): the lowest mean of the first score, ties broken by the
    next; a NaN (diverged) run never wins; the edge rule is Tuned's, and an arm without d_k is named alone."""
    steps = {1e-3: (500, 400), 2e-3: (200, 250), 4e-3: (250, 200), 8e-3: (1000, 1000)}   # 2e-3 and 4e-3 tie
    loss = {1e-3: 0.3, 2e-3: 0.2, 4e-3: 0.1, 8e-3: math.nan}
    calls = []

    def train_and_score(lr, seed):
        calls.append((lr, seed))
        return {"steps": steps[lr][seed - 500_000], "loss": loss[lr], "time_s": 1.0}

    table, t = tuning.choose_rate("lstm", [8e-3, 1e-3, 4e-3, 2e-3], [500_000, 500_001], train_and_score,
                                  by=("steps", "loss"))
    assert t.lr == 4e-3 and t.edge is None and t.score == "steps" and t.d_k is None   # the tie, on loss
    assert t.grid == (1e-3, 2e-3, 4e-3, 8e-3) and t.mean_loss == (450.0, 225.0, 225.0, 1000.0)
    assert len(table) == 8 == len(calls) and {"arm", "lr", "seed", "steps", "loss", "time_s"} <= set(table)
    _, t = tuning.choose_rate("lstm", [1e-3, 2e-3], [500_000, 500_001], train_and_score, by=("loss",))
    assert t.lr == 2e-3 and t.edge == "highest"
    assert t.edge_reason.startswith("lstm: its tuned learning rate 0.002 is the grid's highest point")
    # a diverged run at the best-looking rate: its mean is DIVERGED_LOSS, never chosen
    _, t = tuning.choose_rate("x", [1e-3, 4e-3, 8e-3], [500_000], lambda lr, s: {"loss": loss[lr]})
    assert t.lr == 4e-3 and t.mean_loss[-1] == tuning.DIVERGED_LOSS
    with pytest.raises(KeyError, match="steps"):
        tuning.choose_rate("x", [1e-3, 2e-3, 4e-3], [0], lambda lr, s: {"loss": 1.0}, by=("steps",))


def test_choose_rate_extends_an_edge_for_any_training_function():
    """The extension is choose_rate's, so arms outside the sweep (C1, C5) get the same rule when their profile
    asks for it: a bowl bottoming at 1.6e-2, beyond the grid's top, is found one step out."""
    score = lambda lr, seed: {"loss": math.log(lr / 1.6e-2) ** 2}  # noqa: E731
    _, t = tuning.choose_rate("lstm", [1e-3, 2e-3, 4e-3], [500_000], score, extend=3)
    assert t.lr == pytest.approx(1.6e-2) and t.edge is None and t.grid[-1] == pytest.approx(3.2e-2)
    _, capped = tuning.choose_rate("lstm", [1e-3, 2e-3, 4e-3], [500_000], score)
    assert capped.edge == "highest" and capped.grid == (1e-3, 2e-3, 4e-3)


def test_tuning_seeds_are_disjoint_from_every_master_seeds_seeds_by_construction():
    """Issue 26: no --master-seed the plugin accepts can produce a seed that is some run's tuning seed."""
    from harness import settings
    from harness.study import tuning

    top = settings.derive_seeds(10 ** 6, settings.MAX_SEEDS)[-1]          # the largest evaluation seed possible
    assert top < tuning.TUNING_SEED_OFFSET
    assert min(tuning.tuning_seeds([0], 3)) >= tuning.TUNING_SEED_OFFSET
    assert max(tuning.tuning_seeds(settings.derive_seeds(10 ** 6, 5), 7)) < 2 ** 32
    with pytest.raises(pytest.UsageError):
        settings._int_option("--master-seed", str(10 ** 6 + 1), 0, 10 ** 6)
    for m in (0, 1, 999, 10 ** 6):
        seeds = settings.derive_seeds(m, 5)
        assert all(t > top for t in tuning.tuning_seeds(seeds, 3))


def test_choose_rates_tables_and_figure_for_arms_without_a_d_k():
    """C1's shape (issue 26): named arms on their own grids, the tuning table with per-rate aggregates of the
    tuning runs, the fixed-rate view at the rates both grids share, and the figure with one panel per task."""
    best = {"a": 2e-3, "b": 4e-3}
    grids = {"a": [1e-3, 2e-3, 4e-3], "b": [2e-3, 4e-3, 8e-3]}
    runs, tuned = tuning.choose_rates(grids, grids.__getitem__, [10, 11],
                                      lambda arm, lr, seed: {"loss": abs(math.log2(lr / best[arm])) + seed / 100,
                                                             "steps": 100 * lr / best[arm]}, by=("loss",))
    assert {a: t.lr for a, t in tuned.items()} == best and len(runs) == 12
    table = tuning.tuned_table(tuned, runs, {"steps": ("steps", "mean"), "n": ("seed", "size")})
    assert table.chosen.sum() == 2 and (table.n == 2).all()
    assert table[table.chosen].steps.tolist() == pytest.approx([100.0, 100.0])
    assert tuning.tuned_table(tuned).columns.tolist() == ["arm", "d_k", "lr", "tuning_mean_loss", "chosen", "edge"]
    fixed = tuning.fixed_rate_table(runs, tuned, ["loss", "steps"])
    assert fixed.lr.tolist() == [2e-3, 2e-3, 4e-3, 4e-3] and fixed.arm.tolist() == ["a", "b", "a", "b"]
    assert fixed.tuned_rate.tolist() == [True, False, False, True] and (fixed.seeds == "tuning").all()
    edged = tuning.Tuned("b", None, 8e-3, (2e-3, 4e-3, 8e-3), (3.0, 2.0, 1.0))
    assert tuning.edge_reasons(tuned.values()) == ""
    assert "b: its tuned learning rate 0.008 is the grid's highest" in tuning.edge_reasons([tuned["a"], edged])
    from harness.report.plots import figure_loss_vs_lr_by_task

    fig = figure_loss_vs_lr_by_task({"reverse": tuned, "sort": tuned}, "which rate?")
    assert [ax.get_title() for ax in fig.axes] == ["reverse", "sort"]


def test_a_tuned_arm_hands_its_rate_choice_to_the_measurement_for_firmness():
    """Issue 47, mechanism 3: ``TunedSweep.rates`` gives the grid's tuning means of the validation loss (a
    diverged run: inf, never chosen) and of the measured quantity, the SDs pooled over the evaluation seeds and
    the tuning seeds' spread, and ``paired`` attaches both arms' (b with sign -1)."""
    from harness.study.tuning import TunedSweep, Tuned
    grid = (1e-3, 2e-3, 4e-3)
    tuning_rows = [{"arm": "x", "d_k": 8, "lr": lr, "seed": s, "val_loss": v, "final_loss": v + 0.1,
                    "diverged": lr == 4e-3 and s == 1}
                   for lr, vs in zip(grid, ([1.2, 1.4], [1.0, 1.1], [2.0, 9.0])) for s, v in zip((0, 1), vs)]
    runs = [{"arm": a, "d_k": 8, "seed": s, "val_loss": 1.0 + 0.1 * s, "final_loss": 1.1 + 0.1 * s + off,
             "lr": 2e-3} for a, off in (("x", 0.0), ("y", 0.5)) for s in range(3)]
    tuned = {("x", 8): Tuned("x", 8, 2e-3, grid, (1.3, 1.05, float("inf")), n=2),
             ("y", 8): Tuned("y", 8, 2e-3, grid, (1.3, 1.05, 1.5), n=2)}
    tuning_rows += [{**r, "arm": "y"} for r in tuning_rows]
    s = TunedSweep("kv", pd.DataFrame(tuning_rows), tuned, pd.DataFrame(runs), 2e-3)
    r = s.rates("x", 8)
    assert r["key"] == "kv/x/d_k=8" and r["chosen"] == 2e-3 and r["n_tuning"] == 2 and r["sign"] == 1.0
    assert r["choice"][:2] == pytest.approx([1.3, 1.05]) and r["choice"][2] == float("inf")
    assert r["value"] == pytest.approx([1.4, 1.15, 5.6])
    # pooled: eval seeds (1.0, 1.1, 1.2: 2 df) and the finite tuning pairs at 1e-3 and 2e-3 (1 df each)
    ss = 0.02 + 0.1 ** 2 / 2 + 0.2 ** 2 / 2
    assert r["df"] == 4 and r["sd"] == pytest.approx(math.sqrt(ss / 4))
    m = s.paired("y", "x", 8)
    assert [e["key"] for e in m["rates"]] == ["kv/y/d_k=8", "kv/x/d_k=8"] and [e["sign"] for e in m["rates"]] == [1, -1]
