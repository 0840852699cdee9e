"""Facts tests: what the analysis knows at a marked MMA call, stated in `tests/facts/*.md`.

Each `## section` of a document is one case (its pytest id: document and title). Its python
code blocks are the files of the case: a block right after a line `` `name.py`: `` is that file,
a lone unnamed block is `main.py`. The files are one program (`mmalint check` of their
directory): an import of one file by another resolves, and a claim in a file holds for every
path that reaches its call, from its own roots and from the other files' (its callers). A comment on an MMA call's line, or on comment lines directly
above it, states what the analysis knows there:

    mgpu.mma(acc, a, b)  # facts: acc=float32 layout=mma_acc shape=(64, 64); a=int8 signed

- `ROLE=DTYPE [SIGN] [KEY=VALUE]...`, roles separated by `;`. DTYPE is the NumPy name when
  decidable (`int8`, `float32`), else the MLIR element type (`i8` of unknown signedness), else `?`.
- SIGN: `signed`, `unsigned`, `signless` (floats), or `sign=?`.
- KEYs: `layout=KIND[/BITS]` (`mma_lhs/8`, `wgmma`, `splat`...), `warps=N` (its m_warps),
  `shape=(64, 64)` (unknown dims `?`), `mem=registers`, `from=loaded` (how it was made),
  `data=int8` (the dtype of the memory it was loaded from), `view=plain|transposed`,
  `packing=N` and `collective=true|false` (a TMEM operand's allocation: the packing of its TMEM
  layout, whether it is collective), `swizzle=128` and `tiling=(8, 64)` (an SMEM operand's
  `SwizzleTransform`/`TilingTransform`).
  `in=int8|uint8` (the dtypes it is one of, where paths that decided different ones meet).
  A tcgen05 call also has the roles `a_scale` and `b_scale` (the block scales' dtype and shape).
  Any of them may be `?`: the analysis must not know it. Only the facts written are compared.
- A function is analysed on its own, arguments unknown, and again from each caller; a sweep
  runs it once per world. A claim holds when one path knows every fact it states, and no path
  knows what it states as `?`. `# facts when dtype=jnp.int8:` restricts it to the paths of
  that world (bindings as the analysis labels them), `# facts when dtype=jnp.int8: none`
  states that no path of that world reaches the call.
- `<!-- xfail: REASON -->` in a section marks it as expected to fail, strictly.

Only `_observe` touches mmalint's internals: the analysis and the normalized call are being
reshaped, and that function is the one place to follow them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mmalint.analysis import Program, ProgramSpec, analyze, index_source
from mmalint.analysis.values import DTypeSet, Fragment, Layout, Value
from mmalint.catalog import load_catalog
from mmalint.checks.families import normalize
from mmalint.facts.dtypes import DTYPES

DOCS = Path(__file__).resolve().parent
VERSION = load_catalog().versions[-1]  # the newest jax, as `mmalint check` targets by default
KEYS = ("dtype", "sign", "layout", "warps", "shape", "mem", "from", "data", "view", "packing", "collective",
        "swizzle", "tiling", "in")
SIGNS = ("signed", "unsigned", "signless")
NONE = "none"  # `# facts: none`


# --- what the analysis knows: the adapter -------------------------------------------------


@dataclass(frozen=True)
class Observed:
    """What the analysis knows of one MMA call on one path, rendered as the facts syntax reads."""

    row: int
    world: tuple[tuple[str, str], ...]
    roles: tuple[tuple[str, dict[str, str]], ...]


def _observe(filename: str, text: str, version: str, tree: Path | None = None) -> list[Observed]:
    """Every MMA call the analysis reaches in one file, on every path, with its facts; with
    `tree`, read as a file of that directory's program (its imports and callers followed),
    every file of it checked.

    The one function that reads mmalint's internals: `analyze`'s sites, `normalize`'s operands
    (as `engine.check_text` does), and the family's memory space of each role.
    """
    catalog = load_catalog()
    program = None
    if tree is not None:
        root = os.path.realpath(tree)
        checked = frozenset(os.path.realpath(p) for p in tree.rglob("*.py"))
        program = Program(ProgramSpec(roots=(root,), tree=(root,), checked=checked))
    observed = []
    for site in analyze(index_source(filename, text), program=program).sites:
        if site.origin.block.source.filename != filename:
            continue  # a call in another file of the case: that file's observation has it
        call = normalize(site, catalog, version)
        roles = []
        for role, op in call.operands.items():
            layout = op.layout
            facts = {
                "dtype": op.dtype or op.element_type or "?",
                "sign": op.signedness or "?",
                "layout": _layout(layout),
                "warps": str(layout.m_warps) if layout is not None and layout.m_warps is not None else "?",
                "shape": _shape(op.shape),
                # The family's role says where the operand lives; an operand the analysis
                # knows nothing of (no `how`) is not claimed to be anywhere.
                "mem": (op.memory_space or "?") if op.how else "?",
                "from": op.how or "?",
                "data": op.data_dtype or "?",
                "view": op.view or "?",
                # A TMEM operand's layout packing and whether it was allocated collective.
                "packing": str(op.tmem_packing) if op.tmem_packing is not None else "?",
                "collective": {True: "true", False: "false"}.get(op.tmem_collective, "?"),  # type: ignore[arg-type]
                "swizzle": str(op.swizzle) if op.swizzle is not None else "?",
                "tiling": _shape(op.tiling),
                "in": _one_of(op.value),
            }
            roles.append((role, facts))
        # tcgen05's block scales are options of the call, not operands: only their dtype.
        for name in ("a_scale", "b_scale"):
            if f"{name}_type" in call.options:
                scale = call.options[f"{name}_type"]
                dtype = next((n for n, info in DTYPES.items() if info.mlir == scale), scale)
                rows, columns = call.options.get(f"{name}_rows"), call.options.get(f"{name}_columns")
                shape = _shape((rows, columns)) if rows is not None and columns is not None else "?"
                roles.append((name, {k: "?" for k in KEYS} | {"dtype": dtype or "?", "shape": shape}))
        world = tuple((b.name, b.label) for b in site.context.world)
        observed.append(Observed(site.origin.span().start.line, world, tuple(roles)))
    return observed


def _one_of(value: Value) -> str:
    """The dtypes an operand is one of, when paths that decided different ones meet."""
    found = getattr(value, "data_dtype" if isinstance(value, Fragment) else "dtype", None)
    if not isinstance(found, DTypeSet):
        return "?"
    return "|".join(sorted(found.names, key=list(DTYPES).index))


def _layout(layout: Layout | None) -> str:
    if layout is None:
        return "?"
    return layout.kind if layout.bits is None else f"{layout.kind}/{layout.bits}"


def _shape(shape: tuple[int | None, ...] | None) -> str:
    if shape is None:
        return "?"
    dims = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


# --- the documents --------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One `# facts` comment: in this world (empty: every path), these roles have these facts."""

    file: str
    row: int  # the line of the MMA call it is about
    world: tuple[tuple[str, str], ...]
    roles: tuple[tuple[str, dict[str, str]], ...]  # empty for `none`


@dataclass(frozen=True)
class Case:
    document: str
    title: str
    files: dict[str, str]
    xfail: str | None

    @property
    def id(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")
        return f"{self.document}::{slug}"


_FENCE = re.compile(r"^```(\w*)\s*$")
_FILE_LINE = re.compile(r"^`([\w./-]+\.py)`:\s*$")
_XFAIL = re.compile(r"<!--\s*xfail:\s*(.+?)\s*-->")
_FACTS = re.compile(r"#\s*facts(?:\s+when\s+(?P<world>[^:]+))?:\s*(?P<body>.*)$")
_TOKEN = re.compile(r"\w+=\([^)]*\)|\S+")


def _cases(path: Path) -> Iterator[Case]:
    title: str | None = None
    files: dict[str, str] = {}
    xfail: str | None = None
    pending: str | None = None  # the name a `` `name.py`: `` line gives the next block
    block: list[str] | None = None
    block_name = ""

    def case() -> Case | None:
        if title is None or not files:
            return None
        return Case(path.stem, title, dict(files), xfail)

    for line in path.read_text().splitlines():
        if block is not None:
            if line.startswith("```"):
                if block_name:
                    assert block_name not in files, f"{path.name}: {title}: two blocks for {block_name}"
                    files[block_name] = "\n".join(block) + "\n"
                block = None
            else:
                block.append(line)
            continue
        fence = _FENCE.match(line)
        if fence:
            block = []
            # A named file is python whatever its fence says; an unnamed block only when python.
            block_name = pending or ("main.py" if fence.group(1) in ("py", "python") else "")
            pending = None
            continue
        if line.startswith("## "):
            found = case()
            if found:
                yield found
            title, files, xfail = line[3:].strip(), {}, None
            continue
        if (named := _FILE_LINE.match(line)) is not None:
            pending = named.group(1)
        elif (mark := _XFAIL.search(line)) is not None:
            xfail = mark.group(1)
    found = case()
    if found:
        yield found


def _claims(file: str, text: str) -> list[Claim]:
    """Every `# facts` comment of a file, each attached to the line of its call."""
    lines = text.splitlines()
    claims = []
    waiting: list[tuple[int, str]] = []  # own-line comments waiting for the line they are above
    for row, line in enumerate(lines, 1):
        match = _FACTS.search(line)
        own_line = line.lstrip().startswith("#")
        if own_line and match:
            waiting.append((row, line))
            continue
        if own_line or not line.strip():
            assert not waiting, f"{file}:{waiting[0][0]}: a `# facts` comment must be above a call"
            continue
        for _, comment in [*waiting, *([(row, line)] if match else [])]:
            claims.append(_claim(file, row, comment))
        waiting = []
    assert not waiting, f"{file}:{waiting[0][0]}: a `# facts` comment must be above a call"
    return claims


def _claim(file: str, row: int, comment: str) -> Claim:
    match = _FACTS.search(comment)
    assert match is not None
    world = []
    for binding in filter(None, (part.strip() for part in (match.group("world") or "").split(","))):
        name, eq, label = binding.partition("=")
        assert eq, f"{file}:{row}: a world binding reads `name=value`, not `{binding}`"
        world.append((name.strip(), label.strip()))
    body = match.group("body").strip()
    roles: list[tuple[str, dict[str, str]]] = []
    if body != NONE:
        for part in body.split(";"):
            role, _, rest = part.strip().partition("=")
            tokens = _TOKEN.findall(rest)
            assert role and tokens, f"{file}:{row}: cannot read `{part.strip()}`"
            facts = {"dtype": tokens[0]}
            for token in tokens[1:]:
                if token in SIGNS:
                    facts["sign"] = token
                    continue
                key, eq, value = token.partition("=")
                assert eq and key in KEYS, f"{file}:{row}: unknown fact `{token}` (known: {', '.join(KEYS)})"
                facts[key] = value
            roles.append((role, facts))
    return Claim(file, row, tuple(world), tuple(roles))


def _all_cases() -> list[Case]:
    return [case for path in sorted(DOCS.glob("*.md")) for case in _cases(path)]


CASES = _all_cases()


def _params() -> list[object]:
    params: list[object] = []
    for case in CASES:
        # Strict: a case that starts passing (issue 11 lands) must lose its mark.
        marks = [pytest.mark.xfail(reason=case.xfail, strict=True)] if case.xfail else []
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


# --- the test -------------------------------------------------------------------------------


def _render(world: tuple[tuple[str, str], ...]) -> str:
    return "world " + ", ".join(f"{k}={v}" for k, v in world) if world else "any world"


def _mismatches(claim: Claim, sites: list[Observed]) -> list[str]:
    """How the analysis disagrees with one claim: empty when it holds.

    A function is analysed on its own (arguments unknown) and again from each caller, so a line
    is reached by several paths: a claim holds when one path of its world knows every fact it
    states, and no path of its world knows what it states as `?`.
    """
    where = f"{claim.file}:{claim.row}"
    matching = [s for s in sites if set(claim.world) <= set(s.world)]
    if not claim.roles:
        if matching:
            return [f"{where}: expected no MMA call in {_render(claim.world)}, "
                    f"{len(matching)} path(s) reach one"]
        return []
    if not matching:
        worlds = "; ".join(sorted({_render(s.world) for s in sites})) or "none"
        return [f"{where}: no path reaches an MMA call in {_render(claim.world)} (worlds seen: {worlds})"]
    roles = dict(matching[0].roles)
    missing = [role for role, _ in claim.roles if role not in roles]
    if missing:
        return [f"{where}: no operand role {', '.join(missing)} (roles: {', '.join(roles)})"]
    stated = [(role, k, v) for role, facts in claim.roles for k, v in facts.items() if v != "?"]
    unknown = [(role, k) for role, facts in claim.roles for k, v in facts.items() if v == "?"]

    def held(site: Observed) -> int:
        known = dict(site.roles)
        return sum(known[role][k] == v for role, k, v in stated)

    best = max(matching, key=held)
    problems = []
    if held(best) < len(stated):
        known = dict(best.roles)
        for role, facts in claim.roles:
            wrong = [f"{k}: expected {v}, analysis knows {known[role][k]}"
                     for k, v in facts.items() if v != "?" and known[role][k] != v]
            if wrong:
                problems.append(f"{where} [{_render(best.world)}] {role}: {', '.join(wrong)}")
        problems.append(f"    the analysis knows: {facts_comment(best)}")
    for site in matching:
        known = dict(site.roles)
        wrong = [f"{role} {k}: expected ?, a path knows {known[role][k]}" for role, k in unknown if known[role][k] != "?"]
        if wrong:
            problems.append(f"{where} [{_render(site.world)}] " + ", ".join(wrong))
            problems.append(f"    the analysis knows: {facts_comment(site)}")
    return problems


def facts_comment(site: Observed) -> str:
    """Everything the analysis knows of a call, written as a `# facts` comment states it."""
    parts = []
    for role, facts in site.roles:
        words = [facts["dtype"]] + [
            facts[k] if k == "sign" and facts[k] != "?" else f"{k}={facts[k]}"
            for k in KEYS[1:]
            if facts[k] != "?"
        ]
        parts.append(f"{role}=" + " ".join(words))
    when = f" when {_render(site.world)}" if site.world else ""
    return f"# facts{when}: " + "; ".join(parts)


def test_documents_have_cases() -> None:
    assert len(CASES) >= 40
    for case in CASES:
        assert any(_claims(name, text) for name, text in case.files.items()), f"{case.id}: no `# facts` claim"


@pytest.mark.parametrize("case", _params())
def test_facts(case: Case, tmp_path: Path) -> None:
    problems = []
    for name, text in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for name, text in case.files.items():
        claims = _claims(name, text)
        if not claims:
            continue
        # Each file is read in the program of the case's files: imports of each other resolve,
        # and a function one file defines is analysed with the arguments another passes.
        observed = _observe(str(tmp_path / name), (tmp_path / name).read_text(), VERSION, tmp_path)
        by_row: dict[int, list[Observed]] = {}
        for site in observed:
            by_row.setdefault(site.row, []).append(site)
        for claim in claims:
            problems += _mismatches(claim, by_row.get(claim.row, []))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
