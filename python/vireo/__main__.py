"""`python -m vireo serve MODULE:ATTR`."""

import sys

from .cli import main

sys.exit(main())
