"""The commands find the same data dir wherever they run, say which, refuse a port in use in one
line, and reset a sign-in."""

import socket
import subprocess
import sys
from pathlib import Path

from kit.settings import Settings
from service.identity import users
from storage.db import connection
from storage.models import User
from tests.support.live_server import free_port
from tests.support.processes import service_env, switchboard


def test_the_default_data_dir_does_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    beside_the_venv = Path(sys.prefix).resolve().parent / "data"
    for where in (tmp_path, tmp_path / "deeper"):
        where.mkdir(exist_ok=True)
        monkeypatch.chdir(where)
        assert Settings.from_env({"SWITCHBOARD_SECRET_KEY": "given"}).data_dir == beside_the_venv


def test_serve_on_a_port_in_use_says_so_in_one_line(service):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", free_port()))
        taken.listen()
        port = taken.getsockname()[1]
        answer = subprocess.run(switchboard("serve", "--port", str(port)), env=service_env(service),
                                capture_output=True, text=True, timeout=60)
    assert answer.returncode == 1
    errors = [line for line in answer.stderr.splitlines() if not line.startswith("switchboard: data dir")]
    assert errors == [f"error: 127.0.0.1:{port} is already in use (another switchboard?); choose another with "
                      f"--port, e.g. --port {port + 1}"]
    assert "API key" not in answer.stdout


def test_set_password_resets_a_sign_in_and_says_which_data_dir(service, tenant):
    with connection():
        email = User.get_by_id(tenant["userId"]).email
    env = service_env(service)
    done = subprocess.run(switchboard("users", "set-password", "--email", email.upper(), "--password", "a new one!"),
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"switchboard: data dir {service.data_dir} (SWITCHBOARD_DATA_DIR)" in done.stderr
    with connection():
        assert users.verify_password(email=email, password="a new one!") is not None
        assert users.verify_password(email=email, password="correct horse") is None
    unknown = subprocess.run(switchboard("users", "set-password", "--email", "nobody@example.com", "--password",
                                         "long enough"), env=env, capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 1 and "No user has that e-mail address." in unknown.stderr
    short = subprocess.run(switchboard("users", "set-password", "--email", email, "--password", "short"),
                           env=env, capture_output=True, text=True, timeout=60)
    assert short.returncode == 1 and "the password must be at least 8 characters long" in short.stderr
