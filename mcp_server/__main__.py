import sys

from mcp_server.cli import main

sys.exit(main())
