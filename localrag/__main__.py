"""`python -m localrag` is the `localrag` command."""

import sys

from localrag.cli import main

sys.exit(main())
