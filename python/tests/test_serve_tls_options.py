"""uvicorn's other TLS options on `vireo serve`: a password-protected key
(`--ssl-keyfile-password`), client certificates (`--ssl-ca-certs`, `--ssl-cert-reqs`) shown to
the app in ASGI's `tls` extension, and the certificate read again on SIGHUP, in every
worker."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time

import httpx
import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from conftest import APPS


def _write_cert(ca: trustme.CA, folder, name: str = "server") -> tuple[str, str]:
    cert = ca.issue_cert("127.0.0.1", "localhost")
    chain, key = folder / f"{name}-chain.pem", folder / f"{name}-key.pem"
    chain.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    key.write_bytes(cert.private_key_pem.bytes())
    return str(chain), str(key)


def _context(ca: trustme.CA, client_cert: trustme.LeafCert | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    if client_cert is not None:
        client_cert.configure_cert(context)
    return context


def _get(served, context: ssl.SSLContext) -> httpx.Response:
    with httpx.Client(verify=context, timeout=10) as client:
        return client.get(f"https://{served.host}:{served.port}/scope")


def _start_fails(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "vireo", "serve", "asgi_raw:app", "--port", "0",
                           *args], cwd=APPS, capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert "listening on" not in proc.stdout
    return proc.stderr


def test_an_encrypted_key_is_opened_with_its_password(serve, tmp_path):
    ca = trustme.CA()
    chain, key = _write_cert(ca, tmp_path)
    private = serialization.load_pem_private_key(open(key, "rb").read(), password=None)
    encrypted = tmp_path / "encrypted-key.pem"
    encrypted.write_bytes(private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"open sesame"),
    ))
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", str(encrypted),
                   "--ssl-keyfile-password", "open sesame")
    assert _get(served, _context(ca)).status_code == 200

    wrong = _start_fails("--ssl-certfile", chain, "--ssl-keyfile", str(encrypted),
                         "--ssl-keyfile-password", "guess")
    assert "wrong password" in wrong
    missing = _start_fails("--ssl-certfile", chain, "--ssl-keyfile", str(encrypted))
    assert "encrypted" in missing and "password" in missing


def test_a_required_client_certificate_is_checked_against_the_authorities(serve, tmp_path):
    server_ca, client_ca, stranger_ca = trustme.CA(), trustme.CA(), trustme.CA()
    chain, key = _write_cert(server_ca, tmp_path)
    authorities = tmp_path / "clients-ca.pem"
    client_ca.cert_pem.write_to_path(str(authorities))
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", key,
                   "--ssl-ca-certs", str(authorities), "--ssl-cert-reqs", "2")
    ours = client_ca.issue_cert("client@example.org")
    tls = _get(served, _context(server_ca, ours)).json()["extensions"]["tls"]
    shown = [ssl.PEM_cert_to_DER_cert(pem) for pem in tls["client_cert_chain"]]
    assert shown[0] == ssl.PEM_cert_to_DER_cert(ours.cert_chain_pems[0].bytes().decode())
    assert tls["tls_version"] in (0x0303, 0x0304) and tls["cipher_suite"] > 0
    subject = x509.load_pem_x509_certificate(ours.cert_chain_pems[0].bytes()).subject
    assert tls["client_cert_name"] == subject.rfc4514_string()
    assert tls["client_cert_error"] is None
    for refused in (_context(server_ca), _context(server_ca, stranger_ca.issue_cert("x@y.org"))):
        with pytest.raises(httpx.TransportError):
            _get(served, refused)
    assert _get(served, _context(server_ca, ours)).status_code == 200, "still serving"


def test_an_optional_client_certificate_may_be_left_out(serve, tmp_path):
    server_ca, client_ca = trustme.CA(), trustme.CA()
    chain, key = _write_cert(server_ca, tmp_path)
    authorities = tmp_path / "clients-ca.pem"
    client_ca.cert_pem.write_to_path(str(authorities))
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", key,
                   "--ssl-ca-certs", str(authorities), "--ssl-cert-reqs", "1")
    without = _get(served, _context(server_ca)).json()["extensions"]["tls"]
    assert (without["client_cert_chain"], without["client_cert_name"]) == ([], None)
    ours = client_ca.issue_cert("client@example.org")
    with_cert = _get(served, _context(server_ca, ours)).json()["extensions"]["tls"]
    first = ssl.PEM_cert_to_DER_cert(with_cert["client_cert_chain"][0])
    assert first == ssl.PEM_cert_to_DER_cert(ours.cert_chain_pems[0].bytes().decode())


def test_client_certificate_options_are_checked_at_start(tmp_path):
    chain, key = _write_cert(trustme.CA(), tmp_path)
    no_authorities = _start_fails("--ssl-certfile", chain, "--ssl-keyfile", key,
                                  "--ssl-cert-reqs", "2")
    assert "ssl_ca_certs" in no_authorities
    without_tls = _start_fails("--ssl-ca-certs", chain, "--ssl-cert-reqs", "2")
    assert "need ssl_certfile and ssl_keyfile" in without_tls


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sighup_reloads_the_certificate_in_every_worker(serve, tmp_path, workers):
    old_ca, new_ca = trustme.CA(), trustme.CA()
    chain, key = _write_cert(old_ca, tmp_path)
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", key,
                   "--workers", workers)
    assert _get(served, _context(old_ca)).status_code == 200

    new_chain, new_key = _write_cert(new_ca, tmp_path, "new")
    open(chain, "wb").write(open(new_chain, "rb").read())
    open(key, "wb").write(open(new_key, "rb").read())
    served.proc.send_signal(signal.SIGHUP)
    # Each worker reloads, and with several so does the supervisor, for workers it forks later.
    expected = 1 if workers == "1" else int(workers) + 1
    deadline = time.monotonic() + 10
    while served.log().count("TLS certificate reloaded") < expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert served.log().count("TLS certificate reloaded") == expected, served.log()
    if workers != "1":
        # A worker forked after the reload starts with the new certificate too.
        pid = served.proc.pid
        children = open(f"/proc/{pid}/task/{pid}/children").read().split()
        os.kill(int(children[0]), signal.SIGKILL)
        while "starting another" not in served.log() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
    # New connections (to whichever worker takes them) get the new certificate.
    for _ in range(6):
        assert _get(served, _context(new_ca)).status_code == 200
    with pytest.raises(httpx.ConnectError):
        _get(served, _context(old_ca))
    assert served.proc.poll() is None, "SIGHUP does not stop the server"


def test_a_bad_file_at_sighup_keeps_the_current_certificate(serve, tmp_path):
    ca = trustme.CA()
    chain, key = _write_cert(ca, tmp_path)
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", key)
    open(key, "w").write("not a key\n")
    served.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while "TLS not reloaded" not in served.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "keeping the current certificate" in served.log()
    assert "key.pem" in served.log(), "the error names the file"
    assert _get(served, _context(ca)).status_code == 200
