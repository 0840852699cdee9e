"""The GPU worker's jax path run on the CPU up to compilation (a "dry run"), for the tests of
each family: data, arrays, kernel build and CUDA lowering, with the GPU tier's own case.

The runs are forked from one fork server (`mmalint/confirm/forkserver.py`) that has imported
jax once, as the jax tier's cases are: about 1.5 s of imports saved per run.
"""

from __future__ import annotations

import atexit
import json
import subprocess
import sys
from typing import Any

from mmalint.confirm import families
from mmalint.confirm.forkserver import ForkServer, ServerGone
from mmalint.confirm.process import worker_env
from mmalint.confirm.protocol import parse_records
from mmalint.confirm.signature import parse_findings

_server: ForkServer | None = None


def dry_run(finding: dict[str, Any], *, needs_fix: bool = False) -> dict[str, dict[str, Any]]:
    """The records of the GPU worker's dry run of `finding` and its fix, by part."""
    global _server
    f = parse_findings([finding])[0]
    assert f.call is not None
    family = families.host(f.call.family)
    assert family is not None
    fixed = family.fixed_call(f.call, f.code)
    assert fixed is not None or not needs_fix
    case = {"flagged": family.kernel_spec(f.call, f.code).to_json(),
            "fix": family.kernel_spec(fixed, f.code, conform=True).to_json() if fixed else None,
            "seed": 1, "dry_run": True}
    try:
        if _server is None:
            _server = ForkServer(sys.executable, env={"JAX_PLATFORMS": "cpu"})
            atexit.register(_server.close)
        returncode, out, err, timed_out = _server.spawn(
            {"module": "mmalint.confirm.gpu_worker"}, json.dumps(case).encode(), 300)
    except ServerGone:  # a dry run writes nothing: run it again, in a process of its own
        _server = None
        ran = subprocess.run([sys.executable, "-m", "mmalint.confirm.gpu_worker"],
                             input=json.dumps(case).encode(), capture_output=True, timeout=300,
                             env=worker_env({"JAX_PLATFORMS": "cpu"}))
        returncode, out, err, timed_out = ran.returncode, ran.stdout, ran.stderr, False
    assert returncode == 0 and not timed_out, err.decode(errors="replace")[-2000:]
    return {r["part"]: r for r in parse_records(out.decode())}
