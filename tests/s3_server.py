"""A real S3 server on loopback for the remote tests and the sync benchmark: moto's standalone server.

``moto_endpoint()`` starts one ``ThreadedMotoServer`` per process on 127.0.0.1
and a free port (later calls return the same endpoint); tests reach it over
real HTTP with boto3. Import the fixtures from here (``from s3_server import
...``); the lead owns tests/conftest.py.

One change to stock moto, and why: moto checks ``If-Match``/``If-None-Match``
on ``put_object`` (it answers 412 PreconditionFailed) but as check-then-write
in whichever server thread runs the request, so two simultaneous conditional
writes could in principle both pass the check. S3 and R2 make a conditional
write atomic, and that atomicity is what the push protocol relies on; the
server here therefore runs requests that carry a condition header one at a
time. Other requests (snapshot uploads) stay concurrent. In 300 rounds of 8
simultaneous conditional writers against stock moto 5.2.5 we saw no double
winner, so this closes a narrow window rather than a common one.

``auth_server()`` starts a separate moto process that enforces credentials
(moto's switch for that is process-global), for the wrong-credentials test.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import uuid

import boto3
import pytest
from botocore.config import Config
from moto.server import ThreadedMotoServer

DUMMY_KEY, DUMMY_SECRET, REGION = "testing", "testing", "us-east-1"
_lock = threading.Lock()
_endpoint: str | None = None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def closed_port() -> int:
    """A loopback port with nothing listening (bound then released)."""
    return free_port()


class LinearizableMotoServer(ThreadedMotoServer):
    """moto's threaded server with conditional writes serialised (see the module docstring)."""

    def _server_entry(self) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
        from werkzeug.serving import make_server

        inner = DomainDispatcherApplication(create_backend_app)
        cond = threading.Lock()

        def app(environ, start_response):
            if environ.get("HTTP_IF_MATCH") or environ.get("HTTP_IF_NONE_MATCH"):
                with cond:
                    return list(inner(environ, start_response))
            return inner(environ, start_response)

        self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()


def moto_endpoint() -> str:
    """Start (once per process) and return the loopback moto endpoint URL."""
    global _endpoint
    with _lock:
        if _endpoint is None:
            logging.getLogger("werkzeug").setLevel(logging.ERROR)
            port = free_port()
            server = LinearizableMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
            server.start()
            atexit.register(server.stop)
            _endpoint = f"http://127.0.0.1:{port}"
    return _endpoint


def client(endpoint: str, key: str = DUMMY_KEY, secret: str = DUMMY_SECRET):
    cfg = Config(request_checksum_calculation="when_required", response_checksum_validation="when_required")
    return boto3.session.Session().client(
        "s3", endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret, region_name=REGION, config=cfg
    )


def new_bucket(endpoint: str) -> str:
    name = f"t-{uuid.uuid4().hex[:20]}"
    client(endpoint).create_bucket(Bucket=name)
    return name


def set_s3_env(monkeypatch, endpoint: str, key: str = DUMMY_KEY, secret: str = DUMMY_SECRET) -> None:
    """Point remote.s3 at ``endpoint`` with the given credentials, hiding any real AWS config."""
    monkeypatch.setenv("TILES_S3_ENDPOINT", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture(scope="session")
def moto():
    """The endpoint URL of the shared loopback moto server."""
    return moto_endpoint()


@pytest.fixture
def s3_env(moto, monkeypatch):
    """Environment pointing boto3 at the moto server with dummy credentials; returns the endpoint."""
    set_s3_env(monkeypatch, moto)
    return moto


@pytest.fixture
def bucket(s3_env):
    """A fresh empty bucket on the moto server."""
    return new_bucket(s3_env)


@pytest.fixture(params=["file", "s3"])
def remote_url(request, tmp_path, monkeypatch):
    """A fresh empty remote of each kind: file:///<tmp>/remote and s3://<new bucket>/lib."""
    if request.param == "file":
        return f"file://{tmp_path / 'remote'}"
    set_s3_env(monkeypatch, moto_endpoint())
    return f"s3://{new_bucket(moto_endpoint())}/lib"


class AuthServer:
    """A moto server in its own process that checks credentials; ``key``/``secret`` are valid ones."""

    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError("moto auth server did not start") from None
                time.sleep(0.1)
        # The first three requests run unauthenticated: make a user, its key, and its policy.
        iam = boto3.session.Session().client(
            "iam",
            endpoint_url=self.endpoint,
            aws_access_key_id=DUMMY_KEY,
            aws_secret_access_key=DUMMY_SECRET,
            region_name=REGION,
        )
        iam.create_user(UserName="tiles")
        k = iam.create_access_key(UserName="tiles")["AccessKey"]
        self.key, self.secret = k["AccessKeyId"], k["SecretAccessKey"]
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        iam.put_user_policy(UserName="tiles", PolicyName="all", PolicyDocument=json.dumps(policy))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def auth_server():
    srv = AuthServer()
    yield srv
    srv.stop()
