"""A new claim's three files, scaffolded (docs/adding-a-claim.md):

    python -m harness.suite.new_claim R4 --title "Attention rows are distributions over the allowed keys"

writes ``harness/profiles/r4.py`` (every number the suite reads about it), ``claims/test_r4_<slug>.py`` (the
methods section: a probe-only skeleton in the shape of the suite's claim modules, one exact check per criterion)
and ``tests/claims/test_r4.py`` (each counted criterion refuted under every fault its ``falsified_by`` names, and
holding without one). Every field the suite requires is there; what only the author can write is marked
``TODO(new_claim)``, and ``tests/test_claim_layout.py`` fails until no marker is left (``falsified_by``'s marker also
fails tests/claims/test_criteria.py: it names no fault).

The id is a letter and digits: C (a claim), R (a recommendation), Q (a question), M (a model check); the letter sets
``kind``. An id already taken, a malformed id or slug, or an empty title: one line, exit 4.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Sequence

from harness.suite import OneLineParser

ROOT = Path(__file__).resolve().parents[2]
MARKER = "TODO(new_claim)"
#: the id's letter -> the claim's kind (ev.claim's ``kind``)
KINDS = {"C": "claim", "R": "recommendation", "Q": "question", "M": "claim"}
CLAIM_ID = re.compile(r"([CRQM])(\d+)")
SLUG = re.compile(r"[a-z][a-z0-9_]*")

PROFILE = '''"""{cid}'s numbers: its budgets at each profile (smoke is the base; standard and full override it), its expected wall
times, the faults that must refute it, and its kernel-trial status. The claim module is ``claims/test_{lid}_*.py``;
``harness.profiles`` reads this file."""
from harness.profiles.merge import overrides

# {marker}: every number the module reads, each with its reason (what sets it; what was measured). A probe at
# init needs a model size and a few seeds; standard and full override only what they change.
SMOKE = {{"model": {{"d_model": 32, "n_heads": 4}}}}
BUDGETS = {{"smoke": SMOKE,
           "standard": overrides(SMOKE, {{}}),
           "full": overrides(SMOKE, {{"model": {{"d_model": 64, "n_heads": 8}}}})}}

#: expected wall time (s) under `-n 2 --dist loadgroup` on the 2-core box, by profile (a report, not a test;
#: the scheduler starts the longest first); its dry run's
WALL_BUDGET_S = {{"smoke": 5}}           # {marker}: measured (the run's terminal summary prints it)
DRY_RUN_WALL_BUDGET_S = {{"standard": 5, "full": 5}}

#: the faults (model/faults.py) under which this claim must come out refuted in the fault matrix (its fast counted
#: criteria name them too); () for a claim the matrix does not test
REFUTED_BY_FAULTS = ("{marker}: a fault of model/faults.py",)

#: under --attention this claim is skipped, for this reason (or True: it judges the kernel)
KERNEL_TRIAL = "{marker}: why it does not judge a user's kernel under --attention"
'''

MODULE = '''"""{cid}: {title} (NOTE-011, {kind} {cid}).

**Claim.** {marker}: the note's words, quoted, and what would follow if they were false.

**Design.** A probe of freshly initialised models (budgets: ``harness/profiles/{lid}.py``).
{marker}: what is measured, on which model and inputs, and why this design measures the claim.

**Criteria** (``CRITERIA``; the harness decides). {marker}: each criterion argued from the note before the numbers
are seen; each counted one names in ``falsified_by`` the fault under which it must come out refuted.

**Refuted by**: {marker}: the outcome that refutes the claim.
"""
from __future__ import annotations

import pytest
import torch

from harness.record import decision
from model import ModelConfig, MultiHeadAttention, capture

pytestmark = pytest.mark.claim("{cid}")

CLAIM_ID = "{cid}"

#: name -> ev.criterion's keyword arguments (docs/adding-a-claim.md). A counted criterion (the default role) names
#: in ``falsified_by`` the faults of model/faults.py under which it must come out refuted; when no fault fits, add
#: one there (with the model code it changes), or make the criterion a premise or reported (``role=``), never
#: counted. ``quote``: the words of the note (docs/NOTE-011.txt) it tests, verbatim, as every premise and counted
#: criterion has (tests/claims/test_quotes.py finds it). ``fast=True``: the fault matrix runs it (``--fast``).
CRITERIA = {{
    "{criterion}": dict(
        falsified_by=("{marker}: a fault of model/faults.py",), fast=True,
        quote="{marker}: the words of the note it tests, verbatim (docs/NOTE-011.txt)",
        rule=decision.exact("{marker}: why a deterministic check (or another decision rule)"),
        prediction="{marker}: what the note predicts, as a number and its tolerance",
        metric="{marker}: the quantity read"),
}}

#: a reviewer's first objections (harness.record.objections.OBJECTIONS) and how this module meets each; firmness is
#: the harness's
OBJECTIONS = {{
    "tuned_lr": ("not applicable", "a probe at init: nothing trained"),
    "ceiling": ("not applicable", "{marker}: answered, open or not applicable, and how"),
    "selection": ("not applicable", "no best arm or setting is chosen"),
    "second_task": ("not applicable", "{marker}: answered, open or not applicable, and how"),
}}


def model_config(block: dict) -> ModelConfig:
    """The probed model: the profile's size."""
    return ModelConfig(**block["model"])


def check_{criterion}(block: dict, seeds: list[int]) -> tuple[bool, float, str]:
    """(holds, measured, detail) over ``seeds``, float64. {marker}: measure (``capture`` reads the attention's
    taps: ``*.logits``, ``*.weights``, ``*.q``, ``*.k``)."""
    cfg = model_config(block)
    for seed in seeds:
        torch.manual_seed(seed)
        mha = MultiHeadAttention(cfg).double().eval()
        x = torch.randn(2, 8, cfg.d_model, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad(), capture(mha) as cache:
            mha(x)
        del cache
    raise NotImplementedError("{marker}: measure")


#: criterion -> its check(block, seeds) -> (holds, measured, detail); tests/claims/test_{lid}.py runs each under the
#: faults it names
CHECKS = {{"{criterion}": check_{criterion}}}


def test_{lid}_{slug}(evidence, profile, seeds, fast):
    block = profile.claim(CLAIM_ID)
    ev = evidence
    ev.claim(CLAIM_ID, kind="{kind}",
             title={title!r},
             statement="{marker}: quoted from the note",
             strength="{marker}: the note's strength",
             limitation="{marker}: the note's limitation that bears on it")
    ev.answer_objections(OBJECTIONS)
    crits = ev.declare(CRITERIA, fast=fast)                            # criteria first, then measure
    for name, crit in crits.items():
        holds, measured, detail = CHECKS[name](block, seeds)
        crit.check(holds, measured=measured, detail=detail)
        ev.metric(CRITERIA[name]["metric"], measured)
    ev.headline(CRITERIA[next(iter(crits))]["metric"])
'''

TEST = '''"""{cid}'s criteria can fail: each counted criterion's check fails under every fault its
``falsified_by`` names, and holds on the unfaulted model, at the smoke budget."""
from __future__ import annotations

import pytest

from claims import {module} as claim
from harness.profiles import get_profile
from harness.record.verdict import COUNTED, role_of
from model import inject

BUDGET = get_profile("smoke").claim(claim.CLAIM_ID)
SEEDS = [0, 1]
FALSIFIERS = [(name, fault) for name, spec in claim.CRITERIA.items() if role_of(spec) == COUNTED
              for fault in spec.get("falsified_by", ())]


@pytest.mark.parametrize("name", list(claim.CHECKS))
def test_the_check_holds_on_the_unfaulted_model(name):
    holds, _, detail = claim.CHECKS[name](BUDGET, SEEDS)
    assert holds, detail


@pytest.mark.parametrize("name, fault", FALSIFIERS)
def test_a_counted_criterion_fails_under_its_falsifier(name, fault):
    with inject(fault):
        holds, _, detail = claim.CHECKS[name](BUDGET, SEEDS)
    assert not holds, f"{{name}} holds under {{fault}}: {{detail}}"
'''


def slug_of(title: str) -> str:
    """The module name's tail: the title's first five words, lower case, joined by underscores."""
    words = re.findall(r"[a-z0-9]+", title.lower().replace("'", ""))
    return "_".join(words[:5])


def paths(claim_id: str, slug: str, root: Path = ROOT) -> dict[str, Path]:
    lid = claim_id.lower()
    return {"profile": root / "harness" / "profiles" / f"{lid}.py",
            "module": root / "claims" / f"test_{lid}_{slug}.py",
            "test": root / "tests" / "claims" / f"test_{lid}.py"}


def scaffold(claim_id: str, title: str, slug: str | None = None, root: Path = ROOT) -> dict[str, Path]:
    """Write the three files of a new claim; ValueError (one line) for a malformed or taken id, slug or title."""
    m = CLAIM_ID.fullmatch(claim_id)
    if not m:
        raise ValueError(f"{claim_id!r} is not a claim id: C (a claim), R (a recommendation), Q (a question) or M (a "
                         "model check), then digits, e.g. R4")
    title = " ".join(title.split())
    if not title or '"' in title or "\\" in title:
        raise ValueError("--title must be a non-empty line without double quotes or backslashes")
    slug = slug or slug_of(title)
    if not SLUG.fullmatch(slug):
        raise ValueError(f"slug {slug!r} must be lower-case letters, digits and underscores, starting with a letter")
    lid = claim_id.lower()
    taken = ([root / "harness" / "profiles" / f"{lid}.py"] + sorted((root / "claims").glob(f"test_{lid}_*.py"))
             + [root / "tests" / "claims" / f"test_{lid}.py"])
    taken = [p for p in taken if p.exists()]
    if taken:
        raise ValueError(f"claim {claim_id} exists already: {', '.join(str(p.relative_to(root)) for p in taken)}")
    out = paths(claim_id, slug, root)
    fields = {"cid": claim_id, "lid": lid, "title": title, "kind": KINDS[m.group(1)], "slug": slug,
              "marker": MARKER, "criterion": "holds", "module": out["module"].stem}
    for key, template in (("profile", PROFILE), ("module", MODULE), ("test", TEST)):
        out[key].write_text(template.format(**fields), encoding="utf-8")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m harness.suite.new_claim", description=__doc__.split("\n\n")[0])
    parser.add_argument("claim_id", metavar="ID", help="the new claim's id: C, R, Q or M and digits (e.g. R4)")
    parser.add_argument("--title", required=True, help="a short title, one line")
    parser.add_argument("--slug", help="the module name's tail (default: from the title's first five words)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to write into (default: this one)")
    args = parser.parse_args(argv)
    try:
        out = scaffold(args.claim_id, args.title, args.slug, args.root)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    for path in out.values():
        print(f"wrote {path.relative_to(args.root)}")
    print(f"next: fill every {MARKER} (docs/adding-a-claim.md), then `pytest {out['test'].relative_to(args.root)} "
          f"{out['module'].relative_to(args.root)}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
