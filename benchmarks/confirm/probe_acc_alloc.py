"""What jax raises for a `plgpu.ACC` *allocated* with a 16-bit float dtype for `plgpu.wgmma`,
under Pallas's default (Warpgroup) lowering: mma-facts §11.1 records only `ACC.init` of a
bfloat16 array (a VerificationError); an allocation (`pl.run_scoped(scope, plgpu.ACC(shape,
jnp.bfloat16))`) was never run. Needs only jax and a Hopper GPU:

    python3 benchmarks/confirm/probe_acc_alloc.py OUT_DIR

Each (operand, accumulator) pair runs in its own process (the kernel compiles and runs once on
ones; the result is compared with NumPy's); writes OUT_DIR/acc-alloc.json and prints Markdown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

# (operand dtype, accumulator dtype): the first three are the unobserved cases; float32 and
# float16 accumulators for bfloat16 operands are controls (it runs; the Lane message of §2.1).
PAIRS = [
    ("bfloat16", "bfloat16"),
    ("float16", "bfloat16"),
    ("float8_e4m3fn", "bfloat16"),
    ("bfloat16", "float32"),
    ("bfloat16", "float16"),
    ("float8_e4m3fn", "float16"),
]

KERNEL = r"""
import json, os, sys, warnings
warnings.filterwarnings("ignore")
result = {"exception": None, "message": None, "max_error": None}
try:
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    op, acc = jnp.dtype(sys.argv[1]), jnp.dtype(sys.argv[2])
    M, N, K = 64, 128, 128
    transforms = (plgpu.TilingTransform((8, 128 // op.itemsize)), plgpu.SwizzleTransform(128))

    def kernel(a_ref, b_ref, o_ref):
        def scope(acc_ref):
            plgpu.wgmma(acc_ref, a_ref, plgpu.transpose_ref(b_ref, (1, 0)))
            return acc_ref[...]

        o_ref[...] = pl.run_scoped(scope, plgpu.ACC((M, N), acc)).astype(jnp.float32)

    out = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32),
        in_specs=[plgpu.BlockSpec((M, K), lambda: (0, 0), transforms=transforms),
                  plgpu.BlockSpec((N, K), lambda: (0, 0), transforms=transforms)],
        out_specs=plgpu.BlockSpec((M, N), lambda: (0, 0)),
    )(jnp.ones((M, K), op), jnp.ones((N, K), op))
    got = np.asarray(jax.block_until_ready(out), dtype=np.float32)
    result["max_error"] = float(np.max(np.abs(got - float(K))))
except BaseException as exc:  # every outcome is data here
    result.update(exception=type(exc).__name__, message=str(exc)[:1500])
print("RESULT " + json.dumps(result))
"""


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = Path(argv[0])
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false", "PYTHONUNBUFFERED": "1"}
    probe = subprocess.run([sys.executable, "-c", "import jax, json; print(json.dumps([jax.__version__, "
                            "[str(d) for d in jax.devices()]]))"], capture_output=True, text=True, env=env)
    try:
        version, devices = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        version, devices = f"unavailable ({probe.stderr.strip()[-200:]})", []
    rows = []
    for op, acc in PAIRS:
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-c", KERNEL, op, acc], capture_output=True, text=True,
                                  timeout=150, env=env)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            got = json.loads(lines[-1][7:]) if lines else {"exception": "crash", "message": proc.stderr[-800:]}
            got["stderr_tail"] = proc.stderr[-800:]
        except subprocess.TimeoutExpired:
            got = {"exception": "timeout", "message": "over 150 s"}
        rows.append({"operand": op, "accumulator": acc, **got, "seconds": round(time.perf_counter() - t0, 2)})
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "jax": version, "devices": devices,
           "semantics": "Pallas default (Warpgroup from jax 0.11)", "results": rows}
    (out_dir / "acc-alloc.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"# `plgpu.ACC` allocations for `plgpu.wgmma`, jax {version}\n\n{doc['date']}, {', '.join(devices)}\n")
    print("| operands | accumulator | raised | max error |\n|---|---|---|---|")
    for r in rows:
        raised = f"{r['exception']}: {(r['message'] or '')[:120]}" if r.get("exception") else "—"
        print(f"| {r['operand']} | {r['accumulator']} | {raised} | {r.get('max_error')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
