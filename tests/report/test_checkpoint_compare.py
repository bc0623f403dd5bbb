"""compare of two checkpoint reads (issue 55, item 10), torch-free: the model named by its config's content, and
each layer's readings old -> new, on the issue's numbers (logit std 0.05 -> 7, saturation 0 -> 27%)."""
from harness.report import checkpoint_compare as cc


def _record(spec, sha, rows, init=None):
    model = {"spec": spec, "class": "transformers.LlamaModel", "config_sha256": sha,
             "weights": {"path": f"/runs/{spec}.pt", "init": init or {"source": "random", "seed": 0}}}
    return {"model": model, "claims": {"Q3": {"tables": {"checkpoint_readings": rows}}}}


def _rows(std, saturated, entropy):
    """Two heads a layer whose scaled logit std is ``std`` times 1/2 and 2 (geometric mean ``std``)."""
    return [dict(which=w, layer=layer, head=h, logit_std=s * f, saturated_rows=saturated, entropy_ratio=entropy,
                 sink_mass=0.1, independence_ratio=1.0)
            for w, s in (("checkpoint", std), ("init", 0.05)) for layer in (0, 1) for h, f in ((0, 0.5), (1, 2.0))]


def test_the_same_config_in_two_folders_is_one_model_and_another_config_is_not():
    a = _record("config /runs/init/config.json", "ab" * 32, [])
    b = _record("config /runs/trained/config.json", "ab" * 32, [])
    assert cc.model_mismatch(a, b) is None
    c = _record("config /runs/trained/config.json", "cd" * 32, [])
    assert cc.model_mismatch(a, c) == ("different models judged: config /runs/init/config.json (config sha256 "
                                       "abababababab) against config /runs/trained/config.json (config sha256 "
                                       "cdcdcdcdcdcd); verdicts are not comparable")
    assert cc.model_mismatch({}, {}) is None
    assert cc.model_mismatch({}, a).startswith("different models judged: this project's own model against config")


def test_each_layer_moves_old_to_new_with_the_logit_stds_factor():
    old = _record("init", "ab" * 32, _rows(0.05, 0.0, 0.99))
    new = _record("trained", "ab" * 32, _rows(7.0, 0.27, 0.41),
                  init={"source": "saved", "path": "/runs/init.pt"})
    lines = cc.checkpoint_moves(old, new)
    assert "old weights /runs/init.pt (at init: random draw (seed 0))" in lines[0]
    assert "new weights /runs/trained.pt (at init: saved init /runs/init.pt)" in lines[0]
    assert lines[1].split() == ["layer", "scaled", "logit", "std", "saturated", "rows", "entropy/ln", "n",
                                "first-key", "weight", "indep.", "ratio"]
    for layer, line in zip((0, 1), lines[2:]):
        assert line.split() == [str(layer), "0.05", "->", "7", "(x140)", "0.0%", "->", "27.0%", "0.99", "->", "0.41",
                                "0.10", "->", "0.10", "1.00", "->", "1.00"]
    assert cc.checkpoint_moves(old, {"claims": {}}) == []
