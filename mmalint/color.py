"""`mmalint.cli.color`'s old name, for `confirm/cli.py`, which still imports `use_color` from
here. Delete this module once it imports `mmalint.cli.color`."""

from mmalint.cli.color import use_color as use_color
