"""From worker records to a verdict, for the jax and gpu tiers (pure: no processes here).

A verdict is `confirmed` only when what ran shows the finding's mistake: the predicted
exception with the exact message, or for silent rules the wrong instruction (jax tier) or
wrong numbers next to a fix that matches NumPy (gpu tier). What ran but disagrees is
`not reproduced`, with what happened instead; everything else is `inconclusive`, with why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mmalint.confirm import families
from mmalint.confirm.signature import PredictedError
from mmalint.confirm.verdict import CONFIRMED, INCONCLUSIVE, NOT_REPRODUCED, PTX_ALLOWS

Record = dict[str, Any]


@dataclass(frozen=True)
class Judgement:
    verdict: str
    evidence: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class WorkerOutcome:
    """What a worker process left behind."""

    records: tuple[Record, ...]
    returncode: int | None
    stderr_tail: str
    timed_out: bool
    timeout: float

    def part(self, name: str) -> Record | None:
        for record in self.records:
            if record.get("part") == name:
                return record
        return None

    def environment(self) -> Record | None:
        return self.part("env") or self.part("unavailable")

    def failure(self) -> str:
        """Why a record is missing: a timeout, a crash, or a silent exit."""
        if self.timed_out:
            return f"timed out after {self.timeout:g} s (worker killed)"
        tail = self.stderr_tail.strip().splitlines()
        last = f": {tail[-1].strip()}" if tail else ""
        if self.returncode is not None and self.returncode < 0:
            return f"worker killed by signal {-self.returncode}{last}"
        return f"worker exited with code {self.returncode}{last}"


# What jax says when ptxas rejects the module Mosaic GPU built (ptxas's own text is in its log).
_PTXAS_FAILED = "Pass pipeline failed"


def _minor(version: str | None) -> str | None:
    return ".".join(version.split(".")[:2]) if version else None


def _raised(record: Record) -> str:
    return f"{record.get('exception')}: {record.get('message')}"


def _matches(record: Record, predicted: PredictedError) -> bool:
    return record.get("status") == "raised" and predicted.matches(
        record.get("exception"), record.get("message"))


def _what_happened(record: Record) -> str:
    status = record.get("status")
    if status == "raised":
        return f"raised {_raised(record)}"
    if status == "built":
        emitted = ", ".join(record.get("instructions") or []) or "no mma.sync found"
        return f"built without error (emits {emitted})"
    if status == "ran":
        return f"ran without error ({record.get('comparison', 'no reference')})"
    if status == "compiled":
        return str(record.get("note", "compiled"))
    return str(record.get("note", status))


def _harness_failure(*records: Record | None) -> str | None:
    for record in records:
        if record is not None and record.get("harness"):
            return (f"the reference lowering failed ({record.get('part')}): {_raised(record)} "
                    "(a bug in mmalint confirm, not a jax result)")
    return None


def _version_mismatch(installed: str | None, target: str | None) -> bool:
    return bool(installed and target and _minor(installed) != _minor(target))


def judge_jax(code: str, predicted: PredictedError | None, target_jax: str | None,
              right_instruction: str, outcome: WorkerOutcome) -> Judgement:
    """The jax-tier verdict from a worker's records."""
    env = outcome.environment()
    if env is None:
        return Judgement(INCONCLUSIVE, outcome.failure(), {})
    if env.get("part") == "unavailable":
        return Judgement(INCONCLUSIVE, str(env.get("reason")), {"jax_version": env.get(
            "jax_version")})
    installed = env.get("jax_version")
    detail: dict[str, Any] = {"jax_version": installed}
    flagged, fix = outcome.part("flagged"), outcome.part("fix")
    if flagged is None:
        return Judgement(INCONCLUSIVE, f"no result for the flagged call: {outcome.failure()}",
                         detail)
    detail["flagged"] = flagged
    if (broken := _harness_failure(flagged, fix)) is not None:
        return Judgement(INCONCLUSIVE, broken, detail)
    fix_note = ""
    if fix is not None:
        detail["fix"] = fix
        fix_note = f"; the fix {_what_happened(fix)}"
    target = predicted.jax_version if predicted and predicted.jax_version else target_jax
    mismatch = _version_mismatch(installed, target)
    other_version = (f"; the finding targets jax {_minor(target)}, jax {installed} is installed"
                     if mismatch else "")

    if code in families.silent_codes() and predicted is None:
        if flagged.get("status") != "built":
            kind = INCONCLUSIVE if mismatch else NOT_REPRODUCED
            return Judgement(kind, f"expected a silent build, but jax {installed} "
                             f"{_what_happened(flagged)}{other_version}", detail)
        emitted = list(flagged.get("instructions") or [])
        if not emitted:
            return Judgement(INCONCLUSIVE, "built, but the lowered module shows no mma.sync "
                             "instruction to check", detail)
        if emitted == [right_instruction]:
            return Judgement(NOT_REPRODUCED, f"built; jax {installed} emits {emitted[0]}, which "
                             "is what the data needs", detail)
        return Judgement(CONFIRMED, f"built without error, and jax {installed} emits "
                         f"{', '.join(emitted)} where the data needs {right_instruction}"
                         f"{fix_note}", detail)

    if predicted is None:
        return Judgement(INCONCLUSIVE, f"no predicted error to compare ({code} is not checked "
                         f"by jax); jax {installed} {_what_happened(flagged)}", detail)
    if _matches(flagged, predicted):
        where = f" (at {flagged['raised_at']})" if flagged.get("raised_at") else ""
        return Judgement(CONFIRMED, f"jax {installed} raised {_raised(flagged)}{where}"
                         f"{fix_note}", detail)
    kind = INCONCLUSIVE if mismatch else NOT_REPRODUCED
    return Judgement(kind, f"jax {installed} {_what_happened(flagged)}; predicted "
                     f"{predicted}{other_version}", detail)


def judge_gpu(code: str, predicted: PredictedError | None, target_jax: str | None,
              has_fix: bool, outcome: WorkerOutcome) -> Judgement:
    """The gpu-tier verdict: the flagged kernel must fail as predicted (or compute wrong
    numbers, for silent rules) and the fix must match NumPy."""
    env = outcome.environment()
    if env is None:
        return Judgement(INCONCLUSIVE, outcome.failure(), {})
    if env.get("part") == "unavailable":
        return Judgement(INCONCLUSIVE, str(env.get("reason")), dict(env))
    backend = env.get("backend")
    device = f"{env.get('device')} (sm {env.get('compute_capability')})"
    installed = env.get("jax_version")
    detail: dict[str, Any] = {k: v for k, v in env.items() if k != "part"}
    flagged, fix = outcome.part("flagged"), outcome.part("fix")
    if fix is not None:
        detail["fix"] = fix
    if flagged is not None:
        detail["flagged"] = flagged
    if (broken := _harness_failure(fix, flagged)) is not None:
        return Judgement(INCONCLUSIVE, broken, detail)
    # Rules only jax can show (register layouts, shapes): the CuPy path has nothing to say.
    if backend == "cupy" and code.startswith(families.jax_only_code_prefixes()):
        return Judgement(INCONCLUSIVE, f"tier does not apply to {code} on the CuPy path: it "
                         "runs the instruction, and layouts and shapes are jax's", detail)

    # The fix first: a verdict leans on it, so a fix that fails makes everything inconclusive.
    fix_text = ""
    if has_fix:
        if fix is None:
            return Judgement(INCONCLUSIVE, f"no result for the fix: {outcome.failure()}", detail)
        if fix.get("status") != "ran" or not fix.get("within", False):
            return Judgement(INCONCLUSIVE, f"the fix did not match NumPy on {device}: "
                             f"{_what_happened(fix)}", detail)
        fix_text = f"; the fix is {fix.get('comparison')}"
    else:
        fix_text = f"; no fix is synthesized for {code}"
    if flagged is None:
        return Judgement(INCONCLUSIVE, f"no result for the flagged kernel: {outcome.failure()}",
                         detail)

    status = flagged.get("status")
    target = predicted.jax_version if predicted and predicted.jax_version else target_jax
    mismatch = backend == "jax" and _version_mismatch(installed, target)
    where = f"{backend} on {device}"
    if code in families.silent_codes() and predicted is None:
        if status == "ran" and "within" in flagged:
            if flagged["within"]:
                return Judgement(NOT_REPRODUCED, f"{where}: the flagged kernel is "
                                 f"{flagged.get('comparison')} (full-range data){fix_text}",
                                 detail)
            return Judgement(CONFIRMED, f"{where}: the flagged kernel ran without error and "
                             f"{flagged.get('comparison')}{fix_text}", detail)
        kind = INCONCLUSIVE if mismatch or backend == "cupy" else NOT_REPRODUCED
        return Judgement(kind, f"{where}: expected wrong numbers, but the flagged kernel "
                         f"{_what_happened(flagged)}{fix_text}", detail)

    if backend == "cupy":
        # CuPy runs the instruction, not jax: it can show the instruction does not exist,
        # never the exception jax raises.
        if status == "raised":
            return Judgement(CONFIRMED, f"{where}: the instruction {flagged.get('instruction')}"
                             f" does not compile: {flagged.get('message')}{fix_text}", detail)
        return Judgement(INCONCLUSIVE, f"{PTX_ALLOWS}: {where}: {flagged.get('instruction')} "
                         f"{_what_happened(flagged)}{fix_text}", detail)
    if predicted is None and code in families.ptxas_codes() and status == "raised" and (
        _PTXAS_FAILED in str(flagged.get("message"))
    ):
        # Only the positive evidence counts: a kernel that compiles here may still be one
        # ptxas rejects for another target, so a run without error stays inconclusive.
        return Judgement(CONFIRMED, f"{where}: compiling the flagged kernel failed in ptxas, "
                         f"as predicted ({_raised(flagged)}){fix_text}", detail)
    if predicted is None:
        return Judgement(INCONCLUSIVE, f"no predicted error to compare ({code} is not checked "
                         f"by jax); {where}: the flagged kernel {_what_happened(flagged)}",
                         detail)
    if _matches(flagged, predicted):
        return Judgement(CONFIRMED, f"{where}: the flagged kernel raised {_raised(flagged)}"
                         f"{fix_text}", detail)
    kind = INCONCLUSIVE if mismatch else NOT_REPRODUCED
    extra = (f"; the finding targets jax {_minor(target)}, jax {installed} is installed"
             if mismatch else "")
    return Judgement(kind, f"{where}: the flagged kernel {_what_happened(flagged)}; predicted "
                     f"{predicted}{fix_text}{extra}", detail)



def judge_availability(feature: str, predicted: PredictedError | None, target: str | None,
                       keyword: bool, outcome: WorkerOutcome) -> Judgement:
    """MMA501: the installed jax's answer for one API (`availability.py`).

    Confirmed when it lacks the API and raises the predicted error, or, for a keyword the
    target accepts and drops, when it drops it too. A jax that has the API cannot confirm a
    finding about one that lacks it: inconclusive, unless it is the targeted version itself
    (then the finding is wrong: not reproduced).
    """
    env = outcome.environment()
    if env is None:
        return Judgement(INCONCLUSIVE, outcome.failure(), {})
    if env.get("part") == "unavailable":
        return Judgement(INCONCLUSIVE, str(env.get("reason")), {"jax_version": env.get(
            "jax_version")})
    installed = env.get("jax_version")
    detail: dict[str, Any] = {"jax_version": installed, "api": feature}
    probe = outcome.part("flagged")
    if probe is None:
        return Judgement(INCONCLUSIVE, f"no result for the API probe: {outcome.failure()}",
                         detail)
    detail["flagged"] = probe
    if (broken := _harness_failure(probe)) is not None:
        return Judgement(INCONCLUSIVE, broken, detail)
    same = not _version_mismatch(installed, target)
    aim = f"the finding is about jax {_minor(target)}" if target else "the finding names no jax"
    status = probe.get("status")
    if status == "raised":
        if predicted is not None and _matches(probe, predicted):
            return Judgement(CONFIRMED, f"jax {installed} lacks {feature}: it raised "
                             f"{_raised(probe)}", detail)
        expected = f"predicted {predicted}" if predicted is not None else (
            "predicted that it is accepted and ignored")
        return Judgement(NOT_REPRODUCED if same else INCONCLUSIVE,
                         f"jax {installed} raised {_raised(probe)} for {feature}; {expected}"
                         f"{'' if same else f'; {aim}'}", detail)
    note = str(probe.get("note", status))
    if keyword and status == "ignored":
        return Judgement(CONFIRMED, f"jax {installed} accepts and ignores it: {note}", detail)
    has = "honours" if status == "honoured" else "has"
    if same:
        return Judgement(NOT_REPRODUCED, f"jax {installed} {has} {feature} ({note}), and it is "
                         "the version the finding is about", detail)
    lacks = "drops it" if keyword else "lacks it"
    return Judgement(INCONCLUSIVE, f"jax {installed} {has} {feature} ({note}); {aim}: only a "
                     f"jax that {lacks} can confirm the finding", detail)
