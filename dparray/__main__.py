"""``python -m dparray``: see ``dparray.cli``."""

import sys

from dparray.cli import main

if __name__ == "__main__":
    sys.exit(main())
