"""``python -m kpass.cli``: the ``kpass`` command."""

import sys

from kpass.cli import main

sys.exit(main())
