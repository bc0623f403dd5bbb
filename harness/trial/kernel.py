"""The user's attention kernel, taken by name and called in one form (issue 27).

``--attention pkg.module:callable`` is resolved with ``pkgutil.resolve_name`` (uvicorn's ``app:app``; with
``--attention-factory`` the object is called with no arguments to build the kernel, as uvicorn's ``--factory``).
The calling convention is read off ``inspect.signature`` (``--attention-convention`` overrides it):

* ``sdpa``: ``fn(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None) -> out``,
  PyTorch's ``scaled_dot_product_attention``: (B, H, L, D) in and out, a bool mask True where a query may attend,
  a float mask added to the scores.
* ``hf``: transformers' ``AttentionInterface``: ``fn(module, query, key, value, attention_mask, scaling=None,
  dropout=0.0, **kwargs) -> (out, weights or None)``; (B, H, L, D) in, **(B, L, H, D)** out. ``module`` is a
  stand-in carrying ``is_causal, training, scaling, head_dim, num_key_value_groups``. transformers' models build
  every mask themselves, so the trial does too: the mask is additive float, 0 where a query may attend and
  ``finfo(dtype).min`` where not (as transformers' eager masks), shape (B, 1 or H, L, S); causal is
  bottom-right (query i is position S - L + i, as with a KV cache), and ``scaling`` is always passed.

``Kernel.__call__(q, k, v, *, mask=None, is_causal=False, scale=None, dropout_p=0.0) -> (out, weights or None)``
is the one form the probes and the model use: (B, H, L, D) in and out whatever the convention.

An ``nn.Module`` (or a factory building one) is a kernel too: its convention is read off ``forward``, it is put in
eval mode (as inference runs it), and its source hash is its class's. A kernel that takes self-attention only
(it raises when L != S, as a ViT block) passes the pre-flight on a square input; the shapes it rejects are recorded
in ``Kernel.unsupported`` and on each probe case as not supported by this kernel, never as a failure.

Optional shapes (GQA, d_v != d_k) and features (a sliding window, a logit soft-cap, dropout, transformers' mask-less
``is_causal`` path) are tried once at pre-flight (``OPTIONAL_SHAPES``, ``OPTIONAL_FEATURES``); the probes draw
only what the kernel took, and record the rest in ``Kernel.unsupported``.

A user's mistake (an unresolvable name, a signature that fits no convention, a wrong output shape or dtype) is a
``KernelError`` whose one-line message names what was expected; the plugin turns it into a usage error (exit 4).
"""
from __future__ import annotations

import hashlib
import inspect
import math
import pkgutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

CONVENTIONS = ("sdpa", "hf")
SIGNATURES = {
    "sdpa": "fn(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None) -> out (B, H, L, D)",
    "hf": "fn(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs) -> "
          "(out (B, L, H, D), weights or None)",
}
DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16,
          "float16": torch.float16}
PREFLIGHT_SHAPE = dict(B=1, H=2, L=3, S=4, D=16)   # the tiny input every kernel sees once before anything runs
SELF_ATTENTION_SHAPE = dict(PREFLIGHT_SHAPE, L=4)  # its square twin, for a kernel that takes self-attention only
CROSS_ATTENTION = "cross-attention (L != S)"       # Kernel.unsupported's key for a self-attention-only kernel
GQA = "grouped-query attention (H_kv < H)"        # Kernel.unsupported's keys for what a kernel does not take
DV = "a value head dim other than d_k (d_v != d_k)"
#: the shapes a kernel may or may not take, tried once at pre-flight: Kernel attribute -> (its unsupported key, the
#: input (B, H, H_kv, L, S, D, D_v)); the probes draw them only for a kernel that took them
OPTIONAL_SHAPES = {"gqa": (GQA, dict(B=1, H=4, H_kv=2, L=4, S=4, D=16, D_v=16)),
                   "dv": (DV, dict(B=1, H=2, H_kv=2, L=4, S=4, D=16, D_v=8))}
WINDOW = "sliding-window attention (sliding_window=W)"   # Kernel.unsupported's keys for the optional features
SOFTCAP = "logit soft-capping (softcap=c: c tanh(logits / c))"
HF_IS_CAUSAL = "transformers' is_causal path without a mask (module.is_causal, attention_mask=None)"
DROPOUT = "attention dropout (dropout_p > 0)"
#: the features a kernel may or may not take, tried once at pre-flight on a causal square input (B, H, L, D) =
#: (1, 2, 8, 16): Kernel attribute -> (its unsupported key, the call's keywords). A kernel takes one when it runs
#: with it and its output moves (a keyword swallowed by ``**kwargs`` and ignored is not taken); the probes draw it
#: only then. ``hf_is_causal``: hf kernels only (an sdpa kernel's ``is_causal`` is always drawn)
OPTIONAL_FEATURES = {"window": (WINDOW, dict(window=2)), "softcap": (SOFTCAP, dict(softcap=0.5)),
                     "hf_is_causal": (HF_IS_CAUSAL, dict(build_mask=False)), "dropout": (DROPOUT, dict(dropout_p=0.5))}


class KernelError(ValueError):
    """The user's kernel cannot be put on trial as given; the message is one line naming what was expected."""


class KernelRaised(RuntimeError):
    """The kernel raised inside a model (``register``'s binding: R1's training arm); its own message, one line."""


def first_line(exc: BaseException) -> str:
    """'<type>: <the first line of its message>', for recording a kernel's own error on one line."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


@dataclass
class HFModule:
    """What transformers' attention functions read off ``module`` (a stand-in for the model's attention layer)."""
    is_causal: bool = False
    training: bool = False
    scaling: float = 1.0
    head_dim: int = 0
    num_key_value_groups: int = 1
    layer_idx: int = 0
    config: Any = None


@dataclass
class Kernel:
    """A resolved kernel in its convention; call it in the one internal form (module docstring)."""
    fn: Callable[..., Any]
    name: str
    convention: str
    factory: bool = False
    dtypes: tuple[str, ...] = ("float32",)
    source_sha256: str | None = field(default=None)
    rejected_dtypes: dict[str, str] = field(default_factory=dict)   # dtype -> the kernel's message at pre-flight
    unsupported: dict[str, str] = field(default_factory=dict)       # shape class -> the kernel's message there
    gqa: bool = False                   # it took fewer key/value heads than query heads at pre-flight
    dv: bool = False                    # it took a value head dim other than d_k at pre-flight
    window: bool = False                # it took sliding_window=W at pre-flight (OPTIONAL_FEATURES)
    softcap: bool = False               # it took softcap=c
    hf_is_causal: bool = False          # (hf) it reads module.is_causal when no mask is passed
    dropout: bool = False               # its output moves with dropout_p > 0 (hf: dropout, module.training)

    @property
    def self_attention_only(self) -> bool:
        return CROSS_ATTENTION in self.unsupported

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, mask: torch.Tensor | None = None,
                 is_causal: bool = False, scale: float | None = None, dropout_p: float = 0.0, window: int = 0,
                 softcap: float = 0.0, build_mask: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``window`` (W > 0: a query sees itself and the W - 1 keys before it, transformers' ``sliding_window``)
        and ``softcap`` (c > 0: logits c tanh(logits / c) after the scale, Gemma 2's) go to the kernel as the
        keywords ``sliding_window`` and ``softcap``, only when set. hf: the trial builds the causal (and windowed)
        mask as transformers does, or with ``build_mask=False`` and no mask takes transformers' ``is_causal`` path
        (``module.is_causal``, ``is_causal=True``, ``attention_mask=None``)."""
        grouped = k.shape[-3] != q.shape[-3]
        extra: dict[str, Any] = {}
        if window:
            extra["sliding_window"] = int(window)
        if softcap:
            extra["softcap"] = float(softcap)
        if self.convention == "sdpa":     # GQA as SDPA takes it: enable_gqa=True, where the kernel names it
            gqa = {"enable_gqa": True} if grouped and takes(self.fn, "enable_gqa") else {}
            return self.fn(q, k, v, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale, **gqa,
                           **extra), None
        L, S, D = q.shape[-2], k.shape[-2], q.shape[-1]
        scaling = 1.0 / math.sqrt(D) if scale is None else float(scale)
        additive = None if mask is None else mask.to(q.dtype) if mask.dtype != torch.bool else \
            additive_mask(mask, q.dtype)
        if is_causal and (build_mask or mask is not None):
            causal = causal_allowed(L, S, q.device, window)
            additive = additive_mask(causal, q.dtype) if additive is None else \
                additive.masked_fill(~causal, torch.finfo(q.dtype).min)
        elif is_causal:
            extra["is_causal"] = True
        if additive is not None:
            additive = additive.expand(q.shape[0], additive.shape[-3] if additive.dim() >= 3 else 1, L, S)
        module = HFModule(is_causal=is_causal, training=dropout_p > 0, scaling=scaling, head_dim=D,
                          num_key_value_groups=q.shape[-3] // k.shape[-3])   # GQA as transformers passes it
        out, weights = self.fn(module, q, k, v, additive, scaling=scaling, dropout=dropout_p, **extra)
        return out.transpose(1, 2), weights

    def returns_weights(self, device: torch.device | str = "cpu") -> bool:
        """Whether the kernel hands back its attention weights (``hf``: a tensor, not None; ``sdpa`` never does),
        from one call on the pre-flight input: known before a claim measures, so that a criterion reading weights
        can be declared for what it will be (C5)."""
        if self.convention == "sdpa":
            return False
        q, k, v = preflight_inputs(DTYPES[self.dtypes[0]], device, torch.Generator().manual_seed(0),
                                   SELF_ATTENTION_SHAPE if self.self_attention_only else None)
        return self(q, k, v)[1] is not None

    @property
    def identity(self) -> str:
        """What names this kernel in a model config (``ModelConfig.kernel``) and so in the sweep's memo key: its
        name, convention and source hash, so that two kernels never share a trained run."""
        return f"{self.name} [{self.convention}] sha256:{self.source_sha256 or 'unreadable'}"

    def describe(self) -> dict[str, Any]:
        """results.json's ``attention`` record."""
        return {"name": self.name, "convention": self.convention, "source_sha256": self.source_sha256,
                "factory": self.factory, "dtypes": list(self.dtypes), "rejected_dtypes": dict(self.rejected_dtypes),
                "unsupported": dict(self.unsupported), "gqa": self.gqa, "dv": self.dv, "window": self.window,
                "softcap": self.softcap, "hf_is_causal": self.hf_is_causal, "dropout": self.dropout}


def identity(fn: Callable[..., Any] | None) -> str | None:
    """A kernel's identity (``Kernel.identity``; a plain callable's ``module:qualname`` and source hash), or None for
    no kernel: what the sweep's memo keys on beside the config."""
    if fn is None:
        return None
    if isinstance(fn, Kernel):
        return fn.identity
    name = f"{getattr(fn, '__module__', None) or '?'}:{getattr(fn, '__qualname__', type(fn).__qualname__)}"
    return f"{name} sha256:{source_hash(fn) or 'unreadable'}"


def register(kernel: Kernel) -> str:
    """``kernel`` bound to its identity in ``model.kernels``, for ``ModelConfig(kernel=...)``: returns that name (a
    sweep variant's override ``{"kernel": register(k)}`` trains a model whose attention calls ``k``). What the kernel
    raises there comes out as ``KernelRaised`` with its own message, so a caller can tell it from the harness's."""
    from model.kernels import register_kernel

    def guarded(q, k, v, **kw):
        try:
            return kernel(q, k, v, **kw)
        except Exception as exc:      # the user's kernel: its own message, on one line
            raise KernelRaised(f"{kernel.name} raised {first_line(exc)}") from exc

    return register_kernel(kernel.identity, guarded)


def additive_mask(allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A bool mask (True = may attend) as transformers' eager masks: 0 where allowed, finfo(dtype).min where not."""
    return torch.zeros(allowed.shape, dtype=dtype, device=allowed.device).masked_fill(~allowed,
                                                                                       torch.finfo(dtype).min)


def causal_allowed(L: int, S: int, device: torch.device | str = "cpu", window: int = 0,
                   alignment: str = "bottom-right") -> torch.Tensor:
    """(L, S) bool, True where query i may attend key j under a causal mask: j <= p, and j > p - ``window`` for a
    sliding window W > 0; p is i top-left (SDPA's is_causal) or i + S - L bottom-right (flash-attn, a KV cache)."""
    p = torch.arange(L, device=device)[:, None] + (S - L if alignment == "bottom-right" else 0)
    j = torch.arange(S, device=device)[None, :]
    return (j <= p) & (j > p - window) if window else j <= p


def takes(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` (a module: its forward) takes the keyword ``name`` (by name, or through ``**kwargs``)."""
    if fn is torch.nn.functional.scaled_dot_product_attention:
        return True
    try:
        params = inspect.signature(fn.forward if isinstance(fn, torch.nn.Module) else fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _positional(sig: inspect.Signature) -> list[str]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in sig.parameters.values() if p.kind in kinds]


def _label(fn: Any) -> str:
    """How a kernel is named in a message, on one line: its qualified name (a module's class), never its repr."""
    obj = type(fn) if isinstance(fn, torch.nn.Module) else fn
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__qualname__


def detect_convention(fn: Callable[..., Any]) -> str:
    """'sdpa' or 'hf' from the signature (a module's ``forward``, not ``Module.__call__``); KernelError when it fits
    neither (or cannot be read), suggesting ``--attention-convention``."""
    if fn is torch.nn.functional.scaled_dot_product_attention:
        return "sdpa"                                       # a builtin: no signature to read, but it is the one
    override = f"name its convention with --attention-convention {{{','.join(CONVENTIONS)}}}"
    try:
        sig = inspect.signature(fn.forward if isinstance(fn, torch.nn.Module) else fn)
    except (TypeError, ValueError):
        raise KernelError(f"the signature of {_label(fn)} cannot be read; {override}") from None
    names = _positional(sig)
    params = sig.parameters
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if len(names) >= 5 and names[0] == "module":
        return "hf"
    if len(names) >= 3 and names[0] != "module" and (var_kw or {"attn_mask", "is_causal", "scale"} <= set(params)):
        return "sdpa"
    where = f"{_label(fn)}.forward" if isinstance(fn, torch.nn.Module) else _label(fn)
    raise KernelError(f"signature {where}{sig} fits no convention; expected sdpa {SIGNATURES['sdpa']} or hf "
                      f"{SIGNATURES['hf']}; or {override}")


def parse_dtypes(spec: str) -> tuple[str, ...]:
    names = tuple(s.strip() for s in str(spec).split(",") if s.strip())
    bad = [n for n in names if n not in DTYPES]
    if not names or bad:
        raise KernelError(f"--attention-dtypes {spec!r}: expected a comma-separated list of {', '.join(DTYPES)}")
    return names


def import_dirs(path: str | None) -> str | None:
    """The current directory, and ``path`` before it, put on sys.path (as uvicorn's --app-dir "."), so that a user's
    ``pkg.module:name`` imports from where they run; None, or what is wrong with ``path`` (for the option's error)."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    if path:
        folder = str(Path(path).resolve())
        if not Path(folder).is_dir():
            return f"{path}: expected a directory to add to sys.path"
        if folder not in sys.path:
            sys.path.insert(0, folder)
    return None


def source_hash(*objs: Any) -> str | None:
    """sha256 of the kernel's source where ``inspect.getsource`` can read it (an instance, such as a module: its
    class's; several objects, such as a factory and the module it built: their sources in order), else None."""
    texts = []
    for obj in objs:
        if not (inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isclass(obj) or inspect.ismodule(obj)):
            obj = type(obj)
        try:
            texts.append(inspect.getsource(obj))
        except (OSError, TypeError):
            return None
    return hashlib.sha256("\n".join(texts).encode()).hexdigest() if texts else None


def resolve(name: str, *, path: str | None = None, factory: bool = False, convention: str | None = None,
            dtypes: str = "float32") -> Kernel:
    """The kernel ``name`` names (``pkg.module:callable``), in its convention; KernelError names what was wrong."""
    problem = import_dirs(path)
    if problem:
        raise KernelError(f"--attention-path {problem}")
    try:
        obj = pkgutil.resolve_name(name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise KernelError(f"--attention {name!r} cannot be resolved ({type(exc).__name__}: {exc}); expected "
                          "pkg.module:callable importable from the current directory or --attention-path") from None
    source = obj
    if factory:
        if not callable(obj):
            raise KernelError(f"--attention-factory: {name} is not callable; expected a factory taking no arguments")
        try:
            obj = obj()
        except Exception as exc:      # the user's factory: its own message, on one line
            raise KernelError(f"--attention-factory: {name}() raised {type(exc).__name__}: {exc}; expected a "
                              "factory that builds the kernel with no arguments") from None
    if not callable(obj):
        raise KernelError(f"--attention {name!r} is a {type(obj).__name__}, not callable; expected a kernel "
                          f"(or a factory with --attention-factory)")
    if convention is not None and convention not in CONVENTIONS:
        raise KernelError(f"--attention-convention {convention!r}: expected one of {', '.join(CONVENTIONS)}")
    conv = convention or detect_convention(obj)
    if isinstance(obj, torch.nn.Module):
        obj.eval()                                  # as inference runs it: no dropout of its own in the probes
    sources = (source,) if obj is source or type(obj) is source else (source, obj)
    return Kernel(fn=obj, name=name, convention=conv, factory=factory, dtypes=parse_dtypes(dtypes),
                  source_sha256=source_hash(*sources))


def preflight_inputs(dtype: torch.dtype, device: torch.device | str, g: torch.Generator, shape: dict | None = None
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v of the pre-flight shape (``PREFLIGHT_SHAPE``, or ``shape``), drawn from ``g`` in that order."""
    s = shape or PREFLIGHT_SHAPE
    return tuple(torch.randn(s["B"], s["H"], n, s["D"], generator=g).to(device=device, dtype=dtype)
                 for n in (s["L"], s["S"], s["S"]))


def preflight(kernel: Kernel, device: torch.device | str = "cpu") -> None:
    """Call the kernel once per dtype on a tiny input. A wrong return (type, shape, dtype) is a KernelError; a dtype
    the kernel raises on is dropped from ``kernel.dtypes`` into ``kernel.rejected_dtypes`` with its message (the
    probes run in the others), and a KernelError only when it raises on every dtype asked for. A kernel that
    raises on L != S but runs the square twin (``SELF_ATTENTION_SHAPE``) takes self-attention only: recorded in
    ``kernel.unsupported`` and checked on the square input."""
    accepted = []
    s = PREFLIGHT_SHAPE
    layout = "(B, L, H, D)" if kernel.convention == "hf" else "(B, H, L, D)"
    g = torch.Generator().manual_seed(0)
    for dname in kernel.dtypes:
        dtype = DTYPES[dname]
        q, k, v = preflight_inputs(dtype, device, g)
        try:
            raw = _raw_call(kernel, q, k, v)
        except KernelError:
            raise
        except Exception as exc:
            try:                                    # self-attention only? the square twin
                q, k, v = preflight_inputs(dtype, device, g, SELF_ATTENTION_SHAPE)
                raw = _raw_call(kernel, q, k, v)
                kernel.unsupported.setdefault(CROSS_ATTENTION, first_line(exc))
                s = SELF_ATTENTION_SHAPE
            except KernelError:
                raise
            except Exception:
                kernel.rejected_dtypes[dname] = first_line(exc)
                continue
        want_raw = (s["B"], s["L"], s["H"], s["D"]) if kernel.convention == "hf" else (s["B"], s["H"], s["L"], s["D"])
        if not isinstance(raw, torch.Tensor):
            raise KernelError(f"{kernel.name} returned {type(raw).__name__}; expected a tensor {layout} "
                              f"({kernel.convention} convention: {SIGNATURES[kernel.convention]})")
        if tuple(raw.shape) != want_raw:
            raise KernelError(f"{kernel.name} returned shape {tuple(raw.shape)} for (B, H, L, S, D) = "
                              f"{tuple(s.values())}; expected {layout} = {want_raw} ({kernel.convention} convention)")
        if raw.dtype != dtype:
            raise KernelError(f"{kernel.name} returned {raw.dtype} for {dname} inputs; expected {dname}")
        accepted.append(dname)
        if len(accepted) == 1:
            _preflight_optional(kernel, dtype, device, g)
            _preflight_features(kernel, dtype, device, g)
    if not accepted:
        dname, message = next(iter(kernel.rejected_dtypes.items()))
        raise KernelError(f"{kernel.name} raised {message} on the pre-flight input (B, H, L, S, D) = (1, 2, 3, 4, 16) "
                          f"{dname}{' (and on every other dtype asked for)' if len(kernel.rejected_dtypes) > 1 else ''}"
                          "; expected it to run")
    kernel.dtypes = tuple(accepted)


def _preflight_optional(kernel: Kernel, dtype: torch.dtype, device, g: torch.Generator) -> None:
    """Does the kernel take each of ``OPTIONAL_SHAPES`` (fewer key/value heads than query heads; d_v != d_k)? Its
    attribute set if so, else its message (or its wrong shape) in ``kernel.unsupported``."""
    for attr, (label, s) in OPTIONAL_SHAPES.items():
        q, k, v = (torch.randn(s["B"], h, n, d, generator=g).to(device=device, dtype=dtype)
                   for h, n, d in ((s["H"], s["L"], s["D"]), (s["H_kv"], s["S"], s["D"]), (s["H_kv"], s["S"], s["D_v"])))
        want = (s["B"], s["H"], s["L"], s["D_v"])
        try:
            out, _ = kernel(q, k, v)
        except Exception as exc:      # the user's kernel: its own message, on one line
            kernel.unsupported[label] = first_line(exc)
            continue
        if tuple(out.shape) != want:
            kernel.unsupported[label] = (f"returned shape {tuple(out.shape)} for q {tuple(q.shape)}, k "
                                         f"{tuple(k.shape)}, v {tuple(v.shape)}; expected {want}")
            continue
        setattr(kernel, attr, True)


def _preflight_features(kernel: Kernel, dtype: torch.dtype, device, g: torch.Generator) -> None:
    """Does the kernel take each of ``OPTIONAL_FEATURES``? On a causal square input (self-attention: every kernel
    takes it) it is called without the feature and with it: its attribute set where it runs and the output moves,
    else its message, or that it ignored the feature, in ``kernel.unsupported``."""
    q, k, v = (torch.randn(1, 2, 8, 16, generator=g).to(device=device, dtype=dtype) for _ in range(3))
    for attr, (label, extra) in OPTIONAL_FEATURES.items():
        if attr == "hf_is_causal" and kernel.convention != "hf":
            continue
        try:
            with torch.no_grad(), torch.random.fork_rng(devices=[]):
                plain = kernel(q, k, v, is_causal=attr != "hf_is_causal")[0]
                out = kernel(q, k, v, is_causal=True, **extra)[0]
        except Exception as exc:      # the user's kernel: its own message, on one line
            kernel.unsupported[label] = first_line(exc)
            continue
        if tuple(out.shape) != tuple(plain.shape) or not torch.isfinite(out).all():
            kernel.unsupported[label] = f"returned shape {tuple(out.shape)} or non-finite values with it"
        elif torch.equal(out, plain):
            kernel.unsupported[label] = "its output does not change with it (the keyword is ignored)"
        else:
            setattr(kernel, attr, True)


def _raw_call(kernel: Kernel, q, k, v) -> Any:
    """The kernel's own return value (hf: the output before the transpose), for the pre-flight checks."""
    if kernel.convention == "sdpa":
        return kernel.fn(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None)
    module = HFModule(scaling=1.0 / math.sqrt(q.shape[-1]), head_dim=q.shape[-1])
    res = kernel.fn(module, q, k, v, None, scaling=module.scaling, dropout=0.0)
    if not (isinstance(res, tuple) and len(res) == 2):
        raise KernelError(f"{kernel.name} returned {type(res).__name__}; expected (out (B, L, H, D), weights or "
                          "None) (hf convention)")
    return res[0]
