"""The number-word language pair: English and German number words, their vocabularies and tokenizer, the
``NumberWords`` task (digits -> English, English -> German) and the parallel corpus (a user's files, or one generated
from number sentences). Builds on ``harness.data.tasks``' conventions and splits."""
from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path
from typing import Sequence

import torch
from torch import Tensor

from harness.data.tasks import (BOS, EOS, HELDOUT_SEED, IGNORE_INDEX, N_SPECIAL, PAD, Batch, SyntheticTask, Task,
                                _check_positive, heldout_mask, seq2seq_batch)

# -------------------------------------------------------------------------------------- number words
_EN_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
             "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_EN_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_DE_UNITS = ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf",
             "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn"]
_DE_TENS = ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"]


def _en_chunk(c: int) -> list[str]:
    """English tokens for 1 <= c <= 999 ("-" is its own token: twenty - one)."""
    out: list[str] = []
    if c >= 100:
        out += [_EN_UNITS[c // 100], "hundred"]
        c %= 100
    if c >= 20:
        out.append(_EN_TENS[c // 10])
        if c % 10:
            out += ["-", _EN_UNITS[c % 10]]
    elif c:
        out.append(_EN_UNITS[c])
    return out


def _de_chunk(c: int, final: bool) -> list[str]:
    """German morphemes for 1 <= c <= 999. Units precede tens ('ein und zwanzig'); 'eins' only when the 1 ends
    the whole number (``final``), 'ein' before 'und', 'hundert', 'tausend'. 100 is 'ein hundert' (our choice)."""
    out: list[str] = []
    if c >= 100:
        out += ["ein" if c // 100 == 1 else _DE_UNITS[c // 100], "hundert"]
        c %= 100
    if c >= 20:
        if c % 10:
            out += ["ein" if c % 10 == 1 else _DE_UNITS[c % 10], "und"]
        out.append(_DE_TENS[c // 10])
    elif c == 1:
        out.append("eins" if final else "ein")
    elif c:
        out.append(_DE_UNITS[c])
    return out


def english_number_tokens(n: int) -> list[str]:
    """English tokens for 0 <= n <= 999_999 (American style, no 'and')."""
    if n == 0:
        return ["zero"]
    hi, lo = divmod(n, 1000)
    return (_en_chunk(hi) + ["thousand"] if hi else []) + (_en_chunk(lo) if lo else [])


def german_number_tokens(n: int) -> list[str]:
    """German morphemes for 0 <= n <= 999_999; ``"".join`` gives the written word."""
    if n == 0:
        return ["null"]
    hi, lo = divmod(n, 1000)
    return (_de_chunk(hi, final=False) + ["tausend"] if hi else []) + (_de_chunk(lo, final=True) if lo else [])


def english_number_text(tokens: Sequence[str]) -> str:
    return " ".join(tokens).replace(" - ", "-")


def german_number_text(tokens: Sequence[str]) -> str:
    return "".join(tokens)


class Vocab:
    """Token strings <-> ids with the shared specials in front."""

    def __init__(self, tokens: Sequence[str], specials: Sequence[str] = ("<pad>", "<bos>", "<eos>")) -> None:
        self.itos = list(specials) + [t for t in dict.fromkeys(tokens) if t not in specials]
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.unk = self.stoi.get("<unk>")

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        if self.unk is None:
            return [self.stoi[t] for t in tokens]
        return [self.stoi.get(t, self.unk) for t in tokens]

    def decode(self, ids: Sequence[int] | Tensor) -> list[str]:
        """Tokens up to the first EOS, skipping PAD/BOS and IGNORE_INDEX."""
        out = []
        for i in (ids.tolist() if isinstance(ids, Tensor) else ids):
            if i == EOS:
                break
            if i in (PAD, BOS, IGNORE_INDEX) or i < 0:
                continue
            out.append(self.itos[i] if i < len(self.itos) else "<unk>")
        return out


def _token_table(seqs: list[list[int]]) -> Tensor:
    width = max(len(s) for s in seqs)
    t = torch.full((len(seqs), width), PAD, dtype=torch.int64)
    for i, s in enumerate(seqs):
        t[i, : len(s)] = torch.tensor(s, dtype=torch.int64)
    return t


def _compact(t: Tensor) -> Tensor:
    """Move each row's non-PAD tokens to the front, keeping their order (vectorised)."""
    key = (t == PAD).to(torch.int64) * t.shape[1] + torch.arange(t.shape[1])
    return t.gather(1, key.argsort(dim=1))


class NumberWords(SyntheticTask):
    """Number-words transduction (C1), generated from rules (nothing downloaded), integers 0..max_n:

    * ``source="digits", target="en"``: "1234" -> "one thousand two hundred thirty-four";
    * ``source="en", target="de"``: English words -> German morphemes. German puts units before tens
      (thirty - four -> vier und dreißig), so the model must reorder.

    German is tokenised into morphemes (ein und zwanzig, drei hundert ...) and written joined
    ('einundzwanzig'); ``detokenize(ids)`` gives the written form, ``text_tokens(ids)`` the space-joined
    morphemes (what token-level BLEU should score). The split holds out integers: a held-out integer never
    occurs in training. Per-batch generation composes precomputed 0..999 chunk tables (vectorised)."""
    kind = "seq2seq"
    SOURCES = ("digits", "en")
    TARGETS = ("en", "de")

    def __init__(self, source: str = "en", target: str = "de", max_n: int = 9999, min_n: int = 0,
                 heldout_fraction: float = 0.1) -> None:
        super().__init__(heldout_fraction)
        if source not in self.SOURCES:
            raise ValueError(f"source must be one of {self.SOURCES}, got {source!r}")
        if target not in self.TARGETS:
            raise ValueError(f"target must be one of {self.TARGETS}, got {target!r}")
        if source == target:
            raise ValueError(f"source and target must differ, both are {source!r}")
        if not isinstance(max_n, int) or not 0 < max_n <= 999_999:
            raise ValueError(f"max_n must be an integer in [1, 999999], got {max_n!r}")
        if not isinstance(min_n, int) or not 0 <= min_n < max_n:
            raise ValueError(f"min_n must be an integer in [0, max_n), got {min_n!r}")
        self.source, self.target, self.max_n, self.min_n = source, target, max_n, min_n
        self.name = f"number_words_{target}"
        en_words = ["zero", "-"] + _EN_UNITS[1:] + _EN_TENS[2:] + ["hundred", "thousand"]
        de_words = ["null", "ein", "und"] + _DE_UNITS[1:] + _DE_TENS[2:] + ["hundert", "tausend"]
        vocabs = {"digits": Vocab(list("0123456789")), "en": Vocab(en_words), "de": Vocab(de_words)}
        self.src_vocab_obj, self.tgt_vocab_obj = vocabs[source], vocabs[target]
        self.src_vocab, self.tgt_vocab = len(self.src_vocab_obj), len(self.tgt_vocab_obj)
        self._tables = {side: self._chunk_tables(lang, vocab)
                        for side, lang, vocab in (("src", source, self.src_vocab_obj), ("tgt", target, self.tgt_vocab_obj))
                        if lang != "digits"}
        self.max_src_len = self._width(source)
        self.max_tgt_len = self._width(target) + 1
        ints = torch.arange(min_n, max_n + 1)
        held = heldout_mask(ints.unsqueeze(1), heldout_fraction)
        self.train_integers, self.heldout_integers = ints[~held], ints[held]
        if len(self.train_integers) == 0 or len(self.heldout_integers) == 0:
            raise ValueError(f"range [{min_n}, {max_n}] is too small to split with heldout_fraction={heldout_fraction}")

    def params(self):
        return {**super().params(), "source": self.source, "target": self.target, "max_n": self.max_n,
                "min_n": self.min_n}

    def _width(self, lang: str) -> int:
        if lang == "digits":
            return len(str(self.max_n))
        high, low = self._tables["src" if lang == self.source else "tgt"]
        return high.shape[1] + low.shape[1]

    @staticmethod
    def _chunk_tables(lang: str, vocab: Vocab) -> tuple[Tensor, Tensor]:
        """(high, low): row c < 1000 of ``high`` is the thousands part for c (with 'thousand'; row 0 empty), row c
        of ``low`` the last three digits (row 0 empty, row 1000 the word for zero)."""
        if lang == "en":
            high = [[]] + [_en_chunk(c) + ["thousand"] for c in range(1, 1000)]
            low = [[]] + [_en_chunk(c) for c in range(1, 1000)] + [["zero"]]
        else:
            high = [[]] + [_de_chunk(c, final=False) + ["tausend"] for c in range(1, 1000)]
            low = [[]] + [_de_chunk(c, final=True) for c in range(1, 1000)] + [["null"]]
        return _token_table([vocab.encode(t) for t in high]), _token_table([vocab.encode(t) for t in low])

    def encode_integers(self, n: Tensor, side: str) -> Tensor:
        """PAD-padded token rows for integers ``n`` on ``side`` ("src" or "tgt")."""
        lang = self.source if side == "src" else self.target
        if lang == "digits":
            width = len(str(self.max_n))
            powers = 10 ** torch.arange(width - 1, -1, -1)
            digits = (n.unsqueeze(1) // powers) % 10
            lead = (n.unsqueeze(1) < powers) & (powers > 1)     # leading zeros (but keep a lone '0')
            return _compact((digits + N_SPECIAL).masked_fill(lead, PAD))
        high, low = self._tables[side]
        hi, lo = n // 1000, n % 1000
        lo = torch.where(n == 0, torch.full_like(lo, 1000), lo)
        return _compact(torch.cat([high[hi], low[lo]], 1))

    def train_batch(self, generator, batch_size):  # integers are drawn from the split directly
        _check_positive("batch_size", batch_size)
        idx = torch.randint(0, len(self.train_integers), (batch_size,), generator=generator)
        return self.batch_for(self.train_integers[idx])

    def _make_heldout(self, n):
        g = torch.Generator().manual_seed(HELDOUT_SEED)
        pool = self.heldout_integers
        idx = torch.randperm(len(pool), generator=g)[:n] if n <= len(pool) else torch.randint(0, len(pool), (n,), generator=g)
        return self.batch_for(pool[idx])

    def batch_for(self, integers: Tensor) -> Batch:
        """The seq2seq Batch for given integers (``meta["integers"]``)."""
        return seq2seq_batch(self.encode_integers(integers, "src"), self.encode_integers(integers, "tgt"),
                             meta={"integers": integers})

    def split_keys(self, batch: Batch) -> Tensor:
        return batch.meta["integers"].unsqueeze(1)

    def text_tokens(self, ids: Tensor | Sequence[int], side: str = "tgt") -> str:
        """Space-joined tokens of one row (up to EOS)."""
        return " ".join((self.tgt_vocab_obj if side == "tgt" else self.src_vocab_obj).decode(ids))

    def detokenize(self, ids: Tensor | Sequence[int], side: str = "tgt") -> str:
        """Written text of one row: 'einundzwanzig', 'twenty-one', '21'."""
        lang = self.target if side == "tgt" else self.source
        toks = (self.tgt_vocab_obj if side == "tgt" else self.src_vocab_obj).decode(ids)
        return german_number_text(toks) if lang in ("de", "digits") else english_number_text(toks)


# ----------------------------------------------------------------------------------- parallel corpus
_TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_NO_SPACE_BEFORE = re.compile(r" ([.,!?;:%)\]}'])")
_NO_SPACE_AFTER = re.compile(r"([(\[{]) ")


class SimpleTokenizer:
    """Words and single punctuation marks (regex ``\\w+|[^\\w\\s]``), optionally lowercased. Enough for
    a user's own parallel data; detokenize re-attaches punctuation."""

    def __init__(self, lowercase: bool = False) -> None:
        self.lowercase = lowercase

    def tokenize(self, text: str) -> list[str]:
        return _TOKEN_RE.findall(text.lower() if self.lowercase else text)

    @staticmethod
    def detokenize(tokens: Sequence[str]) -> str:
        return _NO_SPACE_AFTER.sub(r"\1", _NO_SPACE_BEFORE.sub(r"\1", " ".join(tokens)))


class ParallelCorpus(Task):
    """A user's parallel corpus (C1 full profile): two aligned text files or one TSV (source<TAB>target).

    Pairs are held out by a BLAKE2b hash of the source line (identical sources share a split); vocabularies are
    built from the training split only (``min_freq``, ``max_vocab``), unknown tokens map to ``UNK=3``.
    Pairs longer than ``max_len`` tokens on either side are dropped (``n_dropped``). Tokens are kept as one
    flat int32 buffer with offsets, so memory is the corpus's token count."""
    kind = "seq2seq"

    def __init__(self, pairs: Sequence[tuple[str, str]], heldout_fraction: float = 0.05, max_len: int = 100,
                 lowercase: bool = False, min_freq: int = 1, max_vocab: int | None = None,
                 shared_vocab: bool = False, name: str = "parallel_corpus") -> None:
        super().__init__()
        if not 0.0 < heldout_fraction < 1.0:
            raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction!r}")
        _check_positive("max_len", max_len)
        _check_positive("min_freq", min_freq)
        if max_vocab is not None:
            _check_positive("max_vocab", max_vocab, 1)
        self.name, self.heldout_fraction, self.max_len_ = name, heldout_fraction, max_len
        self.tokenizer = SimpleTokenizer(lowercase)
        threshold = int(round(heldout_fraction * 2**64))
        src_tok, tgt_tok, held, raw = [], [], [], []
        self.n_dropped = 0
        for s, t in pairs:
            st, tt = self.tokenizer.tokenize(s), self.tokenizer.tokenize(t)
            if not st or not tt or len(st) > max_len or len(tt) > max_len:
                self.n_dropped += 1
                continue
            src_tok.append(st)
            tgt_tok.append(tt)
            raw.append((s.strip(), t.strip()))
            digest = hashlib.blake2b(s.strip().encode("utf-8"), digest_size=8).digest()
            held.append(int.from_bytes(digest, "big") < threshold)
        if not src_tok:
            raise ValueError("the corpus has no usable pairs (empty, or every pair longer than max_len)")
        held_t = torch.tensor(held, dtype=torch.bool)
        if held_t.all() or not held_t.any():
            raise ValueError(f"corpus of {len(src_tok)} pairs gives an empty split at heldout_fraction="
                             f"{heldout_fraction}; give more pairs or another fraction")
        train_idx = (~held_t).nonzero().squeeze(1).tolist()

        def build(seqs: list[list[str]]) -> Vocab:
            counts: dict[str, int] = {}
            for i in train_idx:
                for tok in seqs[i]:
                    counts[tok] = counts.get(tok, 0) + 1
            ranked = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
            return Vocab(ranked[: max_vocab], specials=("<pad>", "<bos>", "<eos>", "<unk>"))

        self.src_vocab_obj = build([a + b for a, b in zip(src_tok, tgt_tok)] if shared_vocab else src_tok)
        self.tgt_vocab_obj = self.src_vocab_obj if shared_vocab else build(tgt_tok)
        self.src_vocab, self.tgt_vocab = len(self.src_vocab_obj), len(self.tgt_vocab_obj)
        self.max_src_len = max(len(s) for s in src_tok)
        self.max_tgt_len = max(len(t) for t in tgt_tok) + 1
        self._src = self._ragged([self.src_vocab_obj.encode(s) for s in src_tok])
        self._tgt = self._ragged([self.tgt_vocab_obj.encode(t) for t in tgt_tok])
        self._raw = raw
        self.train_index = (~held_t).nonzero().squeeze(1)
        self.heldout_index = held_t.nonzero().squeeze(1)

    @staticmethod
    def _ragged(seqs: list[list[int]]) -> tuple[Tensor, Tensor, Tensor]:
        lens = torch.tensor([len(s) for s in seqs], dtype=torch.int64)
        flat = torch.tensor([i for s in seqs for i in s], dtype=torch.int32)
        starts = torch.cumsum(lens, 0) - lens
        return flat, starts, lens

    @staticmethod
    def _gather(ragged: tuple[Tensor, Tensor, Tensor], idx: Tensor) -> Tensor:
        flat, starts, lens = ragged
        width = int(lens[idx].max())
        pos = torch.arange(width).unsqueeze(0)
        valid = pos < lens[idx].unsqueeze(1)
        at = (starts[idx].unsqueeze(1) + pos).clamp(max=len(flat) - 1)
        return flat[at].to(torch.int64).masked_fill(~valid, PAD)

    @classmethod
    def from_files(cls, src_path: str | Path, tgt_path: str | Path, **kw) -> "ParallelCorpus":
        src = Path(src_path).read_text(encoding="utf-8").splitlines()
        tgt = Path(tgt_path).read_text(encoding="utf-8").splitlines()
        if len(src) != len(tgt):
            raise ValueError(f"src_path has {len(src)} lines but tgt_path has {len(tgt)}: files must be aligned")
        return cls(list(zip(src, tgt)), **kw)

    @classmethod
    def from_tsv(cls, path: str | Path, **kw) -> "ParallelCorpus":
        pairs = []
        for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise ValueError(f"{path}:{i}: expected 'source<TAB>target', found {len(parts)} fields")
            pairs.append((parts[0], parts[1]))
        return cls(pairs, **kw)

    def params(self):
        return {**super().params(), "pairs_train": len(self.train_index), "pairs_heldout": len(self.heldout_index),
                "src_vocab": self.src_vocab, "tgt_vocab": self.tgt_vocab, "max_len": self.max_len_}

    def _batch(self, idx: Tensor) -> Batch:
        return seq2seq_batch(self._gather(self._src, idx), self._gather(self._tgt, idx), meta={"index": idx})

    def train_batch(self, generator, batch_size):
        _check_positive("batch_size", batch_size)
        pick = torch.randint(0, len(self.train_index), (batch_size,), generator=generator)
        return self._batch(self.train_index[pick])

    def _make_heldout(self, n):
        return self._batch(self.heldout_index[:n])

    def split_keys(self, batch: Batch) -> Tensor:
        return batch.meta["index"].unsqueeze(1)

    def references(self, batch: Batch) -> list[str]:
        """The raw target lines of a batch (BLEU references)."""
        return [self._raw[i][1] for i in batch.meta["index"].tolist()]

    def detokenize(self, ids: Tensor | Sequence[int], side: str = "tgt") -> str:
        v = self.tgt_vocab_obj if side == "tgt" else self.src_vocab_obj
        return self.tokenizer.detokenize(v.decode(ids))


# English -> German sentence frames for generated_parallel_corpus: words, capitals and punctuation that sacrebleu's
# 13a tokeniser and SimpleTokenizer both split, around a number written out in each language
_CORPUS_FRAMES = (("I counted {en} sheep.", "Ich zählte {de} Schafe."),
                  ("There are {en} birds on the roof.", "Auf dem Dach sind {de} Vögel."),
                  ("She paid {en} euros, not more.", "Sie zahlte {de} Euro, nicht mehr."),
                  ("Is the answer {en}?", "Ist die Antwort {de}?"))


def generated_parallel_corpus(n_pairs: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n_pairs`` distinct (English, German) sentence pairs made from rules (nothing downloaded, no licence): a
    number from 2 to 999999 written out (``english_number_text`` / German joined) inside one of four sentence
    frames. A stand-in for a user's corpus where only the path must run (C1 (d) in a dry run): the loader,
    tokenisation, vocabularies, hash split, decoding and BLEU."""
    _check_positive("n_pairs", n_pairs)
    pairs = []
    for k in random.Random(seed).sample(range(len(_CORPUS_FRAMES) * 999_998), n_pairs):
        (en, de), n = _CORPUS_FRAMES[k % len(_CORPUS_FRAMES)], 2 + k // len(_CORPUS_FRAMES)
        pairs.append((en.format(en=english_number_text(english_number_tokens(n))),
                      de.format(de=german_number_text(german_number_tokens(n)))))
    return pairs
