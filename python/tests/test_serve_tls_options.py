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


def _crl(ca: trustme.CA, revoked: list[trustme.LeafCert], path) -> str:
    """A certificate revocation list from `ca` revoking `revoked`, written to `path`."""
    import datetime

    from cryptography.hazmat.primitives import hashes

    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem.bytes())
    ca_key = serialization.load_pem_private_key(ca.private_key_pem.bytes(), password=None)
    an_hour_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    builder = (x509.CertificateRevocationListBuilder().issuer_name(ca_cert.subject)
               .last_update(an_hour_ago).next_update(an_hour_ago + datetime.timedelta(days=1))
               .add_extension(x509.CRLNumber(1), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                   ca_key.public_key()), critical=False))
    for leaf in revoked:
        serial = x509.load_pem_x509_certificate(leaf.cert_chain_pems[0].bytes()).serial_number
        builder = builder.add_revoked_certificate(
            x509.RevokedCertificateBuilder().serial_number(serial)
            .revocation_date(an_hour_ago).build())
    crl = builder.sign(ca_key, hashes.SHA256())
    path.write_bytes(crl.public_bytes(serialization.Encoding.PEM))
    return str(path)


def test_a_client_certificate_revoked_by_the_crl_is_refused(serve, tmp_path):
    server_ca, client_ca = trustme.CA(), trustme.CA()
    chain, key = _write_cert(server_ca, tmp_path)
    authorities = tmp_path / "clients-ca.pem"
    client_ca.cert_pem.write_to_path(str(authorities))
    ours, revoked = client_ca.issue_cert("ours@example.org"), client_ca.issue_cert("gone@example.org")
    crl = _crl(client_ca, [revoked], tmp_path / "clients.crl.pem")
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", key,
                   "--ssl-ca-certs", str(authorities), "--ssl-cert-reqs", "2", "--ssl-crl", crl)
    assert _get(served, _context(server_ca, ours)).status_code == 200
    with pytest.raises(httpx.TransportError):
        _get(served, _context(server_ca, revoked))
    assert _get(served, _context(server_ca, ours)).status_code == 200, "still serving"


def test_ssl_version_5_offers_tls_1_2_only(serve, tmp_path):
    ca = trustme.CA()
    chain, key = _write_cert(ca, tmp_path)
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", key,
                   "--ssl-version", "5")
    tls = _get(served, _context(ca)).json()["extensions"]["tls"]
    assert tls["tls_version"] == 0x0303
    tls13_only = _context(ca)
    tls13_only.minimum_version = ssl.TLSVersion.TLSv1_3
    with pytest.raises(httpx.TransportError):
        _get(served, tls13_only)


def test_ssl_ciphers_name_the_suites_offered(serve, tmp_path):
    ca = trustme.CA()
    chain, key = _write_cert(ca, tmp_path)
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", key,
                   "--ssl-version", "5",
                   "--ssl-ciphers", "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305")
    tls = _get(served, _context(ca)).json()["extensions"]["tls"]
    # TLS_ECDHE_{RSA,ECDSA}_WITH_CHACHA20_POLY1305_SHA256; the client prefers AES-GCM ones.
    assert tls["cipher_suite"] in (0xCCA8, 0xCCA9)


def test_tls_version_cipher_and_crl_options_are_checked_at_start(tmp_path):
    chain, key = _write_cert(trustme.CA(), tmp_path)
    tls = ("--ssl-certfile", chain, "--ssl-keyfile", key)
    assert "TLS 1.2 and 1.3 only" in _start_fails(*tls, "--ssl-version", "3")
    unknown = _start_fails(*tls, "--ssl-ciphers", "RC4-MD5")
    assert 'unknown cipher suite "RC4-MD5"' in unknown
    assert "TLS_AES_128_GCM_SHA256" in unknown, "the error lists the suites offered"
    crl = _crl(trustme.CA(), [], tmp_path / "empty.crl.pem")
    assert "not asked for" in _start_fails(*tls, "--ssl-crl", crl)
    assert "no certificate revocation list" in _start_fails(
        *tls, "--ssl-ca-certs", chain, "--ssl-cert-reqs", "2", "--ssl-crl", chain)


def test_sighup_reads_the_revocation_lists_again(serve, tmp_path):
    server_ca, client_ca = trustme.CA(), trustme.CA()
    chain, key = _write_cert(server_ca, tmp_path)
    authorities = tmp_path / "clients-ca.pem"
    client_ca.cert_pem.write_to_path(str(authorities))
    ours = client_ca.issue_cert("ours@example.org")
    crl = _crl(client_ca, [], tmp_path / "clients.crl.pem")
    served = serve("asgi_raw:app", "--ssl-certfile", chain, "--ssl-keyfile", key,
                   "--ssl-ca-certs", str(authorities), "--ssl-cert-reqs", "2", "--ssl-crl", crl)
    assert _get(served, _context(server_ca, ours)).status_code == 200
    _crl(client_ca, [ours], tmp_path / "clients.crl.pem")
    served.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while "TLS certificate reloaded" not in served.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    with pytest.raises(httpx.TransportError):
        _get(served, _context(server_ca, ours))
