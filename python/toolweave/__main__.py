"""``python -m toolweave``: the same commands as the ``toolweave`` console script."""

import sys

from toolweave.cli import main

sys.exit(main())
