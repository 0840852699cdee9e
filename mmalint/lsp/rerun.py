"""The language server's re-run of the roots an edit reaches (issue 12's "an edit re-runs only
the roots whose blocks changed").

A lint of a large test file runs dozens of roots (`gpu_test.py`: 35, in 0.8 s); an edit of
one test, or of a helper some tests call, touches a few. The lint child keeps, per document,
its last lint alive (`Kept`): the checked file's index, the program it was read in, and what
each root recorded and spent, and which of the file's blocks its run entered (ran a function
of, or replayed a run of, or reused the summary of a call into another module whose run
did: `analysis/by_root.py`), and which top-level blocks' values (the globals they bind) it
read, itself or through the module-level code of the blocks it read (`Runs.module_reads`).
When the edits since stay inside def blocks and module-level statements (one, or several: a
burst of edits linted at once), the index is patched to the new text in place (each edited
block H made anew, the blocks after an edit moved by the rows it added), the roots that
entered an H, or read a statement H's value (and each H that is a root) run again, in order,
in one fresh interpreter, and their records replace their old ones among the roots' (put
together in the roots' order and deduplicated as one run does): the report is what a full lint
of the new text makes, provided that, for each H,

- the edit passes what `incremental.reuse` asks of an edit inside one block (one statement of
  the same kind, name, indentation and bound names; plain rows; no `noqa` or `mmalint` comment;
  the same imports, and the same answers to the questions asked of the whole text);
- a def H: the edit is inside H's body, below its header (decorators, signature: what the
  def binds is unchanged, so only a run of its body sees the edit), and no code that whichever
  root asks first runs for all, and that no top-level block is the reader of (another module's
  code, a metaclass read as text), ran or read a function of H: what it made is read by roots
  that never enter H. Where a top-level block's module-level code (a script's
  `if __name__ == "__main__": main()`, a global a helper makes) ran H, the roots that read the
  block run again too. Or H is a root that nothing else entered, a test method or a top-level
  def, no dunder, whose name no other row of the file mentions (then its header may change
  too). A body no root entered is run by none: no root runs again;
- a module-level statement H: it is no root, and no code that no top-level block is the
  reader of read it;
- no module-level code stored into an object, in the old run or the new (what a root reads of
  the object would depend on whether that code ran yet, read or not, and a root's edit may
  make it run, or no longer);
- the roots are the same (the relevance scan of the new text picks them again), the lint ran
  no callers from other files, nor needs to now; no root run again, or before one, stored
  into an object roots share; the module-level code a root run again recorded in, first to run
  it (old or new), is read by no root not run again, nor a root itself; and no such code was
  cut short (by the budget, or the recursion guard) where its first reader was.
  (Such code runs as at import, whatever its reader was doing, and the steps of other modules'
  capped helpers are counted per root: a root's run does not depend on the roots before it.)
- the budget could not end anything otherwise: the old lint ended every run with more steps
  left than the re-run roots' old and new runs take (and the file's size change adds), each
  new run ended within the window its root had, and the records stay under the file's cap.

Anything else is a full lint. The state is this process's: the server sends a document's
next lint to the child that made its last one when it is idle (`worker.Pool`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mmalint.analysis import Analysis, Program, by_root, indexes, reads
from mmalint.analysis.budget import Budget, Limits
from mmalint.analysis.by_root import RootRun, Runs, merged
from mmalint.analysis.calls import MmaSite
from mmalint.analysis.imports import scan_imports
from mmalint.analysis.interpreter import Interpreter
from mmalint.analysis.program import real_path
from mmalint.analysis.relevance import _triggers
from mmalint.analysis.reparse import parse_alone, reparsed
from mmalint.analysis.run import callers_of, find_roots
from mmalint.analysis.source import Block, SourceFile
from mmalint.catalog import Catalog
from mmalint.engine import Evaluated, FileReport, report_of, undecided
from mmalint.lines import keep_regions, keep_tree, rows_of
from mmalint.lsp.incremental import (
    _COMMENT_WORDS,
    Memo,
    _after,
    _by_block,
    _mutations,
    _parses_alike,
    _plain,
    _within,
    disk_unchanged,
    hunks_between,
    names_one_of,
)
from mmalint.pipeline.file import lint_analysed
from mmalint.pipeline.options import LintOptions
from mmalint.settings import Settings

# Steps kept in hand beyond every bound below: a run's steps in a fresh interpreter and in the
# file's shared one differ by what the shared one had evaluated already.
_MARGIN = 2_000


@dataclass(eq=False)
class Kept:
    """A document's last lint in this child, alive."""

    key: Any  # the memo's key: what the lint was asked besides the text
    text: str
    source: SourceFile  # the checked file's index, patched in place to each new text
    program: Program | None
    roots: list[RootRun]
    recorded: reads.Reads
    slack: int  # the fewest steps a run of a full lint of `text` would have left, at least
    first_slack: int  # the full lint's own
    least: list[int]  # per root, the fewest steps it takes in the file's run
    # Blocks whose functions module-level code ran (`Runs.module_entered`): an edit of one is
    # a full lint.
    module_entered: set[Block] = field(default_factory=set)
    # What each top-level block's run as module-level code read and ran, and what code no block
    # is the reader of read (`Runs.module_reads`, `module_ran`, `read_by_all`); whether
    # module-level code stored into an object (`module_stored`).
    module_reads: dict[Block, set[Block]] = field(default_factory=dict)
    module_ran: dict[Block, set[Block]] = field(default_factory=dict)
    read_by_all: set[Block] = field(default_factory=set)
    module_stored: bool = False
    # What the rules made of each recorded call, and whether it is open (`engine.undecided`),
    # for the calls of the roots not run again.
    evaluated: Evaluated = field(default_factory=dict)
    _open: dict[int, tuple[MmaSite, bool]] = field(default_factory=dict)
    # The files on disk as the kept lint read them (its memo's record): a memo of the same text
    # that another child made after a file changed does not match it.
    disk: tuple[object, ...] = ()

    def undecided(self, settings: Settings, catalog: Catalog) -> Callable[[MmaSite], bool]:
        ask = undecided(catalog, settings.target_jax or catalog.versions[-1])

        def known(site: MmaSite) -> bool:
            found = self._open.get(id(site))
            if found is None or found[0] is not site:
                found = self._open[id(site)] = (site, ask(site))
            return found[1]

        return known


# At most this many documents' lints are kept per child (a large test file's: tens of MB).
_KEEP = 2
_kept: dict[str, Kept] = {}


def keep(
    filename: str, memo: Memo | None, runs: Runs, recorded: reads.Reads, program: Program | None,
    evaluated: Evaluated | None = None,
) -> None:
    """Keep a full lint of a document for a later re-run of one of its roots (`evaluated`:
    what the rules made of its calls, `engine.evaluations`)."""
    _kept.pop(filename, None)
    if memo is None or runs.callers or runs.impure or not recorded.sources or not runs.roots:
        return
    source = recorded.sources[0]
    if source.text != memo.text or len({id(run.block) for run in runs.roots}) != len(runs.roots):
        return  # a root ran twice: the second pass of the budget (then there is no memo either)
    _kept[filename] = Kept(
        memo.key, memo.text, source, program, list(runs.roots), recorded, memo.slack, memo.slack,
        [run.steps for run in runs.roots], set(runs.module_entered), {k: set(v) for k, v in runs.module_reads.items()},
        {k: set(v) for k, v in runs.module_ran.items()}, set(runs.read_by_all), runs.module_stored,
        dict(evaluated or {}), disk=_disk_of(memo),
    )
    while len(_kept) > _KEEP:
        del _kept[next(iter(_kept))]


def _disk_of(memo: Memo) -> tuple[object, ...]:
    return (memo.files, memo.dirs, memo.probes)


def noted(filename: str, memo: Memo | None) -> None:
    """The memo made of a re-run's result: the next edit comes with it."""
    kept = _kept.get(filename)
    if kept is not None:
        if memo is None or memo.text != kept.text:
            del _kept[filename]
        else:
            kept.disk = _disk_of(memo)


def kept_reads(filename: str) -> tuple[reads.Reads, int]:
    """What the kept lint of a document read, and its slack, after a re-run (`rerun`)."""
    kept = _kept[filename]
    return kept.recorded, kept.slack


def rerun(
    memo: Memo, key: Any, filename: str, text: str, settings: Settings, options: LintOptions, catalog: Catalog,
) -> FileReport | None:
    """The lint of `text` from the kept lint of the memo's text, re-running the one root the
    edit is in; None when a full lint is needed (the kept lint is dropped then)."""
    kept = _kept.pop(filename, None)
    if kept is None or kept.key != key or memo.key != key or kept.text != memo.text or text == memo.text:
        return None
    if kept.disk != _disk_of(memo):
        return None  # another child's lint of the text, after a file it read changed
    found = _rerun(kept, memo, filename, text, settings, options, catalog)
    if found is not None:
        _kept[filename] = kept
    return found


def _rerun(
    kept: Kept, memo: Memo, filename: str, text: str, settings: Settings, options: LintOptions, catalog: Catalog,
) -> FileReport | None:
    old_lines, new_lines = rows_of(kept.text), rows_of(text)
    entries = list(memo.entries)
    hunks = _by_block(entries, hunks_between(old_lines, new_lines))
    if not hunks or any(at is None for *_, at in hunks):
        return None
    source = kept.source
    blocks = list(source.all_blocks())
    if len(blocks) != len(entries):
        return None
    olds: list[Block] = []
    moves: list[tuple[int, int, int]] = []  # each edit's old rows and the rows it added
    ats: set[int] = set()
    shift = 0  # the rows the hunks before this one added
    if kept.module_stored:
        return None  # what a root reads of the object depends on whether that code ran yet
    reached = _reached(kept)
    for a0, a1, b0, b1, at in hunks:
        assert at is not None
        entry, old = entries[at], blocks[at]
        statement = entry.kind == "stmt" and old.kind == "stmt" and old.parent is None
        own: list[int] = []
        if statement:
            others = _readers(kept, old, reached)
            if others is None:
                return None
        else:
            if entry.kind != "def" or old.kind != "def" or old.name is None or old in kept.module_entered:
                return None
            own = [i for i, run in enumerate(kept.roots) if run.block is old]
            others = [i for i, run in enumerate(kept.roots)
                      if run.block is not old and _enters(kept, run, reached[i], old)]
            if len(own) > 1:
                return None
        delta = (b1 - b0) - (a1 - a0)
        start, end = entry.start + shift, entry.end + shift + delta
        shift += delta
        old_text = "".join(old_lines[entry.start - 1 : entry.end])
        new_text = "".join(new_lines[start - 1 : end])
        if not _edit_holds(memo, entry, old_text, new_text, kept.text, text):
            return None
        # Outside a def's body the edit may change what the def binds (its decorators, defaults,
        # signature): only a root that nothing else in the file names, nor entered, is run again.
        # Inside the body of a def no root ran (nor module-level code), it changes no run: no
        # root is run again.
        if not statement and not _in_body(new_text, entry.indent, b0 + 1 - start + 1) and (
                others or not own or not _alone(old, text, start, end)):
            return None
        olds.append(old)
        moves.append((a0, a1, delta))
        ats.update(own + others)
    if not disk_unchanged(memo):
        return None
    size_change = abs(len(text) - len(kept.text))
    news = _patch(kept, text, list(new_lines), olds, tuple(moves))
    found = _run_again(kept, sorted(ats), dict(zip(olds, news, strict=True)), reached, size_change, filename,
                       text, settings, options, catalog)
    if found is None:
        # The full lint that answers instead indexes the text anew: the patched index, which
        # the re-run's program shared for it, has its blocks parsed, and a lint that takes it
        # over records none of them as read (`reads`: the next edit's reuse would miss them).
        real = real_path(source.filename)
        if real is not None:
            indexes.forget(real, source)
    return found


def _reached(kept: Kept) -> list[set[Block]]:
    """Per root, the top-level blocks its run read, ran a function of, or reached through the
    module-level code of those (`by_root.reach`), as the kept notes say."""
    return [by_root.reach(_seeds(run), kept.module_reads) for run in kept.roots]


def _readers(kept: Kept, old: Block, reached: list[set[Block]]) -> list[int] | None:
    """The roots whose runs read the value of the module-level statement `old` (the globals
    it binds), themselves or through the runs of the blocks whose values they read; None when
    the statement's value is not theirs alone: it is a root, or code no top-level block is the
    reader of (another module's) read it. What its run does besides is its readers' alone: the
    functions of the file it runs are its (`Runs.module_ran`), what it records is its first
    reader's (`RootRun.lazy_blocks`), and it stores into nothing (a lint whose module-level
    code stored is not re-run: `module_stored`). No root read it: none."""
    if old in kept.module_entered:
        return None
    if any(run.block is old for run in kept.roots) or old in by_root.reach(kept.read_by_all, kept.module_reads):
        return None
    return [i for i, found in enumerate(reached) if old in found]


def _enters(kept: Kept, run: RootRun, reached: set[Block], block: Block) -> bool:
    """Whether a root's run ran a function of `block`: itself, or in the module-level code of
    a block it reached (`_reached`; its first reader ran it, for all its readers)."""
    if block in run.entered:
        return True
    ran = kept.module_ran
    return bool(ran) and any(block in ran.get(read, ()) for read in reached)


def _first_readers_run_again(ats: set[int], runs: list[RootRun], reached: list[set[Block]]) -> bool:
    """Whether the module-level code that `runs` recorded in (run first, so the records are
    theirs) is read by no root but those run again, nor run in its own turn as a root: then
    whichever of them reads it first in the new run records it, as in the file's run."""
    blocks = set().union(*(run.lazy_blocks for run in runs))
    if not blocks:
        return True
    if None in blocks:
        return False
    return not any(i not in ats and not blocks.isdisjoint(found) for i, found in enumerate(reached))


def _seeds(run: RootRun) -> set[Block]:
    """What a root's run read of top-level blocks, as far as its notes go: the values it read,
    the blocks whose functions it ran, and its own block; with the class of each member among
    them (whose members' values, worked out by the first to ask, read what they read)."""
    seeds = run.read | run.entered | {run.block}
    seeds |= {block.parent for block in seeds if block.parent is not None}
    return seeds


def _edit_holds(memo: Memo, entry: Any, old_text: str, new_text: str, old_whole: str, new_whole: str) -> bool:
    """What `incremental._block_edit_holds` asks of an edit inside a block, less what a run of
    the roots that entered the block answers for itself: that no analysis read it, nor scan
    counted it."""
    if _COMMENT_WORDS.search(old_text) or _COMMENT_WORDS.search(new_text):
        return False
    if not (_plain(old_text) and _plain(new_text)):
        return False
    if not _parses_alike(entry, new_text):
        return False
    if ("import" in old_text or "import" in new_text) and scan_imports(old_text) != scan_imports(new_text):
        return False
    # Whole-text questions the lint asked (`mentions`, the program's "does it use an MMA API",
    # the scan for mutated globals): the same answers.
    # (A word of one row: only one in the edited rows may be in the one text and not the other.)
    for word in memo.words:
        if (word in old_text or word in new_text or "\n" in word) and (word in old_whole) != (word in new_whole):
            return False
    if _triggers(old_text, frozenset(), strict=True) != _triggers(new_text, frozenset(), strict=True):
        return False
    if memo.mutation_scans and _mutations(old_text) != _mutations(new_text):
        return False
    if names_one_of(old_text, memo.uses) or names_one_of(new_text, memo.uses):
        return False  # a use of a global whose every use was read (`handing.handed_on`)
    # Rows counted by line feeds: a text with a lone carriage return is not re-run.
    return new_whole.count("\r") == new_whole.count("\r\n")


def _in_body(text: str, indent: int, first: int) -> bool:
    """Whether the edit, from row `first` of the def's new text on (the rows before it are the
    old text's), leaves its header alone: its body's first statement starts a row of its own
    at or before `first` (so every row of the header, decorators, signature and colon, is
    above it). Then the def binds what it bound, and only a run of its body sees the edit."""
    parsed = parse_alone(text, indented=indent != 0)
    if parsed is None or len(parsed[0]) != 1:
        return False
    stmt, offset = parsed[0][0], parsed[1]
    if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) or not stmt.body:
        return False
    body = stmt.body[0].lineno - offset  # its row in `text`
    rows = rows_of(text)
    if not 1 <= body <= len(rows) or body > first:
        return False
    return not rows[body - 1][: stmt.body[0].col_offset].strip()


def _alone(old: Block, new_whole: str, start: int, end: int) -> bool:
    """Whether the root `old` (rows `start:end` of the new text) is what nothing else runs: a
    test method or a top-level def, no dunder, whose name no other row of the file mentions
    (nothing else calls it, or reads it)."""
    name = old.name
    if name is None or name.startswith("__") or (old.parent is not None and not name.startswith("test")):
        return False
    at = new_whole.find(name)
    while at >= 0:
        after = at + len(name)
        if not (_word_char(new_whole, at - 1) or _word_char(new_whole, after)):
            row = new_whole.count("\n", 0, at) + 1
            if not start <= row <= end:
                return False
        at = new_whole.find(name, after)
    return True


def _word_char(text: str, at: int) -> bool:
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


def _patch(kept: Kept, text: str, lines: list[str], olds: list[Block], moves: tuple[tuple[int, int, int], ...]) -> list[Block]:
    """Make the kept index the index of `text`, in place: each edited block of `olds` made anew
    (unparsed), every block after an edit moved by its rows. Returns the new blocks."""
    source = kept.source
    real = real_path(source.filename)
    if real is not None:
        indexes.forget(real, source)  # no later lookup by the old text may find it
    replaced: dict[int, Block] = {}
    for old in olds:
        replaced[id(old)] = Block(
            source, _after(old.start_line, moves), _within(old.end_line, moves), old.indent, old.kind, old.name,
            old.parent, bound_names=old.bound_names, place=old.place,
        )
    for block in source.all_blocks():
        if id(block) in replaced:
            continue
        block.start_line, block.end_line = _after(block.start_line, moves), _within(block.end_line, moves)
        if block._rows is not None:
            block._rows = [_after(row, moves) for row in block._rows]
    for old in olds:
        siblings = old.parent.members if old.parent is not None else source.blocks
        siblings[siblings.index(old)] = replaced[id(old)]
    for bound in source.bindings.values():
        for i, block in enumerate(bound):
            bound[i] = replaced.get(id(block), block)
    if source.regions is not None:
        source.regions = [(_after(a, moves), _within(b, moves)) for a, b in source.regions]
    source.text, source.lines = text, lines
    source._dead = None
    program = kept.program
    if program is not None and real is not None:
        program.edited(real, text)
    kept.text = text
    return [replaced[id(old)] for old in olds]


def follow(filename: str, memo: Memo, reused: Memo) -> None:
    """The lint of `memo` was reused (`incremental.reuse`: the edit since changed nothing it
    found; `reused`, the memo of the new text): the kept lint follows the text, its edited
    blocks made anew."""
    kept = _kept.pop(filename, None)
    if kept is None or kept.text != memo.text or kept.key != memo.key or kept.disk != _disk_of(memo):
        return
    text = reused.text
    if text == kept.text:
        kept.disk = _disk_of(reused)
        _kept[filename] = kept
        return
    new_lines = rows_of(text)
    entries = list(memo.entries)
    hunks = _by_block(entries, hunks_between(rows_of(kept.text), new_lines))
    blocks = list(kept.source.all_blocks())
    if hunks is None or len(blocks) != len(entries):
        return
    olds = [blocks[at] for *_, at in hunks if at is not None and not (entries[at].kind == "class" and entries[at].members)]
    if any(run.block is old for old in olds for run in kept.roots):
        return  # reuse allows no edit of a block any analysis read: a root is read
    moves = tuple((a0, a1, (b1 - b0) - (a1 - a0)) for a0, a1, b0, b1, _ in hunks)
    _patch(kept, text, list(new_lines), olds, moves)
    kept.recorded.blocks.difference_update(olds)
    kept.disk = _disk_of(reused)
    _kept[filename] = kept


def _run_again(
    kept: Kept, ats: list[int], news: dict[Block, Block], reached: list[set[Block]], size_change: int,
    filename: str, text: str, settings: Settings, options: LintOptions, catalog: Catalog,
) -> FileReport | None:
    """Run the roots at `ats` (in order) again, in one fresh interpreter, for the edits of
    blocks (`news`: each edited block's new one); their records replace theirs among the
    roots'."""
    source, program = kept.source, kept.program
    befores = [kept.roots[i] for i in ats]
    blocks: list[Block] = [run.block for run in kept.roots]
    now = [news.get(block, block) for block in blocks]
    # The text's `ast` tree, as a full lint keeps it (`index_source(keep=True)`), from the last
    # text's with the statement edited parsed again (when as many rows as before); else its
    # statements' rows, from which the suppressions parse only the statements they look in.
    tree = reparsed(text)
    if tree is not None:
        keep_tree(text, tree, source.regions)
    elif source.regions is not None:
        keep_regions(text, source.regions)
    with reads.recording() as recorded, by_root.recording() as runs:
        reads.source(source)
        budget = Budget.for_text(text)
        if program is None:
            roots = find_roots(source)
            interpreter = Interpreter(source, budget)
            interpreter.run_roots([now[i] for i in ats])
        else:
            with program.checking(source):
                roots = find_roots(source, program)
                interpreter = Interpreter(source, budget, program)
                interpreter.run_roots([now[i] for i in ats])
    if roots != now:
        return None
    if not interpreter.complete or budget.stops or budget.exhausted or len(runs.roots) != len(ats):
        return None
    if runs.impure:
        return None
    afters = runs.roots
    if any(after.block is not now[i] for i, after in zip(ats, afters, strict=True)):
        return None
    # Module-level code a run, old or new, ran first recorded there: another root that reads
    # it, not run again, or the block's own turn, records it where this root no longer reads
    # it, or did not; a store into an object roots share, by a root run again or by a root
    # before one (a fresh run does not see the earlier one).
    if any(run.shared or run.borrowed for run in (*befores, *afters)):
        return None
    if not _first_readers_run_again(set(ats), [*befores, *afters], reached):
        return None
    if ats and any(run.shared for run in kept.roots[: ats[-1]]):
        return None
    # An edited block's new run, like its old one, is its readers' alone: no code whose value
    # is every root's ran or read it, and no module-level code stored into an object (a root's
    # edit may make it run, or no longer: found by review, a root not run again read the object).
    if runs.module_stored:
        return None
    everyone = by_root.reach(runs.read_by_all, runs.module_reads)
    if any(new in everyone or new in runs.module_entered for new in news.values()):
        return None
    # Bounds on what the whole file's run would do otherwise. A root takes there at most the
    # steps it took here (what the roots before it evaluated is not evaluated again), and at
    # least none; each later run has at most what the roots run again take more than before
    # fewer steps (a share of what is left), and the file's budget moves by the size change.
    # The old lint ended every run with `slack` steps to spare; each re-run spends the most it
    # could have moved.
    size_change *= Limits().steps_per_byte
    drift = kept.first_slack - kept.slack  # what earlier re-runs may have moved the windows by
    if any(after.steps + size_change + drift + _MARGIN > before.window for before, after in zip(befores, afters, strict=True)):
        return None
    cost = sum(max(after.steps - kept.least[i], 0) for i, after in zip(ats, afters, strict=True)) + size_change + _MARGIN
    if kept.slack < cost:
        return None
    runs_now = list(kept.roots)
    for i, before, after in zip(ats, befores, afters, strict=True):
        after.window = before.window
        runs_now[i] = after
    sites = merged(pair for run in runs_now for pair in run.sites)
    uses = merged(pair for run in runs_now for pair in run.uses)
    if len(sites) + len(uses) >= Limits().max_records:
        return None
    analysis = Analysis(sites, uses, True)
    if program is not None:
        with program.checking(source):
            if callers_of(source, program, sites, kept.undecided(settings, catalog)):
                return None
    report = report_of(filename, text, settings, catalog, program, source, analysis, kept.evaluated)
    report = lint_analysed(filename, text, settings, options, catalog, program, report)
    kept.roots = runs_now
    kept.module_entered |= runs.module_entered
    _renamed(kept, news)
    for block, found in runs.module_reads.items():
        kept.module_reads.setdefault(block, set()).update(found)
    for block, found in runs.module_ran.items():
        kept.module_ran.setdefault(block, set()).update(found)
    kept.read_by_all |= runs.read_by_all
    live = {id(site) for site in sites}
    kept.evaluated = {key: found for key, found in kept.evaluated.items() if key in live}
    kept._open = {key: found for key, found in kept._open.items() if key in live}
    for i in ats:
        kept.least[i] = 0  # its steps in the file's run are not known, only that they are no more than here
    kept.slack -= cost
    read = kept.recorded
    read.blocks.difference_update(news)
    read.blocks |= recorded.blocks
    read.words |= recorded.words
    read.mutation_scans |= recorded.mutation_scans
    read.uses |= recorded.uses
    read.closures = recorded.closures or read.closures
    return report


def _renamed(kept: Kept, news: dict[Block, Block]) -> None:
    """The kept notes name each edited block's new block where they named the old one (what
    ran the old statement read, the new one reads as far as anyone knows, until it runs again)."""
    def swap(blocks: set[Block]) -> set[Block]:
        return {news.get(block, block) for block in blocks}

    kept.module_reads = {news.get(block, block): swap(found) for block, found in kept.module_reads.items()}
    kept.module_ran = {news.get(block, block): swap(found) for block, found in kept.module_ran.items()}
    kept.read_by_all = swap(kept.read_by_all)
    for run in kept.roots:
        run.read, run.entered = swap(run.read), swap(run.entered)
