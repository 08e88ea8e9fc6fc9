"""A bounded schemathesis run over our own OpenAPI document: no 5xx, no answer that breaks it.

The fuzzer's own strings are widened (non-ASCII text) and its bodies mutated by
`tests/support/fuzz_hooks.py` (lone surrogate escapes, integers of thousands of digits, non-ASCII
digits in queries). `/oauth/register`, which is open to anyone and outside `/v1`, is fuzzed from a
small OpenAPI document of its own.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from kit import net
from switchboard.app import create_app
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


REPO = Path(__file__).resolve().parents[2]


def _schemathesis(schema: str, url: str, cwd: Path, *options: str) -> subprocess.CompletedProcess[str]:
    executable = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert executable
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.support.fuzz_hooks",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [executable, "run", schema, "--url", url, *options,
         "--generation-codec", "utf-8", "--seed", "20261121", "--workers", "2",
         "--request-timeout", "10", "--no-color", "--warnings", "off", "--generation-database", "none"],
        capture_output=True, text=True, timeout=600, cwd=cwd, env=env,
    )


# Every /v1 operation, fuzzed: longer than the suite's default limit on a loaded two-core machine (the
# run itself is bounded by its own subprocess timeout).
@pytest.mark.timeout(420)
def test_schemathesis_finds_no_server_error_and_no_broken_answer(service, tenant, tmp_path, monkeypatch):
    # The fuzzer's URLs (a media import's, a webhook endpoint's) name hosts on the Internet: no name
    # resolves here, so the run never waits on a name server or a remote host it cannot control.
    monkeypatch.setattr(net, "_getaddrinfo", _no_name_resolves)
    add_account(tenant["workspaceId"], tenant["profileId"])
    add_profile(tenant["workspaceId"])
    unlimited = replace(service, rate_limit_per_minute=1_000_000)
    port = int(unlimited.base_url.rsplit(":", 1)[1])  # the sandbox platforms live on this server
    with live_server(create_app(unlimited, worker=False), port=port) as url:
        run = _schemathesis(
            f"{url}/v1/openapi.json", url, tmp_path,
            "-H", f"Authorization: Bearer {tenant['apiKey']}",
            "--checks", CHECKS, "--phases", "examples,coverage,fuzzing", "--max-examples", "10",
            "--exclude-path", "/v1/api-keys/{id}",  # revoking the fuzzer's own key would end the run
        )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def _no_name_resolves(host: str, port: int) -> list[object]:
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


STRING_LIST = {"type": "array", "items": {"type": "string"}}
REGISTER_DOCUMENT = {
    "openapi": "3.1.0",
    "info": {"title": "Switchboard OAuth dynamic client registration", "version": "1.0.0"},
    "paths": {"/oauth/register": {"post": {
        "operationId": "registerClient",
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object",
            "properties": {
                "redirect_uris": {**STRING_LIST, "minItems": 1, "maxItems": 10},
                "client_name": {"type": "string", "maxLength": 200},
                "scope": {"type": "string"},
                "token_endpoint_auth_method": {"type": "string",
                                               "enum": ["none", "client_secret_basic", "client_secret_post"]},
                "grant_types": STRING_LIST, "response_types": STRING_LIST, "contacts": STRING_LIST,
                "client_uri": {"type": "string"}, "logo_uri": {"type": "string"},
                "software_id": {"type": "string"}, "software_version": {"type": "string"},
            },
            "required": ["redirect_uris"],
        }}}},
        "responses": {
            "201": {"description": "Registered.", "content": {"application/json": {"schema": {"type": "object"}}}},
            "400": {"description": "invalid_client_metadata.",
                    "content": {"application/json": {"schema": {"type": "object", "required": ["error"]}}}},
        },
    }}},
}


def test_schemathesis_finds_no_server_error_in_open_client_registration(service, tmp_path):
    document = tmp_path / "oauth-register.json"
    document.write_text(json.dumps(REGISTER_DOCUMENT))
    port = int(service.base_url.rsplit(":", 1)[1])
    with live_server(create_app(service, worker=False), port=port) as url:
        run = _schemathesis(str(document), url, tmp_path,
                            "--checks", "not_a_server_error,status_code_conformance,content_type_conformance",
                            "--phases", "coverage,fuzzing", "--max-examples", "60")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
