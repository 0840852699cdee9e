"""Project configuration: `[tool.mmalint]` in pyproject.toml, or mmalint.toml / .mmalint.toml.

The configuration file nearest to a checked file wins (like ruff); command-line options
override it. Unknown keys, unknown rule codes and malformed values are errors (exit 2).
The project root is the configuration's directory, else the nearest directory above with a
pyproject.toml (any) or `.git`: exclude patterns are relative to it, and the target jax is
inferred from it when nothing sets one (`mmalint.target_jax`).
"""

from __future__ import annotations

import difflib
import fnmatch
import glob
import json
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mmalint import toml
from mmalint.catalog import Catalog, CatalogError, load_catalog
from mmalint.config_extend import ExtendError, with_extends
from mmalint.gitignore import GitIgnore
from mmalint.inputs import UnreadableInput, read_regular
from mmalint.jaxversion import installed_jax_version
from mmalint.settings import DEFAULT_EXCLUDE, DEFAULT_SRC, Settings
from mmalint.target_jax import TargetError, TargetJax, fallback, infer, parse_version

CONFIG_NAMES = (".mmalint.toml", "mmalint.toml", "pyproject.toml")
KEYS = (
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "target-jax",
    "target-arch",
    "respect-gitignore",
    "extend",
    "unsafe-fixes",
    "fixable",
    "unfixable",
    "src",
    "cache-dir",
)
# A configuration file is a few hundred bytes; anything this large is not one.
MAX_CONFIG_BYTES = 1024 * 1024
ARCH = re.compile(r"sm_\d{2,3}[af]?")


class ConfigError(Exception):
    """A configuration file or option mmalint cannot use: reported with exit code 2."""


class UsageError(Exception):
    """A bad option of the command line or of the language server: a message that names the
    option, which the CLI prints with exit code 2 and the server shows as a window message."""


def validate_selectors(selectors: tuple[str, ...], catalog: Catalog, option: str) -> None:
    for selector in selectors:
        if selector == "ALL":
            continue
        if not re.fullmatch(r"MMA\d{0,3}", selector) or not catalog.select((selector,)):
            raise UsageError(f"{option}: unknown rule selector {selector!r} (see `mmalint rules`)")


def resolve_target_jax(requested: str | None, catalog: Catalog) -> str:
    """`--target-jax` (or the server's `targetJax`) as a catalog version; without one, the
    installed jax's, else the newest the catalog knows."""
    if requested is not None:
        if not re.fullmatch(r"\d+\.\d+(\.\d+)*", requested):
            raise UsageError(f"--target-jax: expected a version like 0.11, got {requested!r}")
        try:
            return parse_version(requested, catalog)
        except TargetError as exc:
            raise UsageError(f"--target-jax: {exc}") from None
    installed = installed_jax_version()
    if installed is not None:
        try:
            return catalog.resolve_version(installed)
        except CatalogError:
            pass
    return catalog.versions[-1]


@dataclass(frozen=True)
class Overrides:
    """What the command line says; None means "not given", so the configuration decides."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    target_jax: str | None = None  # a catalog version (`--target-jax`, checked by the CLI)
    target_arch: str | None = None
    show_expected_failures: bool = False
    respect_gitignore: bool | None = None
    fixable: tuple[str, ...] | None = None
    unfixable: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ConfigFile:
    path: Path
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent


# Config tables read, by path, modification time and size: the lookup for each directory of a
# walk meets the same pyproject.toml again (jax's has a few thousand keys of other tools).
_SECTIONS: dict[tuple[str, int, int], dict[str, Any] | None] = {}


def _section(path: Path) -> dict[str, Any] | None:
    """The mmalint table of a config file, or None when the file does not configure mmalint."""
    try:
        info = os.stat(path)
        key: tuple[str, int, int] | None = (os.fspath(path), info.st_mtime_ns, info.st_size)
    except (OSError, ValueError):
        key = None
    if key is not None and key in _SECTIONS:
        return _SECTIONS[key]
    section = _read_section(path)
    if key is not None:
        if len(_SECTIONS) > 256:
            _SECTIONS.clear()
        _SECTIONS[key] = section
    return section


def _read_section(path: Path) -> dict[str, Any] | None:
    try:
        data = toml.loads(read_regular(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except toml.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnreadableInput as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except RecursionError:  # the parser recurses once per nested array or inline table
        raise ConfigError(f"{path}: invalid TOML: nested too deeply to read") from None
    tool = data.get("tool")
    if path.name == "pyproject.toml":
        section = tool.get("mmalint") if isinstance(tool, dict) else None
        if section is None:
            return None
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: [tool.mmalint] must be a table")
        return section
    if "tool" in data:
        if not isinstance(tool, dict) or not isinstance(tool.get("mmalint", {}), dict):
            raise ConfigError(
                f"{path}: `tool` must be a table with a [tool.mmalint] table of settings, "
                f"got {type(tool).__name__ if not isinstance(tool, dict) else 'another kind of tool'}")
        section = tool.get("mmalint", data)
    else:
        section = data
    return section


def load_config_file(path: Path, catalog: Catalog) -> ConfigFile:
    section = _section(path)
    if section is None:
        raise ConfigError(f"{path}: no [tool.mmalint] table")
    validate(section, path, catalog)
    return ConfigFile(path.resolve(), _extended(section, path, catalog))


def _extended(section: dict[str, Any], path: Path, catalog: Catalog) -> dict[str, Any]:
    """`section` over the configurations its `extend` chain names (`mmalint.config_extend`)."""
    if "extend" not in section:
        return section

    def load(base: Path, named_by: Path) -> dict[str, Any]:
        try:
            values = _section(base)
            if values is None:
                raise ConfigError(f"{base}: no [tool.mmalint] table")
            validate(values, base, catalog)
        except ConfigError as exc:
            raise ConfigError(f"{exc} (named by `extend` in {named_by})") from None
        return values

    try:
        return with_extends(section, path, load)
    except ExtendError as exc:
        raise ConfigError(str(exc)) from None


def find_config(start: Path, catalog: Catalog) -> ConfigFile | None:
    """The nearest configuration at or above `start` (a file or directory)."""
    directory = start if _is(start, stat.S_ISDIR) else start.parent
    # realpath, not resolve(): a symlink loop on the way must not raise
    directory = Path(os.path.realpath(directory))
    for folder in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if _is(candidate, stat.S_ISREG):
                section = _section(candidate)
                if section is not None:
                    validate(section, candidate, catalog)
                    return ConfigFile(Path(os.path.realpath(candidate)), _extended(section, candidate, catalog))
    return None


def find_project_root(start: Path) -> Path | None:
    """The project of `start` when no configuration names one: the nearest directory at or above
    it with a pyproject.toml (configuring mmalint or not), else the nearest with `.git`."""
    directory = Path(os.path.realpath(start if _is(start, stat.S_ISDIR) else start.parent))
    folders = (directory, *directory.parents)
    for folder in folders:
        if any(_is(folder / name, stat.S_ISREG) for name in CONFIG_NAMES):
            return folder
    return next((folder for folder in folders if os.path.lexists(folder / ".git")), None)


def _is(path: Path, kind: Callable[[int], bool]) -> bool:
    """Whether `path` exists and is of `kind`; a path that cannot be looked at is not."""
    try:
        return kind(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _codes(value: Any, key: str, path: Path, catalog: Catalog) -> tuple[str, ...]:
    if isinstance(value, str):  # ruff refuses it too: one code and a list of one must not differ
        raise ConfigError(f"{path}: `{key}` must be a list of rule codes: write [{json.dumps(value)}], not {json.dumps(value)}")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of rule codes, got {value!r}")
    for code in value:
        if code != "ALL" and (not re.fullmatch(r"MMA\d{0,3}", code) or not catalog.select((code,))):
            raise ConfigError(f"{path}: `{key}`: unknown rule selector {code!r} (see `mmalint rules`)")
    return tuple(value)


def _patterns(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ConfigError(f"{path}: `{key}` must be a list of glob patterns: write [{json.dumps(value)}], not {json.dumps(value)}")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of glob patterns, got {value!r}")
    return tuple(value)


def validate(section: dict[str, Any], path: Path, catalog: Catalog) -> None:
    for key, value in section.items():
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1)
            hint = f" (did you mean `{close[0]}`?)" if close else ""
            raise ConfigError(f"{path}: unknown key `{key}` in the mmalint settings{hint}")
        if key in ("select", "ignore", "extend-select", "fixable", "unfixable"):
            _codes(value, key, path, catalog)
        elif key in ("exclude", "extend-exclude"):
            _patterns(value, key, path)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: `per-file-ignores` must be a table of pattern = [codes]")
            for pattern, codes in value.items():
                _codes(codes, f"per-file-ignores.{pattern}", path, catalog)
        elif key == "target-jax":
            if not isinstance(value, str):
                raise ConfigError(f"{path}: `target-jax` must be a version string like \"{catalog.versions[-1]}\", got {value!r}")
            try:
                parse_version(value, catalog)
            except TargetError as exc:
                raise ConfigError(f"{path}: `target-jax`: {exc}") from None
        elif key == "target-arch" and (not isinstance(value, str) or not ARCH.fullmatch(value)):
            raise ConfigError(f"{path}: `target-arch` must look like \"sm_90a\", got {value!r}")
        elif key == "respect-gitignore" and not isinstance(value, bool):
            raise ConfigError(f"{path}: `respect-gitignore` must be true or false, got {value!r}")
        elif key == "unsafe-fixes" and not isinstance(value, bool):
            raise ConfigError(f"{path}: `unsafe-fixes` must be true or false, got {value!r}")
        elif key == "extend" and (not isinstance(value, str) or not value):
            raise ConfigError(f"{path}: `extend` must be the path of a configuration file, got {value!r}")
        elif key == "src" and (not isinstance(value, list) or not all(isinstance(v, str) and v for v in value)):
            raise ConfigError(f"{path}: `src` must be a list of directories (relative to the configuration's), got {value!r}")
        elif key == "cache-dir" and (not isinstance(value, str) or not value):
            raise ConfigError(f"{path}: `cache-dir` must be a directory (relative to the configuration's), got {value!r}")


def explicit_target(config: ConfigFile | None, overrides: Overrides, catalog: Catalog) -> TargetJax | None:
    """The target jax the command line or the configuration sets, if either does."""
    if overrides.target_jax is not None:
        return TargetJax(overrides.target_jax, "--target-jax")
    if config is not None and isinstance(requested := config.values.get("target-jax"), str):
        return TargetJax(parse_version(requested, catalog), f"target-jax in {config.path}")
    return None


def settings_from(
    config: ConfigFile | None, overrides: Overrides, default_jax: str, catalog: Catalog,
    *, inferred: TargetJax | None = None, root: Path | None = None,
) -> Settings:
    """Configuration values, then command-line overrides, over the defaults.

    The target jax is the command line's, else the configuration's, else `inferred` (from the
    project, `Resolver`), else `default_jax`. `root` is the project root when there is no
    configuration (patterns are relative to it).
    """
    values = config.values if config is not None else {}
    source = str(config.path) if config is not None else None
    select = tuple(values.get("select", ("ALL",)))
    ignore = tuple(values.get("ignore", ()))
    extend = tuple(values.get("extend-select", ()))
    exclude = DEFAULT_EXCLUDE + tuple(values.get("exclude", ()))
    extend_exclude = tuple(values.get("extend-exclude", ()))
    per_file = tuple((pattern, tuple(codes)) for pattern, codes in values.get("per-file-ignores", {}).items())
    target_arch = values.get("target-arch", "sm_90a")
    respect_gitignore = bool(values.get("respect-gitignore", True))
    if overrides.select is not None:
        select = overrides.select
    if overrides.ignore is not None:
        ignore = overrides.ignore
    if overrides.exclude is not None:
        exclude = DEFAULT_EXCLUDE + overrides.exclude
    if overrides.target_arch is not None:
        target_arch = overrides.target_arch
    if overrides.respect_gitignore is not None:
        respect_gitignore = overrides.respect_gitignore
    fixable = tuple(values.get("fixable", ("ALL",))) if overrides.fixable is None else overrides.fixable
    unfixable = tuple(values.get("unfixable", ())) if overrides.unfixable is None else overrides.unfixable
    target = explicit_target(config, overrides, catalog) or inferred or TargetJax(default_jax, "the default")
    if root is None and config is not None:
        root = config.root
    return Settings(
        select=select,
        ignore=ignore,
        extend_select=extend + overrides.extend_select,
        target_jax=target.version,
        target_jax_source=target.source,
        target_jax_note=target.note,
        target_arch=target_arch,
        target_arch_given="target-arch" in values or overrides.target_arch is not None,
        show_expected_failures=overrides.show_expected_failures,
        exclude=exclude,
        extend_exclude=extend_exclude + overrides.extend_exclude,
        per_file_ignores=per_file + overrides.per_file_ignores,
        config_file=source,
        project_root=str(root) if root is not None else None,
        respect_gitignore=respect_gitignore,
        fixable=fixable,
        unfixable=unfixable,
        unsafe_fixes=bool(values.get("unsafe-fixes", False)),
        src=tuple(values["src"]) if "src" in values else None,
        cache_dir=str(root / values["cache-dir"]) if "cache-dir" in values and root is not None else None,
    )


class Resolver:
    """Settings per checked path, from the nearest configuration, cached per directory; and
    which paths a walk skips (`mmalint.discover.Exclusions`)."""

    def __init__(
        self,
        overrides: Overrides,
        default_jax: str | None = None,
        config_path: Path | None = None,
        isolated: bool = False,
        catalog: Catalog | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """`default_jax`: the target when neither the options, the configuration nor the project
        say; None: the jax installed next to mmalint, else the newest known. `environ`: where
        `VIRTUAL_ENV` is read (the process environment by default). `isolated`: no
        configuration and no project files are read."""
        self.catalog = catalog or load_catalog()
        self.overrides = overrides
        self.isolated = isolated
        self.environ = os.environ if environ is None else environ
        self.default = (
            fallback(self.catalog, installed_jax_version()) if default_jax is None
            else TargetJax(default_jax, "the default")
        )
        self.fixed: ConfigFile | None = None
        if config_path is not None:
            self.fixed = load_config_file(config_path, self.catalog)
        self.gitignore = GitIgnore()
        self.warnings: list[str] = []  # about the inferred targets: a jax version mmalint does not know
        self._by_dir: dict[Path, Settings] = {}
        self._by_path: dict[str, Settings] = {}  # `for_file`: a file's directory, as written
        self._by_root: dict[Path | None, TargetJax] = {}
        self._listing: dict[str, tuple[Settings, Excluder]] = {}  # a walked directory, as written
        self._excluders: dict[tuple[str | None, tuple[str, ...]], Excluder] = {}
        self._marks: dict[Path, tuple[Path | None, Path | None]] = {}
        self._real: dict[str, Path] = {}
        self._cwd = Path(os.path.realpath(os.getcwd()))

    def for_file(self, path: Path) -> Settings:
        """`for_path` of a path known to be a file (one that discovery found): its directory's,
        as written, looked up once (`is_dir` and `resolve` are stats, 40 ms over jax's tree)."""
        parent = str(path.parent)
        settings = self._by_path.get(parent)
        if settings is None:
            settings = self._by_path[parent] = self.for_path(path.parent)
        return settings

    def for_path(self, path: Path) -> Settings:
        directory = (path if path.is_dir() else path.parent).resolve()
        cached = self._by_dir.get(directory)
        if cached is not None:
            return cached
        if self.fixed is not None or self.isolated:
            config = self.fixed
        else:
            config = find_config(directory, self.catalog)
        if config is not None:
            root: Path | None = config.root
        else:
            root = None if self.isolated else self._project_root(directory)
        inferred = None
        if explicit_target(config, self.overrides, self.catalog) is None:
            inferred = self._target(None if self.isolated else root)
        settings = settings_from(config, self.overrides, self.default.version, self.catalog, inferred=inferred, root=root)
        self._by_dir[directory] = settings
        return settings

    def _target(self, root: Path | None) -> TargetJax:
        if root not in self._by_root:
            target = infer(root, self.catalog, self.environ, self.default)
            self._by_root[root] = target
            if target.warn and target.note:
                self.warnings.append(f"{root}: the target jax, from {target.source}, is {target.note}")
        return self._by_root[root]

    def _project_root(self, directory: Path) -> Path | None:
        """`find_project_root`, with each directory above looked at once per run."""
        nearest_file, nearest_git = self._marked(directory)
        return nearest_file or nearest_git

    def _marked(self, directory: Path) -> tuple[Path | None, Path | None]:
        """The nearest directories at or above `directory` with a pyproject.toml (or mmalint.toml)
        and with `.git`."""
        marks = self._marks.get(directory)
        if marks is None:
            above = self._marked(directory.parent) if directory.parent != directory else (None, None)
            has_file = any(_is(directory / name, stat.S_ISREG) for name in CONFIG_NAMES)
            marks = (directory if has_file else above[0], directory if os.path.lexists(directory / ".git") else above[1])
            self._marks[directory] = marks
        return marks

    def _excluder(self, settings: Settings) -> Excluder:
        key = (settings.project_root, (*settings.exclude, "", *settings.extend_exclude))
        excluder = self._excluders.get(key)
        if excluder is None:
            excluder = self._excluders[key] = Excluder.of(settings, self._cwd)
        return excluder

    def excludes(self, path: Path, is_dir: bool) -> bool:
        """Whether a walk skips `path`, by the settings of the directory that lists it."""
        listing = self._listing.get(str(path.parent))
        if listing is None:
            settings = self.for_path(path.parent)
            listing = self._listing[str(path.parent)] = (settings, self._excluder(settings))
        settings, excluder = listing
        absolute = self._absolute(path)
        if excluder.matches(absolute):
            return True
        return settings.respect_gitignore and self.gitignore.ignored(absolute, is_dir)

    def excludes_named(self, path: Path) -> bool:
        """`--force-exclude`: whether a path named on the command line is skipped all the same:
        it or a directory above it (up to the project root) matches a pattern, or git ignores it."""
        settings = self.for_path(path)
        if is_excluded(path, settings, self._excluder(settings)):
            return True
        return settings.respect_gitignore and self.gitignore.ignored_with_parents(self._absolute(path), path.is_dir())

    def _absolute(self, path: Path) -> Path:
        if path.name in ("", ".."):
            return _absolute(path)
        parent = str(path.parent)
        real = self._real.get(parent)
        if real is None:
            real = self._real[parent] = Path(os.path.realpath(parent))
        return real / path.name


def _absolute(path: Path) -> Path:
    """`path` made absolute with its parent's symlinks resolved, not its own (a symlink found by
    a walk is judged by its own name)."""
    if path.name in ("", ".."):  # `.`, `/`, `..`: nothing of its own to keep
        return Path(os.path.realpath(path))
    return Path(os.path.realpath(path.parent)) / path.name


@dataclass(frozen=True)
class Excluder:
    """`exclude` and `extend-exclude` as ruff reads them: each pattern, relative to the project
    root (the working directory without one), matches the absolute path; one with no `/` also
    matches the name, at any depth. A trailing `/` changes nothing: `third_party/` is
    `<root>/third_party`, a directory or a file."""

    names: re.Pattern[str] | None
    paths: re.Pattern[str] | None

    @classmethod
    def of(cls, settings: Settings, cwd: Path) -> Excluder:
        root = glob.escape(settings.project_root or str(cwd))
        patterns = (*settings.exclude, *settings.extend_exclude)
        names = [fnmatch.translate(os.path.normcase(p)) for p in patterns if "/" not in p]
        paths = [
            fnmatch.translate(os.path.normcase(os.path.normpath(os.path.join(root, p))).replace(os.sep, "/"))
            for p in patterns
        ]
        return cls(re.compile("|".join(names)) if names else None, re.compile("|".join(paths)) if paths else None)

    def matches(self, absolute: Path) -> bool:
        if self.names is not None and self.names.match(os.path.normcase(absolute.name)):
            return True
        return self.paths is not None and self.paths.match(os.path.normcase(absolute.as_posix())) is not None


def is_excluded(path: Path, settings: Settings, excluder: Excluder | None = None) -> bool:
    """Whether `exclude`/`extend-exclude` match `path` or a directory above it, below its project root."""
    absolute = _absolute(path)
    cwd = Path(os.path.realpath(os.getcwd()))
    excluder = excluder or Excluder.of(settings, cwd)
    root = Path(settings.project_root) if settings.project_root else cwd
    for candidate in (absolute, *absolute.parents):
        if candidate == root or candidate.parent == candidate:
            break
        if excluder.matches(candidate):
            return True
    return False


def describe(settings: Settings) -> str:
    """`--show-settings`: the resolved settings as the TOML that would set them, with where
    they came from in comments."""
    target = f"target-jax = {json.dumps(settings.target_jax)}  # from {settings.target_jax_source or 'the default'}"
    per_file = ", ".join(f"{json.dumps(p)} = {_toml_list(c)}" for p, c in settings.per_file_ignores)
    lines = [
        f"# config file : {settings.config_file or '(none: defaults)'}",
        f"# project root: {settings.project_root or '(none: the working directory)'}",
        target,
        *([f"#   {settings.target_jax_note}"] if settings.target_jax_note else []),
        f"target-arch = {json.dumps(settings.target_arch)}",
        f"select = {_toml_list(settings.select)}",
        f"extend-select = {_toml_list(settings.extend_select)}",
        f"ignore = {_toml_list(settings.ignore)}",
        f"per-file-ignores = {{{f' {per_file} ' if per_file else ''}}}",
        f"exclude = {_toml_list(settings.exclude)}",
        f"extend-exclude = {_toml_list(settings.extend_exclude)}",
        f"respect-gitignore = {'true' if settings.respect_gitignore else 'false'}",
        f"src = {_toml_list(settings.src if settings.src is not None else DEFAULT_SRC)}",
        *([f"cache-dir = {json.dumps(settings.cache_dir)}"] if settings.cache_dir else []),
    ]
    return "\n".join(lines) + "\n"


def _toml_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


__all__ = [
    "ConfigError",
    "ConfigFile",
    "Excluder",
    "Overrides",
    "Resolver",
    "describe",
    "explicit_target",
    "find_config",
    "find_project_root",
    "is_excluded",
    "replace",
    "settings_from",
]
