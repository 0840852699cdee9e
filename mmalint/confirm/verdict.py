"""The verdict record: one per finding and tier."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mmalint.confirm.signature import Finding

CONFIRMED = "confirmed"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"

PTX_ALLOWS = "PTX allows this; the restriction is Mosaic's"


@dataclass(frozen=True)
class Verdict:
    """What one tier found for one finding. `evidence` is the one-line why; `detail` keeps the
    raw facts (instructions, exception, max error, versions) for `--format json`."""

    code: str
    filename: str
    location: tuple[int, int]
    tier: str
    verdict: str
    evidence: str
    seconds: float
    index: int = 0
    detail: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        # Freeze the mapping too, so a Verdict is immutable all the way down.
        object.__setattr__(self, "detail", MappingProxyType(dict(self.detail)))

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "filename": self.filename,
            "location": {"row": self.location[0], "column": self.location[1]},
            "tier": self.tier,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "seconds": round(self.seconds, 3),
            "finding": self.index,
            "detail": dict(self.detail),
        }


def make_verdict(finding: Finding, tier: str, verdict: str, evidence: str, seconds: float,
                 **detail: Any) -> Verdict:
    return Verdict(
        code=finding.code, filename=finding.filename, location=(finding.row, finding.column),
        tier=tier, verdict=verdict, evidence=evidence, seconds=seconds, index=finding.index,
        detail={k: v for k, v in detail.items() if v is not None},
    )
