"""compose.yaml, as a compose tool reads it: the scale-out setup with its volumes and health checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = Path(sys.executable).parent / "podman-compose"


def _config(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(COMPOSE), "-f", str(ROOT / "compose.yaml"), "config"], capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", **env})


def test_compose_runs_two_apis_two_workers_postgres_redis_and_a_sandbox():
    read = _config(SWITCHBOARD_SECRET_KEY="k", POSTGRES_PASSWORD="p")
    assert read.returncode == 0, read.stderr
    services = yaml.safe_load(read.stdout)["services"]
    assert set(services) == {"postgres", "redis", "api-1", "api-2", "worker-1", "worker-2", "sandbox"}
    for name in ("api-1", "api-2"):
        assert services[name]["command"][0] == "serve" and "--no-worker" in services[name]["command"]
        assert "/v1/health/ready" in " ".join(services[name]["healthcheck"]["test"])
    assert services["worker-1"]["command"] == ["worker"] == services["worker-2"]["command"]
    assert services["sandbox"]["command"][:2] == ["sandbox", "serve"]
    for name in ("api-1", "api-2", "worker-1", "worker-2", "sandbox"):
        env = services[name]["environment"]
        assert env["SWITCHBOARD_DATABASE_URL"].startswith("postgresql://")
        assert env["SWITCHBOARD_QUEUE_URL"].startswith("redis://")
        assert "switchboard-data:/data" in services[name]["volumes"]
    assert all("healthcheck" in services[name] for name in ("postgres", "redis", "sandbox"))


def test_compose_refuses_to_start_without_a_secret_key():
    read = _config(POSTGRES_PASSWORD="p")
    assert read.returncode != 0
    assert "SWITCHBOARD_SECRET_KEY" in read.stderr
