"""``python -m pipeline``: see ``pipeline/cli/cli.py``."""

import sys

from pipeline.cli.cli import main

sys.exit(main())
