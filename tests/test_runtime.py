"""The process set-up of a run that analyses (`mmalint.runtime`)."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from mmalint.runtime import BATCH_THRESHOLDS, THRESHOLDS, batch_gc, tune_gc


def _thresholds_after(setup: str) -> tuple[int, int, int]:
    code = f"import gc; {setup}; from mmalint.runtime import tune_gc; tune_gc(); print(gc.get_threshold())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return tuple(int(x) for x in out.strip("()\n").split(","))  # type: ignore[return-value]


def test_default_thresholds_are_raised() -> None:
    assert _thresholds_after("gc.set_threshold(700, 10, 10)") == THRESHOLDS


def test_a_collector_turned_off_or_higher_is_left_alone() -> None:
    assert _thresholds_after("gc.set_threshold(0)")[0] == 0
    assert _thresholds_after("gc.set_threshold(500000, 5, 5)") == (500000, 5, 5)


def test_the_command_runs_with_the_raised_thresholds() -> None:
    code = (
        "import gc, sys; import mmalint.cli as c;"
        "c.main(['rules']); print(gc.get_threshold(), file=sys.stderr)"
    )
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False).stderr
    assert str(THRESHOLDS) in err


def test_idempotent() -> None:
    before = gc.get_threshold()
    try:
        tune_gc()
        once = gc.get_threshold()
        tune_gc()
        assert gc.get_threshold() == once
    finally:
        gc.set_threshold(*before)


def test_a_batch_collects_seldom_and_leaves_the_collector_as_it_was() -> None:
    before = gc.get_threshold()
    try:
        tune_gc()
        with batch_gc():
            assert gc.get_threshold() == BATCH_THRESHOLDS
            assert gc.get_freeze_count() > 0  # what was alive before the batch is not scanned again
        assert gc.get_threshold() == THRESHOLDS
        assert gc.get_freeze_count() == 0
    finally:
        gc.set_threshold(*before)


def test_a_batch_still_collects_a_runaway_of_cycles() -> None:
    code = (
        "import gc\nfrom mmalint.runtime import batch_worker\nbatch_worker()\n"
        "seen = []\ngc.callbacks.append(lambda phase, info: seen.append(info['collected']) if phase == 'stop' else None)\n"
        "for _ in range(1_500_000):\n    a = []; b = [a]; a.append(b)\n"  # 3 million lists in cycles
        "print(gc.get_threshold()[0], len(seen), sum(seen))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    threshold, collections, collected = (int(x) for x in out.stdout.split())
    assert threshold == BATCH_THRESHOLDS[0]
    assert collections >= 1 and collected >= 1_000_000


def test_a_batch_leaves_a_collector_turned_off_alone() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(0)
        with batch_gc():
            assert gc.get_threshold()[0] == 0 and gc.get_freeze_count() == 0
    finally:
        gc.set_threshold(*before)


def test_the_end_of_a_process_waits_runs_its_exit_functions_and_flushes() -> None:
    code = (
        "import atexit, sys, threading, time\n"
        "from mmalint.runtime import end_process\n"
        "atexit.register(lambda: print('exit function', flush=True))\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), sys.stdout.write('thread\\n'))).start()\n"
        "sys.stdout.write('x' * 200000 + '\\n')\n"
        "end_process(3)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 3
    assert out.stdout.splitlines() == ["x" * 200000, "thread", "exit function"]


def test_the_command_exits_as_python_would() -> None:
    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mmalint", *args], capture_output=True, text=True, timeout=120)

    version = command("--version")
    assert version.returncode == 0 and version.stdout.startswith("mmalint ")
    usage = command("check", "--no-such-option")
    assert usage.returncode == 2 and "unrecognized arguments" in usage.stderr
    listed = command("rules")
    assert listed.returncode == 0 and "MMA101" in listed.stdout and listed.stdout.endswith("\n")


def test_a_profiled_command_still_writes_its_profile(tmp_path: Path) -> None:
    target = tmp_path / "rules.prof"
    out = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(target), "-m", "mmalint", "rules"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert target.stat().st_size > 0


def test_output_that_cannot_be_written_ends_with_the_interpreters_status() -> None:
    # Buffered text the disk will not take (ENOSPC at the last flush): 120, as Python exits.
    code = (
        "import io, sys\nfrom mmalint.runtime import end_process\n"
        "class Full(io.RawIOBase):\n    def writable(self):\n        return True\n"
        "    def write(self, data):\n        raise OSError(28, 'No space left on device')\n"
        "sys.stdout = io.TextIOWrapper(io.BufferedWriter(Full()))\n"
        "sys.stdout.write('x' * 100)\nend_process(0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 120, out.stderr


def test_a_reader_that_went_away_is_no_error() -> None:
    code = ("import sys, time; from mmalint.runtime import end_process\ntime.sleep(0.5)\n"
            "try:\n    sys.stdout.write('x' * 1000000)\nexcept BrokenPipeError:\n    pass\nend_process(0)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.close()  # as `| head` does once it has read enough
    assert child.wait(timeout=60) == 0


def test_a_closed_stream_is_left_as_the_interpreter_leaves_it() -> None:
    # The language server closes its stdout on exit: no flush is tried, no error.
    code = "import sys; from mmalint.runtime import end_process; print('x'); sys.stdout.close(); end_process(0)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == "x\n", out.stderr

