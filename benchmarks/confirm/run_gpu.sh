#!/usr/bin/env bash
# The reference lowering on the GPU machine: run from the repository root.
#
#   bash benchmarks/confirm/run_gpu.sh [FINDINGS]      (default benchmarks/confirm/findings.json)
#
# 1. all tiers (ptx if ptxas is found, jax with the installed jax on the CPU, gpu with the jax
#    backend) over every GPU      -> $OUT/confirm-gpu.json
# 2. all tiers over the layout, shape and API findings (MMA301-305, MMA401-402, MMA501) of
#    tests/confirm/data/layout_findings.json                      -> $OUT/confirm-gpu-layouts.json
# 3. the gpu tier again through the bundled CuPy kernel (no jax)    -> $OUT/confirm-gpu-cupy.json
# 4. all tiers over the wgmma (MMA6xx) and tcgen05 (MMA7xx) findings of the examples
#    (benchmarks/confirm/async-examples-findings.json, jax 0.11)  -> $OUT/confirm-gpu-async.json
# 5. those examples themselves and their _fixed twins, run on the GPU -> $OUT/examples-gpu.json
# 6. the gpu-marked tests of tests/confirm                        -> $OUT/confirm-gpu-tests.txt
# 7. a Markdown report (date, GPU, driver, CUDA, jax, tables, timings) -> $OUT/confirm-gpu.md
# Each step has its own time limit so the whole run ends within 10 minutes, whatever hangs.
set -uo pipefail

cd "$(dirname "$0")/../.."
OUT="${OUT:-$PWD/confirm-out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
FINDINGS="${1:-benchmarks/confirm/findings.json}"
LAYOUTS=tests/confirm/data/layout_findings.json
ASYNC=benchmarks/confirm/async-examples-findings.json
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false

CPUS=$(nproc 2>/dev/null || echo 4)
JOBS=$(( CPUS < 8 ? CPUS : 8 ))
DEVICES=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | paste -sd, -)
DEVICE_ARGS=()
if [ -n "$DEVICES" ]; then DEVICE_ARGS=(--devices "$DEVICES"); fi
echo "findings: $FINDINGS  jobs: $JOBS  devices: ${DEVICES:-none}  out: $OUT"
START=$(date +%s)
exec 3>&1  # step reports go to the real stdout, whatever a step's output is redirected to

step() {  # step NAME LIMIT_S COMMAND...: run with a time limit, report its time and status
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@"
  local rc=$?
  echo "[$name] exit $rc after $(( $(date +%s) - t0 )) s (limit $limit s)" >&3
  return $rc
}

step "all tiers, jax backend" 130 \
  "$PY" -m mmalint.confirm.cli "$FINDINGS" --tier all --jobs "$JOBS" "${DEVICE_ARGS[@]}" \
  --timeout 120 --gpu-backend auto --format json \
  > "$OUT/confirm-gpu.json" 2> "$OUT/confirm-gpu.stderr"

step "layouts, all tiers, jax backend" 60 \
  "$PY" -m mmalint.confirm.cli "$LAYOUTS" --tier all --jobs "$JOBS" "${DEVICE_ARGS[@]}" \
  --timeout 50 --gpu-backend auto --format json \
  > "$OUT/confirm-gpu-layouts.json" 2> "$OUT/confirm-gpu-layouts.stderr"

step "gpu tier, CuPy backend" 70 \
  "$PY" -m mmalint.confirm.cli "$FINDINGS" --tier gpu --jobs "$JOBS" "${DEVICE_ARGS[@]}" \
  --timeout 60 --gpu-backend cupy --format json \
  > "$OUT/confirm-gpu-cupy.json" 2> "$OUT/confirm-gpu-cupy.stderr"

# tcgen05 cannot run on Hopper: its gpu-tier verdict says so, its jax tier still builds it.
step "wgmma/tcgen05, all tiers, jax backend" 100 \
  "$PY" -m mmalint.confirm.cli "$ASYNC" --tier all --jobs "$JOBS" "${DEVICE_ARGS[@]}" \
  --timeout 90 --gpu-backend jax --format json \
  > "$OUT/confirm-gpu-async.json" 2> "$OUT/confirm-gpu-async.stderr"

step "wgmma/tcgen05 examples on the GPU" 80 \
  "$PY" benchmarks/confirm/run_examples.py "$ASYNC" "$OUT" \
  > "$OUT/examples-gpu.md" 2> "$OUT/examples-gpu.stderr"

# --confcutdir: tests/conftest.py imports the analyzer (libcst), which this machine lacks;
# the confirm tests need only their own conftest.
# The gpu-marked tests (the jax-marked ones run in CI, on the CPU).
step "pytest gpu" 200 \
  "$PY" -m pytest -q -rfEs -p no:cacheprovider --confcutdir=tests/confirm \
  -m gpu tests/confirm > "$OUT/confirm-gpu-tests.txt" 2>&1

step "report" 20 "$PY" benchmarks/confirm/gpu_report.py "$OUT" > "$OUT/confirm-gpu.md"

echo "total $(( $(date +%s) - START )) s"
cat "$OUT/confirm-gpu.md"
