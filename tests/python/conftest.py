"""Fixtures: the real `windlass` binary in front of the scripted upstream process."""

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("WINDLASS_BIN_DIR", ROOT / "target" / "debug"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, timeout: float = 20.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


class Fake:
    """The scripted upstream process (and optionally an in-process gateway with a mock `add` tool)."""

    def __init__(self, *args: str):
        self.proc = subprocess.Popen(
            [str(BIN / "windlass-fake-upstream"), *args],
            stdout=subprocess.PIPE,
            text=True,
        )
        info = json.loads(self.proc.stdout.readline())
        self.upstream = info["upstream"]
        self.control = info["control"]
        self.gateway = info["gateway"]

    def _post(self, path: str, body) -> None:
        req = urllib.request.Request(
            self.control + path,
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        urllib.request.urlopen(req, timeout=5).close()

    def script(self, *replies: dict) -> None:
        self._post("/replies", list(replies))

    def requests(self) -> list:
        with urllib.request.urlopen(self.control + "/requests", timeout=5) as r:
            return json.load(r)

    def request_headers(self) -> list:
        with urllib.request.urlopen(self.control + "/request_headers", timeout=5) as r:
            return json.load(r)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


class Windlass:
    """`windlass serve` as a user runs it."""

    def __init__(self, upstream: str, *extra: str):
        self.tmp = tempfile.TemporaryDirectory()
        port = _free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [
                str(BIN / "windlass"),
                "serve",
                "--upstream",
                upstream,
                "--listen",
                f"127.0.0.1:{port}",
                "--db",
                str(Path(self.tmp.name) / "windlass.db"),
                *extra,
            ],
            env={**os.environ, "RUST_LOG": "warn"},
        )
        _wait_http(self.base + "/health")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.tmp.cleanup()


@pytest.fixture(scope="module")
def fake():
    f = Fake()
    yield f
    f.close()


@pytest.fixture(scope="module")
def windlass(fake):
    w = Windlass(fake.upstream)
    yield w
    w.close()


@pytest.fixture(scope="module")
def client(windlass):
    from openai import OpenAI

    return OpenAI(base_url=windlass.base + "/v1", api_key="test", max_retries=0)
