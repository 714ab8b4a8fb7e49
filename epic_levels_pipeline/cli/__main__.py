"""``python -m epic_levels_pipeline.cli``: the same as ``epic-levels``."""

import sys

from . import main

sys.exit(main())
