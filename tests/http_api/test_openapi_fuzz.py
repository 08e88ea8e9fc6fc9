"""A bounded schemathesis run over our own OpenAPI document: no 5xx, no answer that breaks it."""

import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from mcp_server.app import create_app
from tests.support.factories import add_account, add_profile
from tests.support.live_server import live_server

CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "negative_data_rejection",
])


def test_schemathesis_finds_no_server_error_and_no_broken_answer(service, tenant, tmp_path):
    add_account(tenant["workspaceId"], tenant["profileId"])
    add_profile(tenant["workspaceId"])
    unlimited = replace(service, rate_limit_per_minute=1_000_000)
    executable = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert executable
    port = int(unlimited.base_url.rsplit(":", 1)[1])  # the sandbox platforms live on this server
    with live_server(create_app(unlimited, worker=False), port=port) as url:
        run = subprocess.run(
            [executable, "run", f"{url}/v1/openapi.json", "--url", url,
             "-H", f"Authorization: Bearer {tenant['apiKey']}",
             "--checks", CHECKS, "--phases", "examples,coverage,fuzzing",
             "--max-examples", "25", "--seed", "20261121", "--workers", "2",
             "--exclude-path", "/api-keys/{id}",  # revoking the fuzzer's own key would end the run
             "--request-timeout", "10", "--no-color", "--warnings", "off",
             "--generation-database", "none"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,
        )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
