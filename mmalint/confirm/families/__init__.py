"""The instruction families the reference lowering knows, and dispatch by a call's family.

Each family is one folder (`families/mma/`): a package that names its APIs and imports
nothing, a `family.py` with its host-side `Family` record (`confirm/family.py`), and the
worker-side modules a `python -I` worker imports by name (`kernels.py` with jax,
`cupy_kernel.py` with CuPy). Nothing outside a family's folder names its APIs or rule codes:
the runner, the ptx tier, the judges and the workers ask this module.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import TYPE_CHECKING

from mmalint.confirm.families import mma, tcgen05, wgmma

if TYPE_CHECKING:
    from mmalint.confirm.family import ApiProbe, Family

# name -> the family's package; one line per family.
_PACKAGES: dict[str, ModuleType] = {mma.NAME: mma, wgmma.NAME: wgmma, tcgen05.NAME: tcgen05}


def family_of(api: str | None, declared: str | None = None) -> str | None:
    """The family of a call: the one the finding declares, else the one whose APIs name `api`.

    The checks layer is adding `call.family` to the JSON call signature; until every findings
    file carries it, this is the one place that derives the family from the API name.
    """
    if declared is not None:
        return declared
    for name, package in _PACKAGES.items():
        if api in package.APIS:
            return name
    return None


def covered_apis() -> str:
    """The APIs the reference lowering rebuilds, for messages: "a, b and c"."""
    apis = [api for package in _PACKAGES.values() for api in package.APIS]
    return apis[0] if len(apis) == 1 else ", ".join(apis[:-1]) + " and " + apis[-1]


def host(name: str | None) -> Family | None:
    """The host-side record of a family (None for a family this lowering does not know)."""
    if name not in _PACKAGES:
        return None
    family: Family = importlib.import_module(f"{_PACKAGES[name].__name__}.family").FAMILY
    return family


def worker_module(name: str, side: str) -> ModuleType:
    """A family's worker side: `kernels` (jax) or `cupy_kernel` (CuPy), imported in a worker."""
    return importlib.import_module(f"{_PACKAGES[name].__name__}.{side}")


def _all() -> list[Family]:
    return [family for name in _PACKAGES if (family := host(name)) is not None]


def silent_codes() -> frozenset[str]:
    """Rule codes, of every family, whose mistake raises nothing (codes are unique across
    families, so a judge that has only the code can ask)."""
    return frozenset().union(*(family.silent_codes for family in _all()))


def ptxas_codes() -> frozenset[str]:
    """Rule codes whose every check is ptxas's (jax raises nothing in Python, the compile step
    fails: `wgmma` with an integer N ptxas does not take): a GPU run's evidence is that step."""
    from mmalint.catalog import load_catalog

    stages: dict[str, set[str]] = {}
    for check in load_catalog().checks:
        stages.setdefault(check.rule, set()).add(check.stage)
    return frozenset(code for code, found in stages.items() if found == {"ptxas"})


def jax_only_code_prefixes() -> tuple[str, ...]:
    """Rule code prefixes, of every family, that only jax can show (not the instruction)."""
    return tuple(p for family in _all() for p in family.jax_only_code_prefixes)


def api_probes() -> tuple[ApiProbe, ...]:
    """Every family's MMA501 probes."""
    return tuple(probe for family in _all() for probe in family.api_probes)


def probe_by_predicted() -> dict[str, str]:
    """Predicted error message -> probe id, over every family."""
    return {k: v for family in _all() for k, v in family.probe_by_predicted.items()}


def fix_descriptions() -> dict[str, str]:
    """What the fix of each rule code changes, over every family."""
    return {code: text for family in _all() for code, text in family.fix_descriptions.items()}


def has_worker_side(name: str, side: str) -> bool:
    """Whether a family has a worker side (`kernels`, `cupy_kernel`)."""
    return importlib.util.find_spec(f"{_PACKAGES[name].__name__}.{side}") is not None


def no_reference_case(family: Family, code: str) -> str | None:
    """Why a code of this family has no reference case (a rule newer than its cases), or None.
    Such a finding is inconclusive, never a crash and never confirmed."""
    known = family.reference_codes
    if known is None or code in known:
        return None
    listed = ", ".join(sorted(known))
    return (f"no reference case for {code}: the {family.name} reference lowering has cases "
            f"for {listed} only")
