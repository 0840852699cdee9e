"""The prefilter: a cheap byte scan, before any parse, for the words without which a file
cannot reach a call that a model records. Each model module declares its own words
(`host.trigger`), so a new instruction family adds its words where it adds its model; they
are read here from `model_words`, where they are written out, so that the prefilter loads no
model."""

from __future__ import annotations

import re

from mmalint.analysis.model_words import TRIGGER_WORDS

TRIGGER_TEXT = re.compile("|".join(TRIGGER_WORDS))
TRIGGER = re.compile(TRIGGER_TEXT.pattern.encode())


def _always_spells(items: list[tuple[object, object]], word: str) -> bool:
    """Whether every match of a parsed pattern (`re._parser`) holds `word` as consecutive
    literal characters: at its top level, or in every branch of a group it cannot skip."""
    run = ""
    for op, av in items:
        if op is _LITERAL:
            run += chr(av)  # type: ignore[arg-type]
            if word in run:
                return True
            continue
        if op in (_ASSERT, _ASSERT_NOT, _AT):
            continue  # zero-width: the literals around it are consecutive in the text too
        run = ""
        if op is _SUBPATTERN and _always_spells(list(av[-1]), word):  # type: ignore[index]
            return True
        if op is _BRANCH and all(_always_spells(list(branch), word) for branch in av[1]):  # type: ignore[index]
            return True
    return False


_parser = getattr(re, "_parser", None) or __import__("sre_parse")
_constants = getattr(re, "_constants", None) or __import__("sre_constants")
_LITERAL, _ASSERT, _ASSERT_NOT, _AT = _constants.LITERAL, _constants.ASSERT, _constants.ASSERT_NOT, _constants.AT
_SUBPATTERN, _BRANCH = _constants.SUBPATTERN, _constants.BRANCH
# Each trigger word spells "mma" or "MMA" in every match: a text with neither cannot match, and
# looking for them with `in` is some hundred times faster than the pattern's lookbehinds (1,042
# files of jax's tree: 1.1 s). Checked on the words themselves, so a new word that does not
# spell them turns the shortcut off.
_GATES: tuple[str, ...] | None = ("mma", "MMA") if all(
    any(_always_spells(list(_parser.parse(word)), gate) for gate in ("mma", "MMA"))
    for word in TRIGGER_WORDS
) else None
_BYTE_GATES = None if _GATES is None else tuple(g.encode() for g in _GATES)
# The longest text a trigger word matches: the pattern runs only around each "mma" / "MMA"
# ("gamma", "comma" and "summary" make many of jax's files have one), from this far before it
# to this far after, and a little further for its lookaheads. None: some word has no bound.
_widths = [_parser.parse(word).getwidth()[1] for word in TRIGGER_WORDS]
_REACH = max(_widths) if _widths and max(_widths) < 256 else None


def _around_gates(text: str, gates: tuple[str, ...], pattern: re.Pattern[str], reach: int) -> bool:
    for gate in gates:
        at = text.find(gate)
        while at >= 0:
            for match in pattern.finditer(text, max(0, at - reach), at + reach + 8):
                if match.start() <= at < match.end():
                    return True
            at = text.find(gate, at + 1)
    return False


def could_trigger(text: str) -> bool:
    """False when no trigger word can match in `text` (it spells neither "mma" nor "MMA")."""
    return _GATES is None or any(gate in text for gate in _GATES)


def triggered(text: str) -> bool:
    """Whether a text names a trigger word (`TRIGGER_TEXT.search`, faster)."""
    if _GATES is None or _REACH is None:
        return TRIGGER_TEXT.search(text) is not None
    return _around_gates(text, _GATES, TRIGGER_TEXT, _REACH)


def may_contain_mma(data: bytes) -> bool:
    """The prefilter: False when the file cannot contain an MMA call."""
    if _BYTE_GATES is None or _REACH is None:
        return TRIGGER.search(data) is not None
    return _around_gates(data, _BYTE_GATES, TRIGGER, _REACH)  # type: ignore[arg-type]
