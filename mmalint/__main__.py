import sys

from mmalint.cli import main

sys.exit(main())
