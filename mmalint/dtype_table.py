"""The element types mmalint knows, for the modules that read them under this name
(`mmalint.confirm.dtypes`): the table itself lives in `mmalint.facts.dtypes`."""

from __future__ import annotations

from mmalint.facts.dtypes import ELEMENT_TYPES, Kind

__all__ = ["ELEMENT_TYPES", "Kind"]
