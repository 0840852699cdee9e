"""Which names code changes in place, read from its text: what the interpreter cannot take
as a fact of a module global (`interpreter/core.py`), what a statement that fills a table
makes relevant (`relevance.py`), and what a comparison holds (`interpreter/calls.py`).

Text scans only: nothing here parses or runs the code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from mmalint.analysis.brackets import (
    CALL_REACH,
    CALLEE,
    CLASS_HEAD_ROW,
    DECORATOR_ROW,
    DEDENT_TO,
    DEF_HEAD_ROW,
    DEF_ROW,
    KEYWORD_BEFORE,
    NOT_CALLS,
    SPACES,
    TOP_LEVEL_DEF,
    a_base,
    argument_of,
    block_end,
    bracket_around,
    bracket_end,
    caller_of,
    clause_start,
    decorated,
    function_span,
    in_annotation,
    parameters,
)

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
_CHANGING_METHODS = MUTATING_METHODS | SET_MUTATING_METHODS
MUTATING_CALL = r"\.(?:" + "|".join(sorted(_CHANGING_METHODS)) + r")\("
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
# a builtin that reads it (`len(T)`, `sorted(T)`), an operand of an operator or comparison.
_THEN_READ = re.compile(r"\[|\.|(?:==|!=|<=|>=|<(?!<=)|>(?!>=)|\*\*(?!=)|//(?!=)|[-+*/|&^%@](?!=)|is\b|not\b|in\b)")
_BINDS = re.compile(ASSIGN_OP)
_ANNOTATED_BINDING = re.compile(r":[^=\n]*=(?!=)")
_BEFORE_READ = re.compile(
    r"(?:(?:^|[^\w.])(?:in|not in|if|elif|while|not|assert)"
    r"|(?<![\w.])(?:len|sorted|list|tuple|set|frozenset|dict|iter|enumerate|reversed|any|all|isinstance|bool|str|repr|print)\("
    r"|[=!<>]=|<|(?<!-)>|[-+*/%|&^~])\Z"  # the right of a comparison or an operator (`{a, b} <= T`)
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


class Handing(NamedTuple):
    """`passed_on`'s reading of a global's object (its arguments but the text and name)."""

    nesting: int = 0
    keyed: bool = False
    attributes: frozenset[str] | None = None
    calls_keep: bool = False
    methods: frozenset[str] = frozenset()  # of a class whose methods may set attributes
    # A table whose last level holds objects: the names of their attributes that hold
    # containers; None where it holds none.
    item_attributes: frozenset[str] | None = None
    copies: bool = True  # `copy.copy(T)` makes a new object (its class does not say otherwise)
    item_calls_keep: bool = True  # no method of those objects' classes sets an attribute
    # A table of rows (`[(Cfg(), 64)]`): the places in its rows of what may change; None where
    # not known (a row not a list or tuple), or the table holds no rows.
    row_places: frozenset[int] | None = None


PLAIN = Handing()  # a list, dict or set of values that are not containers


def passed_on(
    text: str, name: str, how: Handing = PLAIN, qualified: bool = False, consulted: set[str] | None = None,
    held_in: list[tuple[str, Handing]] | None = None, functions: Functions | None = None,
) -> bool:
    """Whether `text` uses the global `name` in a way that hands its object to other code
    (`f(T)`, `U = T`, `return T`, `(T, U)`), which may change it under another name.

    `how` says what the object is: a table holding containers `how.nesting` levels deep, whose
    containers are handed on too (`x = T[k]`, `for x in T`, `list(T)`; `T[i][k]` past the
    last level is a plain read); a dict (`keyed`), whose iteration gives its keys; an object of
    a class (`attributes`: the names of its attributes that hold containers), which a method
    call hands on too (`T.fix()` gives `self`, unless `calls_keep`: no method of its class sets
    an attribute; else a method of `methods` named, not called, is handed on bound to it),
    as does a store into an attribute (`T.a = v`, `T.a[k] = v`) or a container attribute going
    on (`u = T.names`); a table whose last level holds objects (`item_attributes`), as one of
    those where it is subscripted (`T[0].a = v`; `T[0].fix()` unless `item_calls_keep`). A plain name
    bound to it (`cfg = T[k]`, `for cfg in T:`) that nothing changes or hands on does not hand
    it on. Imports are not uses.
    `qualified`: the text imports the global's module, so `m.T` (any `a.b.T`) is a use too,
    and `import ... T as U` hands it on. `consulted` gets the names whose uses the answer
    read (the global's, and the names bound to it): an edit naming none leaves it as it is.
    `held_in`, for an object or a class: an item of a table the module binds at its top level
    (`KERNELS = [A, pytest.param(B, marks=...)]`) that the text only reads is not handed on
    here, and the table's name and reading are added to it: whether the files importing the
    module hand the table on is the caller's to ask. `functions`: where a name the text
    imports is a function of another module of the tree, that module's code (`module_code`)
    and the function's name there; an argument going to it is followed in as one going to a
    function of the text is (`run(cfg)` of `from ops import run`)."""
    imports, code = _code_and_imports(text)
    renamed = re.compile(r"(?<![\w.])" + re.escape(name) + r"[ \t\\\n]+as\b")
    if qualified and any(renamed.search(row) for row in imports):
        return True  # `from m import T as U`: uses of U are not read here
    return _hands_on(code, name, how, qualified, _ALIAS_DEPTH, set() if consulted is None else consulted,
                     _Reach(text, held_in, None, functions))


@functools.lru_cache(maxsize=16)
def module_code(text: str) -> str:
    """A module's code as the scans read it: strings, comments and imports blanked."""
    return _code_and_imports(text)[1]


# Where a function a module imports is defined: that module's code, the function's name, and
# where the functions that module imports are.
Functions = Callable[[str], "tuple[str, str, Functions] | None"]


class _Reach(NamedTuple):
    """What a scan of part of a module may read beyond the text it is given."""

    original: str | None = None  # the module's text, where the text is its whole code (its strings)
    held_in: list[tuple[str, Handing]] | None = None  # `passed_on`'s
    module: str | None = None  # the module's whole code, where the text is a part of it
    functions: Functions | None = None  # `passed_on`'s, for the names the module imports
    hops: int = 3  # how many functions in a row an argument is followed into


_NOWHERE = _Reach()

def _code_and_imports(text: str) -> tuple[tuple[str, ...], str]:
    """A module's import statements, and its code (`code_of`) with them blanked: once a text,
    for every global and class `passed_on` is asked about in it."""
    code = code_of(text)
    imports = tuple(m.group() for m in _IMPORT.finditer(code))
    return imports, _IMPORT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), code)


def changed_or_handed_on(text: str, name: str, handed: bool = True) -> bool:
    """Whether `text`, which imports the global `name`'s module, may change its object: an
    item or attribute stored, a mutating method, by its name or through the module's
    (`m.T[k] = v`, `m.T.insert(0, v)`, `m.T = U`: bound again), handed on (`passed_on`;
    not asked where `handed` is False: a caller that judged the handing itself, knowing the
    object), or reached by a string."""
    code = _code_and_imports(text)[1]
    return (_QUALIFIED_CHANGE(name).search(code) is not None or _changed(code, name)
            or (handed and passed_on(text, name, qualified=True)) or named_by_string(text, name))


@functools.cache
def _QUALIFIED_CHANGE(name: str) -> re.Pattern[str]:
    """`m.T` stored into, bound again or changed in place (an item, an attribute, a method)."""
    return re.compile(r"\.[ \t]*" + re.escape(name) + r"\b(?:[ \t]*\[[^\]\n]*\])*(?:" + ASSIGN_OP
                      + r"|[ \t]*\.[ \t]*\w+(?:[ \t]*\[[^\]\n]*\])*" + ASSIGN_OP + r"|[ \t]*" + MUTATING_CALL + ")")


def named_by_string(text: str, name: str) -> bool:
    """Whether `text` may reach a module's global `name` by a string (`getattr(m, "T")`,
    `vars(m)["T"]`, `m.__dict__["T"]`): the name quoted, and such an access."""
    return bool(re.search(r"[\"']" + re.escape(name) + r"[\"']", text) and _BY_STRING.search(text))


_BY_STRING = re.compile(r"(?<![\w.])(?:getattr|setattr|vars)[ \t]*\(|__dict__")


def _hands_on(text: str, name: str, how: Handing, qualified: bool, aliases: int, consulted: set[str],
              reach: _Reach = _NOWHERE) -> bool:
    """`passed_on` over code already blanked of strings, comments and imports; `aliases`: how
    many plain names bound to it in a row are read before one counts as handed on; `reach`:
    the module around the text (`_Reach`)."""
    original, held_in = reach.original, reach.held_in
    inner = _Reach(module=text if reach.module is None else reach.module, functions=reach.functions, hops=reach.hops)
    nesting, keyed, attributes, calls_keep, methods, item_attributes, copies, item_calls_keep, _ = how
    objects = item_attributes is not None
    dunders = attributes is not None and not calls_keep  # `if T:`, `T | U`: a method may set attributes
    consulted.add(name)
    for match in re.finditer(r"(?<!\w)" + re.escape(name) + r"\b", text):
        # Read around the use in place, not through copies of the text before and after it
        # (a long block naming the global often).
        after = SPACES.match(text, match.end()).end()  # type: ignore[union-attr]
        before = match.start()
        if before and text[before - 1] == ".":
            if not qualified:
                continue  # another object's attribute
            while before and (text[before - 1] == "." or text[before - 1].isalnum() or text[before - 1] == "_"):
                before -= 1  # `a.b.T`: read around the whole of it
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        level = nesting
        if text[after:after + 1] == "." and _ATTRIBUTE_CHAIN.match(text, after) is None:
            continue  # `T.{` in an f-string's text (`f"<T.{x}>"`): not code
        if attributes is not None and text[after:after + 1] == ".":
            # An attribute of the object (`T.a.b`): read, unless called (a method: `self`),
            # stored into, or a container of it goes on.
            if _object_changed(text, after, calls_keep, methods):
                return True  # (`T.__dict__` too)
            parts, end = _attributes(text, after)
            if (parts[0] not in attributes or _THEN_READ.match(text, end)
                    or _ITEM_SAFE_BEFORE.search(text, max(0, before - 16), before)):
                continue
            return True
        if attributes is not None:
            if calls_keep and text[after:after + 1] in ("(", "["):
                continue  # `T(...)`, `T[k]`: its `__call__`, `__getitem__`, which set no attribute
            level = 1 if attributes else 0  # the object itself: its containers go with it
        elif nesting:
            at = match.end()
            while level >= 0 and (subscript := _SUBSCRIPT.match(text, at)) is not None:
                # A slice (`T[:]`) is a new table of the same items: not a level down.
                level, at = level - (":" not in subscript.group()), subscript.end()
            if level < 0:
                continue  # an item below every container (a change of one is the scan's)
            if at != match.end():
                after = SPACES.match(text, at).end()  # type: ignore[union-attr]
                if (item_attributes is not None and not level and text[after:after + 1] == "."
                        and _ATTRIBUTE_CHAIN.match(text, after) is not None):
                    # An object the table holds, as such (`T[k].a = v`, `T[k].opts.update()`:
                    # changed; `T[k].a`: read, unless a container of it goes on).
                    if _object_changed(text, after, item_calls_keep, frozenset()):
                        return True
                    parts, end = _attributes(text, after)
                    if parts[0] in item_attributes and not _THEN_READ.match(text, end):
                        return True
                    continue
                if item_attributes is not None and not level and item_calls_keep and text[after:after + 1] == "(":
                    continue  # `T[k](x)`: its `__call__`, which sets no attribute
        row = text.rfind("\n", 0, before) + 1
        if (_CLASS_STATEMENT.match(text, row, before) or _TYPE_TEST.search(text, row, before)
                or in_annotation(text, row, before) or a_base(text, before)):
            continue  # `class T:` defines it; `class U(T):`, `isinstance(x, T)`, `x: T` read it
        if (lead := _OPERAND_BEFORE.search(text, max(0, before - 80), before)) is not None and (
                _FOR_IN.search(text, row, lead.start()) or _BOUND_TO.search(text, row, lead.start())):
            before = len(text[:lead.start()].rstrip(" \t"))  # `for k in names or T:`, `u = names or T`
        elif (trail := _OPERAND_AFTER.match(text, after)) is not None and (
                _FOR_IN.search(text, row, before) or _BOUND_TO.search(text, row, before)):
            after = trail.end()  # `for k in T or names:`: it, unless empty
        clause = clause_start(text, before)
        loop = _FOR_IN.search(text, row, before)
        if _BOUND_METHOD.match(text, after) or _CHANGING_DUNDER.match(text, after):
            return True  # `u = T.update`: a method that changes it, called elsewhere; `T.__init__(...)`
        values = _VALUES.match(text, after) if loop is not None else None
        if loop is None and (pair := _FOR_PAIR_IN.search(text, row, before)) is not None:
            values = _ITEMS.match(text, after)  # `for k, v in T.items():`: `v` as `.values()` gives it
            loop = pair if values is not None else None
        if values is not None:
            after = SPACES.match(text, values.end()).end()  # type: ignore[union-attr]  # `for v in T.values():`
        if (not dunders and text[after:after + 1] in (",", ")", "\n")
                and _read_by_caller(text, before, level, not copies, attributes is not None)):
            continue
        if (keyed and level and before and text[before - 1] == "*" and (star := _VALUES.match(text, after))
                and text[SPACES.match(text, star.end()).end():][:1] in (",", ")")  # type: ignore[union-attr]
                and _read_by_caller(text, before - 1, level - 1, not copies)):
            continue  # `itertools.product(*T.values())`: each value, read as its own argument
        if aliases and text[after:after + 1] in (",", ")", "\n") and _kept_by_its_function(
                text, before, how, aliases, consulted, inner):
            continue
        if aliases and original is not None and text[after:after + 1] in (",", ")", "]", "\n") and _kept_by_sweep(
                text, original, before, how, level, aliases - 1, consulted, inner):
            continue
        if calls_keep and attributes is not None and _PARTIAL_OF.search(text, max(0, before - 40), before):
            continue  # `functools.partial(T, ...)`: a call of it later, which changes nothing of it
        if dunders:
            pass  # only an attribute read, a binding or a name bound to it that is only read
        elif level:
            # A container that holds containers (`T`, `T[k]` of a deeper table).
            if _ITEM_SAFE_AFTER.match(text, after) or _ITEM_SAFE_BEFORE.search(text, max(0, before - 16), before):
                continue
            if (keyed and level == nesting and text[after:after + 1] in (")", ",")
                    and caller_of(text, before) in _ITERATING_BUILTINS):
                continue  # `sorted(T)`, `list(T)` of a dict: its keys
            if _MEMBERSHIP.search(text, max(0, before - 4), before) and (
                    not _LOOPS.search(text, clause, before)
                    or (keyed and level == nesting and loop is not None and values is None
                        and _LOOP_END.match(text, after))):
                continue  # a test, or a loop over a dict's keys
        elif (_THEN_READ.match(text, after) or _BEFORE_READ.search(text, max(0, before - 16), before)
              or (before and text[before - 1] == "*")  # `f(*T)`, `[*T]`: its items, not it
              or (_STARRED_OPERAND.search(text, max(0, before - 80), before) and _STARRED_END.match(text, after))
              or (_OPEN_OPERAND.search(text, max(0, before - 80), before) and _READ_OPERAND_END.match(text, after))):
            continue  # `{**(overrides or {})}`, `(widths or T).values()`: its items, where it is the value
        if (_BINDS.match(text, after) or _ANNOTATED_BINDING.match(text, after)) and (
                before == 0 or text[before - 1] in "\n;"):  # `T = ...`, `T: dict[str, Cfg] = ...`
            continue
        if aliases and text[after:after + 1] in ("", "\n", ";", ":", "]", ")", ","):
            # `cfg = T[k]` (the container itself), `for cfg in T:` (each item, a level down),
            # (`for cls in (T, U):`: T itself)
            bound = _BOUND_TO.search(text, row, before) if text[after:after + 1] in ("", "\n", ";") else None
            looped = _loop_over_display(text, before) if not (bound or loop) else None
            alias, alias_level = (
                (bound.group(1), level) if bound else (loop.group(1), level - 1) if loop
                else (looped, level) if looped else ("", 0))
            if objects and not alias_level and (loop or level < nesting):
                alias_how = Handing(attributes=item_attributes, calls_keep=item_calls_keep)  # an object the table holds
            elif loop:
                alias_how = Handing(alias_level, item_attributes=item_attributes, item_calls_keep=item_calls_keep)
            else:
                alias_how = how._replace(nesting=alias_level, keyed=False)
            if alias:
                consulted.add(alias)
            # A local of the function around the loop or binding (its text alone), or a global
            # (the whole text but functions whose own local shares its name).
            span = function_span(text, row) if alias else None
            scope = text[span[0]:span[1]] if span is not None else _locals_blanked(text, alias) if alias else text
            if alias and alias != name and alias_level >= 0 and not _changed(scope, alias) and not _hands_on(
                    scope, alias, alias_how, False, aliases - 1, consulted, inner):
                continue
            if (not alias and attributes is None and not objects and text[after:after + 1] in ("", "\n", ";")
                    and (unpacked := _UNPACKED_TO.search(text, row, before)) is not None
                    and _items_only_read(text, row, before, re.findall(r"\w+", unpacked.group(1)), name, level,
                                         how, aliases, consulted, inner)):
                continue  # `bm, bn = T[k]`: its items, each bound to a name
        if (held_in is not None and aliases and (attributes is not None or level == nesting)
                and text[after:after + 1] in (",", ")", "]", "}", "\n")
                and (holding := _table_holding(text, before)) is not None and holding[0] != name):
            table, keyed_table = holding
            table_how = (Handing(1, keyed_table, item_attributes=attributes, item_calls_keep=calls_keep)
                         if attributes is not None  # an object or a class
                         else Handing(nesting + 1, keyed_table, item_attributes=item_attributes,
                                      item_calls_keep=item_calls_keep))  # a container: `{"a": BASE}`
            if not _changed(text, table) and not _hands_on(text, table, table_how, False, aliases - 1, consulted,
                                                           reach._replace(held_in=None)):
                held_in.append((table, table_how))
                continue
        # Anything else hands it on; the name alone on its row too, which may continue a
        # statement above (`U = (` / `T` / `)`, found by reading the change again).
        return True
    return False


def _items_only_read(text: str, row: int, at: int, names: list[str], name: str, level: int, how: Handing,
                     aliases: int, consulted: set[str], reach: _Reach) -> bool:
    """Whether the items of a container `level` deep in a table, unpacked into `names` by the
    targets from `row` to `at`, go nowhere: plain values (`level` 0), or containers a level
    down that each name only reads where it is bound (a local of the function there, else a
    global)."""
    if not level:
        return True
    span = function_span(text, row)
    text = text[:row] + " " * (at - row) + text[at:]  # the targets: bindings, not uses
    how = how._replace(nesting=level - 1, keyed=False, row_places=None)
    for alias in names:
        if alias == name:
            return False
        consulted.add(alias)
        scope = text[span[0]:span[1]] if span is not None else _locals_blanked(text, alias)
        if _changed(scope, alias) or _hands_on(scope, alias, how, False, aliases - 1, consulted, reach):
            return False
    return True


def _loop_over_display(text: str, at: int) -> str | None:
    """The name a `for` binds to each item of the display whose item starts at `at`
    (`for cls in (T, U):`, `[f(c) for c in [T, U]]`); None where it is no such item."""
    opener = clause_start(text, at) - 1
    if opener < 0 or text[opener] not in "([":
        return None
    loop = _FOR_IN.search(text, max(0, opener - CALL_REACH), opener)
    end = bracket_end(text, opener) if loop is not None else None
    if loop is None or end is None or _LOOP_END.match(text, SPACES.match(text, end).end()) is None:  # type: ignore[union-attr]
        return None
    return loop.group(1)


def _object_changed(text: str, at: int, calls_keep: bool, methods: frozenset[str]) -> bool:
    """Whether the attributes read from `at` (`.a.b`, after an object) change the object: a
    method called (it gets `self`, unless `calls_keep`) or named (`f = T.fix`, one of
    `methods`), or an attribute stored into (`T.a = v`, `T.a[k] = v`)."""
    parts, end = _attributes(text, at)
    if any(part.startswith("__") and part not in _READ_DUNDERS for part in parts):
        return True  # `T.__dict__`, `T.__init__(...)`, `T.__setattr__`: past what the text says
    if text[end:end + 1] == "(" and (not calls_keep or parts[-1] in _CHANGING_METHODS):
        return True  # a method (it gets `self`), or `T.opts.update(...)`
    return bool(_BINDS.match(text, end)) or parts[0] in methods


# Dunders whose store or read changes nothing the analysis reads of an object or a class.
_READ_DUNDERS = frozenset({"__call__", "__name__", "__qualname__", "__module__", "__doc__"})


def _attributes(text: str, at: int) -> tuple[list[str], int]:
    """The attribute names read from `at` (`.a.b` after an object: `["a", "b"]`), and where
    what follows them starts: past the subscripts after the last (`T.a[k][j]`) and blanks."""
    chain = _ATTRIBUTE_CHAIN.match(text, at)
    assert chain is not None  # `at` is a `.`
    end = SPACES.match(text, chain.end()).end()  # type: ignore[union-attr]
    while (subscript := _SUBSCRIPT.match(text, end)) is not None:
        end = SPACES.match(text, subscript.end()).end()  # type: ignore[union-attr]
    return [part.strip() for part in chain.group().split(".")[1:]], end


def _changed(text: str, name: str) -> bool:
    """Whether `text` changes `name` in place anywhere (an item or attribute stored, a
    mutating method, `global`): the scan's words, read for one name."""
    if not re.search(r"(?<![\w.])" + re.escape(name) + r"\b", text):
        return False
    if re.search(r"\.[ \t]*" + re.escape(name) + r"\b", text):
        return True  # an attribute of that name too (`table = T` in a class, `C.table[k] = v`)
    if re.search(r"(?<![\w.])" + re.escape(name) + r"[ \t]*" + AUGMENTED_OP, text):
        return True  # `U |= {...}`, `U += [...]`: a dict's or list's change in place
    mutated, stored = _words_of(text)
    return name in mutated or name in stored


@functools.lru_cache(maxsize=8)
def _words_of(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """`mutation_words` of a module's code, its captures split into names: asked once per
    name bound to a table's item, of the same text."""
    mutated, stored = mutation_words(text)
    return names_in(mutated), frozenset(stored)


# `T.update` not called where it is named: the method, bound to the object, handed on.
_BOUND_METHOD = re.compile(r"\.[ \t]*(?:" + "|".join(sorted(_CHANGING_METHODS)) + r")\b(?![ \t]*\()")
_ATTRIBUTE_CHAIN = re.compile(r"(?:[ \t]*\.[ \t]*\w+)+")
_CHANGING_DUNDER = re.compile(r"\.[ \t]*__(?:init|setitem|delitem|setattr|dict|i[a-z]+)__\b")
_VALUES = re.compile(r"\.[ \t]*values[ \t]*\([ \t]*\)")
_ITEMS = re.compile(r"\.[ \t]*items[ \t]*\([ \t]*\)")
_FOR_PAIR_IN = re.compile(r"(?<![\w.])for[ \t]+\(?[ \t]*[A-Za-z_]\w*[ \t]*,[ \t]*([A-Za-z_]\w*)[ \t]*\)?[ \t]+in[ \t]*\Z")
_LOOP_END = re.compile(r":|\)|\]|\n|if\b|for\b")  # the end of a loop's iterable (`for k in T:`)
_ALIAS_DEPTH = 2  # `cfg = T[k]` then `c = cfg`: read through; a third name counts as handed on
# A class statement up to a name: its own (`class T`), or a base's (`class U(Base, T`).
_CLASS_STATEMENT = re.compile(r"[ \t]*class(?:[ \t]+\w+[ \t]*\([^)=]*)?\Z")
# A class as the second argument of a type test: `isinstance(x, T)`, `issubclass(U, (S, T)`.
_TYPE_TEST = re.compile(r"(?<![\w.])(?:isinstance|issubclass)[ \t]*\([^(),]*,[ \t]*(?:\([^()]*)?\Z")
# `a, b = `, `(a, b) = ` at a statement's start (plain names only: no star, no subscript).
_UNPACKED_TO = re.compile(r"(?:^|;)[ \t]*[(\[]?[ \t]*(\w+(?:[ \t]*,[ \t]*\w+)+)[ \t]*,?[ \t]*[)\]]?[ \t]*=[ \t]*\Z",
                          re.MULTILINE)
# A plain name and `or`/`and` before a use, or after it up to the statement's or clause's end:
# the use may be the expression's value.
_OPERAND_BEFORE = re.compile(r"(?<![\w.])[A-Za-z_][\w.]*[ \t]+(?:or|and)[ \t]*\Z")
_OPERAND_AFTER = re.compile(r"[ \t]*(?:or|and)[ \t]+[A-Za-z_][\w.]*(?=[ \t]*(?:[:;\n]|\Z))")
# A use as an operand of `or`/`and` whose value is unpacked (`**(T or {})`, `*(names or T)`).
_STARRED_OPERAND = re.compile(r"\*[ \t]*\([ \t]*(?:[A-Za-z_][\w.]*[ \t]+(?:or|and)[ \t]*)?\Z")
_STARRED_END = re.compile(r"(?:(?:or|and)[ \t]+(?:\{[ \t]*\}|\[[ \t]*\]|\([ \t]*\)|[A-Za-z_][\w.]*)[ \t]*)?\)(?![ \t]*[.\[(])")
# ... or read where its parentheses close (`(widths or T).values()`, `(names or T)[0]`), not
# those of a call.
_OPEN_OPERAND = re.compile(r"(?:^|[^\w.)\]\s])[ \t]*\([ \t]*(?:[A-Za-z_][\w.]*[ \t]+(?:or|and)[ \t]*)?\Z",
                           re.MULTILINE)
_READ_OPERAND_END = re.compile(r"(?:(?:or|and)[ \t]+(?:\{[ \t]*\}|\[[ \t]*\]|\([ \t]*\)|[A-Za-z_][\w.]*)[ \t]*)?\)"
                               r"[ \t]*(?:\[|\.[ \t]*(?:values|keys|items|get|copy)[ \t]*\()")
# `x = ` at a statement's start; `for x in ` (a loop or a comprehension's clause).
_BOUND_TO = re.compile(r"(?:^|;)[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*\Z", re.MULTILINE)
_FOR_IN = re.compile(r"(?<![\w.])for[ \t]+([A-Za-z_]\w*)[ \t]+in[ \t]*\Z")


def _kept_by_its_function(text: str, at: int, how: Handing, aliases: int, consulted: set[str], reach: _Reach) -> bool:
    """Whether the argument that starts at `at` goes to a function the module's code
    (`reach.module`) defines at its top level (`run(CFG)`, `check(kernel_cls)`, from a
    function of the module too: `for name, cfg in T.items(): _random(cfg)`), or another
    module's it imports (`reach.functions`), whose parameter it binds is only read there: not
    changed (`_changed`) nor handed on (`_hands_on`, as a name bound to it would be; the
    functions it goes to in turn followed likewise, up to `reach.hops` in a row)."""
    call = argument_of(text, at) if reach.hops > 0 else None
    if call is None:
        return False
    callee, index, keyword = call
    module = text if reach.module is None else reach.module
    functions = reach.functions
    around = function_span(text, text.rfind("\n", 0, at) + 1)
    if around is not None:
        local = _BINDS_LOCALLY(callee).search(text, around[0], around[1])
    else:  # a function's body cut from the module (not a copy of all of it with some blanked)
        local = _BINDS_LOCALLY(callee).search(text) if len(text) != len(module) else None
    if local is not None:
        return False  # a local of the function the call is in, of the same name (or itself)
    heads = list(TOP_LEVEL_DEF(callee).finditer(module))
    if not heads and functions is not None and re.search(
            r"(?<![\w.])" + re.escape(callee) + r"[ \t]*(?::[^=\n]*)?=(?!=)", module) is None:
        elsewhere = functions(callee)  # (a name the module binds itself is its own)
        if elsewhere is None:
            return False
        module, callee, functions = elsewhere  # (with the functions that module imports)
        heads = list(TOP_LEVEL_DEF(callee).finditer(module))
    if len(heads) != 1 or re.search(r"^" + re.escape(callee) + r"[ \t]*(?::[^=\n]*)?=", module, re.MULTILINE):
        return False  # not a function of the module, or bound more than once
    found = parameters(module, heads[0].end())
    if found is None:
        return False
    params, body = found
    if keyword is not None:
        param = keyword if keyword in params else None
    else:
        param = params[index] if index < len(params) else None
    if param is None or param.startswith("*"):
        return False  # into `*args`/`**kwargs`: where it goes from there is not read
    below = DEDENT_TO(0).search(module, body)  # (past a `):` row of its own)
    span = module[body:below.start() if below is not None else len(module)]
    consulted.add(param)
    return not _changed(span, param) and not _hands_on(
        span, param, how, False, aliases, consulted, _Reach(module=module, functions=functions, hops=reach.hops - 1))


def _kept_by_sweep(text: str, original: str, at: int, how: Handing, level: int, aliases: int,
                   consulted: set[str], reach: _Reach) -> bool:
    """Whether the argument that starts at `at` (`level` deep where a table) is a case, or the
    cases, of a sweep decorating a function of the text whose parameters it binds are only
    read there: not changed nor handed on, as a name bound to it would be.

    The cases (each item to the parameters): `@pytest.mark.parametrize("op", T)`, and
    `("op, m", T)` / `(("op", "m"), T)` (each item's items to several; `original` has the
    names: the code has its strings blanked), not `indirect`; `@parameterized.product(op=T)`,
    `jtu.sample_product(op=T)`. A case itself: an item of such a display written in the
    decorator (`parametrize("op", [A, B])`, `("op, m", [(A, 64)])`, `product(op=(A, B))`),
    or a keyword of a `dict(...)` given to `parameterized.named_parameters`/`parameters`."""
    # From the argument outward, each bracket it is in: where it opens, the items before it,
    # its keyword there, and what the bracket is (`[`, `(` of a tuple, `dict`, `param`).
    chain: list[tuple[int, int, str | None, str]] = []
    inner = at
    while len(chain) < 4:
        keyword = KEYWORD_BEFORE.search(text, max(0, inner - CALL_REACH), inner)
        stops: Callable[[int], bool] = (lambda i: False) if keyword is not None else (lambda i: text[i] in ":=")
        found = bracket_around(text, inner, stops)
        if found is None:
            return False
        opener, commas = found
        callee = CALLEE.search(text, max(0, opener - CALL_REACH), opener) if text[opener] == "(" else None
        if callee is not None and callee.group(1) in NOT_CALLS:
            callee = None  # `in (A, B)`: a tuple
        kind = text[opener] if callee is None else "dict" if callee.group(1) == "dict" else (
            "param" if _last_two(callee.group(1)) in _PARAM_CALLS else "call")
        chain.append((opener, commas, keyword.group(1) if keyword is not None else None, kind))
        if kind == "call":
            break
        inner = callee.start() if callee is not None else opener  # the display or call as an item
    else:
        return False
    assert callee is not None
    if not DECORATOR_ROW.match(text, text.rfind("\n", 0, opener) + 1, callee.start()):
        return False
    qualified = _last_two(callee.group(1))
    end = bracket_end(text, opener)
    if end is None:
        return False
    _, commas, given, _ = chain[-1]
    # What holds the argument in the decorator's call, outermost first: `["[", "("]` for the A
    # of `parametrize("op, m", [(A, 64)])`. A `pytest.param(A, ...)` is its positional values.
    inside = [(kind, place, key) for _, place, key, kind in reversed(chain[:-1])]
    if any(kind == "param" and key is not None for kind, _, key in inside):
        return False  # `pytest.param(..., marks=A)`
    shape = [kind for kind, _, _ in inside]
    if qualified == "mark.parametrize":
        names = _ARGNAMES.match(original, opener + 1)
        if (names is None or (given != "argvalues" if given is not None else commas != 1)
                or re.search(r"\bindirect\b", text[opener:end])):
            return False  # `indirect=True`: a fixture gets them
        params = re.findall(r"\w+", names.group(2) if names.group(1) else names.group(3))
        if not inside:
            down = 1 if len(params) == 1 else 2
        elif len(params) == 1 and shape[0] in "[(" and (shape[1:] == [] or (shape[1:] == ["param"] and not inside[1][1])):
            down = 0  # `("op", [A, B])`, `("op", [pytest.param(A, id="a")])`: A is a case
        elif len(params) > 1 and len(shape) == 2 and shape[0] in "[(" and shape[1] in ("(", "param"):
            index = inside[1][1]  # `("op, m", [(A, 64)])`, `[pytest.param(A, 64)]`: A goes to `op`
            if index >= len(params):
                return False
            params, down = [params[index]], 0
        else:
            return False
    elif qualified in _SWEEPS_BY_KEYWORD and given is not None and (shape == [] or shape in (["["], ["("])):
        params, down = [given], 1 - len(inside)  # `product(op=T)`, `product(op=(A, B))`
    elif qualified in _SWEEPS_OF_DICTS and shape == ["dict"] and inside[0][2] is not None:
        params, down = [inside[0][2]], 0  # `named_parameters(dict(testcase_name="x", op=A))`
    elif qualified in _SWEEPS_OF_DICTS and shape == ["("] and inside[0][2] is None:
        # `named_parameters(("x", A, 64))` (a case's name first), `parameters((A, 64))`: A to
        # the parameter at its place
        place = inside[0][1] - (qualified == "parameterized.named_parameters")
        if place < 0:
            return False
        params, down = [], 0
    else:
        return False
    indent = len(SPACES.match(text, text.rfind("\n", 0, opener) + 1).group())  # type: ignore[union-attr]
    if down == 2 and level == how.nesting and how.row_places is not None:
        params = [param for i, param in enumerate(params) if i in how.row_places]  # the rest get plain values
    head = decorated(text, end, indent)
    if head is None:
        return level >= down and qualified == "mark.parametrize" and _kept_by_class_sweep(
            text, decorated(text, end, indent, CLASS_HEAD_ROW), params, _item_handing(how, level, down),
            aliases, consulted, reach)
    found_params = parameters(text, head.end()) if level >= down else None
    if found_params is not None and not params:
        taken = found_params[0][1 if indent else 0:]  # (a method's `self` first)
        if place >= len(taken) or taken[place].startswith("*"):
            return False
        params = [taken[place]]
    if found_params is None or not params or not set(params) <= set(found_params[0]):
        return False
    item_how = _item_handing(how, level, down)
    below = DEDENT_TO(len(head.group(1))).search(text, found_params[1])  # (past a `):` row of its own)
    span = text[found_params[1]:below.start() if below is not None else len(text)]
    consulted.update(params)
    into = reach._replace(module=text)
    return not any(_changed(span, param) or _hands_on(span, param, item_how, False, aliases, consulted, into)
                   for param in params)


def _item_handing(how: Handing, level: int, down: int) -> Handing:
    """How a sweep's parameter holds what a table `level` deep gives it, `down` levels in."""
    item_level = level - down
    if not down:
        return how  # the case itself
    if how.item_attributes is not None and not item_level:
        return Handing(attributes=how.item_attributes, calls_keep=how.item_calls_keep)  # an object the table holds
    return Handing(item_level, item_attributes=how.item_attributes, item_calls_keep=how.item_calls_keep)


def _kept_by_class_sweep(text: str, klass: re.Match[str] | None, params: list[str], how: Handing, aliases: int,
                         consulted: set[str], reach: _Reach) -> bool:
    """Whether the parameters a sweep decorating a test class (`klass`, its `class` row) binds
    are only read: pytest gives the cases to each of its methods that names them, read as a
    decorated function's body is."""
    if klass is None or not params:
        return False
    stop = block_end(text, klass)
    methods = [(row, head) for row in DEF_ROW.finditer(text, klass.end(), stop)
               if (head := DEF_HEAD_ROW.match(text, row.start())) is not None]
    if not methods:
        return False
    indent = min(len(row.group(1)) for row, _ in methods)
    taken: set[str] = set()
    spans = []
    for row, head in methods:
        found = parameters(text, head.end())
        if found is None:
            return False
        if len(row.group(1)) != indent or not set(params) & set(found[0]):
            continue  # a function inside a method (in its body), or a method the sweep gives nothing
        taken.update(found[0])
        below = DEDENT_TO(indent).search(text, found[1])
        spans.append(text[found[1]:below.start() if below is not None and below.start() < stop else stop])
    if not set(params) <= taken:
        return False
    consulted.update(params)
    into = reach._replace(module=text)
    return not any(_changed(span, param) or _hands_on(span, param, how, False, aliases, consulted, into)
                   for span in spans for param in params)


def _table_holding(text: str, at: int) -> tuple[str, bool] | None:
    """The module global whose binding's display holds the item that starts at `at`, itself
    or as `pytest.param(A, ...)`'s value (`KERNELS = [A, pytest.param(B, marks=...)]`), or
    as a dict display's value (`_OPS = {"int8": Int8Op}`); and whether it is a dict."""
    inner = at
    for _ in range(2):
        value = _DICT_VALUE.search(text, max(0, inner - CALL_REACH), inner)
        found = (bracket_around(text, value.start() + 1, lambda i: text[i] == "=") if value is not None
                 else bracket_around(text, inner, lambda i: text[i] in ":="))  # (a dict's entries have `:`)
        if found is None:
            return None
        opener, commas = found
        callee = CALLEE.search(text, max(0, opener - CALL_REACH), opener) if text[opener] == "(" else None
        if callee is not None and callee.group(1) not in NOT_CALLS:
            if (value is not None or _last_two(callee.group(1)) not in _PARAM_CALLS
                    or commas or KEYWORD_BEFORE.search(text, max(0, inner - CALL_REACH), inner)):
                return None
            inner = callee.start()  # the case's value
            continue
        if text[opener] not in ("{" if value is not None else "[("):
            return None
        bound = _TABLE_BOUND.match(text, text.rfind("\n", 0, opener) + 1, opener)
        return (bound.group(1), value is not None) if bound is not None else None
    return None


# A dict display's key up to its value: a string or a name (`"int8": `, `Kind.INT8: `), after
# the display's `{` or an entry's `,`.
_DICT_VALUE = re.compile(r"[{,][ \t\n]*(?:[\w.]+|\"[^\"\n]*\"|'[^'\n]*'|[ \t]+)[ \t\n]*:[ \t\n]*\Z")
_TABLE_BOUND = re.compile(r"([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*\Z")  # `T = ` at a module's top level


# The cases' names, the first argument of `parametrize` (`"op"`, `"op, m"`, `("op", "m")`).
_ARGNAMES = re.compile(r"[ \t\n]*(?:argnames[ \t]*=[ \t]*)?(?:([\"'])?(?(1)([\w \t,]*)\1|[(\[]((?:[ \t\n]*[\"']\w+[\"'][ \t\n]*,?)+)[)\]]))[ \t\n]*,")
_SWEEPS_BY_KEYWORD = frozenset({"parameterized.product", "jtu.sample_product", "test_util.sample_product"})
_SWEEPS_OF_DICTS = frozenset({"parameterized.named_parameters", "parameterized.parameters"})


def _read_by_caller(text: str, at: int, level: int, self_copies: bool, whole: bool = False) -> bool:
    """Whether the argument that starts at `at` is one of a call that reads it and keeps
    nothing of it (`copy.deepcopy(T)`) or, for a table whose items are not containers (`level`
    0), keeps only its items (`zip(T, U)`, `itertools.product(T)`, `jtu.sample_product(dtype=T)`,
    `copy.copy(T)`, `U.update(T)` of a dict the text makes). Not `copy`'s where the object's
    class makes its own copies (`__copy__` may answer with itself: `self_copies`); not a call
    that makes an object or a class (`whole`) itself a case (`pytest.param(T)`: the test gets
    it, `_kept_by_sweep`'s to follow)."""
    callee = caller_of(text, at)
    if callee is None:
        return False
    qualified = _last_two(callee)
    if whole and qualified in _CASE_CALLS:
        return False
    if self_copies and qualified.startswith("copy."):
        return False
    if qualified == "copy.deepcopy" or (not whole and qualified in _KEEPING_NOTHING):
        return True
    if not level and (copied := _COPIED_INTO.fullmatch(callee)) is not None and re.search(
            r"(?<![\w.])" + copied.group(1) + r"[ \t]*(?::[^=\n]*)?=[ \t]*(?:\{|\[|dict[ \t]*\(|list[ \t]*\()", text):
        return True  # `U.update(T)`, `U.extend(T)` of a dict or list the text makes: its items
    return not level and (callee in _ITERATING_BUILTINS or qualified in _READING_CALLS)


_COPIED_INTO = re.compile(r"(\w+)\.(?:update|extend)")


def _last_two(callee: str) -> str:
    """A dotted callee by its module's last name and its own (`pytest.mark.parametrize` ->
    `mark.parametrize`, `jax._src.test_util.sample_product` -> `test_util.sample_product`):
    how the call tables below name it."""
    return ".".join(callee.rsplit(".", 2)[-2:])


_PARAM_CALLS = ("pytest.param", "param")  # `pytest.param(A, ...)`, `from pytest import param`
# Calls whose argument itself is a case of a sweep (not a list of cases).
_CASE_CALLS = frozenset({"pytest.param", "parameterized.parameters", "parameterized.named_parameters"})


def _locals_blanked(text: str, name: str) -> str:
    """`text` with the functions that bind `name` (a `def`, an assignment, a loop, `with ...
    as`, a parameter) blanked, newlines kept: their uses of it are their local's."""
    spans: list[tuple[int, int]] = []
    for bound in _BINDS_LOCALLY(name).finditer(text):
        span = function_span(text, text.rfind("\n", 0, bound.start()) + 1)
        if span is not None:
            spans.append(span)
    for head in _PARAMETER_OF(name).finditer(text):
        spans.append((head.start(), block_end(text, head)))
    for start, end in spans:
        if not re.search(r"\b(?:global|nonlocal)[ \t]+[\w, \t]*\b" + re.escape(name) + r"\b", text[start:end]):
            text = text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]
    return text


@functools.cache
def _BINDS_LOCALLY(name: str) -> re.Pattern[str]:
    word = re.escape(name)
    return re.compile(
        r"^[ \t]*(?:async[ \t]+)?def[ \t]+" + word + r"\b|^[ \t]*" + word + r"[ \t]*(?::[^=\n]*)?=(?!=)"
        r"|(?<![\w.])for[ \t]+[\w, \t()]*\b" + word + r"\b[\w, \t()]*\bin\b|\bas[ \t]+" + word + r"\b", re.MULTILINE)


@functools.cache
def _PARAMETER_OF(name: str) -> re.Pattern[str]:
    """A `def` row with `name` among its parameters (on the row)."""
    return re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+[ \t]*\([^)\n]*(?<![\w.=])" + re.escape(name)
                      + r"\b(?![ \t]*\.)", re.MULTILINE)


# Calls that read a container of plain values and keep nothing of it (`jnp.dtype(cfg["w"])`,
# `len(T)`), whatever it holds; an object's or class's methods may run (`__len__`): not these.
_KEEPING_NOTHING = frozenset({
    "len", "bool", "hash", "id", "isinstance", "jnp.dtype", "np.dtype", "numpy.dtype", "jnp.issubdtype",
    "np.issubdtype", "numpy.issubdtype",
})
# Builtins that read what they are given and keep none of it but its items (not `min`/`max`,
# which give back one of their arguments).
_ITERATING_BUILTINS = frozenset(
    {"zip", "list", "tuple", "set", "frozenset", "sorted", "reversed", "enumerate", "iter", "len", "sum", "any",
     "all", "map", "filter"}
)
# A call whose first argument is what it calls later (`functools.partial(T, ...)`).
_PARTIAL_OF = re.compile(r"(?<![\w.])(?:functools[ \t]*\.[ \t]*)?partial[ \t]*\([ \t]*\Z")
# Calls that iterate their arguments into cases (a sweep's lists are read, not kept), or copy
# them; by their module's last name and their own (`jax._src.test_util.sample_product`).
_READING_CALLS = frozenset({
    "itertools.product", "itertools.permutations", "itertools.combinations", "itertools.combinations_with_replacement",
    "itertools.chain", "itertools.islice", "itertools.cycle", "itertools.zip_longest",
    "parameterized.product", "parameterized.parameters", "parameterized.named_parameters",
    "mark.parametrize", "pytest.param",  # `@pytest.mark.parametrize("dtype", DTYPES)`
    "metafunc.parametrize",  # `pytest_generate_tests`'s `metafunc.parametrize("dtype", DTYPES)`
    "jtu.sample_product", "jtu.cases_from_list", "test_util.sample_product", "test_util.cases_from_list",
    "copy.copy", "dataclasses.replace", "dataclasses.asdict", "dataclasses.astuple", "dataclasses.fields",
})


# An import statement (its continuation rows too): it binds names, it hands no object on.
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+(?:\([^)]*\)|(?:[^\n\\]|\\\n)*)", re.MULTILINE
)
_SUBSCRIPT = re.compile(r"[ \t]*\[[^\]\n]*\]")
# For a table holding containers: what reads the object and hands none of its items on.
_ITEM_SAFE_AFTER = re.compile(
    r"(?:==|!=|<=|>=|<(?!<=)|>(?!>=)|is\b|not\b|in\b|\.[ \t]*(?:keys|__len__|__contains__)[ \t]*\()"
)
_ITEM_SAFE_BEFORE = re.compile(r"(?:(?:^|[^\w.])(?:if|elif|while|not|assert)|(?<![\w.])(?:len|isinstance|bool|str|repr|print)\()\Z")
_MEMBERSHIP = re.compile(r"(?:^|[^\w.])in\Z")
_LOOPS = re.compile(r"(?<![\w.])for\b")


