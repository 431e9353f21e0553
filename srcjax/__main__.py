"""``python -m srcjax``: the same command line as the ``srcjax`` console script."""

import sys

from srcjax.cli import main

if __name__ == "__main__":
    sys.exit(main())
