"""Bearer JWTs as API keys (`[auth.oidc]`) through the official OpenAI
Python SDK: the token is the `api_key`. A local JWKS server (http.server in
a thread) publishes an RSA key made with openssl; tokens are signed here
with openssl (RS256). A good token creates and reads responses of its
tenant, a tampered or expired one is the SDK's AuthenticationError, and a
static key keeps working beside them."""

import base64
import http.server
import json
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from openai import AuthenticationError, NotFoundError, OpenAI

from conftest import Windlass

ISSUER = "https://login.example.test/"
AUDIENCE = "windlass"


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class Issuer:
    """An RSA key (openssl) and its JWKS, served on loopback."""

    def __init__(self, tmp: Path):
        self.key = tmp / "issuer.pem"
        subprocess.run(["openssl", "genrsa", "-out", str(self.key), "2048"], check=True, capture_output=True)
        modulus = subprocess.run(
            ["openssl", "rsa", "-in", str(self.key), "-noout", "-modulus"],
            check=True, capture_output=True, text=True,
        ).stdout.strip().removeprefix("Modulus=")
        jwks = {"keys": [{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
                          "n": b64(bytes.fromhex(modulus)), "e": "AQAB"}]}
        body = json.dumps(jwks).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def sign(self, claims: dict) -> str:
        header = b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "k1"}).encode())
        payload = b64(json.dumps(claims).encode())
        signing_input = f"{header}.{payload}".encode()
        signature = subprocess.run(
            ["openssl", "dgst", "-sha256", "-sign", str(self.key)],
            input=signing_input, check=True, capture_output=True,
        ).stdout
        return f"{header}.{payload}.{b64(signature)}"

    def close(self):
        self.server.shutdown()


def claims(org: str, ttl: int = 600) -> dict:
    now = int(time.time())
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": f"dev@{org}", "org_id": org,
            "scope": "openid responses:read responses:write", "iat": now, "exp": now + ttl}


@pytest.fixture(scope="module")
def gateway(fake):
    tmp = tempfile.TemporaryDirectory()
    issuer = Issuer(Path(tmp.name))
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        '[server]\napi_keys = ["sk-static"]\n\n'
        f'[auth.oidc]\nissuer = "{ISSUER}"\njwks_url = "{issuer.url}"\n'
        f'audience = "{AUDIENCE}"\ntenant_claim = "org_id"\n'
    )
    w = Windlass(fake.upstream, "--config", str(config))
    yield w, issuer
    w.close()
    issuer.close()
    tmp.cleanup()


def sdk(base: str, key: str) -> OpenAI:
    return OpenAI(base_url=base + "/v1", api_key=key, max_retries=0)


def test_a_jwt_is_an_api_key_of_its_tenant(gateway, fake):
    w, issuer = gateway
    acme = sdk(w.base, issuer.sign(claims("acme")))
    fake.script({"text": "Hello from acme."})
    created = acme.responses.create(model="m", input="hi")
    assert created.output_text == "Hello from acme."
    assert acme.responses.retrieve(created.id).id == created.id
    # Another tenant's token, and the static key (default tenant): unknown.
    with pytest.raises(NotFoundError):
        sdk(w.base, issuer.sign(claims("globex"))).responses.retrieve(created.id)
    with pytest.raises(NotFoundError):
        sdk(w.base, "sk-static").responses.retrieve(created.id)
    # The static key still creates.
    fake.script({"text": "Hello, static."})
    assert sdk(w.base, "sk-static").responses.create(model="m", input="hi").output_text == "Hello, static."


def test_bad_tokens_are_authentication_errors(gateway):
    w, issuer = gateway
    good = issuer.sign(claims("acme"))
    header, payload, signature = good.split(".")
    forged = json.loads(base64.urlsafe_b64decode(payload + "=="))
    forged["org_id"] = "globex"
    tampered = f"{header}.{b64(json.dumps(forged).encode())}.{signature}"
    expired = issuer.sign(claims("acme", ttl=-300))
    wrong_audience = issuer.sign({**claims("acme"), "aud": "elsewhere"})
    none = f"{b64(json.dumps({'alg': 'none', 'kid': 'k1'}).encode())}.{payload}."
    messages = set()
    for token in (tampered, expired, wrong_audience, none):
        with pytest.raises(AuthenticationError) as err:
            sdk(w.base, token).responses.create(model="m", input="hi")
        assert err.value.status_code == 401
        assert err.value.code == "invalid_api_key"
        messages.add(err.value.message)
    assert len(messages) == 1, messages
