"""A trained checkpoint on trial (issue 49): the note's open limitation, read on the user's own weights.

``--model-weights PATH`` (with ``--model`` or ``--model-config``) names trained weights for the model the trial
builds: a ``save_pretrained`` folder (``model.safetensors`` or ``pytorch_model.bin``, sharded or not, with their
``*.index.json``), a single ``.safetensors`` file, or a PyTorch state dict (``torch.load(weights_only=True)``).
Nothing is downloaded. ``attach`` reads the tensors' names and shapes and checks them against the model built on
the meta device before any claim runs: a missing tensor or a shape that differs is a ``ModelError`` naming the
first one (the plugin's exit 4). A folder saved from a model with a head (``LlamaForCausalLM``) loads into the base
model the trial builds (``LlamaModel``): the ``model.`` prefix is taken off, and the head's tensors are left
unused (counted in ``Checkpoint.unused``). bf16 and fp16 tensors load as they are and are converted to float32
when copied into the built model: every reading is made in float32 (``Checkpoint.note`` says so).

Probe inputs (``probe_ids``): ``--probe-tokens FILE`` (``.npy`` of ids, or one sequence of integers a line) or
``--probe-text FILE`` (tokenised with the tokenizer saved beside the weights, offline), cut into ``PROBE_COUNT``
sequences of ``PROBE_LENGTH`` tokens. Without either, uniform random ids: out of distribution for a trained model,
and the readings say so (``in_distribution`` False).

``read(trial, ckpt, ids)`` reads the same architecture at init (the trial's seed-0 build, or the user's saved init
copied into it: ``Checkpoint.init``, ``--model-init-weights``) and then the checkpoint, its weights copied into that
one model tensor by tensor: ``harness.trial.checkpoint_probes.readings`` of each. ``read_saves`` reads a series of
saves of one run the same way (``harness.trial.checkpoint_series``).
"""
from __future__ import annotations

import gc
import json
import os
import pickle
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from harness.trial import checkpoint_probes as readings_of
from harness.trial.checkpoint_footnote import FACTOR_TWO, footnote_rows, footnote_words, regime_rows, regime_table
from harness.trial.model import ModelError, ModelUnderTrial, one_line

if TYPE_CHECKING:
    import pandas as pd

#: the probe's default: 8 sequences of 256 tokens; a shorter single sequence is cut into 8 pieces of at least
#: ``MIN_PIECE`` tokens, or fewer pieces, and refused where fewer than 2 fit (issue 65, item 2)
PROBE_COUNT, PROBE_LENGTH, MIN_PIECE = 8, 256, 16
#: the file names save_pretrained writes, in the order they are tried
_SINGLE = ("model.safetensors", "pytorch_model.bin")
_INDEX = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
RANDOM_NOTE = ("probe inputs: uniform random token ids, out of distribution for a trained model (give "
               "--probe-tokens or --probe-text): the readings are marked so")


@dataclass
class Checkpoint:
    """Trained weights attached to a model on trial: where they are, what they hold, and how they load."""
    path: Path
    files: list[Path]
    dtypes: dict[str, int] = field(default_factory=dict)      # dtype name -> tensor count
    prefix: str = ""                                           # taken off the saved names ("model.")
    unused: list[str] = field(default_factory=list)           # saved tensors the built model has no place for
    n_tensors: int = 0
    #: of ``unused``, those left out under ``--model-weights-allow-unused`` (not an output head's, not declared
    #: harmless): said in the terminal by ``dropped_words``
    dropped: list[str] = field(default_factory=list)
    #: the probe inputs (``probe_ids``), where they came from, whether they are the model's own distribution
    ids: torch.Tensor | None = field(default=None, repr=False)
    ids_note: str = ""
    in_distribution: bool = False
    #: the "at init" half (``--model-init-weights``): the user's own saved init, or None for the seed-0 random draw
    init: "Checkpoint | None" = field(default=None, repr=False)
    #: the saves of one run read in one command (``harness.trial.checkpoint_series``), in step order, this one
    #: last; empty for a single save (a series of one); ``step``: parsed from the save's name, or None
    saves: list["Checkpoint"] = field(default_factory=list, repr=False)
    step: int | None = None

    @property
    def note(self) -> str:
        kinds = ", ".join(f"{n} {d}" for d, n in sorted(self.dtypes.items()))
        low = [d for d in self.dtypes if d in ("bfloat16", "float16")]
        return (f"weights {self.path} ({self.n_tensors} tensors: {kinds}"
                + (f"; {' and '.join(low)} loaded as saved and measured in float32" if low else "")
                + (f"; prefix {self.prefix!r} taken off" if self.prefix else "")
                + (f"; {len(self.unused)} saved tensors unused (e.g. {self.unused[0]})" if self.unused else "")
                + (f"; left out by --model-weights-allow-unused: {dropped_words(self.dropped)}" if self.dropped else "")
                + ")")

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.path), "files": [str(f) for f in self.files], "dtypes": self.dtypes,
                "prefix": self.prefix, "unused": len(self.unused), "dropped": list(self.dropped),
                "tensors": self.n_tensors,
                "probe": self.ids_note, "probe_in_distribution": self.in_distribution,
                "probe_shape": list(self.ids.shape) if self.ids is not None else None,
                "init": ({"source": "saved", "path": str(self.init.path), "files": [str(f) for f in self.init.files],
                          "tensors": self.init.n_tensors} if self.init is not None
                         else {"source": "random", "seed": 0}),
                "series": [{"path": str(s.path), "step": s.step} for s in self.saves or [self]]}


def dropped_words(names: list[str]) -> str:
    """Saved tensors left out, by layer: 'model.layers.4 (9 tensors), model.layers.5 (9 tensors), q_bias' (a name
    outside a numbered layer is given whole)."""
    groups: dict[str, int] = {}
    for name in names:
        m = re.match(r"^(.*?\.(?:layers|layer|h|blocks|block)\.\d+)\.", name)
        groups[m[1] if m else name] = groups.get(m[1] if m else name, 0) + 1
    return ", ".join(f"{g} ({n} tensor{'s' * (n > 1)})" if n > 1 or g not in names else g for g, n in groups.items())


def weight_files(path: str | os.PathLike) -> list[Path]:
    """The files holding the weights at ``path``: a folder's shards (from its index) or single file, or the path
    itself; a ``ModelError`` where there are none."""
    p = Path(path)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise ModelError(f"--model-weights {path}: no such file or folder")
    for name in _INDEX:
        index = p / name
        if index.is_file():
            try:
                shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
            except (ValueError, KeyError, OSError) as exc:
                raise ModelError(f"--model-weights {index}: not a weight index ({one_line(exc)})") from None
            missing = [s for s in shards if not (p / s).is_file()]
            if missing:
                raise ModelError(f"--model-weights {path}: shard {missing[0]} named in {name} is missing")
            return [p / s for s in shards]
    for name in _SINGLE:
        if (p / name).is_file():
            return [p / name]
    found = sorted(x.name for x in p.iterdir() if x.suffix in (".safetensors", ".bin", ".pt", ".pth"))
    if len(found) == 1:
        return [p / found[0]]
    raise ModelError(f"--model-weights {path}: no model.safetensors, pytorch_model.bin or index in the folder"
                     + (f" (found {', '.join(found[:3])}: name one file)" if found else ""))


def _read_file(f: Path, meta_only: bool) -> dict[str, Any]:
    """name -> tensor (or, ``meta_only``, name -> (shape, dtype name) read from the header alone); a
    ``.safetensors`` file's tensors are read by ``tensors_of``, one at a time, and only its header here."""
    try:
        if f.suffix == ".safetensors" and meta_only:
            from safetensors import safe_open

            with safe_open(str(f), framework="pt") as h:
                out = {}
                for k in h.keys():
                    s = h.get_slice(k)
                    out[k] = (tuple(s.get_shape()), _st_dtype(s.get_dtype()))
                return out
        state = torch.load(str(f), map_location="cpu", weights_only=True, mmap=True)
    except pickle.UnpicklingError as exc:           # torch.save(model), or a save holding objects of a class
        cls = re.search(r"GLOBAL (\S+)", str(exc))
        raise ModelError(f"--model-weights {f}: holds pickled objects{f' ({cls[1]})' if cls else ''}, which are not "
                         "unpickled here (that could run code): save model.state_dict()") from None
    except Exception as exc:
        raise ModelError(f"--model-weights {f}: cannot be read ({one_line(exc)})") from None
    while True:                                     # a training script's save: the state dict inside it
        if not isinstance(state, dict) or (state and all(isinstance(v, torch.Tensor) for v in state.values())):
            break
        inner = next((k for k in _WRAPPED if isinstance(state.get(k), dict)), None)
        if inner is None:
            odd = next((k for k, v in state.items() if not isinstance(v, torch.Tensor)), None)
            raise ModelError(f"--model-weights {f}: not a state dict (a mapping of names to tensors): " + (
                f"{odd!r} holds a {type(state[odd]).__name__}, and no entry {'/'.join(_WRAPPED)} holds one"
                if state else "an empty mapping"))
        state = state[inner]
    if not isinstance(state, dict):
        raise ModelError(f"--model-weights {f}: not a state dict (a mapping of names to tensors): a "
                         f"{type(state).__name__}")
    if meta_only:
        return {k: (tuple(v.shape), str(v.dtype).removeprefix("torch.")) for k, v in state.items()}
    return state


def _st_dtype(code: str) -> str:
    dtype = SAFETENSORS_DTYPES.get(code)
    return str(dtype).removeprefix("torch.") if dtype is not None else code.lower()


#: where a training script's save keeps its state dict (nanoGPT's {'model': ..., 'optimizer': ...}, Lightning's
#: 'state_dict', DeepSpeed's 'module')
_WRAPPED = ("model", "state_dict", "model_state_dict", "module")
#: what wrappers put before every name: DDP's 'module.', torch.compile's '_orig_mod.', in either order or both
_WRAPPERS = ("", "module.", "_orig_mod.", "module._orig_mod.", "_orig_mod.module.")
#: the top-level modules of an output head (a ``*ForCausalLM``'s lm_head, BERT's cls, a classifier's score):
#: saved beside the base model and not read by it
_HEADS = ("lm_head.", "cls.", "score.", "classifier.", "qa_outputs.")


def _match(saved: dict[str, Any], wanted: dict[str, tuple[int, ...]], prefixes: tuple[str, ...]) -> str:
    """The prefix to take off the saved names so that they cover the model's (the one that matches most), a
    wrapper's (``_WRAPPERS``) before the model's own."""
    best, hits = "", -1
    for prefix in (w + p for w in _WRAPPERS for p in ("",) + prefixes):
        n = sum(1 for k in saved if k.startswith(prefix) and k[len(prefix):] in wanted)
        if n > hits:
            best, hits = prefix, n
    return best


def attach(trial: ModelUnderTrial, path: str | os.PathLike, allow_unused: bool = False) -> Checkpoint:
    """The checkpoint at ``path`` checked against the model the trial builds (its names and shapes, from the
    files' headers where they have them), and attached as ``trial.checkpoint``; a ``ModelError`` naming the first
    tensor the model needs that is missing or of another shape, or (unless ``allow_unused``) the saved tensors the
    model does not use, other than an output head's (``_HEADS``) and those its class declares harmless (HF's
    ``_keys_to_ignore_on_load_unexpected``: GPT-2's old causal-mask buffers)."""
    files = weight_files(path)
    saved: dict[str, tuple[tuple[int, ...], str]] = {}
    for f in files:
        saved.update(_read_file(f, meta_only=True))
    model = trial.base if trial.base is not None else trial.build(0)
    config_beside(path, model, trial.spec)
    wanted = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    prefix = _match(saved, wanted, _prefixes(model))
    named = {k[len(prefix):]: v for k, v in saved.items() if k.startswith(prefix)}
    for group in tied_groups(model):
        if not any(n in named for n in group):
            raise ModelError(f"--model-weights {path}: no tensor {prefix + group[0]!r} for the model's {group[0]} "
                             f"{list(wanted[group[0]])}")
    for name, shape in wanted.items():
        if name not in named:
            continue                                # tied to a tensor that is saved (T5's embeddings)
        if tuple(named[name][0]) != shape:
            flip = " (its transpose: an nn.Linear's weight where the model has a Conv1D, nanoGPT's against GPT-2?)"
            raise ModelError(f"--model-weights {path}: {prefix + name} is {list(named[name][0])} in the weights, "
                             f"{list(shape)} in the model built by {trial.spec}"
                             + (flip if tuple(named[name][0]) == shape[::-1] else ""))
    dtypes: dict[str, int] = {}
    for name in wanted:
        if name in named:
            dtypes[named[name][1]] = dtypes.get(named[name][1], 0) + 1
    unused = sorted(k for k in saved if not k.startswith(prefix) or k[len(prefix):] not in wanted)
    harmless = getattr(model, "_keys_to_ignore_on_load_unexpected", None) or ()
    stray = [k for k in unused if not re.sub(r"^((module|_orig_mod)\.)+", "", k).startswith(_HEADS)
             and not any(re.search(p, k) for p in harmless)]
    if stray and not allow_unused:
        raise ModelError(f"--model-weights {path}: {len(stray)} saved tensor{'s' * (len(stray) > 1)} the model built "
                         f"by {trial.spec} does not use ({', '.join(stray[:2])}{', ...' * (len(stray) > 2)}): "
                         "another config's checkpoint? --model-weights-allow-unused reads it without them")
    ckpt = Checkpoint(Path(path), files, dtypes, prefix, unused, len(wanted), dropped=stray)
    trial.checkpoint = ckpt
    return ckpt


#: the config fields that change how the same tensors are read (issue 65, item 6): the head split and the scale.
#: 8 heads of 12 and 4 heads of 24 have the same shapes, so the names and shapes cannot catch them
HEAD_FIELDS = ("num_attention_heads", "n_head", "num_heads", "num_key_value_heads", "n_head_kv", "head_dim", "d_kv",
               "query_pre_attn_scalar", "attention_multiplier", "scale_attn_weights", "attn_logit_softcapping")


def config_beside(path: str | os.PathLike, model: torch.nn.Module, spec: str) -> None:
    """A ``ModelError`` where the ``config.json`` beside the weights (in the folder, or the file's folder) says
    another head split or attention scale (``HEAD_FIELDS``) than the config the model was built by: the same
    shapes would be read as other heads. Fields either side lacks, or left None, are not compared."""
    p = Path(path)
    saved = (p if p.is_dir() else p.parent) / "config.json"
    built = getattr(model, "config", None)
    if built is None or not saved.is_file():
        return
    try:
        doc = json.loads(saved.read_text())
    except (ValueError, OSError):
        return                                      # not a config: nothing it says is compared
    if not isinstance(doc, dict) or "model_type" not in doc:
        return
    for key in HEAD_FIELDS:
        want, have = doc.get(key), getattr(built, key, None)
        if want is None or have is None or isinstance(have, bool) != isinstance(want, bool):
            continue
        if want != have:
            raise ModelError(f"--model-weights {path}: {saved} says {key} {want}, the model built by {spec} has "
                             f"{have}: the same tensors would be read as another head split or scale; give "
                             f"--model-config={saved.parent} (or the override {key}={want})")


def tied_groups(model: torch.nn.Module) -> list[tuple[str, ...]]:
    """The model's state-dict names grouped by the tensor they name: tied weights (an embedding shared by T5's
    encoder and decoder) are one group, saved under one of their names."""
    names = list(model.state_dict())
    by_id: dict[int, list[str]] = {}
    for name, t in [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]:
        if name in names:
            by_id.setdefault(id(t), []).append(name)
    grouped = {n for g in by_id.values() for n in g}
    return [tuple(g) for g in by_id.values()] + [(n,) for n in names if n not in grouped]


def _prefixes(model: torch.nn.Module) -> tuple[str, ...]:
    base = getattr(model, "base_model_prefix", "") or ""
    return tuple(p for p in (f"{base}." if base else "", "model.", "transformer.", "module.") if p)


def load(trial: ModelUnderTrial, ckpt: Checkpoint, seed: int = 0) -> torch.nn.Module:
    """The trial's model with the checkpoint's weights copied in (float32, eval mode)."""
    model = trial.build(seed)
    copy_into(model, ckpt)
    return model


#: safetensors' dtype names (its format's header) -> torch's
SAFETENSORS_DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
                      "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
                      "BOOL": torch.bool}


def safetensors_tensors(path: Path, wanted: set[str]):
    """The tensors of one ``.safetensors`` file whose names are in ``wanted``, one at a time, each read into memory
    of its own with plain reads. safetensors' ``safe_open`` maps the whole file, and a mapped file's pages count in
    the process's resident memory until it is closed: a 1.2B bf16 checkpoint then held its 2.4 GB beside the
    float32 model for the whole copy. The format is an 8-byte little-endian header size, a JSON header (name ->
    dtype, shape, byte offsets into the data after it), then the data."""
    with open(path, "rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(size))
        for key, info in header.items():
            if key == "__metadata__" or key not in wanted:
                continue
            start, end = info["data_offsets"]
            dtype = SAFETENSORS_DTYPES.get(info["dtype"])
            if dtype is None:
                raise ModelError(f"--model-weights {path}: {key} has dtype {info['dtype']}, which is not read here")
            if end == start:
                yield key, torch.empty(info["shape"], dtype=dtype)
                continue
            fh.seek(8 + size + start)
            buf = bytearray(end - start)
            fh.readinto(buf)
            yield key, torch.frombuffer(buf, dtype=dtype).reshape(info["shape"])


def tensors_of(f: Path, wanted: set[str]):
    """The saved tensors of one weights file whose names are in ``wanted``: a ``.safetensors`` file's one at a
    time (``safetensors_tensors``), a state dict's from its mapped file."""
    if f.suffix == ".safetensors":
        yield from safetensors_tensors(f, wanted)
        return
    part = _read_file(f, meta_only=False)
    yield from ((k, t) for k, t in part.items() if k in wanted)


def copy_into(model: torch.nn.Module, ckpt: Checkpoint) -> None:
    """The checkpoint's tensors copied into ``model``'s own, one tensor at a time (converted to the model's float32
    as each is copied), so that no second copy of the weights is held."""
    own = model.state_dict()
    done: set[str] = set()
    with torch.no_grad():
        wanted = {ckpt.prefix + name for name in own}
        for f in ckpt.files:
            for key, t in tensors_of(f, wanted):
                name = key[len(ckpt.prefix):]
                own[name].copy_(t)
                done.add(name)
                del t
    missing = next((g[0] for g in tied_groups(model) if not done.intersection(g)), None)
    if missing is not None:
        raise ModelError(f"--model-weights {ckpt.path}: no tensor for the model's {missing}")
    model.float().eval()


def prepare(trial: ModelUnderTrial, weights: str, *, tokens: str | None = None, text: str | None = None,
            allow_unused: bool = False) -> Checkpoint:
    """``attach`` and ``probe_ids`` at once, before any claim runs (the plugin's pre-flight): every mistake in the
    weights or the probe files is a ``ModelError`` before anything is measured."""
    ckpt = attach(trial, weights, allow_unused)
    model = trial.base
    vocab = getattr(getattr(model, "config", None), "vocab_size", None) or getattr(model, "vocab_size", None)
    if not vocab:
        raise ModelError(f"--model-weights: {trial.spec} has no vocab_size to draw probe token ids from")
    config = getattr(model, "config", None)
    limit = getattr(config, "block_size", None) or getattr(config, "n_positions", None)   # a learned position table
    length = min(PROBE_LENGTH, int(limit)) if isinstance(limit, int) and limit >= 2 else PROBE_LENGTH
    ckpt.ids, ckpt.ids_note, ckpt.in_distribution = probe_ids(vocab=int(vocab), tokens=tokens, text=text,
                                                              weights=weights, length=length)
    if length < PROBE_LENGTH:
        ckpt.ids_note += f"; sequences of at most {length} tokens, the model's positions"
    return ckpt


# ------------------------------------------------------------------------------------------------------ inputs
def probe_ids(*, vocab: int, tokens: str | None = None, text: str | None = None, weights: str | None = None,
              count: int = PROBE_COUNT, length: int = PROBE_LENGTH, seed: int = 0) -> tuple[torch.Tensor, str, bool]:
    """(token ids, one sequence a row; where they came from in words; whether they are the model's own
    distribution). ``tokens``: ``.npy`` or one sequence of integers a line, the first ``count`` cut to a common
    length of at most ``length`` (a single sequence is cut into ``count`` pieces of up to ``length``, each at least
    ``MIN_PIECE``: fewer pieces where it is shorter, a ``ModelError`` where fewer than 2 fit); ``text``:
    tokenised with the tokenizer beside ``weights`` (offline) and cut the same way; neither: ``count`` x
    ``length`` uniform random ids (``RANDOM_NOTE``). An id outside the vocabulary, a sequence under 2 tokens, or
    no tokenizer: a ``ModelError``."""
    if tokens and text:
        raise ModelError("give one of --probe-tokens and --probe-text")
    if tokens:
        seqs = _token_file(tokens)
        source = f"--probe-tokens {tokens}"
    elif text:
        seqs = [_tokenise(text, weights)]
        source = f"--probe-text {text}"
    else:
        g = torch.Generator().manual_seed(seed)
        return torch.randint(0, vocab, (count, length), generator=g), RANDOM_NOTE, False
    flat = [t for s in seqs for t in s]
    if not flat:
        raise ModelError(f"{source}: no tokens in the file; the probe needs sequences of at least 2")
    bad = next((t for t in flat if not 0 <= t < vocab), None)
    if bad is not None:
        raise ModelError(f"{source}: token id {bad} is outside the model's vocabulary of {vocab}")
    cut = ""
    if len(seqs) == 1:                      # one stream (a text, a one-row .npy): cut into ``count`` pieces
        total = len(flat)
        size = min(length, max(total // count, MIN_PIECE))
        n = min(count, total // size)
        if n < 2:                           # Q3's samples are the probe sequences: one cannot give an interval
            raise ModelError(f"{source}: one sequence of {total} token{'s' * (total != 1)}; the probe needs at "
                             f"least {2 * MIN_PIECE} (2 sequences of {MIN_PIECE}: Q3's samples are the probe "
                             "sequences)")
        ids = [flat[i * size:(i + 1) * size] for i in range(n)]
        cut = f" (one sequence of {total} tokens cut into {n} of {size}" + (
            f", its last {total - n * size} unread)" if total > n * size else ")")
    else:                                   # sequences: the first ``count``, cut to a common length
        size = min(length, min(len(s) for s in seqs))
        ids = [s[:size] for s in seqs[:count]]
    if size < 2:
        raise ModelError(f"{source}: a sequence of {size} token{'s' * (size != 1)}; the probe needs at least 2")
    return (torch.tensor(ids, dtype=torch.long),
            f"probe inputs: {len(ids)} sequences of {size} tokens from {source}{cut}", True)


def _token_file(path: str) -> list[list[int]]:
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"--probe-tokens {path}: no such file")
    try:
        if p.suffix == ".npy":
            a = np.load(p, allow_pickle=False)
            if not np.issubdtype(a.dtype, np.integer):
                raise ValueError(f"dtype {a.dtype}, not integer ids")
            return [list(map(int, row)) for row in np.atleast_2d(a)]
        return [[int(w) for w in line.split()] for line in p.read_text().splitlines() if line.strip()]
    except (ValueError, OSError) as exc:
        raise ModelError(f"--probe-tokens {path}: not token ids ({one_line(exc)})") from None


def _tokenise(path: str, weights: str | None) -> list[int]:
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"--probe-text {path}: no such file")
    folder = Path(weights) if weights and Path(weights).is_dir() else Path(weights).parent if weights else None
    if folder is None or not any((folder / n).is_file() for n in ("tokenizer.json", "tokenizer_config.json",
                                                                     "tokenizer.model", "vocab.json")):
        raise ModelError(f"--probe-text {path}: no tokenizer beside the weights ({folder}); give --probe-tokens")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        return list(tok(p.read_text())["input_ids"])
    except Exception as exc:
        raise ModelError(f"--probe-text {path}: the tokenizer in {folder} failed ({one_line(exc)})") from None


# ------------------------------------------------------------------------------------------------------ reading
def read(trial: ModelUnderTrial, ckpt: Checkpoint, ids: torch.Tensor, seed: int = 0) -> "pd.DataFrame":
    """``readings`` of the checkpoint and of the same architecture at init (``read_saves``' first and last): one
    row per (which, batch, layer, head)."""
    import pandas as pd

    frames = read_saves(trial, ckpt, ids, seed)
    return pd.concat([frames[-1], frames[0]], ignore_index=True)


def _read_key(ckpt: Checkpoint, ids: torch.Tensor, seed: int) -> tuple:
    """What a read is cached by on the trial: the saves, the init, the probe ids and the seed."""
    return ("checkpoint", tuple(str(s.path) for s in ckpt.saves or [ckpt]), str(ckpt.init.path) if ckpt.init else None,
            tuple(ids.shape), int(ids.sum()), seed)


def read_saves(trial: ModelUnderTrial, ckpt: Checkpoint, ids: torch.Tensor, seed: int = 0) -> list["pd.DataFrame"]:
    """``readings`` at init (``which`` "init"), then of each save of the checkpoint's series in order (``which``
    "checkpoint"; ``ckpt`` alone where it has no series), one model read at init and then with each save's weights
    copied in. At init: the user's saved init (``ckpt.init``, ``--model-init-weights``) copied into ``seed``'s build,
    or that build as drawn. Cached on the trial per (saves, init, ids, seed)."""
    saves = ckpt.saves or [ckpt]
    key = _read_key(ckpt, ids, seed)
    if key not in trial.cache:
        model = trial.build(seed)                    # one model: read at init, then with each save copied in
        own = trial.causal is True and not getattr(getattr(model, "config", None), "is_encoder_decoder", False)
        if ckpt.init is not None:
            copy_into(model, ckpt.init)
            head, name = head_weight(model, ckpt.init) if own else (None, "")
            name = name.replace("the checkpoint's", "the saved init's")
        else:
            head, name = (_embedding(model) if own else None), "the init's embedding as its head"
        frames = [readings_of.readings(model, trial.backend, ids, "init", seed, head=head, head_name=name)]
        patterns: list = []                          # the last save's weights on the first probe sequence
        for i, save in enumerate(saves):
            copy_into(model, save)
            head, name = head_weight(model, save) if own else (None, "")
            frames.append(readings_of.readings(model, trial.backend, ids, "checkpoint", seed, head=head,
                                               head_name=name, patterns=patterns if i == len(saves) - 1 else None))
        del model
        gc.collect()                                 # freed, its reference cycles too, before the claim goes on
        trial.cache[key] = frames
        trial.cache[("patterns", *key)] = patterns
    return [f.copy() for f in trial.cache[key]]


def patterns(trial: ModelUnderTrial, ckpt: Checkpoint, ids: torch.Tensor, seed: int = 0) -> list:
    """The checkpoint's (its last save's) attention weights on the first probe sequence: one (heads, queries, keys)
    array a call, read with ``read_saves`` (no second pass)."""
    key = _read_key(ckpt, ids, seed)
    if ("patterns", *key) not in trial.cache:
        read_saves(trial, ckpt, ids, seed)
    return trial.cache[("patterns", *key)]


#: the names a saved output head goes by (beside the base model's tensors, which carry a prefix), as saved and
#: under a wrapper's prefix (``_WRAPPERS``: DDP's, torch.compile's)
HEAD_NAMES = tuple(w + "lm_head.weight" for w in _WRAPPERS)


def _embedding(model: torch.nn.Module) -> torch.Tensor | None:
    get = getattr(model, "get_input_embeddings", None)
    emb = get() if callable(get) else None
    return emb.weight.detach() if isinstance(getattr(emb, "weight", None), torch.Tensor) else None


def head_weight(model: torch.nn.Module, ckpt: Checkpoint) -> tuple[torch.Tensor | None, str]:
    """(the checkpoint's output head, vocabulary x width, and its name): its saved ``lm_head.weight`` where it has
    one of the embedding's shape, else the (trained) input embedding where the config ties them; (None, '')
    otherwise, and |dL/dlogits| falls back to the random direction."""
    emb = _embedding(model)
    if emb is None:
        return None, ""
    for f in ckpt.files:
        for name, t in tensors_of(f, set(HEAD_NAMES)):
            if tuple(t.shape) == tuple(emb.shape):
                return t.float(), f"the checkpoint's {name}"
    if getattr(getattr(model, "config", None), "tie_word_embeddings", False):
        return emb, "the checkpoint's embedding, tied as its head"
    return None, ""
