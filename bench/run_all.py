"""Every benchmark in turn (`make bench`); each prints its own figures and ratio."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ["shapes.py", "workspaces.py", "adapter_dm.py", "conversations.py", "webhooks.py", "sending.py",
              "send_cost.py", "mcp_tools.py", "analytics.py", "automations.py",
              "broadcasts.py", "posts.py", "dashboard_inbox.py", "dashboard_studio.py", "csv_import.py", "polls.py",
              "retention.py", "metrics_cost.py", "growth.py"]

if __name__ == "__main__":
    failed = []
    for name in BENCHMARKS:
        print(f"\n== {name}", flush=True)
        if subprocess.run([sys.executable, str(HERE / name)], cwd=HERE.parent).returncode != 0:
            failed.append(name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")
