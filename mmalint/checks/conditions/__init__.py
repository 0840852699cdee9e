"""The conditions of every instruction family, one module per family, by family name."""

from __future__ import annotations

from mmalint.checks.conditions import mma, tcgen05, tcgen05_groups, wgmma
from mmalint.checks.conditions.registry import Condition, Conditions, Outcome

del tcgen05_groups  # its conditions join tcgen05's registry when it is imported
BY_FAMILY: dict[str, Conditions] = {
    c.family: c for c in (mma.CONDITIONS, wgmma.CONDITIONS, tcgen05.CONDITIONS)
}

__all__ = ["BY_FAMILY", "Condition", "Conditions", "Outcome"]
