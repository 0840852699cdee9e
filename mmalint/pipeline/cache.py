"""The result cache of `mmalint check`: each file's complete result, kept in `.mmalint_cache/`
and reused while everything it was computed from is unchanged.

An entry is one file's, named by a hash of its real path. It holds the result's key (the
file's content hash, the resolved settings and options that change a result, the name it is
reported under, the working directory, the tree's roots) and its inputs from the rest of the
tree, as its check recorded them (`tree.Observed`): the hash of every other module it read,
every path it asked the file system about, which files it asked whether the run checks them,
and the answers of its scans over the whole tree (the files whose imports name a module:
where callers are looked for), with a snapshot of the files each scan read. On the next run
an entry is used when its key is the file's and each input is still what it was: an edited
helper fails its callers' entries and no other; a new file fails an entry only when it would
have been among a scan's answers (it imports the checked module's name). Anything else that
does not match, an entry that cannot be read or decoded included, is a miss: the file is
checked again and the entry replaced. The directory of entries is per mmalint version, Python
version and hash of mmalint's installed code and data (`installation`): upgrading mmalint or
editing its rule catalog starts afresh.

Reading an entry needs none of the analysis: a run whose every file hits imports no parser.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from mmalint import __version__
from mmalint.diagnostics import (
    Diagnostic,
    Edit,
    FileReport,
    Fix,
    Location,
    OperandPrediction,
    PredictedError,
    Range,
    Related,
)
from mmalint.fileio import write_replacing
from mmalint.tree import (
    RACY_NS,
    SCAN_IMPORTS,
    Walk,
    digest,
    fingerprint,
    kept_hashes,
    probe_answer,
    read_text,
    walk,
)

CACHE_DIR_NAME = ".mmalint_cache"
CACHE_DIR_ENV = "MMALINT_CACHE_DIR"
FORMAT = 1  # of the entries; a new one starts a new directory
# Entries not used (read or written) for this long are removed, and so are the directories of
# other mmalint installations (versions, Pythons, code) not used for `STALE_VERSION_S`; a
# cache is pruned at most once per `PRUNE_EVERY_S`, at the end of a run that wrote to it.
STALE_ENTRY_S = 30 * 24 * 3600
STALE_VERSION_S = 7 * 24 * 3600
PRUNE_EVERY_S = 24 * 3600
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by mmalint.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


# ---------------------------------------------------------------------- results as JSON

_CLASSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (Location, Range, Related, PredictedError, OperandPrediction, Edit, Fix, Diagnostic, FileReport)
}


class CorruptEntry(Exception):
    """An entry that does not decode to a result: a miss."""


def encode(value: object) -> Any:
    """A result as JSON values, exactly: dataclasses by name, tuples and dicts tagged, so that
    `decode` gives back an equal object (and every output format the same bytes)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"(": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"{": [[encode(k), encode(v)] for k, v in value.items()]}
    if is_dataclass(value) and type(value).__name__ in _CLASSES:
        out: dict[str, Any] = {"@": type(value).__name__}
        for f in fields(value):
            if f.name != "observed":  # the result's inputs, kept beside it
                out[f.name] = encode(getattr(value, f.name))
        return out
    raise TypeError(f"the result cache cannot keep a {type(value).__name__}")


def decode(data: Any) -> Any:
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        raise CorruptEntry(f"unexpected {type(data).__name__}")
    if "(" in data:
        return tuple(decode(v) for v in data["("])
    if "{" in data:
        return {decode(k): decode(v) for k, v in data["{"]}
    cls = _CLASSES.get(data.get("@", ""))
    if cls is None:
        raise CorruptEntry(f"unknown class {data.get('@')!r}")
    try:
        return cls(**{k: decode(v) for k, v in data.items() if k != "@"})
    except TypeError as exc:
        raise CorruptEntry(str(exc)) from None


def decode_report(entry: dict[str, Any]) -> FileReport | None:
    """An entry's report; None when it does not decode to one (a miss)."""
    try:
        report = decode(entry["report"])
    except (CorruptEntry, KeyError, TypeError, ValueError, RecursionError):
        return None
    return report if isinstance(report, FileReport) else None


def round_trip(report: FileReport) -> FileReport:
    """A freshly computed result as a hit would give it back."""
    found = decode(json.loads(json.dumps(encode(report))))
    assert isinstance(found, FileReport)
    return found


# ---------------------------------------------------------------------- where it lives


def default_dir(project_root: str | None, cwd: str) -> Path:
    """`.mmalint_cache` in the project root (the program loader's tree: the configuration's
    directory, else the nearest with a pyproject.toml, else with `.git`), else in the working
    directory, as ruff places `.ruff_cache`."""
    return Path(project_root or cwd) / CACHE_DIR_NAME


def installation() -> str:
    """What a result depends on in mmalint itself: its version, the Python running it, libcst's
    version, and a hash of its installed code and data (the rule catalog, the models, the
    facts tables), so that an edited checkout or catalog does not reuse results."""
    package = Path(__file__).resolve().parent.parent
    parts = [__version__, sys.version, str(FORMAT)]
    tops = [package]
    for rules in (package / "_rules", package.parent / "rules"):
        if (rules / "checks").is_dir():
            tops.append(rules)
            break
    for top in tops:
        for directory, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                if name.endswith((".py", ".toml", ".json")):
                    path = os.path.join(directory, name)
                    with contextlib.suppress(OSError):
                        parts.append(f"{os.path.relpath(path, top)}\0{digest(Path(path).read_bytes())}")
    parts.append(_libcst_version())
    return digest("\n".join(parts).encode("utf-8", "surrogatepass"))


def _libcst_version() -> str:
    """libcst's version, from its files (importing it is what a warm run avoids)."""
    import importlib.util

    spec = importlib.util.find_spec("libcst")
    if spec is None or spec.origin is None:
        return "no libcst"
    try:
        return Path(spec.origin).with_name("_version.py").read_text(encoding="utf-8")
    except OSError:
        return spec.origin


def result_key(parts: Iterable[object], reprs: dict[int, tuple[object, str]] | None = None) -> str:
    """The key of a result from what it depends on. `reprs` keeps the text of each part by
    identity, for a run whose files share their settings and tree (their repr, written out
    again for each of jax's 935 files, was 2 % of a check served from the cache)."""
    if reprs is None:
        return digest(json.dumps([repr(p) for p in parts]).encode("utf-8", "surrogatepass"))
    texts = []
    for part in parts:
        if isinstance(part, (str, int, bool)) or part is None:
            texts.append(repr(part))
            continue
        known = reprs.get(id(part))
        if known is None or known[0] is not part:
            known = reprs[id(part)] = (part, repr(part))
        texts.append(known[1])
    return digest(json.dumps(texts).encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------- the store


class Cache:
    """One cache directory for one run: entries are read from it and written to it; a
    directory that cannot be written is said once, and the run goes on without it."""

    def __init__(self, directory: Path, warn: Callable[[str], None]) -> None:
        self.directory = directory
        self.here = directory / f"{__version__}-{installation()[:16]}"
        self._here = str(self.here)  # also where the kept import words are (`memo_dir` makes it)
        self._warn = warn
        self.writable = True
        self.wrote = False
        self._snapshots: dict[str, dict[str, str | None] | None] = {}
        self._loaded: dict[str, dict[str, Any] | None] = {}
        self._unstampable = False

    def _entry_path(self, real: str) -> str:
        # A string, not a Path: joining Paths was 4 % of a check served from the cache.
        name = digest(real.encode("utf-8", "surrogatepass"))
        return os.path.join(self._here, name[:2], f"{name[2:]}.json")

    def load(self, real: str) -> dict[str, Any] | None:
        """The entry of a file, or None (none, unreadable, not JSON: all misses); read once
        per run."""
        if real not in self._loaded:
            self._loaded[real] = self._load(real)
        return self._loaded[real]

    def trusted_hash(self, real: str, stamp: list[int] | None) -> str | None:
        """The hash of the file's bytes as its entry recorded them, when the file's stamp is
        still the one it had then (and was not racy: modified within `RACY_NS` of the save);
        None otherwise (the file is read and hashed). Reading and hashing each of jax's 935
        files was a tenth of a check served from the cache."""
        entry = self.load(real)
        if entry is None or stamp is None:
            return None
        saved, hashed = entry.get("saved"), entry.get("hash")
        if entry.get("stamp") != stamp or not isinstance(saved, int) or not isinstance(hashed, str):
            return None
        return hashed if stamp[0] < saved - RACY_NS else None

    def restamp(self, real: str, stamp: list[int] | None, hashed: str) -> None:
        """After a hit on a file whose stamp is not its entry's (touched, checked out again),
        the entry takes its stamp now, so that the next run need not read it (as git refreshes
        its index). One modified too close to its entry's save keeps the entry as it is: a
        hit leaves its entry alone, unless the file's stamp says something new."""
        entry = self.load(real)
        if entry is None or stamp is None or not self.writable or self._unstampable:
            return
        if entry.get("stamp") == stamp or entry.get("hash") not in (None, hashed):
            return
        entry.update(stamp=stamp, hash=hashed, saved=time.time_ns())
        try:
            write_replacing(Path(self._entry_path(real)), json.dumps(entry).encode("utf-8", "surrogatepass"))
        except OSError:
            self._unstampable = True  # said by the first result that cannot be kept, if any

    def _load(self, real: str) -> dict[str, Any] | None:
        path = self._entry_path(real)
        try:
            with open(path, "rb") as handle:
                data = json.loads(handle.read())
                mtime = os.fstat(handle.fileno()).st_mtime
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("file") != real:
            return None
        if time.time() - mtime > PRUNE_EVERY_S:
            with contextlib.suppress(OSError):
                os.utime(path)  # used: not pruned for another while
        return data

    def snapshot(self, snapshot: str) -> dict[str, str | None] | None:
        if snapshot not in self._snapshots:
            found: dict[str, str | None] | None = None
            try:
                data = json.loads((self.here / "snapshots" / f"{snapshot}.json").read_bytes())
                if isinstance(data, dict):
                    found = data
            except (OSError, ValueError, RecursionError):
                found = None
            self._snapshots[snapshot] = found
        return self._snapshots[snapshot]

    def save(
        self, real: str, key: str, triggered: bool, report: FileReport, known: dict[str, str] | None = None,
        stamp: list[int] | None = None, hashed: str | None = None,
    ) -> None:
        """Keep a file's result, with the inputs its check recorded (`report.observed`); not
        when the check read one of the run's files (`known`: real path -> the hash this run
        read) other than the run did: it changed meanwhile, and which one was used is unsure."""
        observed = report.observed
        if not self.writable or observed is None or not observed.cacheable:
            return
        if known and any(known.get(path, hashed) != hashed for path, hashed in observed.texts.items()):
            return
        entry = {
            "file": real,
            "key": key,
            "triggered": triggered,
            "report": encode(report),
            "texts": observed.texts,
            "probes": observed.probes,
            "checked": observed.checked,
            "scans": [list(s) for s in observed.scans.values()],
        }
        if stamp is not None and hashed is not None:
            # The file's stamp before it was read, and the hash of what was read (`trusted_hash`).
            entry.update(stamp=stamp, hash=hashed, saved=time.time_ns())
        try:
            self._prepare()
            for snapshot, files in observed.snapshots.items():
                target = self.here / "snapshots" / f"{snapshot}.json"
                if snapshot not in self._snapshots and not target.exists():
                    write_replacing(target, json.dumps(files).encode("utf-8", "surrogatepass"))
                self._snapshots.setdefault(snapshot, files)
            write_replacing(Path(self._entry_path(real)), json.dumps(entry).encode("utf-8", "surrogatepass"))
            self.wrote = True
        except (OSError, TypeError, ValueError) as exc:
            self.writable = False
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self._warn(f"cannot write the cache in {self.directory} ({reason}); going on without it")

    def memo_dir(self) -> str:
        """Where the run's programs keep what they read of the tree (`ProgramSpec.memo`): this
        installation's directory, made (with the cache's tag and .gitignore) if need be; ""
        when it cannot be (the first result that cannot be kept says so)."""
        if not self.writable:
            return ""
        try:
            self._prepare()
        except OSError:
            return ""
        return self._here

    def _prepare(self) -> None:
        if (self.here / "snapshots").is_dir():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", "# Created by mmalint automatically.\n*\n")):
            if not (self.directory / name).exists():
                write_replacing(self.directory / name, text.encode())
        (self.here / "snapshots").mkdir(parents=True, exist_ok=True)

    def prune(self, now: float | None = None) -> None:
        """After a run that wrote: at most once a day, remove the entries and snapshots not
        used for `STALE_ENTRY_S` and the other installations' directories not used for
        `STALE_VERSION_S`. Entries another run is writing are replaced whole, never partly."""
        if not self.wrote:
            return
        now = time.time() if now is None else now
        stamp = self.here / "last-prune"
        try:
            if now - stamp.stat().st_mtime < PRUNE_EVERY_S:
                return
        except OSError:
            pass
        with contextlib.suppress(OSError):
            stamp.touch()
            for other in self.directory.iterdir():
                if other.is_dir() and other != self.here and now - _last_used(other) > STALE_VERSION_S:
                    _remove_tree(other)
            for directory, _dirs, names in os.walk(self.here):
                for name in names:
                    path = os.path.join(directory, name)
                    with contextlib.suppress(OSError):
                        if name.endswith((".json", ".tmp")) and now - os.stat(path).st_mtime > STALE_ENTRY_S:
                            os.unlink(path)


def _last_used(directory: Path) -> float:
    try:
        return (directory / "last-prune").stat().st_mtime
    except OSError:
        return directory.stat().st_mtime


def _remove_tree(top: Path) -> None:
    for directory, dirs, names in os.walk(top, topdown=False):
        for name in names:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, name))
        for name in dirs:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(directory, name))
    with contextlib.suppress(OSError):
        os.rmdir(top)


def clean(directory: Path) -> bool:
    """`mmalint clean`: remove a cache directory, and only one (it must hold mmalint's
    `CACHEDIR.TAG`); False when there was none."""
    tag = directory / "CACHEDIR.TAG"
    if not directory.is_dir():
        return False
    try:
        is_ours = "created by mmalint" in tag.read_text(encoding="utf-8", errors="replace")
    except OSError:
        is_ours = False
    if not is_ours:
        raise OSError(f"{directory} is not an mmalint cache (no CACHEDIR.TAG written by mmalint); left alone")
    _remove_tree(directory)
    if directory.exists():
        raise OSError(f"could not remove all of {directory}")
    return True


# ---------------------------------------------------------------------- is an entry still right


class Validator:
    """Whether an entry's inputs are what the tree shows now: each path looked at once per run."""

    def __init__(self, cache: Cache, checked: frozenset[str], known: dict[str, str]) -> None:
        self.cache = cache
        self.checked = checked
        self._prints: dict[str, str | None] = dict(known)  # the run's own reads of its files
        self._probes: dict[str, bool] = {}
        self._walks: dict[Walk, list[str]] = {}
        self._scans: dict[str, bool] = {}
        self._texts: dict[str, str | None] = {}
        self._kept: dict[Walk, dict[str, str | None]] = {}
        self._deltas: dict[tuple[Walk, str], tuple[frozenset[str], frozenset[str]] | None] = {}

    def fingerprint(self, path: str) -> str | None:
        if path not in self._prints:
            self._prints[path] = fingerprint(path)
        return self._prints[path]

    def valid(self, entry: dict[str, Any]) -> bool:
        try:
            return self._valid(entry)
        except (TypeError, ValueError, AttributeError, KeyError):  # a corrupt entry: a miss
            return False

    def _valid(self, entry: dict[str, Any]) -> bool:
        for path, hashed in entry["texts"].items():
            if self.fingerprint(path) != hashed:
                return False
        for probe, answer in entry["probes"].items():
            if self._probe(probe) != answer:
                return False
        for path, answer in entry["checked"].items():
            if (path in self.checked) != answer:
                return False
        own = entry["file"]
        for kind, arg, where, snapshot, answer in entry["scans"]:
            tops, packages_only = where
            if not self._scan(kind, arg, (tuple(tops), bool(packages_only)), snapshot, tuple(answer), own):
                return False
        return True

    def _probe(self, probe: str) -> bool:
        if probe not in self._probes:
            self._probes[probe] = probe_answer(probe)
        return self._probes[probe]

    def _scan(self, kind: str, arg: str, where: Walk, snapshot_id: str, answer: tuple[str, ...], own: str) -> bool:
        """A scan's answer over the walk as it is now: the files whose hash is the snapshot's
        keep their recorded membership; the others (edited, new, checked then and not now)
        are asked again (which needs the analysis' text scans)."""
        key = f"{kind}\0{arg}\0{where!r}\0{snapshot_id}\0{own if kind == SCAN_IMPORTS else ''}\0{answer!r}"
        if key in self._scans:
            return self._scans[key]
        delta = self._delta(where, snapshot_id)
        ok = delta is not None
        if delta is not None:
            walked, changed = delta

            def excluded(path: str) -> bool:
                if kind == SCAN_IMPORTS:
                    return path == own  # the checked file is never its own caller
                return path in self.checked  # the scan is over the files the run does not check

            recorded = set(answer)
            now = {p for p in recorded if p in walked and p not in changed and not excluded(p)}
            now.update(p for p in changed if not excluded(p) and _answers(kind, arg, self._text(p)))
            ok = now == recorded
        self._scans[key] = ok
        return ok

    def _delta(self, where: Walk, snapshot_id: str) -> tuple[frozenset[str], frozenset[str]] | None:
        """The files of the walk as it is now, and those of them whose hash is not the one
        the snapshot holds (edited, new): once per walk and snapshot, whatever each scan over
        them asked (an entry holds a scan per word it looked up). None: no such snapshot."""
        key = (where, snapshot_id)
        if key not in self._deltas:
            snapshot = self.cache.snapshot(snapshot_id)
            if snapshot is None:
                self._deltas[key] = None
            else:
                if where not in self._walks:
                    self._walks[where] = list(walk(*where))
                    # Hashes of the files whose stamp the kept import words still hold: no read.
                    self._kept[where] = kept_hashes(self.cache._here, repr(where))
                kept = self._kept[where]
                changed = frozenset(
                    path for path in self._walks[where]
                    if snapshot.get(path, _ABSENT) != (
                        kept[path] if path in kept and path not in self._prints else self.fingerprint(path)))
                self._deltas[key] = (frozenset(self._walks[where]), changed)
        return self._deltas[key]

    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            from mmalint.pipeline.text import decode_source

            self._texts[path] = read_text(path, decode_source)[0]
        return self._texts[path]


_ABSENT = "\0absent"  # what a snapshot holds for a file it does not hold: no hash is this


def _answers(kind: str, arg: str, text: str | None) -> bool:
    """Whether a file's text is among a scan's answers (as `analysis.program.Program` scans)."""
    if text is None:
        return False
    if kind == SCAN_IMPORTS:
        from mmalint.analysis.imports import index_words

        return arg in index_words(text)
    from mmalint.analysis.prefilter import TRIGGER_TEXT

    return TRIGGER_TEXT.search(text) is not None
