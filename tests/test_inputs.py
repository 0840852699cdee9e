"""Odd inputs in a checked tree: each is one line for its path, and the run goes on.

FIFOs, devices, symlink loops, dangling links, huge files, broken configuration, and a
worker process that dies: none may hang the run, end it, or hide another file's findings.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mmalint.discover import discover
from mmalint.inputs import UnreadableInput, read_regular
from mmalint.pipeline import files as runner
from mmalint.runtime import BATCH_THRESHOLDS
from mmalint.settings import Settings

REPO = Path(__file__).resolve().parent.parent
MMALINT = str(Path(sys.executable).with_name("mmalint"))
GOOD = REPO / "examples" / "warp_int8_matmul.py"


def _check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MMALINT, "check", "--format", "concise", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A directory with one file that has findings, and every kind of odd entry."""
    shutil.copy(GOOD, tmp_path / "good.py")
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "loop1.py").symlink_to("loop2.py")
    (tmp_path / "loop2.py").symlink_to("loop1.py")
    (tmp_path / "dangling.py").symlink_to("nowhere.py")
    (tmp_path / "dirloop").symlink_to(".", target_is_directory=True)
    return tmp_path


def test_walked_odd_entries_are_skipped_with_a_warning(tree: Path) -> None:
    out = _check(tree, ".")
    assert out.returncode == 1, out.stderr  # the good file's findings; nothing else
    assert "good.py:42:9: MMA101" in out.stdout
    for name, why in [("fifo.py", "a FIFO"), ("zero.py", "a character device"),
                      ("loop1.py", "a symlink loop"), ("dangling.py", "dangling")]:
        assert f"warning: {name}: " in out.stderr and why in out.stderr, out.stderr
    assert "internal error" not in out.stderr


@pytest.mark.parametrize(("name", "why"), [
    ("fifo.py", "a FIFO, not a regular file"),
    ("zero.py", "a character device, not a regular file"),
    ("loop1.py", "a symlink loop"),
    ("dangling.py", "no such file"),
    ("good.py/inside.py", "Not a directory"),
])
def test_named_odd_paths_are_input_errors(tree: Path, name: str, why: str) -> None:
    out = _check(tree, name, "good.py")
    assert out.returncode == 2
    assert f"error: {name}: " in out.stderr and why in out.stderr, out.stderr
    assert "good.py:42:9: MMA101" in out.stdout  # the other file is still checked
    assert "internal error" not in out.stderr and "All checks passed" not in out.stdout


def test_read_regular_caps_the_size(tmp_path: Path) -> None:
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" * 1000)
    assert read_regular(big) == b"x = 1\n" * 1000
    with pytest.raises(UnreadableInput, match="over the"):
        read_regular(big, limit=100)
    with pytest.raises(UnreadableInput, match="a directory"):
        read_regular(tmp_path)


def test_unlistable_directory_is_an_error_for_that_directory(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root may list anything, so the failure of os.walk's listing is simulated.
    (tree / "sub").mkdir()
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:
        if str(path).endswith("sub"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    errors: list[str] = []
    skipped: list[str] = []
    found = [d.display for d in discover([str(tree)], (), errors, skipped)]
    assert str(tree / "good.py") in found
    assert errors == [f"{tree / 'sub'}: Permission denied"]


@pytest.mark.parametrize(("config", "message"), [
    ('tool = "x"\n', "`tool` must be a table"),
    ("a = " + "[" * 500 + "]" * 500 + "\n", "nested too deeply"),
    ("[tool.mmalint]\nselect = [\n", "invalid TOML"),
    ("\xff\xfe = 1\n", "not UTF-8"),
])
def test_broken_configuration_is_one_line(tmp_path: Path, config: str, message: str) -> None:
    shutil.copy(GOOD, tmp_path / "good.py")
    (tmp_path / "mmalint.toml").write_bytes(config.encode("latin-1"))
    out = _check(tmp_path, ".")
    assert out.returncode == 2
    assert message in out.stderr and "internal error" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_configuration_that_is_a_fifo_is_not_read(tmp_path: Path) -> None:
    shutil.copy(GOOD, tmp_path / "good.py")
    os.mkfifo(tmp_path / "pyproject.toml")
    out = _check(tmp_path, ".")
    assert out.returncode == 1 and "good.py:42:9: MMA101" in out.stdout, out.stderr


def _crashing_work(item: runner.Job) -> runner.FileOutcome:
    if "crash" in item[0]:
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer or a native crash would
    return _real_work(item)


_real_work = runner._work


@pytest.mark.skipif(sys.platform != "linux", reason="pool workers inherit the patch by fork")
def test_a_worker_that_dies_costs_only_its_file(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a.py", "b_crash.py", "c.py", "d.py", "e.py"):
        shutil.copy(GOOD, tmp_path / name)
    monkeypatch.setattr(runner, "_work", _crashing_work)
    errors: list[str] = []
    files = list(discover([str(tmp_path)], (), errors))
    result = runner.run(files, Settings(), jobs=2)
    by_name = {Path(r.filename).name: r for r in result.reports}
    assert by_name["b_crash.py"].error is not None
    assert "died" in by_name["b_crash.py"].error
    for name in ("a.py", "c.py", "d.py", "e.py"):
        assert by_name[name].error is None
        assert any(d.code == "MMA101" for d in by_name[name].diagnostics)


_MAIN = os.getpid()


def _work_never_in_the_main_process(item: runner.Job) -> runner.FileOutcome:
    assert os.getpid() != _MAIN, f"{item[0]} ran in the main process"
    return _crashing_work(item)


@pytest.mark.skipif(sys.platform != "linux", reason="pool workers inherit the patch by fork")
def test_a_pool_that_breaks_while_jobs_are_handed_out_runs_the_rest_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    for name in ("a.py", "b_crash.py", "c.py", "d.py", "e.py"):
        shutil.copy(GOOD, tmp_path / name)
    monkeypatch.setattr(runner, "_work", _work_never_in_the_main_process)
    submit = ProcessPoolExecutor.submit
    calls = []

    def breaking_submit(self: ProcessPoolExecutor, *args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:  # a worker died meanwhile: the pool says so at the next hand-out
            raise BrokenProcessPool("a child process terminated abruptly")
        return submit(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ProcessPoolExecutor, "submit", breaking_submit)
    files = list(discover([str(tmp_path)], (), []))
    result = runner.run(files, Settings(), jobs=2)
    by_name = {Path(r.filename).name: r for r in result.reports}
    assert by_name["b_crash.py"].error is not None and "died" in by_name["b_crash.py"].error
    for name in ("a.py", "c.py", "d.py", "e.py"):
        assert by_name[name].error is None, by_name[name].error
        assert any(d.code == "MMA101" for d in by_name[name].diagnostics)


def test_the_pool_is_handed_the_largest_files_first_then_the_run_order() -> None:
    jobs = [(f"f{i}.py", b"x" * size, Settings(), None, "") for i, size in enumerate([5, 90, 1, 70, 3, 80, 2, 60])]
    # Two workers: the four largest first, by size; the others as the run gave them.
    assert runner.submission_order(jobs, 2) == [1, 5, 3, 7, 0, 2, 4, 6]  # type: ignore[arg-type]
    assert runner.submission_order(jobs[:3], 2) == [1, 0, 2]  # type: ignore[arg-type]


def test_reports_keep_the_run_order_whatever_the_pool_ran_first(tmp_path: Path) -> None:
    names = [f"k{i}.py" for i in range(6)]
    for i, name in enumerate(names):
        # Sizes that put the last files first in the pool.
        (tmp_path / name).write_text(GOOD.read_text() + "# padding\n" * (i * 40))
    files = list(discover([str(tmp_path)], (), []))
    result = runner.run(files, Settings(), jobs=2)
    assert [Path(r.filename).name for r in result.reports] == names
    assert all(any(d.code == "MMA101" for d in r.diagnostics) for r in result.reports)


def test_python_warnings_about_the_checked_code_stay_quiet(tmp_path: Path) -> None:
    # "\d" warns on 3.11 (DeprecationWarning) and 3.12 (SyntaxWarning), `1if` on 3.12.
    (tmp_path / "k.py").write_text(
        "from jax.experimental.pallas import mosaic_gpu as plgpu\n"
        "def f(y):\n"
        "    x = 1if y else 2\n"
        "    s = '\\d'\n"
        "    return plgpu.mma(x, x, x)\n")
    out = subprocess.run([MMALINT, "check", "k.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, env={**os.environ, "PYTHONWARNINGS": "default"})
    assert out.returncode in (0, 1) and "Warning" not in out.stderr, out.stderr


def test_a_run_where_no_process_can_start_checks_its_files_here_as_one_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A sandbox without processes: the files run in this process, with the collector of a
    # batch (`runtime.batch_gc`), as a `-j 1` run's are; afterwards it is as it was.
    import gc
    from concurrent.futures import ProcessPoolExecutor

    for name in ("a.py", "b.py", "c.py", "d.py"):
        shutil.copy(GOOD, tmp_path / name)

    def no_processes(self: ProcessPoolExecutor, *args: object, **kwargs: object) -> None:
        raise OSError("no processes in this sandbox")

    thresholds: list[tuple[int, int, int]] = []
    real_work = runner.work

    def recording(item: runner.Job) -> runner.FileOutcome:
        thresholds.append(gc.get_threshold())
        return real_work(item)

    monkeypatch.setattr(ProcessPoolExecutor, "__init__", no_processes)
    monkeypatch.setattr(runner, "work", recording)
    before = gc.get_threshold()
    result = runner.run(list(discover([str(tmp_path)], (), [])), Settings(), jobs=2)
    assert all(any(d.code == "MMA101" for d in r.diagnostics) for r in result.reports)
    assert len(result.reports) == len(thresholds) == 4
    if gc.isenabled():
        assert set(thresholds) == {BATCH_THRESHOLDS}
    assert gc.get_threshold() == before
