"""Confirming findings: one case per finding and tier, spread over worker threads and GPUs.

The threads only wait: ptxas and the jax/GPU workers are separate processes, so `--jobs N`
runs N of them at once. GPU cases take a device from a pool (`--devices`) and run with
CUDA_VISIBLE_DEVICES set to it. A thread's jax cases are forked from a server of its own that
has imported jax once (`forkserver.py`); where one cannot run, each case starts a process.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from mmalint.confirm import families
from mmalint.confirm.availability import probe_for
from mmalint.confirm.forkserver import ForkServer, ServerGone
from mmalint.confirm.judge import WorkerOutcome, judge_availability, judge_gpu, judge_jax
from mmalint.confirm.options import DEFAULT_TIMEOUT, GPU_BACKENDS, TIERS
from mmalint.confirm.process import run_worker
from mmalint.confirm.ptx_tier import confirm_ptx
from mmalint.confirm.signature import Finding, parse_findings
from mmalint.confirm.verdict import (
    CONFIRMED,
    INCONCLUSIVE,
    NOT_REPRODUCED,
    Verdict,
    make_verdict,
)

Progress = Callable[[int, int, Verdict], None]
JAX_WORKER = "mmalint.confirm.jax_worker"
JAX_ENV = {"JAX_PLATFORMS": "cpu"}


def gpu_present() -> str | None:
    """None when an NVIDIA GPU may be present, else why not (checked before any worker starts,
    so a machine without a GPU answers the gpu tier at once)."""
    if shutil.which("nvidia-smi") or any(Path("/dev").glob("nvidia[0-9]*")):
        return None
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) == "":
        return "no GPU (CUDA_VISIBLE_DEVICES is empty)"
    return "no GPU (nvidia-smi not found and no /dev/nvidia* device)"


class _DevicePool:
    """Hands out GPU ids so concurrent cases spread over `devices` (round-robin slots)."""

    def __init__(self, devices: list[int] | None, jobs: int) -> None:
        self._slots: queue.Queue[int | None] = queue.Queue()
        ids: list[int | None] = list(devices) if devices else [None]
        for i in range(max(jobs, len(ids))):
            self._slots.put(ids[i % len(ids)])

    @contextmanager
    def device(self) -> Iterator[int | None]:
        slot = self._slots.get()
        try:
            yield slot
        finally:
            self._slots.put(slot)


class _Confirmer:
    def __init__(self, *, timeout: float, python: str, gpu_backend: str, seed: int,
                 devices: _DevicePool, worker_path: Sequence[str] = ()) -> None:
        self.timeout = timeout
        self.python = python
        self.worker_path = tuple(worker_path)
        self.gpu_backend = gpu_backend
        self.seed = seed
        self.devices = devices
        self._no_gpu = gpu_present()
        self._local = threading.local()  # each thread's fork server
        self._servers: list[ForkServer] = []
        self._lock = threading.Lock()
        self._forking = True  # until a fork server fails: then a process per case

    def _jax_case(self, case: dict[str, Any]) -> WorkerOutcome:
        server: ForkServer | None = getattr(self._local, "server", None)
        if server is None and self._forking:
            try:
                server = ForkServer(self.python, env=JAX_ENV, search_path=self.worker_path)
            except ServerGone:
                self._forking = False
            else:
                self._local.server = server
                with self._lock:
                    self._servers.append(server)
        if server is not None:
            try:
                return server.run(JAX_WORKER, case, self.timeout)
            except ServerGone:
                self._forking = False
                self._local.server = None
        return run_worker(self.python, JAX_WORKER, case, timeout=self.timeout, env=JAX_ENV,
                          search_path=self.worker_path)

    def close(self) -> None:
        """End the fork servers."""
        with self._lock:
            servers, self._servers = self._servers, []
        for server in servers:
            server.close()

    def run(self, finding: Finding, tier: str) -> Verdict:
        if finding.variants:
            return self._by_operand(finding, tier)
        if tier == "ptx":
            return confirm_ptx(finding, timeout=self.timeout)
        start = time.perf_counter()

        def early(reason: str) -> Verdict:
            return make_verdict(finding, tier, INCONCLUSIVE, reason, time.perf_counter() - start)

        if finding.code == "MMA501":
            if tier == "gpu":
                return early("tier does not apply to MMA501: whether jax has an API does not "
                             "depend on the GPU (the jax tier probes it)")
            return self._availability(finding, start)
        if finding.call is None:
            return early(finding.problem or "no call signature")
        family = families.host(finding.call.family)
        if family is None:
            return early(f"api {finding.call.api} is not covered by the reference lowering "
                         f"({families.covered_apis()} only)")
        if (missing := families.no_reference_case(family, finding.code)) is not None:
            return early(missing)
        if tier == "gpu" and (why := family.not_on_gpu.get(finding.code)) is not None:
            return early(f"tier does not apply to {finding.code}: {why}")
        if tier == "gpu" and self._no_gpu:
            return early(self._no_gpu)
        call = family.unmasked_call(finding.call, finding.masked_by)
        fixed = family.fixed_call(call, finding.code)
        flagged_spec = family.kernel_spec(call, finding.code)
        case: dict[str, Any] = {
            "code": finding.code,
            "flagged": flagged_spec.to_json(),
            "fix": (family.kernel_spec(fixed, finding.code, conform=True).to_json()
                    if fixed else None),
            "seed": self.seed + finding.index,
            "gpu_backend": self.gpu_backend,
        }
        notes = [*call.notes, *flagged_spec.notes]
        extra: dict[str, Any] = {}
        if finding.masked_by:
            notes.append(f"built with {', '.join(finding.masked_by)} fixed first (masked_by)")
        if tier == "jax":
            outcome = self._jax_case(case)
            judged = judge_jax(finding.code, finding.predicted, call.target_jax,
                               family.data_instruction(call).text, outcome)
        else:
            if (why := family.not_on_cupy.get(finding.code)) and self.gpu_backend == "cupy":
                return early(f"tier does not apply to {finding.code} on the CuPy path: {why}")
            if (finding.code.startswith(family.jax_only_code_prefixes)
                    and self.gpu_backend == "cupy"):
                return early(f"tier does not apply to {finding.code} on the CuPy path: it runs "
                             "the instruction, and layouts and shapes are jax's")
            with self.devices.device() as device:
                env = {"CUDA_VISIBLE_DEVICES": str(device)} if device is not None else {}
                outcome = run_worker(self.python, "mmalint.confirm.gpu_worker", case,
                                     timeout=self.timeout, env=env,
                                     search_path=self.worker_path)
            judged = judge_gpu(finding.code, finding.predicted, call.target_jax,
                               fixed is not None, outcome)
            extra["cuda_visible_devices"] = device
        evidence = judged.evidence + "".join(f" [{n}]" for n in notes)
        return make_verdict(finding, tier, judged.verdict, evidence,
                            time.perf_counter() - start, **judged.detail, **extra)

    def _by_operand(self, finding: Finding, tier: str) -> Verdict:
        """A finding whose operand dtype mmalint did not know: confirmed when the call fails as
        predicted with every operand dtype it names (each checked as its own case)."""
        start = time.perf_counter()
        parts = []
        for v in finding.variants:
            sub = replace(finding, code=v.code, predicted=v.predicted, call=v.call,
                          problem=v.problem, variants=())
            parts.append((v, self.run(sub, tier)))
        verdicts = {verdict.verdict for _, verdict in parts}
        if verdicts == {CONFIRMED}:
            kind = CONFIRMED
        elif NOT_REPRODUCED in verdicts:
            kind = NOT_REPRODUCED
        else:
            kind = INCONCLUSIVE
        evidence = "; ".join(f"{v.operand_dtype} operands ({v.code}): {verdict.verdict}, "
                             f"{verdict.evidence}" for v, verdict in parts)
        detail = [{"operand_dtype": v.operand_dtype, "code": v.code, "verdict": verdict.verdict,
                   "evidence": verdict.evidence, **dict(verdict.detail)} for v, verdict in parts]
        return make_verdict(finding, tier, kind, evidence, time.perf_counter() - start,
                            by_operand=detail)

    def _availability(self, finding: Finding, start: float) -> Verdict:
        """MMA501 in the jax tier: probe the API the finding names with the installed jax."""
        probe = probe_for(finding)
        if probe is None:
            return make_verdict(finding, "jax", INCONCLUSIVE,
                                f"cannot tell which API the finding is about: {finding.message!r}",
                                time.perf_counter() - start)
        case = {"code": finding.code, "family": probe.family, "probe": probe.probe,
                "pallas": probe.pallas}
        outcome = self._jax_case(case)
        target = finding.predicted.jax_version if finding.predicted else None
        if target is None and finding.call is not None:
            target = finding.call.target_jax
        if target is None and (m := re.search(r"\bjax (\d+\.\d+)\b", finding.message)):
            target = m.group(1)
        judged = judge_availability(probe.feature, finding.predicted, target, probe.keyword,
                                    outcome)
        return make_verdict(finding, "jax", judged.verdict, judged.evidence,
                            time.perf_counter() - start, **judged.detail)


def confirm_findings(
    findings: list[dict[str, Any]],
    tiers: set[str],
    jobs: int = 1,
    devices: list[int] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Progress | None = None,
    *,
    python: str | None = None,
    gpu_backend: str = "auto",
    seed: int = 0,
    worker_path: Sequence[str] = (),
) -> list[Verdict]:
    """Confirm each finding (a dict as `mmalint check --format json` writes it) in each tier.

    Returns one `Verdict` per finding and tier, in input order then tier order (ptx, jax,
    gpu). Raises `FindingsError` when the findings have the wrong shape and `ValueError` for a
    bad tier or backend. `progress(done, total, verdict)` is called as each case finishes.
    `python` is the interpreter for jax and GPU workers (default: this one). Workers run
    isolated (`process.py`): they import from `python`'s own environment and this package,
    plus the trusted directories of `worker_path` (never the checked project's).
    """
    unknown = set(tiers) - set(TIERS)
    if unknown:
        raise ValueError(f"unknown tier(s): {', '.join(sorted(unknown))} (ptx, jax, gpu)")
    if gpu_backend not in GPU_BACKENDS:
        raise ValueError(f"unknown GPU backend {gpu_backend!r} ({', '.join(GPU_BACKENDS)})")
    parsed = parse_findings(findings)
    tasks = [(f, tier) for f in parsed for tier in TIERS if tier in tiers]
    jobs = max(1, jobs)
    confirmer = _Confirmer(timeout=timeout, python=python or sys.executable,
                           gpu_backend=gpu_backend, seed=seed,
                           devices=_DevicePool(devices, jobs), worker_path=worker_path)
    results: list[Verdict | None] = [None] * len(tasks)
    done = 0
    lock = threading.Lock()

    def work(i: int) -> None:
        nonlocal done
        finding, tier = tasks[i]
        start = time.perf_counter()
        try:
            verdict = confirmer.run(finding, tier)
        except Exception as e:  # one odd signature must not end the run for the others
            verdict = make_verdict(
                finding, tier, INCONCLUSIVE,
                f"the reference lowering failed on this case: {type(e).__name__}: {e}",
                time.perf_counter() - start)
        with lock:
            results[i] = verdict
            done += 1
            if progress is not None:
                progress(done, len(tasks), verdict)

    try:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="mmalint-confirm") as pool:
            for future in [pool.submit(work, i) for i in range(len(tasks))]:
                future.result()
    finally:
        confirmer.close()
    return [v for v in results if v is not None]



