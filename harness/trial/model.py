"""A user's model on trial (issue 40): taken by name, built at random init, tapped, and described.

``--model pkg.module:build_model`` names a builder, ``build_model(**overrides) -> nn.Module`` (resolved with
``pkgutil.resolve_name``, as ``--attention``); ``--model-config`` names a transformers config class
(``LlamaConfig`` or ``transformers:LlamaConfig``) or a local ``config.json`` (or a folder holding one), built with
``AutoModel.from_config``. ``--model-override key=value`` (repeatable; the value read as a Python literal, else as a
string) is passed to the builder or set on the config; ``resolve`` refuses a key the config (or the builder's
signature, where it takes no ``**kwargs``) does not have, naming the closest ones, and a value of the wrong type
(``expected int, got str``). Before building, ``preflight`` estimates the parameter memory on the meta device and
refuses a model that does not fit the machine's free memory, with the override that would (issue 48).

The trial reads the model's own attention through ``harness.trial.model_probes`` and never edits it. Before any
claim runs, ``preflight`` builds the model, picks the tap whose output equals the default and reads what the claims
need to know: whether the model declares causal attention (an attention module's ``is_causal``, or the module's
own ``is_causal``; where neither says, the tapped calls that pass SDPA ``is_causal=True``) and how a family is swept
(``harness.trial.model_reads.sweep``). A model the trial cannot build, feed or tap is a
``ModelError`` with one line naming what was tried; the plugin turns it into a usage error (exit 4). What the claims
read of the model (frames at init, family sweeps, a short training) is ``harness.trial.model_reads``.

**Family sweeps** (C4, R2): ``ModelUnderTrial.build(seed, dim=value)`` builds the family member with
``head_dim`` or ``width`` set to a value. For a transformers model the overrides are the config's own keys, the
rest of the shape held (head_dim: ``head_dim``, ``d_kv``, or the head count at a fixed width; width: the hidden
size with the head dim, the head groups and the MLP ratio held). For another module the builder is called with
``head_dim=`` or ``width=`` where its signature takes them; where not, the sweep is unmeasured, with the reason.
"""
from __future__ import annotations

import ast
import difflib
import hashlib
import inspect
import json
import os
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from harness.trial.kernel import first_line, import_dirs, source_hash, takes
from harness.trial import model_probes

SWEEP_DIMS = ("head_dim", "width")
#: the vocabulary a transformers model is built with at random init when its config's is larger (issue 48): a
#: probe reads only the embedding rows of the token ids it draws, each row drawn from the init's distribution
#: whatever the vocabulary's size, so the rest are not built (Gemma 2's 256k float32 rows are 3.7 GB and most of
#: each build's time). The ids a forward may read (the pad token, the decoder's start) are kept inside it; the
#: begin and end ids, which only generation reads, are dropped where they fall outside. Never with
#: ``--model-weights`` (the checkpoint's rows are read).
PROBE_VOCAB = 4096
#: config ids a forward may read (padding rows, position ids from the pad, a decoder's first input): kept in the cut
KEPT_IDS = ("pad_token_id", "decoder_start_token_id")
#: config ids only generation reads: set to None in the cut build where they fall outside it
DROPPED_IDS = ("bos_token_id", "eos_token_id")
class ModelError(ValueError):
    """The user's model cannot be put on trial as given; the message is one line naming what was expected."""


def parse_overrides(items: list[str] | None) -> dict[str, Any]:
    """``key=value`` strings -> a dict; each value a Python literal where it reads as one, else the string."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = str(item).partition("=")
        if not sep or not key.strip().isidentifier():
            raise ModelError(f"--model-override {item!r} is not key=value (e.g. num_hidden_layers=2)")
        try:
            out[key.strip()] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[key.strip()] = raw
    return out


def one_line(exc: BaseException) -> str:
    """'<type>: <the whole message on one line>': a user's error with the useful part on its second line (a
    validator's "expected int, got str") is not cut to its first."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {text}"


#: the keys a layer count goes by, in the order a suggestion tries them
LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "layers")
#: what the pre-flight asks to be free, in float32 parameter copies: what a probe or a checkpoint read holds at
#: once (a seed's build or a family member, the previous one freed; the weights read into it one tensor at a time;
#: the probe's activations and backward; the pre-flight's own build is kept on the meta device). Measured: a 1.2B
#: read peaks at 1.4 copies (docs/model-trial.md). The short training asks for its own (``TRAIN_COPIES``).
MEMORY_COPIES = 3
#: the short training's own: the model at the width it trains at, its gradients and AdamW's two moments, checked
#: when it is built (``train_lm``), so a model the probes can read is not refused for a training it may not run
TRAIN_COPIES = 4


_SIMPLE = {"bool": bool, "int": int, "float": float, "str": str}


def _expected_type(annotation: Any, default: Any) -> tuple[type, ...] | None:
    """The types an override may take: those its annotation names where it names only bool, int, float, str (and
    None); else, without an annotation, its default's type; None (any) where neither says (``int | list[int]``,
    a None default)."""
    if annotation is not inspect.Parameter.empty and annotation is not None:
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", None) or str(annotation)
        words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9.]*", text)) - {"None", "Optional", "typing"}
        if not words or not words <= set(_SIMPLE):
            return None
        types = tuple(_SIMPLE[w] for w in _SIMPLE if w in words)
        return types + ((int,) if float in types and int not in types else ())
    if isinstance(default, bool):
        return (bool,)
    if isinstance(default, int):
        return (int,)
    if isinstance(default, float):
        return (float, int)
    if isinstance(default, str):
        return (str,)
    return None


def _named(fn: Callable[..., Any], skip_self: bool = False) -> dict[str, inspect.Parameter] | None:
    """``fn``'s keyword parameters by name, or None where it takes ``**kwargs`` or has no signature."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    return {n: p for n, p in params.items() if p.kind not in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY)
            and not (skip_self and n == "self")}


def _consumed(factory: Callable[..., Any], key: str, value: Any) -> bool:
    """Whether the config reads ``key``: one it does not know it stores as a new attribute of that name; one it
    folds into another field (Llama's ``rope_theta`` into ``rope_parameters``) it does not keep."""
    try:
        given = factory(**{key: value}).to_dict()
    except Exception:
        return True                 # it reads the key: the builder will say what is wrong with the value
    return key not in given


def check_overrides(trial: "ModelUnderTrial") -> None:
    """Each override is a key the model takes, with a value of its type; a ``ModelError`` naming the key and the
    closest valid ones otherwise. The keys: a config's own (with its aliases, e.g. GPT-2's ``num_hidden_layers`` for
    ``n_layer``) or the builder's keywords; a builder with ``**kwargs`` passes its keys on unchecked (it raises on
    what it does not take). The type: the one the config's or builder's annotation names, else the default's."""
    if not trial.overrides:
        return
    factory = getattr(trial.builder, "default_config", None)
    params: dict[str, inspect.Parameter] = {}
    if factory is not None:
        try:
            config = factory()
        except Exception:           # a config that cannot be built bare (sub-configs): the builder raises later
            return
        aliases = dict(getattr(config, "attribute_map", {}) or {})
        known = set(config.to_dict()) | set(aliases)
        for cls in reversed(type(config).__mro__):
            init = cls.__dict__.get("__init__")
            named = _named(init, skip_self=True) if init is not None else None
            params.update(named or {})
        known |= set(params)
        defaults = {k: getattr(config, k, None) for k in known}
        params.update({alias: params[target] for alias, target in aliases.items() if target in params})
        owner = type(config).__name__
    else:
        named = _named(trial.builder)
        if named is None:
            return
        params, known, owner = named, set(named), trial.spec
        defaults = {n: (None if p.default is inspect.Parameter.empty else p.default) for n, p in named.items()}
    for key, value in trial.overrides.items():
        if key not in known and factory is not None and _consumed(factory, key, value):
            continue                # a legacy key the config folds into another (Llama's rope_theta)
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=3, cutoff=0.6)
            raise ModelError(f"--model-override {key}={value!r}: {owner} has no key {key!r}; "
                             + (f"the closest: {', '.join(close)}" if close else "none is close (a typo?)"))
        types = _expected_type(params[key].annotation if key in params else inspect.Parameter.empty,
                               defaults.get(key))
        if types is not None and value is not None and not (isinstance(value, types) and
                                                            (bool in types or not isinstance(value, bool))):
            raise ModelError(f"--model-override {key}={value!r}: expected {types[0].__name__}, got "
                             f"{type(value).__name__} (the default is {defaults[key]!r})")


def free_memory() -> int | None:
    """Bytes of memory this machine has free for a new allocation (Linux's MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def parameter_count(trial: "ModelUnderTrial", **extra: Any) -> int | None:
    """The model's parameter and buffer count, built on the meta device (no memory taken), or None where the
    builder cannot build there."""
    try:
        with torch.device("meta"):
            model = trial.builder(**{**trial.overrides, **extra})
        return sum(t.numel() for t in (*model.parameters(), *model.buffers()))
    except Exception:
        return None


def _gb(n: float) -> str:
    return f"{n / 1e9:.3g} GB" if n >= 1e9 else f"{n / 1e6:.3g} MB"


def check_fits(trial: "ModelUnderTrial", free: int | None = None) -> None:
    """A ``ModelError`` when the model's float32 parameters, ``MEMORY_COPIES`` times over, exceed the free memory:
    the figures, and the layer count that would fit (where the model takes one). Nothing where either is unknown."""
    free = free_memory() if free is None else free
    cut = trial.vocab_cut
    n = parameter_count(trial, **cut) if free is not None else None
    if n is None or free is None or 4 * n * MEMORY_COPIES <= free:
        return
    hint = ""
    key = next((k for k in LAYER_KEYS if _takes_key(trial, k)), None)
    if key is not None:
        one, two = parameter_count(trial, **cut, **{key: 1}), parameter_count(trial, **cut, **{key: 2})
        if one is not None and two is not None and two > one:
            fits = int((free / (4 * MEMORY_COPIES) - (2 * one - two)) // (two - one))
            hint = (f"; --model-override {key}={fits} would fit" if fits >= 1 else
                    f"; even {key}=1 needs {_gb(4 * one * MEMORY_COPIES)}: lower the width or the vocabulary")
    at = f" (built at init with {trial.vocab[0]} of its {trial.vocab[1]} tokens)" if trial.vocab else ""
    raise ModelError(f"{trial.spec}: {n / 1e6:.4g}M parameters{at} need about {_gb(4 * n * MEMORY_COPIES)} "
                     f"(float32, {MEMORY_COPIES} copies: a build, the weights or family member it holds, the probe's "
                     f"activations); {_gb(free)} is free{hint}")


def _takes_key(trial: "ModelUnderTrial", key: str) -> bool:
    factory = getattr(trial.builder, "default_config", None)
    if factory is not None:
        try:
            config = factory()
        except Exception:
            return False
        return key in config.to_dict() or key in (getattr(config, "attribute_map", {}) or {})
    try:
        return key in inspect.signature(trial.builder).parameters
    except (TypeError, ValueError):
        return False


def _resolve_config(spec: str) -> Callable[..., nn.Module]:
    try:
        import transformers
    except ImportError:
        raise ModelError("--model-config needs transformers (pip install 'attention-claims[models]')") from None
    path = Path(spec)
    if path.exists():
        target = str(path / "config.json" if path.is_dir() else path)      # the file named, or the folder's
        if path.is_dir() and not Path(target).is_file():
            raise ModelError(f"--model-config {spec}: no config.json there")
        try:
            if not target.endswith(".json"):
                weights = path.suffix in (".safetensors", ".bin", ".pt", ".pth")
                raise ValueError(f"a {path.suffix or 'file'} file, not a .json" + ("; weights go to --model-weights"
                                                                                    if weights else ""))
            if not isinstance(read := json.loads(Path(target).read_text()), dict) or "model_type" not in read:
                raise ValueError("no model_type in it, which names the architecture")
        except (ValueError, TypeError, OSError) as exc:
            raise ModelError(f"--model-config {spec}: not a transformers config ({exc})") from None

        def build(**overrides):
            config = transformers.AutoConfig.from_pretrained(target, **overrides)
            return transformers.AutoModel.from_config(config)
        build.default_config = lambda **kw: transformers.AutoConfig.from_pretrained(target, **kw)
        return build
    name = spec.split(":")[-1].split(".")[-1]
    cls = getattr(transformers, name, None)
    if cls is None or not (isinstance(cls, type) and issubclass(cls, transformers.PretrainedConfig)):
        raise ModelError(f"--model-config {spec!r} is neither a transformers config class (e.g. LlamaConfig) nor "
                         "a path to a config.json")

    def build(**overrides):
        return transformers.AutoModel.from_config(cls(**overrides))
    build.default_config = cls
    return build


def _config_sha256(model: nn.Module) -> str | None:
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "to_dict"):
        return None
    content = {k: v for k, v in config.to_dict().items() if k != "_name_or_path"}   # the content, not its path
    text = json.dumps(content, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def declared_causal(model: nn.Module) -> bool | None:
    """True when the model declares causal self-attention (the top module's ``is_causal``, or any attention
    module's), False when its attention modules all declare bidirectional, None when nothing says."""
    own = getattr(model, "is_causal", None)
    if isinstance(own, bool):
        return own
    flags = [m.is_causal for m in model.modules() if m is not model and isinstance(getattr(m, "is_causal", None), bool)]
    return any(flags) if flags else None


def _transformers_sweep(config: Any, dim: str, value: int) -> dict[str, Any]:
    """The config overrides that set ``dim`` to ``value`` with the rest of the attention's shape held."""
    d = config.to_dict()
    hidden, heads = int(config.hidden_size), int(config.num_attention_heads)
    kv = int(getattr(config, "num_key_value_heads", None) or heads)
    groups = max(heads // kv, 1)
    if "d_kv" in d:
        head_dim_key = "d_kv"
    elif d.get("head_dim") is not None:
        head_dim_key = "head_dim"
    else:
        head_dim_key = None
    head_dim = int(d[head_dim_key]) if head_dim_key else hidden // heads
    has_kv = d.get("num_key_value_heads") is not None
    if dim == "head_dim":
        if head_dim_key:
            return {head_dim_key: value}
        if hidden % value or (hidden // value) % groups:
            raise ModelError(f"head_dim {value} does not divide hidden size {hidden} into whole head groups")
        new_heads = hidden // value
        return {"num_attention_heads": new_heads, **({"num_key_value_heads": new_heads // groups} if has_kv else {})}
    new_heads = max(value // head_dim, groups)
    out: dict[str, Any] = {"hidden_size": value, "num_attention_heads": new_heads}
    if "head_dim" in d and head_dim_key is None:    # the config derives it from the width: held explicitly
        out["head_dim"] = head_dim
    if has_kv:
        out["num_key_value_heads"] = max(new_heads // groups, 1)
    for key in ("intermediate_size", "d_ff", "n_inner"):
        if d.get(key):
            out[key] = int(round(d[key] * value / hidden))
    return out


@dataclass
class ModelUnderTrial:
    """A resolved model builder and what pre-flight found about it."""
    spec: str
    builder: Callable[..., nn.Module]
    overrides: dict[str, Any] = field(default_factory=dict)
    model_class: str = ""
    kind: str = "module"               # "transformers" or "module"
    source_sha256: str | None = None
    config_sha256: str | None = None
    backend: str | None = None         # the tap pre-flight chose (model_probes.BACKENDS)
    causal: bool | None = None
    causal_from: str = ""              # what said so: the model's is_causal, or SDPA's flag at the tapped calls
    preflight_diff: float | None = None
    calls: int = 0
    tried: dict[str, str] = field(default_factory=dict)
    sweep_reasons: dict[str, str] = field(default_factory=dict)   # dim -> why it cannot be swept
    #: the pre-flight's build, on the meta device where the builder builds there (no memory held): sweeps read its
    #: config
    base: nn.Module | None = field(default=None, repr=False)
    width: int | None = None           # the model's own width (the config's hidden size, or the module's d_model)
    #: frames, sweeps and trainings already made in this process, by what made them (seeds included): claims that
    #: read the same ones (M0 and C4 the frame at init; Q1, Q2, Q3 and C5 the trainings) share them instead of
    #: building, probing or training the models again
    cache: dict[tuple, Any] = field(default_factory=dict, repr=False)
    #: trained weights to read beside the init (``--model-weights``; ``harness.trial.checkpoint.Checkpoint``), or None
    checkpoint: Any = None
    #: (built, config's) vocabulary sizes where every build at init cuts the vocabulary (``PROBE_VOCAB``), or None
    vocab: tuple[int, int] | None = None
    #: the overrides every build at init takes for that cut (``vocab_overrides``), {} when nothing is cut
    vocab_cut: dict[str, Any] = field(default_factory=dict)

    def build(self, seed: int = 0, **dims: int) -> nn.Module:
        """The model at random init (``torch.manual_seed(seed)``), eval mode, float32; ``dims``: a family member
        (``head_dim=`` or ``width=``)."""
        extra: dict[str, Any] = {}
        if dims:
            base = self.base
            for dim, value in dims.items():
                if dim in self.sweep_reasons:
                    raise ModelError(self.sweep_reasons[dim])
                if self.kind == "transformers" and base is not None:
                    extra.update(_transformers_sweep(base.config, dim, int(value)))
                else:
                    extra[dim] = int(value)
        torch.manual_seed(seed)
        try:
            model = self.builder(**{**self.overrides, **self.vocab_cut, **extra})
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(f"{self.spec}({_kw({**self.overrides, **extra})}) raised "
                             f"{one_line(exc)}") from None
        if not isinstance(model, nn.Module):
            raise ModelError(f"{self.spec} returned {type(model).__name__}, not a torch.nn.Module")
        return model.float().eval()

    def describe(self) -> dict[str, Any]:
        return {"spec": self.spec, "class": self.model_class, "kind": self.kind, "overrides": self.overrides,
                "config_sha256": self.config_sha256, "source_sha256": self.source_sha256, "tap": self.backend,
                "causal": self.causal, "causal_from": self.causal_from, "preflight_max_diff": self.preflight_diff, "attention_calls": self.calls,
                "not_swept": self.sweep_reasons,
                **({"vocab_built": self.vocab[0], "vocab_config": self.vocab[1]} if self.vocab else {}),
                **({"weights": self.checkpoint.describe()} if self.checkpoint is not None else {}),
                "versions": {"torch": torch.__version__,
                             "transformers": getattr(sys.modules.get("transformers"), "__version__", None)}}


def _kw(d: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in d.items())


def resolve(spec: str | None = None, *, config: str | None = None, overrides: list[str] | None = None,
            path: str | None = None) -> ModelUnderTrial:
    """The builder named by ``--model`` (or ``--model-config``), with its overrides; not yet built."""
    if (spec is None) == (config is None):
        raise ModelError("give one of --model PKG.MODULE:BUILDER and --model-config CONFIG")
    parsed = parse_overrides(overrides)
    problem = import_dirs(path)
    if problem:
        raise ModelError(f"--model-path {problem}")
    if config is not None:
        trial = ModelUnderTrial(f"config {config}", _resolve_config(config), parsed)
        check_overrides(trial)
        return trial
    if ":" not in spec:
        raise ModelError(f"--model {spec!r} is not PKG.MODULE:BUILDER (e.g. my_pkg.models:build_model)")
    try:
        builder = pkgutil.resolve_name(spec)
    except Exception as exc:
        raise ModelError(f"--model {spec!r} cannot be imported: {first_line(exc)}") from None
    if not callable(builder):
        raise ModelError(f"--model {spec!r} is a {type(builder).__name__}, not a callable that builds a model")
    trial = ModelUnderTrial(spec, builder, parsed, source_sha256=source_hash(inspect.getmodule(builder)))
    check_overrides(trial)
    return trial


def probe_vocab(trial: ModelUnderTrial) -> tuple[int, int] | None:
    """(``PROBE_VOCAB``, or past the highest of the config's ``KEPT_IDS``, the config's vocabulary) for a model
    built from a config whose vocabulary is larger and that takes ``vocab_size``; None otherwise (a module's own
    builder, no config, or nothing to cut)."""
    config = getattr(trial.base, "config", None)
    full = getattr(config, "vocab_size", None)
    if not isinstance(full, int) or not _takes_key(trial, "vocab_size"):
        return None
    kept = [getattr(config, k, None) for k in KEPT_IDS]
    cut = max([PROBE_VOCAB] + [i + 1 for i in kept if isinstance(i, int)])
    return (cut, full) if cut < full else None


def vocab_overrides(trial: ModelUnderTrial) -> dict[str, Any]:
    """The overrides of a build at init with the vocabulary cut (``trial.vocab``; the config read from
    ``trial.base``): its size, and None for each of ``DROPPED_IDS`` the config sets outside it (a list of ids keeps
    those inside); {} when nothing is cut."""
    if not trial.vocab:
        return {}
    cut = trial.vocab[0]
    out: dict[str, Any] = {"vocab_size": cut}
    config = getattr(trial.base, "config", None)
    for key in DROPPED_IDS:
        ids = trial.overrides.get(key, getattr(config, key, None))
        if isinstance(ids, int) and ids >= cut:
            out[key] = None
        elif isinstance(ids, (list, tuple)) and any(isinstance(i, int) and i >= cut for i in ids):
            inside = [i for i in ids if not (isinstance(i, int) and i >= cut)]
            out[key] = inside or None
    return out


def preflight(trial: ModelUnderTrial, batch: int = 2, length: int = 16, cut_vocab: bool = True) -> ModelUnderTrial:
    """Build once, feed once, pick the tap (``model_probes.preflight``), and read what the claims need; a
    ``ModelError`` (one line) when any of it fails, or when the model would not fit in memory (``check_fits``).
    ``cut_vocab``: build at init with the vocabulary cut to ``PROBE_VOCAB`` (``probe_vocab``), unless the cut
    model cannot be built (then the config's)."""
    trial.base = _on_meta(trial)
    trial.vocab = probe_vocab(trial) if cut_vocab else None
    trial.vocab_cut = vocab_overrides(trial)
    check_fits(trial)
    try:
        model = trial.build(0)
    except ModelError:
        if trial.vocab is None:
            raise
        trial.vocab, trial.vocab_cut = None, {}
        check_fits(trial)
        model = trial.build(0)
    trial.base = model
    trial.model_class = f"{type(model).__module__}.{type(model).__qualname__}"
    trial.kind = "transformers" if model_probes.is_transformers(model) else "module"
    trial.config_sha256 = _config_sha256(model)
    if trial.source_sha256 is None:
        trial.source_sha256 = source_hash(type(model))
    try:
        inputs = model_probes.model_inputs(model, batch, length, 0)
        found = model_probes.preflight(model, inputs)
    except model_probes.TapError as exc:
        raise ModelError(f"{trial.spec}: {exc}") from None
    except Exception as exc:
        raise ModelError(f"{trial.spec}: the model raised on a {batch}x{length} input: {one_line(exc)}") from None
    trial.backend, trial.calls, trial.preflight_diff, trial.tried = found.backend, found.calls, found.max_diff, \
        found.tried
    trial.causal = declared_causal(model)
    if trial.causal is not None:
        trial.causal_from = "the model's is_causal attribute"
    elif found.causal_calls:
        trial.causal = True
        trial.causal_from = f"SDPA's is_causal=True at {found.causal_calls} of {found.calls} attention calls"
    if trial.kind != "transformers":
        for dim in SWEEP_DIMS:
            if not takes(trial.builder, dim):
                trial.sweep_reasons[dim] = f"the builder {trial.spec} takes no {dim}= keyword"
    config = getattr(model, "config", None)
    width = getattr(config, "hidden_size", None) if config is not None else None
    width = width or next((getattr(model, k) for k in ("d_model", "hidden_size", "width", "dim")
                           if isinstance(getattr(model, k, None), int)), None)
    trial.width = int(width) if width else None
    trial.base = _on_meta(trial) or model
    return trial


def _on_meta(trial: ModelUnderTrial) -> nn.Module | None:
    """The model built on the meta device (its config and shapes, no memory), or None where the builder cannot."""
    try:
        with torch.device("meta"):
            model = trial.builder(**trial.overrides)
    except Exception:
        return None
    return model if isinstance(model, nn.Module) else None
