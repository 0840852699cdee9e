"""Which paths git ignores: `.gitignore` files and `.git/info/exclude`, as gitignore(5) says.

Used by `respect-gitignore`: a directory walk skips what `git status` would not show. The
semantics are git's own (dir.c and wildmatch.c), checked against `git check-ignore` in the
tests: within one file the last matching pattern wins and `!` re-includes; a deeper
`.gitignore` beats a shallower one, and every `.gitignore` beats `info/exclude`; a pattern
with no slash (a trailing one aside) matches a name at any depth, one with a slash is relative
to its file's directory; a trailing `/` matches only directories; `*`, `?` and `[...]` never
match `/`, `**` does where it stands between slashes. What lies inside an ignored directory is
ignored whatever a later pattern says, so a walk never descends into one.

Rules apply only inside a git repository (a directory with `.git` above), as git and ruff
apply them. The user's global excludes file (`core.excludesFile`) is not read.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from mmalint.inputs import UnreadableInput, read_regular

# Far above any real ignore file; a bigger one is not read rather than read slowly.
MAX_IGNORE_BYTES = 8 * 1024 * 1024

# wildmatch's character classes, ASCII only as git's are.
_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~",
    "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z", "xdigit": "0-9a-fA-F",
}
_SPECIAL = "*?[\\"


@dataclass(frozen=True)
class Pattern:
    """One line of an ignore file."""

    text: str  # the line as written, for messages
    regex: re.Pattern[str] | None  # None: a pattern git can never match (an unclosed `[`)
    negated: bool  # `!pattern`: re-include
    dir_only: bool  # `pattern/`: directories only
    basename: bool  # no slash in it: matched against the name, at any depth

    def matches(self, relative: str, name: str, is_dir: bool) -> bool:
        """Whether this pattern matches a path given relative to the ignore file's directory."""
        if self.regex is None or (self.dir_only and not is_dir):
            return False
        return self.regex.fullmatch(name if self.basename else relative) is not None


def parse_pattern(line: str) -> Pattern | None:
    """A pattern from one line of an ignore file, or None for a blank line or a comment."""
    text = _trim_trailing_spaces(line.removesuffix("\r"))
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    body = text[1:] if negated else text
    dir_only = body.endswith("/")
    if dir_only:
        body = body[:-1]
    if not body:
        return None  # `/` or `!` alone matches nothing
    basename = "/" not in body
    if not basename:
        body = body.removeprefix("/")
        # Git compares the literal start of the pattern, then wildmatches the rest as a pattern
        # of its own (so a `**` right after the literal start counts as a leading one).
        literal = len(body)
        for i, char in enumerate(body):
            if char in _SPECIAL:
                literal = i
                break
        rest = _translate(body[literal:])
        regex = None if rest is None else re.escape(body[:literal]) + rest
    else:
        regex = _translate(body)
    return Pattern(line, None if regex is None else re.compile(regex, re.DOTALL), negated, dir_only, basename)


def parse_patterns(text: str) -> tuple[Pattern, ...]:
    patterns = (parse_pattern(line) for line in text.removeprefix("\ufeff").split("\n"))
    return tuple(p for p in patterns if p is not None)


def _trim_trailing_spaces(line: str) -> str:
    """Trailing spaces go unless a backslash escapes them (git's `trim_trailing_spaces`)."""
    last_space: int | None = None
    i = 0
    while i < len(line):
        char = line[i]
        if char == " ":
            if last_space is None:
                last_space = i
        elif char == "\\":
            i += 1
            if i == len(line):
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def _translate(glob: str) -> str | None:
    """wildmatch's `glob` (with WM_PATHNAME) as a regular expression, or None if it can never match."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        char = glob[i]
        if char == "\\":
            if i + 1 == n:
                return None  # a trailing backslash matches nothing
            out.append(re.escape(glob[i + 1]))
            i += 2
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "*":
            end = i
            while end < n and glob[end] == "*":
                end += 1
            rest = glob[end:]
            leading = i == 0 or glob[i - 1] == "/"
            if end - i >= 2 and leading and rest == "":
                out.append(".*")  # `foo/**`: everything inside
            elif end - i >= 2 and leading and rest.startswith("/"):
                out.append("(?:.*/)?")  # `**/`: any number of directories, none included
                end += 1
            elif end - i >= 2 and leading and rest.startswith("\\/"):
                out.append(".*")  # wildmatch: a real `**`, but with no zero-directory shortcut
            else:
                out.append("[^/]*")
            i = end
        elif char == "[":
            parsed = _bracket(glob, i)
            if parsed is None:
                return None
            regex, i = parsed
            out.append(regex)
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def _bracket(glob: str, start: int) -> tuple[str, int] | None:
    """The class that starts at `glob[start] == "["` and the index after it; None if unclosed."""
    n = len(glob)
    i = start + 1
    negated = i < n and glob[i] in "!^"
    if negated:
        i += 1
    items: list[str] = []
    previous: str | None = None  # the last single character, which a `-` can make a range from
    first = True
    while True:
        if i >= n:
            return None
        char = glob[i]
        if char == "]" and not first:
            break
        first = False
        if char == "\\":
            i += 1
            if i >= n:
                return None
            previous = glob[i]
            items.append(re.escape(previous))
            i += 1
        elif char == "-" and previous is not None and i + 1 < n and glob[i + 1] != "]":
            i += 1
            high = glob[i]
            if high == "\\":
                i += 1
                if i >= n:
                    return None
                high = glob[i]
            if previous <= high:  # a reversed range matches nothing, as in git
                items.append(f"{re.escape(previous)}-{re.escape(high)}")
            previous = None
            i += 1
        elif char == "[" and i + 1 < n and glob[i + 1] == ":":
            close = glob.find("]", i + 2)
            if close < 0:
                return None
            if close - (i + 2) < 1 or glob[close - 1] != ":":
                items.append(re.escape("["))  # no `:]`: a plain `[`
                previous = "["
                i += 1
                continue
            name = glob[i + 2:close - 1]
            if name not in _CLASSES:
                return None  # git: a malformed class makes the whole pattern fail
            items.append(_CLASSES[name])
            previous = None
            i = close + 1
        else:
            previous = char
            items.append(re.escape(char))
            i += 1
    body = "".join(items)
    regex = f"[^{body}/]" if negated else f"(?!/)[{body}]"
    return regex, i + 1


@dataclass(frozen=True)
class IgnoreFile:
    base: Path  # the directory its patterns are relative to
    patterns: tuple[Pattern, ...]

    def decide(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a `!` pattern, None: no pattern matches."""
        relative = path.relative_to(self.base).as_posix()
        for pattern in reversed(self.patterns):
            if pattern.matches(relative, path.name, is_dir):
                return not pattern.negated
        return None


class GitIgnore:
    """The ignore rules of the repositories a run looks into, each file read once."""

    def __init__(self) -> None:
        self._repository: dict[Path, Path | None] = {}
        self._files: dict[Path, IgnoreFile | None] = {}

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether git ignores `path` itself; the directories above it are not looked at.

        `path` is absolute with its parent's symlinks resolved, as a walk sees it.
        """
        root = self.repository(path.parent)
        if root is None or path == root:
            return False
        directory = path.parent
        while True:
            rules = self._ignore_file(directory, directory / ".gitignore")
            if rules is not None and (decided := rules.decide(path, is_dir)) is not None:
                return decided
            if directory == root:
                break
            directory = directory.parent
        exclude = self._ignore_file(root, _info_exclude(root))
        return bool(exclude is not None and exclude.decide(path, is_dir))

    def ignored_with_parents(self, path: Path, is_dir: bool) -> bool:
        """Whether git ignores `path` or a directory above it in its repository (`git check-ignore`)."""
        root = self.repository(path.parent)
        if root is None:
            return False
        inside = [p for p in path.parents if p != root and root in p.parents]
        return any(self.ignored(d, True) for d in reversed(inside)) or self.ignored(path, is_dir)

    def repository(self, directory: Path) -> Path | None:
        """The work tree `directory` is in: the nearest directory at or above it holding `.git`."""
        if directory in self._repository:
            return self._repository[directory]
        result: Path | None = None
        if os.path.lexists(directory / ".git"):
            result = directory
        elif directory.parent != directory:
            result = self.repository(directory.parent)
        self._repository[directory] = result
        return result

    def _ignore_file(self, base: Path, path: Path | None) -> IgnoreFile | None:
        key = path if path is not None else base / ".git"
        if key in self._files:
            return self._files[key]
        rules = None if path is None else _read(base, path)
        self._files[key] = rules
        return rules


def _read(base: Path, path: Path) -> IgnoreFile | None:
    try:
        # git reads no ignore file through a symlink (since 2.32)
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        data = read_regular(path, MAX_IGNORE_BYTES)
    except (OSError, UnreadableInput):
        return None
    patterns = parse_patterns(data.decode("utf-8", errors="surrogateescape"))
    return IgnoreFile(base, patterns) if patterns else None


def _info_exclude(root: Path) -> Path | None:
    """`info/exclude` of the repository whose work tree is `root` (a worktree's is its main one's)."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git / "info" / "exclude"
    try:
        first = read_regular(dot_git, 64 * 1024).decode("utf-8", errors="replace").splitlines()[0]
    except (UnreadableInput, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = (root / first.removeprefix("gitdir:").strip()).resolve()
    try:
        common = read_regular(git_dir / "commondir", 64 * 1024).decode("utf-8", errors="replace").strip()
    except UnreadableInput:
        return git_dir / "info" / "exclude"
    return (git_dir / common).resolve() / "info" / "exclude"
