"""The rule catalog: rules, jax's checks and the operand tables, loaded from `rules/*.toml`.

The TOML files sit at the top of a checkout (`rules/`) and inside the wheel (`mmalint/_rules`);
the rule pages generated from them sit in `docs/rules/` and inside the wheel (`mmalint/_docs/rules`).
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    # False when no mechanical fix exists (`fixable = false` in the TOML); fix_title then
    # names what the user has to do by hand.
    fixable: bool = True
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
    api: str
    versions: tuple[str, ...]
    rule: str
    stage: str
    exception: str
    message: str
    match: str
    semantics: str | None
    where: str

    @property
    def raises(self) -> bool:
        return bool(self.exception)

    @property
    def message_shown(self) -> str:
        """jax's message for a reader: its `{field}` holes, which jax fills, written `<field>`."""
        return _HOLE.sub(r"<\1>", self.message)


_HOLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Availability:
    """An API that some jax versions lack (`missing_in`) or accept and drop (`ignored_in`)."""

    id: str
    api: str  # canonical name; `plgpu.Layout.MMA_*` matches the three layouts
    keyword: str | None
    element_bits: int | None
    feature: str
    since: str
    missing_in: tuple[str, ...]
    ignored_in: tuple[str, ...]
    exception: str
    message: str
    match: str
    alternative: str
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
    tables: dict[str, dict[str, dict[str, Any]]]
    availability: tuple[Availability, ...] = ()

    def checks_for(self, api: str, version: str) -> list[Check]:
        return [c for c in self.checks if c.api == api and version in c.versions]

    def table(self, api: str, version: str) -> dict[str, Any]:
        return self.tables.get(api, {}).get(version, {})

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
        if (candidate / "checks.toml").is_file():
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


@functools.cache
def load_catalog(directory: Path | None = None) -> Catalog:
    base = directory or rules_dir()
    try:
        checks_data = tomllib.loads((base / "checks.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CatalogError(f"cannot read {base / 'checks.toml'}: {exc}") from exc
    versions = tuple(checks_data["versions"])
    checks = tuple(
        Check(
            id=c["id"],
            api=c["api"],
            versions=tuple(c["versions"]),
            rule=c["rule"],
            stage=c["stage"],
            exception=c.get("exception", ""),
            message=c.get("message", ""),
            match=c.get("match", "exact"),
            semantics=c.get("semantics"),
            where=c.get("where", ""),
        )
        for c in checks_data.get("check", [])
    )
    rules: dict[str, Rule] = {}
    for path in sorted(base.glob("mma*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise CatalogError(f"cannot read {path}: {exc}") from exc
        for r in data.get("rule", []):
            rule = Rule(
                code=r["code"],
                name=r["name"],
                severity=r["severity"],
                family=data.get("family", ""),
                summary=r["summary"],
                message=r["message"],
                help=r["help"],
                fix_title=r.get("fix_title", ""),
                fix_safety=r.get("fix_safety", ""),
                explanation=r["explanation"].strip(),
                examples=tuple(
                    Example(
                        e["title"],
                        e["kind"],
                        tuple(e.get("expect", [])),
                        e["code"].lstrip("\n"),
                        tuple(e.get("versions", [])),
                        settings=tuple(sorted(e.get("settings", {}).items())),
                        options=tuple(sorted(e.get("options", {}).items())),
                        operands_known=bool(e.get("operands_known", True)),
                    )
                    for e in r.get("example", [])
                ),
                fixable=bool(r.get("fixable", bool(r.get("fix_title")))),
                variants=tuple(
                    (name, (v["message"], v["help"])) for name, v in sorted(r.get("variant", {}).items())
                ),
            )
            if rule.code in rules:
                raise CatalogError(f"rule {rule.code} is defined twice")
            rules[rule.code] = rule
    for check in checks:
        if check.rule not in rules:
            raise CatalogError(f"check {check.id} names unknown rule {check.rule}")
    availability = tuple(
        Availability(
            id=a["id"],
            api=a["api"],
            keyword=a.get("keyword"),
            element_bits=a.get("element_bits"),
            feature=a["feature"],
            since=a["since"],
            missing_in=tuple(a.get("missing_in", [])),
            ignored_in=tuple(a.get("ignored_in", [])),
            exception=a.get("exception", ""),
            message=a.get("message", ""),
            match=a.get("match", "exact"),
            alternative=a.get("alternative", ""),
            element_form=a.get("element_form"),
        )
        for a in checks_data.get("availability", [])
    )
    return Catalog(versions, rules, checks, checks_data.get("tables", {}), availability)
