import sys

from tog_core.cli.main import main

sys.exit(main())
