"""harness/data/tasks.py: targets against brute-force references, disjoint splits, determinism, the corpus loader."""
import pytest
import torch

from harness.data import tasks
from harness.data import make_task
from harness.data import language
from harness.data.tasks import BOS, EOS, IGNORE_INDEX, N_SPECIAL, PAD

torch.set_num_threads(1)

SYNTHETIC = ["copy", "reverse", "sort", "kv_lookup", "multi_retrieval", "first_equals_last", "delayed_copy",
             "number_words_en", "number_words_de", "markov_lm"]


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def content(row):
    return [t for t in row.tolist() if t not in (PAD, BOS, EOS, IGNORE_INDEX)]


# ----------------------------------------------------------------------------- brute-force references
@pytest.mark.parametrize("op,ref", [("copy", lambda s: s), ("reverse", lambda s: s[::-1]), ("sort", sorted)])
def test_sequence_targets_brute_force(op, ref):
    task = make_task(op, vocab=20, min_len=3, max_len=9)
    b = task.train_batch(gen(), 300)
    lengths = set()
    for src, tin, tout in zip(b.src, b.tgt_in, b.tgt_out):
        s = content(src)
        lengths.add(len(s))
        assert content(tout) == list(ref(s))
        n = len(s)
        assert tout[n] == EOS and (tout[n + 1:] == IGNORE_INDEX).all()
        assert tin[0] == BOS and tin[1:n + 1].tolist() == tout[:n].tolist()
    assert lengths == set(range(3, 10))
    assert (b.src_pad_mask == (b.src == PAD)).all()


def test_kv_lookup_brute_force():
    for fmt in ("fused", "separate"):
        task = tasks.KeyValueLookup(n_pairs=6, n_keys=10, n_values=5, pair_format=fmt)
        b = task.train_batch(gen(1), 200)
        assert task.max_src_len == b.x.shape[1]
        for x, y in zip(b.x.tolist(), b.y.tolist()):
            assert y[:-1] == [IGNORE_INDEX] * (len(y) - 1)
            if fmt == "fused":
                pairs = [((t - N_SPECIAL) // 5, (t - N_SPECIAL) % 5) for t in x[:-1]]
                q = x[-1] - N_SPECIAL - 10 * 5
            else:
                pairs = [(x[i] - N_SPECIAL, x[i + 1] - N_SPECIAL - 10) for i in range(0, len(x) - 1, 2)]
                q = x[-1] - N_SPECIAL
            keys = [k for k, _ in pairs]
            assert len(set(keys)) == len(keys) and all(0 <= k < 10 for k in keys)
            assert y[-1] == dict(pairs)[q]
        assert max(b.x.max().item() + 1, 0) <= task.src_vocab


def test_multi_retrieval_brute_force():
    task = tasks.MultiPositionRetrieval(n_marked=3, seq_len=10, vocab=7)
    b = task.train_batch(gen(2), 200)
    assert b.y.shape == (200, 11, 3) and task.out_dim == 21
    for x, y, pos in zip(b.x.tolist(), b.y.tolist(), b.meta["marked_positions"].tolist()):
        assert x[-1] == task.query_token
        marks = {(t - N_SPECIAL) // 7: (i, (t - N_SPECIAL) % 7) for i, t in enumerate(x[:-1]) if (t - N_SPECIAL) >= 7}
        assert sorted(marks) == [1, 2, 3]
        assert y[-1] == [marks[j][1] for j in (1, 2, 3)]
        assert pos == [marks[j][0] for j in (1, 2, 3)]
        assert all(row == [IGNORE_INDEX] * 3 for row in y[:-1])


def test_multi_retrieval_position_binding():
    """binding="position" (C5): slot j is a fixed, evenly spaced position and tokens carry no mark."""
    task = tasks.MultiPositionRetrieval(n_marked=4, seq_len=16, vocab=7, binding="position")
    b = task.train_batch(gen(5), 300)
    assert b.y.shape == (300, 17, 4) and task.out_dim == 28 and task.src_vocab == N_SPECIAL + 7 + 1
    assert (b.meta["marked_positions"] == torch.tensor([2, 6, 10, 14])).all()
    assert (b.x[:, -1] == task.query_token).all() and (b.x[:, :-1] < N_SPECIAL + 7).all()
    assert (b.y[:, -1] == b.x[:, [2, 6, 10, 14]] - N_SPECIAL).all()
    assert (b.y[:, :-1] == IGNORE_INDEX).all()
    assert task.params()["binding"] == "position"
    assert tasks.MultiPositionRetrieval(n_marked=2, seq_len=16, binding="position").heldout(8).meta[
        "marked_positions"][0].tolist() == [4, 12]
    with pytest.raises(ValueError, match="binding"):
        tasks.MultiPositionRetrieval(binding="mark")


@pytest.mark.parametrize("binding", ["token", "position"])
def test_multi_retrieval_classify_kind_is_the_query_row(binding):
    """kind="classify" (C5): the same draws, y (B, M) = the tagging task's targets at the query."""
    tag = tasks.MultiPositionRetrieval(n_marked=4, seq_len=16, vocab=7, binding=binding)
    cls = tasks.MultiPositionRetrieval(n_marked=4, seq_len=16, vocab=7, binding=binding, kind="classify")
    a, b = tag.train_batch(gen(3), 50), cls.train_batch(gen(3), 50)
    assert cls.kind == "classify" and b.kind == "classify" and b.y.shape == (50, 4) and cls.out_dim == tag.out_dim
    assert torch.equal(a.x, b.x) and torch.equal(a.y[:, -1], b.y)
    assert torch.equal(a.meta["marked_positions"], b.meta["marked_positions"])
    assert torch.equal(tag.heldout(20).x, cls.heldout(20).x) and cls.params()["kind"] == "classify"
    with pytest.raises(ValueError, match="kind"):
        tasks.MultiPositionRetrieval(kind="seq2seq")


def test_markov_lm_is_next_token_prediction_on_a_fixed_chain():
    """markov_lm (Q2): x = BOS + text[:-1], y = text; every step follows the fixed chain; halves repeat."""
    task = tasks.MarkovLM(vocab=12, seq_len=20, branching=3)
    b = task.train_batch(gen(6), 400)
    assert b.x.shape == b.y.shape == (400, 20) and task.src_vocab == N_SPECIAL + 12 and task.out_dim == 12
    assert (b.x[:, 0] == BOS).all() and (b.x[:, 1:] == b.y[:, :-1] + N_SPECIAL).all()
    assert (b.y[:, :10] == b.y[:, 10:]).all()
    allowed = {(a, int(c)) for a in range(12) for c in task.successors[a]}
    assert all((int(p), int(q)) in allowed for row in b.y for p, q in zip(row[:9], row[1:10]))
    counts = torch.zeros(12, 12)
    for row in b.y:
        for p, q in zip(row[:9], row[1:10]):
            counts[p, q] += 1
    assert (counts > 0).sum(1).max() <= 3 and task.probs.sum(1).allclose(torch.ones(12))
    same = tasks.MarkovLM(vocab=12, seq_len=20, branching=3)
    assert torch.equal(same.successors, task.successors) and torch.equal(same.probs, task.probs)
    assert not torch.equal(tasks.MarkovLM(vocab=12, seq_len=20, branching=3, chain_seed=1).successors,
                           task.successors)
    free = tasks.MarkovLM(vocab=12, seq_len=21, branching=3, repeat=False).train_batch(gen(7), 50)
    assert free.y.shape == (50, 21) and not (free.y[:, :10] == free.y[:, 10:20]).all()
    with pytest.raises(ValueError, match="branching"):
        tasks.MarkovLM(vocab=4, branching=5)
    with pytest.raises(ValueError, match="even"):
        tasks.MarkovLM(seq_len=21)


def test_first_equals_last_and_delayed_copy():
    task = tasks.FirstEqualsLast(d=7, vocab=4)
    b = task.train_batch(gen(3), 2000)
    assert b.x.shape == (2000, 8) and b.y.shape == (2000,)
    assert (b.y == (b.x[:, 0] == b.x[:, 7]).long()).all()
    assert 0.45 < b.y.float().mean() < 0.55                         # balanced: chance is 0.5
    tag = tasks.FirstEqualsLast(d=7, vocab=4, kind="tagging").train_batch(gen(3), 50)
    assert (tag.y[:, :-1] == IGNORE_INDEX).all() and (tag.y[:, -1] == (tag.x[:, 0] == tag.x[:, -1]).long()).all()
    dc = tasks.DelayedCopy(d=5, vocab=6, n_out=4)
    b = dc.train_batch(gen(4), 100)
    for x, y in zip(b.x.tolist(), b.y.tolist()):
        assert y[:5] == [IGNORE_INDEX] * 5
        assert y[5:] == [t - N_SPECIAL for t in x[:4]]


# --------------------------------------------------------------------------------------- number words
EN_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
           "sixteen seventeen eighteen nineteen").split()
EN_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
DE_ONES = ("null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn "
           "sechzehn siebzehn achtzehn neunzehn").split()
DE_TENS = "_ _ zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig".split()


def en_reference(n):
    """Written independently of harness/data/tasks.py: recursive on the whole number."""
    if n < 20:
        return EN_ONES[n]
    if n < 100:
        return EN_TENS[n // 10] + ("-" + EN_ONES[n % 10] if n % 10 else "")
    if n < 1000:
        return EN_ONES[n // 100] + " hundred" + (" " + en_reference(n % 100) if n % 100 else "")
    return en_reference(n // 1000) + " thousand" + (" " + en_reference(n % 1000) if n % 1000 else "")


def de_reference(n):
    """German, string-built: 'ein' inside compounds, 'eins' only as the last word; 100 -> einhundert."""
    def under_1000(m, last):
        h, r = divmod(m, 100)
        s = ("ein" if h == 1 else DE_ONES[h]) + "hundert" if h else ""
        if r == 1:
            s += "eins" if last else "ein"
        elif r < 20 and r:
            s += DE_ONES[r]
        elif r:
            u = r % 10
            s += (("ein" if u == 1 else DE_ONES[u]) + "und" if u else "") + DE_TENS[r // 10]
        return s
    if n == 0:
        return "null"
    hi, lo = divmod(n, 1000)
    return (under_1000(hi, False) + "tausend" if hi else "") + (under_1000(lo, True) if lo else "")


KNOWN_DE = {0: "null", 1: "eins", 11: "elf", 16: "sechzehn", 17: "siebzehn", 21: "einundzwanzig",
            30: "dreißig", 31: "einunddreißig", 66: "sechsundsechzig", 77: "siebenundsiebzig",
            100: "einhundert", 101: "einhunderteins", 121: "einhunderteinundzwanzig", 200: "zweihundert",
            1000: "eintausend", 1001: "eintausendeins", 1100: "eintausendeinhundert",
            2021: "zweitausendeinundzwanzig", 9999: "neuntausendneunhundertneunundneunzig",
            21000: "einundzwanzigtausend", 100000: "einhunderttausend", 101001: "einhunderteintausendeins",
            999999: "neunhundertneunundneunzigtausendneunhundertneunundneunzig"}
KNOWN_EN = {0: "zero", 13: "thirteen", 21: "twenty-one", 100: "one hundred", 1001: "one thousand one",
            4794: "four thousand seven hundred ninety-four", 120000: "one hundred twenty thousand"}


def test_number_word_references_hand_checked():
    for n, w in KNOWN_DE.items():
        assert de_reference(n) == w
        assert language.german_number_text(language.german_number_tokens(n)) == w
    for n, w in KNOWN_EN.items():
        assert en_reference(n) == w
        assert language.english_number_text(language.english_number_tokens(n)) == w


def test_number_words_all_of_0_to_9999():
    de = make_task("number_words_de", max_n=9999)
    en = make_task("number_words_en", max_n=9999)
    ints = torch.arange(10000)
    b_de, b_en = de.batch_for(ints), en.batch_for(ints)
    for i in range(10000):
        assert de.detokenize(b_de.tgt_out[i]) == de_reference(i), i
        assert de.detokenize(b_de.src[i], side="src") == en_reference(i), i
        assert en.detokenize(b_en.tgt_out[i]) == en_reference(i), i
        assert en.detokenize(b_en.src[i], side="src") == str(i), i
    # reordering: the German unit comes before the tens, the English one after
    row = de.text_tokens(de.batch_for(torch.tensor([34])).tgt_out[0])
    assert row == "vier und dreißig"


def test_number_words_spot_check_to_999999():
    de = make_task("number_words_de", max_n=999_999)
    ints = torch.randint(0, 1_000_000, (1500,), generator=gen(5))
    ints = torch.cat([ints, torch.tensor(sorted(KNOWN_DE))])
    b = de.batch_for(ints)
    for i, n in enumerate(ints.tolist()):
        assert de.detokenize(b.tgt_out[i]) == de_reference(n), n
        assert de.detokenize(b.src[i], side="src") == en_reference(n), n
    assert b.tgt_out.shape[1] <= de.max_tgt_len and b.src.shape[1] <= de.max_src_len


def test_number_words_holds_out_integers():
    task = make_task("number_words_de", max_n=9999)
    tr, he = set(task.train_integers.tolist()), set(task.heldout_integers.tolist())
    assert not tr & he and tr | he == set(range(10000))
    assert 0.07 < len(he) / 10000 < 0.13
    seen = set(torch.cat([task.train_batch(gen(s), 512).meta["integers"] for s in range(10)]).tolist())
    assert seen <= tr
    held = task.heldout(400).meta["integers"].tolist()
    assert set(held) <= he and len(set(held)) == 400


# --------------------------------------------------------------------------------------------- splits
@pytest.mark.parametrize("name", SYNTHETIC)
def test_splits_disjoint(name):
    kw = {"d": 3, "vocab": 4} if name in ("first_equals_last", "delayed_copy") else {}
    task = make_task(name, **kw)
    train_rows = set()
    for s in range(8):
        b = task.train_batch(gen(s), 256)
        keys = task.split_keys(b)
        assert not tasks.heldout_mask(keys, task.heldout_fraction).any()
        train_rows |= {tuple(r) for r in keys.tolist()}
    held = task.heldout(300)
    hkeys = task.split_keys(held)
    assert tasks.heldout_mask(hkeys, task.heldout_fraction).all()
    assert not train_rows & {tuple(r) for r in hkeys.tolist()}


@pytest.mark.parametrize("name", SYNTHETIC)
def test_determinism_and_shapes(name):
    task = make_task(name)
    a, b = task.train_batch(gen(7), 32), task.train_batch(gen(7), 32)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
    assert not torch.equal(a.inputs, task.train_batch(gen(8), 32).inputs)
    assert task.heldout(50) is task.heldout(50)
    fresh = make_task(name).heldout(50)
    assert torch.equal(fresh.inputs, task.heldout(50).inputs)
    assert len(a) == 32 and a.inputs.max() < task.src_vocab and a.inputs.min() >= 0
    t = a.targets[a.targets != IGNORE_INDEX]
    assert t.min() >= 0 and t.max() < task.tgt_vocab
    assert a.inputs.shape[1] <= task.max_len
    assert a.kind == task.kind
    assert len(a[:5]) == 5 and a.to("cpu").kind == a.kind


def test_heldout_fraction_is_respected():
    task = make_task("reverse", heldout_fraction=0.3)
    keys = task.split_keys(task.train_batch(gen(0), 4000))
    raw = task._sample(gen(1), 20000)
    frac = tasks.heldout_mask(raw["x"], 0.3).float().mean().item()
    assert 0.27 < frac < 0.33 and keys.shape[0] == 4000


def test_bad_options_name_the_field():
    with pytest.raises(ValueError, match="unknown task"):
        make_task("translate")
    with pytest.raises(ValueError, match="max_len"):
        make_task("reverse", min_len=8, max_len=4)
    with pytest.raises(ValueError, match="n_keys"):
        tasks.KeyValueLookup(n_pairs=8, n_keys=4)
    with pytest.raises(ValueError, match="max_n"):
        make_task("number_words_de", max_n=10**7)
    with pytest.raises(ValueError, match="heldout_fraction"):
        make_task("sort", heldout_fraction=0.0)
    with pytest.raises(ValueError, match="pair_format"):
        tasks.KeyValueLookup(pair_format="interleaved")
    with pytest.raises(ValueError, match="n_marked"):
        tasks.MultiPositionRetrieval(n_marked=20, seq_len=10)
    with pytest.raises(ValueError, match="reverse"):
        make_task("reverse", colour="red")


# ----------------------------------------------------------------------------------- parallel corpus
SRC = ["the cat sat", "a dog ran", "the dog sat on the mat", "cats like fish, dogs like bones", "where is the cat"]
TGT = ["die katze saß", "ein hund rannte", "der hund saß auf der matte", "katzen mögen fisch, hunde mögen knochen",
       "wo ist die katze"]
EN_W = "red green blue black white grey pink brown gold teal plum".split()
DE_W = "rot grün blau schwarz weiß grau rosa braun gold türkis pflaume".split()


def corpus_pairs(n=400):
    """Distinct lines in ordinary orthography; every word recurs, so held-out lines have no unknown tokens."""
    out = []
    for i in range(n):
        a, b, end = i % 11, (i // 11) % 11, ".!?"[i % 3]
        out.append((f"{SRC[i % 5]} {EN_W[a]} {EN_W[b]}{end}", f"{TGT[i % 5]} {DE_W[a]} {DE_W[b]}{end}"))
    return out


def test_parallel_corpus_from_files_and_tsv(tmp_path):
    pairs = corpus_pairs()
    (tmp_path / "train.en").write_text("\n".join(s for s, _ in pairs) + "\n", encoding="utf-8")
    (tmp_path / "train.de").write_text("\n".join(t for _, t in pairs) + "\n", encoding="utf-8")
    (tmp_path / "train.tsv").write_text("\n".join(f"{s}\t{t}" for s, t in pairs) + "\n", encoding="utf-8")
    a = language.ParallelCorpus.from_files(tmp_path / "train.en", tmp_path / "train.de", heldout_fraction=0.1)
    b = language.ParallelCorpus.from_tsv(tmp_path / "train.tsv", heldout_fraction=0.1)
    assert a.src_vocab == b.src_vocab and torch.equal(a.heldout(20).src, b.heldout(20).src)
    assert a.kind == "seq2seq" and 20 < len(a.heldout_index) < 70
    held = a.heldout(len(a.heldout_index))
    # round trip: detokenised targets equal the raw lines (every held-out token also occurs in training here)
    refs = a.references(held)
    for i in range(5):
        assert a.detokenize(held.tgt_out[i]) == refs[i]
        assert refs[i] == pairs[held.meta["index"][i].item()][1]
    assert "," in a.tgt_vocab_obj.stoi and "saß" in a.tgt_vocab_obj.stoi
    # disjoint: no held-out source line is drawn for training
    held_src = {pairs[i][0] for i in held.meta["index"].tolist()}
    train = a.train_batch(gen(0), 1000)
    assert not held_src & {pairs[i][0] for i in train.meta["index"].tolist()}
    assert train.tgt_out.shape[1] <= a.max_tgt_len
    assert torch.equal(a.train_batch(gen(0), 1000).src, train.src)


def test_parallel_corpus_vocab_from_training_split_only():
    rare = [(f"word{i}", f"wort{i}") for i in range(60)]        # each word occurs in exactly one line
    c = language.ParallelCorpus(corpus_pairs(200) + rare, heldout_fraction=0.2)
    held_rows = [i - 200 for i in c.heldout_index.tolist() if i >= 200]
    assert 0 < len(held_rows) < 60
    for i in range(60):
        assert (f"word{i}" in c.src_vocab_obj.stoi) == (i not in held_rows)
    held = c.heldout(len(c.heldout_index))
    row = held.meta["index"].tolist().index(200 + held_rows[0])
    assert held.src[row, 0].item() == tasks.UNK and held.tgt_out[row, 0].item() == tasks.UNK


def test_parallel_corpus_errors(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("eins\n", encoding="utf-8")
    with pytest.raises(ValueError, match="aligned"):
        language.ParallelCorpus.from_files(tmp_path / "a.txt", tmp_path / "b.txt")
    (tmp_path / "bad.tsv").write_text("one\teins\ntwo zwei\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv:2"):
        language.ParallelCorpus.from_tsv(tmp_path / "bad.tsv")
    with pytest.raises(ValueError, match="max_len"):
        language.ParallelCorpus(corpus_pairs(50), max_len=0)
    long = language.ParallelCorpus(corpus_pairs(300) + [("x " * 200, "y")], max_len=50)
    assert long.n_dropped == 1


def test_tokenizer_round_trip():
    tok = language.SimpleTokenizer()
    assert tok.tokenize("Hello, world! (It's 3.5)") == ["Hello", ",", "world", "!", "(", "It", "'", "s", "3", ".",
                                                        "5", ")"]
    assert tok.detokenize(tok.tokenize("Hello, world!")) == "Hello, world!"
    assert language.SimpleTokenizer(lowercase=True).tokenize("ABC def") == ["abc", "def"]


def test_generated_parallel_corpus_runs_the_corpus_path(tmp_path):
    """The dry run's stand-in corpus (C1 (d)): deterministic, distinct sources, German written out, and at the full
    profile's 1% hash split it leaves held-out pairs to decode and score."""
    from harness.measure.probes import corpus_bleu
    from harness.profiles import DRY_RUN_CORPUS_PAIRS, get_profile

    pairs = language.generated_parallel_corpus(DRY_RUN_CORPUS_PAIRS)
    assert pairs == language.generated_parallel_corpus(DRY_RUN_CORPUS_PAIRS) != language.generated_parallel_corpus(
        DRY_RUN_CORPUS_PAIRS, seed=1)
    assert len({s for s, _ in pairs}) == len(pairs) == DRY_RUN_CORPUS_PAIRS and not any("\t" in s + t for s, t in pairs)
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    spec = get_profile("full").claim("C1")["corpus"]
    c = language.ParallelCorpus.from_tsv(tsv, heldout_fraction=spec["heldout_fraction"], max_len=spec["max_len"],
                                      shared_vocab=spec["shared_vocab"], max_vocab=spec["max_vocab"])
    assert c.n_dropped == 0 and 5 <= len(c.heldout_index) <= 30
    held = c.heldout(len(c.heldout_index))
    refs = c.references(held)
    assert corpus_bleu(refs, refs) == pytest.approx(100.0)
    # held-out numbers are words training never saw: the detokenised target shows the UNK path ran
    assert any(c.detokenize(row) != ref for row, ref in zip(held.tgt_out, refs))
