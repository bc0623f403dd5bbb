#!/usr/bin/env bash
# The first thing to run on a GPU machine (issue 18): is this a CUDA build that sees the devices, how much does
# stacking seeds gain on it (issue 57), does every config of the full profile build and train on CUDA (a dry run:
# real sizes, 2 steps, 2 seeds), and how far does the full profile get in claim-sized parts (issue 57)? Prints a
# table of times. Usage:
#   bash scripts/gpu_check.sh                      # the next full parts not yet in reports/full.json, while they fit
#   GPU_CHECK_PARTS="C1 Q1" bash scripts/gpu_check.sh  # these parts, in this order ("C3+R1" is one part)
#   GPU_CHECK_PARTS_ONLY=1 bash scripts/gpu_check.sh   # the parts alone: no benchmark, dry run or kernel trial
#   GPU_CHECK_SECONDS=400 bash scripts/gpu_check.sh    # the seconds the parts may take together (default 240, and
#                                                      # 540 with GPU_CHECK_PARTS_ONLY: a 10-minute command in all)
# A part is one pytest run at --profile full (its seeds from the full lock) of one claim or of claims joined by '+'
# (C3, C4, R1 and R3 train one shared sweep, memoised inside one process, so they are one part), stopped by
# `timeout` at what is left of GPU_CHECK_SECONDS. A part that finishes is merged into reports/full.json
# (--update-baseline keeps every other claim); one that is stopped (exit 124) merges nothing; a claim that errored
# is dropped from it again (exit 3). The plan: docs/gpu-and-machines.md.
# Then (issue 27) the probe-level trial of PyTorch's SDPA backends, and of transformers' attention where installed.
# Writes reports/gpu-check/: stacked_seeds.txt, dry/, part-<IDS>/, kernel-*/ (results.json, index.html). Exit
# status: non-zero if a step failed; a part whose claim ran and was refuted (1) or that was stopped (124) is a
# finding, not a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${GPU_CHECK_OUT:-reports/gpu-check}
FULL=${GPU_CHECK_FULL:-reports/full.json}
# the plan's order: cheapest first by the standard run's CPU times (docs/gpu-and-machines.md); C2 is left out until
# it is split (1652 s at standard on 2 cores)
PARTS=${GPU_CHECK_PARTS:-M0+R2 Q3 Q2 Q1 C1 C5 C3+R1+R3+C4}
ONLY=${GPU_CHECK_PARTS_ONLY:-0}
PART_SECONDS=${GPU_CHECK_SECONDS:-$([ "$ONLY" = 1 ] && echo 540 || echo 240)}
mkdir -p "$OUT"
declare -a NAMES TIMES STATUS
full_part() {  # full_part PART SECONDS MODULES...: one part, merged into $FULL; a claim that errored dropped again
  local part=$1 limit=$2; shift 2
  timeout "$limit" pytest "$@" --profile full --device cuda -p no:cacheprovider --report-dir "$OUT/part-$part" \
    --update-baseline --baseline "$FULL"
  local rc=$?
  [ "$rc" -eq 124 ] && return 124
  local errored
  errored=$(python -c "import json,sys; c=json.load(open(sys.argv[1]))['claims']
print(' '.join(k for k, v in c.items() if v.get('verdict') == 'error'))" "$OUT/part-$part/results.json" 2>/dev/null)
  if [ -n "$errored" ]; then
    echo "full part $part: $errored errored: dropped from $FULL again"
    python -m harness.report baseline "$FULL" --drop $errored
    return 3
  fi
  return $rc
}
step() {  # step NAME CMD...: run, time, remember
  local name=$1; shift
  echo; echo "=== $name: $*"
  local t0=$SECONDS
  "$@"; local rc=$?
  NAMES+=("$name"); TIMES+=("$(( SECONDS - t0 ))"); STATUS+=("$rc")
  return $rc
}

step "environment" python - <<'PY'
import sys
import torch
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, CUDA build {torch.version.cuda}")
if torch.version.cuda is None:
    sys.exit("a CPU-only torch build: install the CUDA wheel (the README's install takes PyPI's CUDA build of "
             "torch==2.13.0 on a GPU machine)")
if not torch.cuda.is_available():
    sys.exit("torch is a CUDA build but sees no GPU (driver? CUDA_VISIBLE_DEVICES?)")
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    print(f"cuda:{i} {p.name}, {p.total_memory / 2**30:.0f} GiB, capability {p.major}.{p.minor}")
x = torch.randn(1024, 1024, device="cuda")
torch.cuda.synchronize()
print("a matmul on cuda:0:", float((x @ x).abs().mean()))
PY
env_rc=$?
NGPU=$(python -c "import torch; print(max(torch.cuda.device_count(), 1))" 2>/dev/null || echo 1)
if [ "$env_rc" -eq 0 ]; then
  XDIST=()
  [ "$NGPU" -gt 1 ] && XDIST=(-n "$NGPU" --dist loadgroup)
  if [ "$ONLY" != 1 ]; then
    # issue 57: seeds per second of C3's sweep arm, the loop against k seeds stacked, on the GPU
    step "stacked seeds benchmark on cuda" bash -o pipefail -c "python benchmarks/stacked_seeds.py --device cuda --ks 1 8 32 \
      --steps 30 --rounds 1 | tee '$OUT/stacked_seeds.txt'"
    step "full dry run on cuda" pytest --profile full --dry-run --device cuda "${XDIST[@]}" -p no:cacheprovider \
      --report-dir "$OUT/dry"
  fi
  # the full profile in claim-sized parts: each part not yet wholly in $FULL, while time is left
  HAVE=$(python -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['claims']))" "$FULL" 2>/dev/null)
  left=$PART_SECONDS
  for part in $PARTS; do
    ids=(${part//+/ })
    missing=0
    for id in "${ids[@]}"; do [[ " $HAVE " == *" $id "* ]] || missing=1; done
    if [ -z "${GPU_CHECK_PARTS:-}" ] && [ "$missing" -eq 0 ]; then continue; fi
    [ "$left" -lt 60 ] && { echo "=== full part $part: not started, ${left} s left"; continue; }
    modules=()
    for id in "${ids[@]}"; do modules+=($(ls claims/test_"${id,,}"_*.py 2>/dev/null | head -1)); done
    [ "${#modules[@]}" -ne "${#ids[@]}" ] && { echo "=== full part $part: a claim module is missing"; continue; }
    t0=$SECONDS
    step "full part $part (limit ${left} s)" full_part "$part" "$left" "${modules[@]}"
    left=$(( left - (SECONDS - t0) ))
  done
  [ -f "$OUT/dry/results.json" ] && python -m harness.report --times "$OUT/dry/results.json"
  # the README's full table, from what $FULL holds now (every claim it lacks named below it; issue 57)
  if [ "$FULL" = reports/full.json ] && [ -f "$FULL" ]; then
    python -m harness.report findings "$FULL" --write README.md --marker findings-full --expect-all
  fi
  # issue 27: PyTorch's own SDPA backends on trial on the GPU (flash takes no float32: pre-flight drops that dtype and
  # says so), and transformers' attention functions where transformers is installed (pip install -e ".[peers]")
  if [ "$ONLY" != 1 ]; then
    TRIAL=(claims/test_m0_model_checks.py claims/test_r1_scale_by_sqrt_dk.py claims/test_r2_saturation_check.py
           claims/test_r3_matmul.py --fast --device cuda -p no:cacheprovider --attention-dtypes float32,bfloat16)
    for b in flash efficient math; do
      step "kernel trial: SDPA $b backend" pytest "${TRIAL[@]}" --attention "examples.attention.sdpa_backends:$b" \
        --attention-factory --report-dir "$OUT/kernel-$b"
    done
    if python -c "import transformers" 2>/dev/null; then
      for peer in transformers.integrations.sdpa_attention:sdpa_attention_forward \
                  transformers.models.llama.modeling_llama:eager_attention_forward; do
        step "kernel trial: $peer" pytest "${TRIAL[@]}" --attention "$peer" --report-dir "$OUT/kernel-${peer##*:}"
      done
    fi
  fi
fi

echo; echo "=== gpu check: times"
printf '%-50s %8s  %s\n' step seconds status
rc=0
for i in "${!NAMES[@]}"; do
  case "${NAMES[$i]}:${STATUS[$i]}" in
    *:0) word=ok ;;
    "full part"*:124) word="stopped at its limit (124): did not fit" ;;
    "full part"*:1) word="ran; a claim refuted (1): a finding" ;;
    *) word="FAILED (${STATUS[$i]})" ;;
  esac
  printf '%-50s %8s  %s\n' "${NAMES[$i]}" "${TIMES[$i]}" "$word"
  # a full part exits 1 when a claim ran and was refuted (a finding), 124 when `timeout` stopped it (it did
  # not fit: the plan names it for splitting); neither is a broken GPU path
  if [ "${STATUS[$i]}" -ne 0 ] && ! { [[ "${NAMES[$i]}" == "full part"* ]] && [[ "${STATUS[$i]}" =~ ^(1|124)$ ]]; }; then
    rc=1
  fi
done
exit $rc
