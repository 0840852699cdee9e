"""The rule catalog: rules, jax's checks and the operand tables, loaded from `rules/`.

`rules/mma*.toml` hold the rules, one file per rule family; `rules/checks/<family>.toml` one
check table per instruction family (the checks jax makes, per API and version, each naming its
condition; the family's tables; API availability). Every table is typed and validated on load:
an unknown key, a missing required key, a wrong type, an unknown condition, rule or version is a
`CatalogError` naming the file, the table and the key.

The TOML files sit at the top of a checkout (`rules/`) and inside the wheel (`mmalint/_rules`);
the rule pages generated from them sit in `docs/rules/` and inside the wheel (`mmalint/_docs/rules`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmalint import toml
from mmalint.checks.conditions import BY_FAMILY

_PACKAGE_DIR = Path(__file__).resolve().parent


class CatalogError(Exception):
    """The rule catalog is missing or malformed (a packaging bug, never the user's)."""


@dataclass(frozen=True)
class Example:
    title: str
    kind: str  # "invalid" or "valid"
    expect: tuple[str, ...]
    code: str
    versions: tuple[str, ...] = ()  # the jax versions it holds for; empty: all
    settings: tuple[tuple[str, str], ...] = ()  # engine Settings it needs (`target_arch`...)
    # Command-line options the example needs, as `mmalint check` flags without dashes
    # (`report_unused_noqa = true` is `--report-unused-noqa`).
    options: tuple[tuple[str, Any], ...] = ()
    # False for an example whose operand dtype is the caller's on purpose: it shows what mmalint
    # reports without it (an accumulator no operand dtype accepts), not a fully known call.
    operands_known: bool = True
    # What `mmalint check --fix --unsafe-fixes` changes in it: a unified diff without header
    # and context lines. Empty: the fix changes nothing (or there is none).
    fix_diff: str = ""
    # The lines the example marks (`# error: [MMA101]` at a line's end, as ruff's and ty's
    # mdtests do), as (row, code, severity), sorted; `code` is the text without the markers.
    marked: tuple[tuple[int, str, str], ...] = ()


# `  # error: [MMA101]`, `  # warning: [MMA001] [MMA102]` at the end of a line.
_MARKER = re.compile(r"\s*#\s*(?P<severity>error|warning|info):\s*(?P<codes>(?:\[[\w-]+\]\s*)+)$")


def split_markers(code: str) -> tuple[str, tuple[tuple[int, str, str], ...]]:
    """An example's text without its markers, and what they mark: (row, code, severity), sorted."""
    lines, marked = [], []
    for row, line in enumerate(code.split("\n"), 1):
        match = _MARKER.search(line)
        if match:
            marked += [(row, c, match["severity"]) for c in re.findall(r"\[([\w-]+)\]", match["codes"])]
            line = line[: match.start()]
        lines.append(line)
    return "\n".join(lines), tuple(sorted(marked))


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    family: str
    summary: str
    message: str
    help: str
    fix_title: str
    fix_safety: str
    explanation: str
    examples: tuple[Example, ...]
    # Derived, never written: True when an invalid example's fix changes it (its `fix_diff`).
    # Without one, fix_title names what the user has to do by hand.
    fixable: bool = True
    # True when nothing raises: every check of the rule is of stage `silent` (wrong numbers).
    # Derived from the check tables, never written in a rule.
    silent: bool = False
    # Alternative (message, help) templates a check can ask for by name, when the general
    # message would misstate the cause: `[rule.variant.view]` in the TOML.
    variants: tuple[tuple[str, tuple[str, str]], ...] = ()

    def variant(self, name: str | None) -> tuple[str, str]:
        for key, texts in self.variants:
            if key == name:
                return texts
        return self.message, self.help

    @property
    def url(self) -> str | None:
        """The rule's page as installed with mmalint (see `rule_url`)."""
        return rule_url(self.code)


@dataclass(frozen=True)
class Check:
    """One check jax makes, in order: its rule, exception and exact message template."""

    id: str
    condition: str  # the family's condition deciding it (`mmalint/checks/conditions/<family>.py`)
    api: str
    versions: tuple[str, ...]
    rule: str
    stage: str
    where: str
    exception: str = ""
    message: str = ""
    match: str = "exact"
    semantics: str | None = None
    family: str = ""  # the instruction family whose check table holds it

    @property
    def raises(self) -> bool:
        return bool(self.exception)

    @property
    def message_shown(self) -> str:
        """jax's message for a reader: its `{field}` holes, which jax fills, written `<field>`."""
        return _HOLE.sub(r"<\1>", self.message).replace("{{", "{").replace("}}", "}")


# A field; not a doubled (literal) brace.
_HOLE = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")


@dataclass(frozen=True)
class Availability:
    """An API that some jax versions lack (`missing_in`) or accept and drop (`ignored_in`)."""

    id: str
    api: str  # canonical name; `plgpu.Layout.MMA_*` matches the three layouts
    feature: str
    since: str  # "" when no jax version has it (`fa.from_tensor`)
    rule: str = "MMA501"  # the rule a use of it is a finding of
    keyword: str | None = None
    element_bits: int | None = None
    missing_in: tuple[str, ...] = ()
    ignored_in: tuple[str, ...] = ()
    exception: str = ""
    message: str = ""
    match: str = "exact"
    alternative: str = ""
    # "dtype": only when the element type is given as a jnp/np dtype, not an MLIR type.
    element_form: str | None = None

    def matches(self, api: str) -> bool:
        if self.api.endswith("*"):
            return api.startswith(self.api[:-1])
        return api == self.api


@dataclass(frozen=True)
class Catalog:
    versions: tuple[str, ...]
    rules: dict[str, Rule]
    checks: tuple[Check, ...]
    # API -> version -> the family's typed table (`MmaTable` for `mma`).
    tables: dict[str, dict[str, Any]]
    availability: tuple[Availability, ...] = ()
    # API -> the instruction family whose check table names it.
    api_families: dict[str, str] = dataclasses.field(default_factory=dict)

    def checks_for(self, api: str, version: str) -> list[Check]:
        return [c for c in self.checks if c.api == api and version in c.versions]

    def has_table(self, api: str, version: str) -> bool:
        return version in self.tables.get(api, {})

    def table(self, api: str, version: str) -> Any:
        """The family table of `api` in `version`; the family's defaults where the TOML has none."""
        table = self.tables.get(api, {}).get(version)
        if table is not None:
            return table
        family = self.api_families.get(api)
        return BY_FAMILY[family].table_type() if family in BY_FAMILY else None

    @property
    def silent_codes(self) -> frozenset[str]:
        """The rules whose mistake raises nothing: the numbers are silently wrong."""
        return frozenset(code for code, rule in self.rules.items() if rule.silent)

    def select(self, prefixes: tuple[str, ...]) -> list[str]:
        """Codes matching any of the prefixes (`MMA1`, `MMA101`, `ALL`)."""
        codes = sorted(self.rules)
        if "ALL" in prefixes:
            return codes
        return [c for c in codes if any(c.startswith(p) for p in prefixes)]

    def resolve_version(self, requested: str | None) -> str:
        """The catalog version for a jax version string: `0.11.2` -> `0.11`."""
        if not requested:
            return self.versions[-1]
        parts = requested.split(".")
        key = ".".join(parts[:2])
        if key in self.versions:
            return key
        try:
            wanted = tuple(int(p) for p in parts[:2])
        except ValueError:
            raise CatalogError(f"not a jax version: {requested!r}") from None
        known = [tuple(int(p) for p in v.split(".")) for v in self.versions]
        if wanted > known[-1]:
            return self.versions[-1]
        if wanted < known[0]:
            return self.versions[0]
        raise CatalogError(f"jax {requested} is not in the catalog ({', '.join(self.versions)})")


def rules_dir() -> Path:
    """`mmalint/_rules` in an installed wheel, `rules/` next to the package in a checkout."""
    for candidate in (_PACKAGE_DIR / "_rules", _PACKAGE_DIR.parent / "rules"):
        if (candidate / "checks").is_dir():
            return candidate
    raise CatalogError(f"rule catalog not found next to {_PACKAGE_DIR}")


@functools.cache
def rule_pages_dir() -> Path | None:
    """`mmalint/_docs/rules` in an installed wheel, `docs/rules/` in a checkout; None if absent."""
    for candidate in (_PACKAGE_DIR / "_docs" / "rules", _PACKAGE_DIR.parent / "docs" / "rules"):
        if (candidate / "README.md").is_file():
            return candidate
    return None


def rule_url(code: str, base_url: str | None = None) -> str | None:
    """The page of rule `code`.

    `base_url` is where the pages are published (the folder holding `MMA101.md`, e.g.
    `https://github.com/OWNER/REPO/blob/COMMIT/docs/rules`); without it, the page installed with
    mmalint as a `file://` URI, or None when the installation has no pages.
    """
    return _page_url(f"{code}.md", base_url)


def rules_index_url(base_url: str | None = None) -> str | None:
    """The index of all rules (`README.md` beside the pages), as `rule_url` locates pages."""
    return _page_url("README.md", base_url)


def _page_url(name: str, base_url: str | None) -> str | None:
    if base_url:
        return f"{base_url.rstrip('/')}/{name}"
    return _installed_page(name)


@functools.cache
def _installed_page(name: str) -> str | None:
    pages = rule_pages_dir()
    if pages is None or not (pages / name).is_file():
        return None
    return (pages / name).as_uri()


# ---------------------------------------------------------------------- loading and validation

# Value kinds a TOML key may hold, by the Python type a field declares.
_KIND_NAMES = {str: "a string", bool: "a boolean", int: "an integer"}


def _kind_ok(value: object, annotation: Any) -> bool:
    """Whether a TOML value fits a field's annotation (str, bool, int, X | None, tuple[str, ...])."""
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        return any(_kind_ok(value, a) for a in typing.get_args(annotation) if a is not type(None))
    if origin is tuple:
        (item, _) = typing.get_args(annotation)
        return isinstance(value, list) and all(_kind_ok(v, item) for v in value)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, annotation)


def _kind_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        return " or ".join(_kind_name(a) for a in typing.get_args(annotation) if a is not type(None))
    if origin is tuple:
        return f"a list of {_kind_name(typing.get_args(annotation)[0]).split(' ', 1)[1]}s"
    return _KIND_NAMES.get(annotation, getattr(annotation, "__name__", str(annotation)))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The declared field types of a catalog class (resolved once: every rule is read with them)."""
    return typing.get_type_hints(cls)


def _fields(cls: type, raw: object, where: str, skip: frozenset[str] = frozenset(),
            extra: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The keys of a TOML table as the dataclass `cls` declares them: every key known, every
    field without a default present, every value of the declared type (lists as tuples).

    `skip`: fields the caller fills itself (not read from the table); `extra`: keys the caller
    reads itself (nested tables)."""
    if not isinstance(raw, dict):
        raise CatalogError(f"{where}: expected a table, got {type(raw).__name__}")
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in skip}
    for key in raw:
        if key not in fields and key not in extra:
            known = ", ".join(sorted((*fields, *extra)))
            raise CatalogError(f"{where}: unknown key {key!r} (known: {known})")
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in raw:
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if required:
                raise CatalogError(f"{where}: missing required key {name!r}")
            continue
        value = raw[name]
        if not _kind_ok(value, hints[name]):
            raise CatalogError(
                f"{where}: key {name!r} must be {_kind_name(hints[name])}, got {value!r}"
            )
        values[name] = tuple(value) if isinstance(value, list) else value
    return values


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return toml.loads(path.read_text(encoding="utf-8"))
    except (OSError, toml.TOMLDecodeError) as exc:
        raise CatalogError(f"cannot read {path}: {exc}") from exc


def _tables_of(data: dict[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise CatalogError(f"{where}: [[{key}]] must be an array of tables")
    return value


@dataclass(frozen=True)
class _ChecksFile:
    """The top level of `rules/checks/<family>.toml`."""

    family: str
    versions: tuple[str, ...]


@dataclass(frozen=True)
class _RulesFile:
    """The top level of `rules/mma*.toml`."""

    family: str
    prefix: str = ""


def _version_keys(values: tuple[str, ...], versions: tuple[str, ...], where: str, key: str) -> None:
    for v in values:
        if v not in versions:
            raise CatalogError(f"{where}: key {key!r}: unknown jax version {v!r} (known: {', '.join(versions)})")


def _load_checks(path: Path) -> tuple[_ChecksFile, list[Check], dict[str, dict[str, Any]], list[Availability]]:
    data = _read_toml(path)
    head = _ChecksFile(**_fields(_ChecksFile, data, str(path),
                                 extra=frozenset({"check", "tables", "availability"})))
    conditions = BY_FAMILY.get(head.family)
    if conditions is None:
        raise CatalogError(f"{path}: key 'family': no instruction family {head.family!r} "
                           f"(known: {', '.join(sorted(BY_FAMILY))})")
    checks = []
    for i, raw in enumerate(_tables_of(data, "check", str(path))):
        where = f"{path}: [[check]] #{i + 1}" + (f" ({raw['id']})" if isinstance(raw, dict) and isinstance(raw.get("id"), str) else "")
        check = Check(**_fields(Check, raw, where, skip=frozenset({"family"})), family=head.family)
        if check.condition not in conditions:
            raise CatalogError(f"{where}: key 'condition': family {head.family!r} has no condition "
                               f"{check.condition!r} (mmalint/checks/conditions/{head.family}.py)")
        _version_keys(check.versions, head.versions, where, "versions")
        checks.append(check)
    raw_tables = data.get("tables", {})
    if not isinstance(raw_tables, dict):
        raise CatalogError(f"{path}: [tables] must be a table")
    tables: dict[str, dict[str, Any]] = {}
    for api, by_version in raw_tables.items():
        if not isinstance(by_version, dict):
            raise CatalogError(f"{path}: [tables.{api!r}] must be a table of versions")
        for version, raw in by_version.items():
            where = f"{path}: [tables.{api!r}.{version!r}]"
            _version_keys((version,), head.versions, where, version)
            values = _fields(conditions.table_type, raw, where)
            tables.setdefault(api, {})[version] = conditions.table_type(**values)
    availability = []
    for i, raw in enumerate(_tables_of(data, "availability", str(path))):
        where = f"{path}: [[availability]] #{i + 1}"
        entry = Availability(**_fields(Availability, raw, where))
        _version_keys(entry.missing_in, head.versions, where, "missing_in")
        _version_keys(entry.ignored_in, head.versions, where, "ignored_in")
        availability.append(entry)
    return head, checks, tables, availability


def _load_rules(path: Path, versions: tuple[str, ...]) -> list[Rule]:
    data = _read_toml(path)
    head = _RulesFile(**_fields(_RulesFile, data, str(path), extra=frozenset({"rule"})))
    rules = []
    for i, raw in enumerate(_tables_of(data, "rule", str(path))):
        code = raw.get("code") if isinstance(raw, dict) else None
        where = f"{path}: [[rule]] #{i + 1}" + (f" ({code})" if isinstance(code, str) else "")
        values = _fields(Rule, raw, where,
                         skip=frozenset({"family", "examples", "variants", "silent", "fixable"}),
                         extra=frozenset({"example", "variant"}))
        values["explanation"] = values["explanation"].strip()
        examples = []
        for j, e in enumerate(_tables_of(raw, "example", where)):
            ewhere = f"{where} [[rule.example]] #{j + 1}"
            nested = frozenset({"settings", "options"})
            ev = _fields(Example, e, ewhere, skip=nested | {"marked"}, extra=nested)
            if ev["kind"] not in ("invalid", "valid"):
                raise CatalogError(f"{ewhere}: key 'kind' must be \"invalid\" or \"valid\", got {ev['kind']!r}")
            _version_keys(ev.get("versions", ()), versions, ewhere, "versions")
            for key in ("settings", "options"):
                if not isinstance(e.get(key, {}), dict):
                    raise CatalogError(f"{ewhere}: key {key!r} must be a table")
            code_text, marked = split_markers(ev["code"].lstrip("\n"))
            examples.append(Example(
                **{**ev, "code": code_text, "fix_diff": ev.get("fix_diff", "").lstrip("\n")},
                marked=marked,
                settings=tuple(sorted(e.get("settings", {}).items())),
                options=tuple(sorted(e.get("options", {}).items())),
            ))
        raw_variants = raw.get("variant", {})
        if not isinstance(raw_variants, dict):
            raise CatalogError(f"{where}: [rule.variant] must be a table")
        variants = []
        for name, v in sorted(raw_variants.items()):
            vv = _fields(_Variant, v, f"{where} [rule.variant.{name}]")
            variants.append((name, (vv["message"], vv["help"])))
        fixable = any(e.fix_diff for e in examples)
        rules.append(Rule(**values, family=head.family, examples=tuple(examples), variants=tuple(variants),
                          fixable=fixable))
    return rules


@dataclass(frozen=True)
class _Variant:
    """`[rule.variant.NAME]`: a (message, help) pair a check asks for by name."""

    message: str
    help: str


@functools.cache
def load_catalog(directory: Path | None = None) -> Catalog:
    base = directory or rules_dir()
    check_files = sorted((base / "checks").glob("*.toml"))
    if not check_files:
        raise CatalogError(f"no check tables in {base / 'checks'}")
    versions: tuple[str, ...] | None = None
    checks: list[Check] = []
    tables: dict[str, dict[str, Any]] = {}
    availability: list[Availability] = []
    api_families: dict[str, str] = {}
    for path in check_files:
        head, file_checks, file_tables, file_availability = _load_checks(path)
        if versions is None:
            versions = head.versions
        elif head.versions != versions:
            raise CatalogError(f"{path}: key 'versions': {list(head.versions)} differs from "
                               f"{check_files[0]}'s {list(versions)}")
        checks += file_checks
        availability += file_availability
        for api in (*(c.api for c in file_checks), *file_tables):
            if api_families.setdefault(api, head.family) != head.family:
                raise CatalogError(f"{path}: API {api!r} belongs to family {api_families[api]!r}")
        for api, by_version in file_tables.items():
            tables.setdefault(api, {}).update(by_version)
    assert versions is not None
    rules: dict[str, Rule] = {}
    for path in sorted(base.glob("mma*.toml")):
        for rule in _load_rules(path, versions):
            if rule.code in rules:
                raise CatalogError(f"{path}: rule {rule.code} is defined twice")
            rules[rule.code] = rule
    for check in checks:
        if check.rule not in rules:
            raise CatalogError(f"{base / 'checks' / (check.family + '.toml')}: [[check]] {check.id}: "
                               f"key 'rule': unknown rule {check.rule!r}")
    for entry in availability:
        if entry.rule not in rules:
            raise CatalogError(f"{base / 'checks'}: [[availability]] {entry.id}: "
                               f"key 'rule': unknown rule {entry.rule!r}")
    for code, rule in rules.items():
        stages = {c.stage for c in checks if c.rule == code}
        if stages == {"silent"}:
            rules[code] = dataclasses.replace(rule, silent=True)
    return Catalog(versions, rules, tuple(checks), tables, tuple(availability), api_families)
