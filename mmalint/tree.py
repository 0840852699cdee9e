"""The checked tree as the file system shows it: what a run needs to see it (`ProgramSpec`),
the walk that lists its files, and the record of what one file's check looked at
(`Observed`), which the result cache (`pipeline/cache.py`) keeps as that result's inputs.

This module imports nothing of the analysis, so that a run whose results all come from the
cache can tell, without loading the analysis, whether the tree still shows what they read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmalint.fileio import write_replacing
from mmalint.inputs import RealPaths, read_regular
from mmalint.settings import DEFAULT_SRC, Settings

# A module of the tree is read only up to this size (jax's largest test file is ~0.5 MB).
MAX_MODULE_BYTES = 4 * 1024 * 1024
# A tree walked for the callers of a checked file stops after this many files or bytes: a home
# directory checked by mistake costs a bounded scan, and what lies beyond is unknown.
MAX_TREE_FILES = 20_000
MAX_TREE_BYTES = 256 * 1024 * 1024
# Directories a walk of the tree never enters (virtual environments, caches, VCS metadata).
SKIPPED_DIRS = frozenset({
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pytest_cache", ".ruff_cache", ".mmalint_cache", ".svn", ".tox", ".venv",
    "__pypackages__", "__pycache__", "buck-out", "node_modules", "site-packages", "venv",
})


@dataclass(frozen=True)
class ProgramSpec:
    """What a run (or a worker process of it) needs to see the tree: plain data, picklable."""

    roots: tuple[str, ...] = ()  # source roots, real paths, in search order (ruff's `src`)
    tree: tuple[str, ...] = ()  # directories walked for callers of a checked file
    checked: frozenset[str] = frozenset()  # real paths of the files this run checks
    overlays: tuple[tuple[str, str], ...] = ()  # real path -> text (an editor's open buffers)
    absolute: bool = False  # name the tree's files by absolute path (the language server)
    # The run this is the tree of: a process keeps a program (what it read of the disk) for
    # the files of one run, never into the next (`pipeline.file.program_for`).
    run: str = ""
    # Those of `checked` that the prefilter passed, as the run found them (no file is scanned
    # for MMA words twice); a file of the tree not checked is scanned when asked about.
    triggered: frozenset[str] = frozenset()
    # Where the run keeps what it read of the tree's files for the next run (the import words
    # the callers of a file are looked for by): the result cache's directory; "": nowhere.
    memo: str = ""
    # The checked files whose run names them otherwise than `display_name` would (given
    # absolute inside the working directory, through `..` or a symlink): real path -> name.
    named: tuple[tuple[str, str], ...] = ()


def display_name(path: str, absolute: bool = False) -> str:
    """How a report names a file of the tree the run was not told the name of: relative to the
    working directory when inside it, else absolute; absolute for the language server."""
    if absolute:
        return path
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative


def tree_spec(
    settings: Settings,
    checked: Iterable[str] = (),
    overlays: Iterable[tuple[str, str]] = (),
    absolute: bool = False,
    run: str | None = None,
    triggered: Iterable[str] = (),
    memo: str = "",
    names: Mapping[str, str] | None = None,
) -> ProgramSpec:
    """The checked tree of a file with these settings: its project root (the configuration's
    directory, else the nearest directory above with a pyproject.toml or `.git`:
    `config.find_project_root`) and the source roots `src` names below it (ruff's default:
    the root and its `src/`). Without a project root, a file's imports are looked for beside it
    only (`analysis.program.Program.find`). `checked` and `overlays` are paths as given;
    `names`, how the run names a checked path where a report names it."""
    roots: list[str] = []
    tree: tuple[str, ...] = ()
    if settings.project_root is not None:
        root = os.path.realpath(settings.project_root)
        tree = (root,)
        for entry in settings.src if settings.src is not None else DEFAULT_SRC:
            candidate = os.path.realpath(os.path.join(root, entry))
            if os.path.isdir(candidate) and candidate not in roots:
                roots.append(candidate)
    real = {p: os.path.realpath(p) for p in checked}
    named = tuple(
        (real[p], name) for p, name in (names or {}).items()
        if p in real and name != display_name(real[p], absolute)
    )
    return ProgramSpec(
        roots=tuple(roots),
        tree=tree,
        checked=frozenset(real.values()),
        overlays=tuple((os.path.realpath(p), t) for p, t in overlays),
        absolute=absolute,
        run=run if run is not None else new_run(),
        triggered=frozenset(os.path.realpath(p) for p in triggered),
        memo=memo,
        named=named,
    )


def new_run() -> str:
    """A name for one run of the checks (its files share what the program read of the disk)."""
    return uuid.uuid4().hex


def digest(data: bytes) -> str:
    """The content hash the cache compares files by."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def fingerprint(path: str) -> str | None:
    """A module's bytes as the program reads them (`read_text`), hashed; None when
    it cannot be read (not a regular file, too large, gone)."""
    try:
        return digest(read_regular(path, MAX_MODULE_BYTES))
    except Exception:  # whatever it is, the program saw no text there
        return None


def is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def is_dir(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def probe_answer(probe: str) -> bool:
    """The answer the tree gives now to a probe of `Observed.probes` (`f:path`, `d:path`)."""
    kind, path = probe.split(":", 1)
    return is_file(path) if kind == "f" else is_dir(path)


def walk(tops: tuple[str, ...], packages_only: bool = False, visited: list[str] | None = None) -> Iterator[str]:
    """The `.py` files under `tops`, sorted per directory, symlinked directories not followed
    (nor, with `packages_only`, directories without an `__init__.py`), at most
    `MAX_TREE_FILES` files and `MAX_TREE_BYTES` bytes; each directory listed, or skipped for
    what it holds (a `pyvenv.cfg`, no `__init__.py`), is appended to `visited` (a file added
    or removed there changes its modification time)."""
    count = 0
    size = 0
    seen: set[str] = set()
    real = RealPaths()
    for top in tops:
        stack = [top]
        while stack:
            directory = stack.pop()
            if directory in seen:
                continue
            seen.add(directory)
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except OSError:
                continue
            if visited is not None:
                visited.append(directory)
            subdirs = []
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name in SKIPPED_DIRS or entry.name.startswith("."):
                            continue
                        if is_file(os.path.join(entry.path, "pyvenv.cfg")):
                            if visited is not None:
                                visited.append(entry.path)  # skipped for what it holds: watched
                            continue  # a virtual environment
                        if packages_only and not is_file(os.path.join(entry.path, "__init__.py")):
                            if visited is not None:
                                visited.append(entry.path)
                            continue
                        subdirs.append(entry.path)
                    elif entry.name.endswith(".py") and entry.is_file():
                        count += 1
                        size += entry.stat().st_size
                        if count > MAX_TREE_FILES or size > MAX_TREE_BYTES:
                            return
                        yield real(entry.path, entry.is_symlink())
                except OSError:
                    continue
            stack.extend(reversed(subdirs))


def file_stamp(path: str | os.PathLike[str]) -> list[int] | None:
    """What says a file is unchanged without reading it: its modification and change times,
    size and inode (symlinks followed); None when it cannot be looked at."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]


# Texts read, by real path, with the modification and change times, size and inode they were
# read at: a later run in the same process (the language server's child) reads again only what
# changed (a file put in another's place with its size and modification time is a new inode).
_TEXT_CACHE: dict[str, tuple[list[int], str | None, str | None]] = {}
_TEXT_CACHE_LIMIT = 50_000


Decode = Callable[[bytes], str]


def utf8(data: bytes) -> str:
    """Python source as UTF-8 (a BOM dropped): the program's reading unless told another
    (`pipeline.file.program_for` hands it the text stage's, which honours PEP 263)."""
    return data.decode("utf-8").removeprefix("\ufeff")


def read_text(path: str, decode: Decode = utf8) -> tuple[str | None, str | None]:
    """A module's text: a regular file, at most `MAX_MODULE_BYTES`, decoded as Python source
    (None when it cannot be read or decoded), and the hash of the bytes read (None when none
    were: `tree.fingerprint`)."""
    stamp = file_stamp(path)
    if stamp is None:
        return None, None
    cached = _TEXT_CACHE.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1], cached[2]
    text: str | None = None
    hashed: str | None = None
    try:
        data = read_regular(path, MAX_MODULE_BYTES)
        hashed = digest(data)
        text = decode(data)
    except Exception:  # unreadable, undecodable: whatever it is, that module is unknown
        text = None
    if len(_TEXT_CACHE) >= _TEXT_CACHE_LIMIT:
        _TEXT_CACHE.clear()
    _TEXT_CACHE[path] = (stamp, text, hashed)
    return text, hashed


# A scan over every file of a walk: which files' import statements name a word (the callers
# of a checked file are looked for among them), or which unchecked files name an MMA API.
SCAN_IMPORTS = "imports"
SCAN_TRIGGERED = "triggered"
Walk = tuple[tuple[str, ...], bool]  # `walk`'s arguments


@dataclass
class Observed:
    """What one file's check read of the tree besides the file itself, so that a result can be
    reused exactly while all of it is unchanged (`pipeline/cache.py` checks each part again):

    - `texts`: each module whose text it read, by real path, with the hash of its bytes (None:
      no text there);
    - `probes`: each path it asked whether it is a file (`f`) or a directory (`d`), and the answer;
    - `checked`: each path it asked whether this run checks it, and the answer;
    - `scans`: each question answered from every file of a walk (`SCAN_IMPORTS` with the word,
      `SCAN_TRIGGERED` with ""), with the answer (sorted paths) and the snapshot of the walk's
      files it read (`snapshots`: by id, real path -> hash), so that an edit elsewhere in the
      tree is looked at file by file rather than invalidating the scan;
    - `cacheable`: False when an answer came from state shared with other files of the run
      that this record cannot account for, or from an editor's buffer; `keyed` is False only
      for the first reason (the language server keys a result by the buffers too).
    """

    own: str | None = None  # the checked file: its text is the result's own key
    texts: dict[str, str | None] = field(default_factory=dict)
    probes: dict[str, bool] = field(default_factory=dict)  # "f:" / "d:" + path
    checked: dict[str, bool] = field(default_factory=dict)
    scans: dict[str, tuple[str, str, Walk, str, tuple[str, ...]]] = field(default_factory=dict)
    snapshots: dict[str, dict[str, str | None]] = field(default_factory=dict)
    cacheable: bool = True
    keyed: bool = True
    scanning: int = 0  # inside a scan, reads are the scan's snapshot, not texts of the result

    def text(self, path: str, hashed: str | None) -> None:
        if not self.scanning and path != self.own:
            self.texts[path] = hashed

    def probe(self, kind: str, path: str, answer: bool) -> None:
        self.probes[f"{kind}:{path}"] = answer

    def is_checked(self, path: str, answer: bool) -> None:
        self.checked[path] = answer

    def scan(self, kind: str, where: Walk, arg: str, answer: tuple[str, ...], files: dict[str, str | None]) -> None:
        """A scan's answer and the files it read (`files`, real path -> hash)."""
        snapshot = snapshot_id(files)
        self.snapshots.setdefault(snapshot, dict(files))
        self.scans[f"{kind}\0{arg}\0{where!r}"] = (kind, arg, where, snapshot, tuple(sorted(answer)))

    def merge(self, other: Observed) -> None:
        """What `other` read too (a later pass over the same file, or a scan replayed)."""
        for path, hashed in other.texts.items():
            self.text(path, hashed)
        self.probes.update(other.probes)
        self.checked.update(other.checked)
        self.scans.update(other.scans)
        self.snapshots.update(other.snapshots)
        self.cacheable = self.cacheable and other.cacheable
        self.keyed = self.keyed and other.keyed


def snapshot_id(files: dict[str, str | None]) -> str:
    return digest("\n".join(f"{p}\0{h}" for p, h in sorted(files.items())).encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------- the words of a tree

# The words of each file of a walk, kept between runs in the cache's directory (`ProgramSpec.
# memo`): the callers of a checked file are looked for among the files whose import statements
# name its module, and reading and scanning every file of jax's tree for that was 0.24 s of a
# pre-commit run checking five of its files.
WORDS_FORMAT = 2  # 2: with the attribute names each file stores
# A file modified this close to when the index was written may have changed again within the
# same timestamp (git's "racily clean" entries): it is read again.
RACY_NS = 2_000_000_000


@dataclass
class TreeWords:
    """Which files of a walk name each import word, and the hash of each file's bytes (the
    scan's snapshot): read from the files, or from the index a previous run kept of those
    whose modification time, change time, size and inode are still what it saw."""

    index: dict[str, list[str]]
    snapshot: dict[str, str | None]
    read: int = 0  # files read (the rest came from the kept index)


def tree_words(
    paths: Iterable[str], read: Callable[[str], tuple[str | None, str | None]],
    words_of: Callable[[str], Iterable[str]], memo: str = "", where: str = "",
) -> TreeWords:
    """The words of `paths` (`words_of` each one's text, `read` giving its text and hash:
    `analysis.imports.import_words` of its statements); with `memo`, a directory, the index
    of the walk `where` names is kept there."""
    target = _index_path(memo, where) if memo else ""
    kept = _kept(target, where) if memo else {}
    found = TreeWords({}, {})
    entries: dict[str, list[Any]] = {}
    for path in paths:
        entry = kept.get(path) if kept else None
        stamp = file_stamp(path) if memo else None
        if entry is not None and stamp is not None and entry[:4] == stamp:
            hashed, words = entry[4], entry[5]
        else:
            text, hashed = read(path)
            words = sorted(words_of(text)) if text is not None else []
            found.read += 1
        found.snapshot[path] = hashed
        for word in words:
            found.index.setdefault(word, []).append(path)
        if stamp is not None:
            entries[path] = [*stamp, hashed, words]
    if memo and found.read:
        _write_index(target, {"format": WORDS_FORMAT, "where": where, "written": time.time_ns(), "files": entries})
    return found


def kept_hashes(memo: str, where: str) -> dict[str, str | None]:
    """The hash of each file of the walk `where` whose kept words still hold (its stamp is
    what it was): what a file's hash is without reading it (the cache's validator)."""
    found: dict[str, str | None] = {}
    for path, entry in _kept(_index_path(memo, where), where).items():
        if entry[:4] == file_stamp(path):
            found[path] = entry[4]
    return found


def _index_path(memo: str, where: str) -> str:
    name = hashlib.blake2b(where.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return os.path.join(memo, f"words-{name}.json")


def _kept(target: str, where: str) -> dict[str, list[Any]]:
    """The entries of the kept words at `target` that are not racy; none when it is missing,
    corrupt, or of another walk or format."""
    try:
        with open(target, "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("format") != WORDS_FORMAT or data.get("where") != where:
        return {}
    written, files = data.get("written"), data.get("files")
    if not isinstance(written, int) or not isinstance(files, dict):
        return {}
    return {p: e for p, e in files.items() if isinstance(p, str) and _entry_ok(e) and e[0] < written - RACY_NS}


def _entry_ok(entry: object) -> bool:
    return (
        isinstance(entry, list) and len(entry) == 6 and all(isinstance(v, int) for v in entry[:4])
        and (entry[4] is None or isinstance(entry[4], str))
        and isinstance(entry[5], list) and all(isinstance(w, str) for w in entry[5])
    )


def _write_index(target: str, data: dict[str, Any]) -> None:
    """Written as the cache's entries are; a directory that cannot be written keeps no index
    (the next run reads the files again)."""
    with contextlib.suppress(OSError):
        write_replacing(Path(target), json.dumps(data).encode("utf-8", "surrogatepass"))
