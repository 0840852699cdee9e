"""The prefilter: a cheap byte scan, before any parse, for the words without which a file
cannot reach a call that a model records. Each model module declares its own words
(`host.trigger`), so a new instruction family adds its words where it adds its model."""

from __future__ import annotations

import re

from mmalint.analysis import models  # noqa: F401  (registers every model and its words)
from mmalint.analysis.host import REGISTRY

TRIGGER_TEXT = re.compile("|".join(REGISTRY.trigger_words))
TRIGGER = re.compile(TRIGGER_TEXT.pattern.encode())


def may_contain_mma(data: bytes) -> bool:
    """The prefilter: False when the file cannot contain an MMA call."""
    return TRIGGER.search(data) is not None
