import sys

from cuewrap.cli import main

sys.exit(main())
