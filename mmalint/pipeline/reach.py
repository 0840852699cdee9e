"""Whether a file is worth checking, and the checked tree it is read in: what the files stage
asks of every file before any is analysed.

Nothing here loads the analysis proper (the interpreter, the models, libcst): a file the
prefilter does not pass is decided from the import graph alone (`Program.worth_running`), so
a run whose files name no MMA API (pre-commit on a commit that touches no kernel) never loads
it.
"""

from __future__ import annotations

import os

from mmalint.analysis.program import Program, ProgramSpec
from mmalint.pipeline.options import LintOptions
from mmalint.pipeline.text import decode_source, worth_running

# The program of the last specs seen in this process: a worker checks many files of one run.
_PROGRAMS: dict[ProgramSpec, Program] = {}


def program_for(spec: ProgramSpec) -> Program:
    found = _PROGRAMS.get(spec)
    if found is None:
        if len(_PROGRAMS) >= 2:
            _PROGRAMS.clear()
        found = _PROGRAMS[spec] = Program(spec, decode_source)
    return found


def worth_checking(filename: str, data: bytes, options: LintOptions) -> bool:
    """The prefilter (`text.worth_running`), and for a file that names no MMA API, whether it
    imports through the checked tree a module that does, in a file this run does not check
    (`Program.worth_running`): then its own check is where the finding is reported."""
    return worth_running(data, options.report_unused_noqa) or reaches_elsewhere(filename, data, options)


def reaches_elsewhere(filename: str, data: bytes, options: LintOptions) -> bool:
    """`worth_checking`'s second half, for a file the prefilter did not pass."""
    if options.program is None or b"import" not in data:
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return program_for(options.program).worth_running(os.path.realpath(filename), text)
