"""The file stage's old name, for `fixes/fixer.py`, which still imports it from here: the stage
is `mmalint.pipeline.file`. Delete this module once `fixes/fixer.py` imports that."""

from mmalint.pipeline.file import LintOptions as LintOptions
from mmalint.pipeline.file import lint_text as lint_text
