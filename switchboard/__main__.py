import sys

from switchboard.cli import main

sys.exit(main())
