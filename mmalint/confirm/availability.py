"""MMA501: does the installed jax have the API a finding says the target jax lacks?

The families name their probes (`families/<name>/probes.py`); this module finds the one a
finding is about, from its message or else its predicted error. No jax here: the family's
`kernels.probe_api` runs the probe in a worker.
"""

from __future__ import annotations

from mmalint.confirm import families
from mmalint.confirm.family import ApiProbe
from mmalint.confirm.signature import Finding


def probe_for(finding: Finding) -> ApiProbe | None:
    """The API an MMA501 finding is about, or None when it names none a family knows."""
    probes = families.api_probes()
    for probe in probes:
        if probe.feature in finding.message:
            return probe
    if finding.predicted is not None:
        for probe in probes:
            if probe.probe == families.probe_by_predicted().get(finding.predicted.message):
                return probe
    return None
