"""Which names code changes in place, read from its text: what the interpreter cannot take
as a fact of a module global (`interpreter/core.py`), what a statement that fills a table
makes relevant (`relevance.py`), and what a comparison holds (`interpreter/calls.py`).

Text scans only: nothing here parses or runs the code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Each pattern matches within a row (no `\n` in it), so it runs only on the rows where a literal
# part of it is found first (`_on_rows`): a leading `(?<![\w.])(\w+)` makes the engine try every
# position of the text (jax's 68 modules of a run: 0.69 s, against 0.05 s).
_OPERATOR = r"(?:[-+*/|&^%@]|//|\*\*|<<|>>)"
ASSIGN_OP = r"[ \t]*" + _OPERATOR + r"?=(?!=)"  # `=`, `+=`, `|=`... (not `==`)
AUGMENTED_OP = _OPERATOR + "="  # `+=`, `|=`...
# The methods that change a list or a dict in place, and those only a set has: what the
# interpreter forgets a container after (`calls.py`), and the mutation scan's words.
MUTATING_METHODS = frozenset(
    {"update", "append", "extend", "insert", "pop", "popitem", "setdefault", "clear", "remove", "sort", "reverse",
     "__setitem__", "__delitem__"}
)
SET_MUTATING_METHODS = frozenset(
    {"add", "discard", "difference_update", "intersection_update", "symmetric_difference_update"}
)
MUTATING_CALL = r"\.(?:" + "|".join(sorted(MUTATING_METHODS | SET_MUTATING_METHODS)) + r")\("
_MUTATIONS: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...] = (
    (re.compile(r"^[ \t\f]*global[ \t]+([\w, \t]+)", re.MULTILINE), None),  # `global X` in a function
    (re.compile(r"(?<![\w.])(\w+)(?:[ \t]*\[[^\]\n]*\])+" + ASSIGN_OP), re.compile(r"\]" + ASSIGN_OP)),
    # `X.append(v)`, and a change of an item in place (`X["a"].append(v)`: a list two keys may share)
    (re.compile(r"(?<![\w.])(\w+)(?:[ \t]*\[[^\]\n]*\])*" + MUTATING_CALL), re.compile(MUTATING_CALL)),
    (re.compile(r"\b(?:setattr|delattr)\([ \t]*(\w+)"), re.compile(r"(?:set|del)attr\(")),
    (re.compile(r"^[ \t\f]*del[ \t]+(\w+)[\[.]", re.MULTILINE), None),
)

# `X.attr = v`: a mutation of X when X is an object of the module; on a module (a test file
# that monkeypatches `plgpu.kernel`) it changes nothing the analysis reads.
_ATTRIBUTE_STORE = re.compile(r"(?<![\w.])(\w+)\.\w+" + ASSIGN_OP)
_ATTRIBUTE_STORE_PART = re.compile(r"\.\w+" + ASSIGN_OP)


def _on_rows(pattern: re.Pattern[str], part: re.Pattern[str] | None, text: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)`, for a pattern whose matches lie within a row and hold a match
    of `part`: run on each row where `part` is found (a row starts afresh, as after `\n`)."""
    if part is None:
        yield from pattern.finditer(text)
        return
    done = -1
    for hit in part.finditer(text):
        if hit.start() < done:
            continue  # a row already read
        start = text.rfind("\n", 0, hit.start()) + 1
        end = text.find("\n", hit.end())
        done = len(text) if end < 0 else end
        yield from pattern.finditer(text[start:done])


def changed_names(text: str) -> frozenset[str]:
    """The names `text` changes in place or rebinds under `global` (not attribute stores)."""
    return names_in(mutation_words(text)[0])


def names_in(mutated: set[str]) -> frozenset[str]:
    """The names `mutation_words` captured (`global a, b` is one capture of two names)."""
    return frozenset(n.strip() for words in mutated for n in words.split(",") if n.strip())


def mutation_words(text: str) -> tuple[set[str], set[str]]:
    """What the mutation patterns capture in `text` (`global a, b` as one string), and the
    names before an attribute store."""
    mutated = {m.group(1) for pattern, part in _MUTATIONS for m in _on_rows(pattern, part, text)}
    return mutated, {m.group(1) for m in _on_rows(_ATTRIBUTE_STORE, _ATTRIBUTE_STORE_PART, text)}


# How a global's object may be used without handing it on, read around each use of its name:
# an item, attribute or method (`T[k]`, `T.get(k)`: a mutating method is a change the scan
# sees), an operator that makes a new value (`T | U`, `T == U`), a binding of the name itself
# (`T = ...`, `T |= ...`, at a statement's start), a membership test or a loop over it (`k in
# T`), a truth test (`if T:`, not `T or U`, `T if c else U`: those give the object itself), and
# a builtin that reads it (`len(T)`, `sorted(T)`).
_THEN_READ = re.compile(r"\[|\.|(?:==|!=|<=|>=|<(?!<=)|>(?!>=)|\*\*(?!=)|//(?!=)|[-+*/|&^%@](?!=)|is\b|not\b|in\b)")
_BINDS = re.compile(ASSIGN_OP)
_BEFORE_READ = re.compile(
    r"(?:(?:^|[^\w.])(?:in|not in|if|elif|while|not|assert)"
    r"|(?<![\w.])(?:len|sorted|list|tuple|set|frozenset|dict|iter|enumerate|reversed|min|max|any|all|isinstance|bool|str|repr|print)\()\Z"
)


# A string literal with its prefix, or a comment: f-strings are kept (their fields are code).
_NOT_CODE = re.compile(
    r"(?P<prefix>(?<!\w)[rRbBuUfF]{0,3})(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\")"
    r"|#[^\n]*"
)


def code_of(text: str) -> str:
    """`text` with its comments and plain strings blanked: the code that may use a name."""
    return _NOT_CODE.sub(
        lambda m: m.group() if "f" in (m.group("prefix") or "").lower() else " " * len(m.group()), text
    )


def passed_on(text: str, name: str) -> bool:
    """Whether `text` uses the global `name` in a way that hands its object to other code
    (`f(T)`, `U = T`, `return T`, `(T, U)`), which may change it under another name."""
    text = code_of(text)
    for match in re.finditer(r"(?<![\w.])" + re.escape(name) + r"\b", text):
        # Read around the use in place, not through copies of the text before and after it
        # (a long block naming the global often).
        after = _SPACES.match(text, match.end()).end()  # type: ignore[union-attr]
        before = match.start()
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        if _THEN_READ.match(text, after) or _BEFORE_READ.search(text, max(0, before - 16), before):
            continue
        if _BINDS.match(text, after) and (before == 0 or text[before - 1] in "\n;"):
            continue
        # Anything else hands it on; the name alone on its row too, which may continue a
        # statement above (`U = (` / `T` / `)`, found by reading the change again).
        return True
    return False


_SPACES = re.compile(r"[ \t]*")
