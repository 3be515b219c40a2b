"""Who may connect, and TLS: the token decision for WebSocket clients and (self-signed) certificates."""

from __future__ import annotations

import datetime
import hmac
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

AUTH_MODES = ("auto", "always")


@dataclass(frozen=True)
class AuthDecision:
    """Outcome of ``check_authorization``: allowed or not, and why (recorded in the transcript)."""

    allowed: bool
    reason: str


def is_loopback(address: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 and IPv4-mapped loopback; False for anything unparsable (fail closed)."""
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def token_matches(authorization: str | None, token: str) -> bool:
    """Does the header carry ``token`` the way the firmware sends it?

    The firmware prefixes ``Bearer `` only when the token has no space, else sends the token verbatim.
    """
    if not authorization or not token:
        return False
    expected = token if " " in token else f"Bearer {token}"
    # aiohttp decodes header bytes that are not UTF-8 with surrogateescape: compare the original bytes
    return hmac.compare_digest(authorization.encode("utf-8", "surrogateescape"), expected.encode())


def check_authorization(remote: str | None, authorization: str | None, token: str | None, mode: str = "auto") -> AuthDecision:
    """Decide whether a WebSocket client may connect.

    ``auto`` (default): loopback clients are trusted; every other client needs a configured token and must
    present it. ``always``: every client must present the token. No token configured means off-loopback
    clients are refused.
    """
    if mode not in AUTH_MODES:
        raise ValueError(f"auth mode {mode!r} must be one of {AUTH_MODES}")
    loopback = is_loopback(remote)
    if mode == "auto" and loopback:
        return AuthDecision(True, "loopback client")
    if not token:
        return AuthDecision(False, f"client {remote} is not loopback and the server has no token configured")
    if authorization is None:
        return AuthDecision(False, f"client {remote} sent no Authorization header")
    if not token_matches(authorization, token):
        return AuthDecision(False, f"client {remote} sent a wrong token")
    return AuthDecision(True, "valid token")


def make_self_signed(directory: str | Path, hostnames: list[str] | None = None, days: int = 30) -> tuple[Path, Path]:
    """Write a self-signed EC P-256 certificate and key for localhost/127.0.0.1/::1 (+ ``hostnames``).

    Returns (cert_path, key_path). Clients trust it by loading cert_path as their CA file.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    from xzbuild.core.fsutil import atomic_write_bytes

    names = ["localhost", "127.0.0.1", "::1", *(hostnames or [])]
    san: list[x509.GeneralName] = []
    for name in dict.fromkeys(names):
        try:
            san.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            san.append(x509.DNSName(name))
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "xzbuild reference server")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    out = Path(directory)
    cert_path, key_path = out / "server-cert.pem", out / "server-key.pem"
    atomic_write_bytes(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    atomic_write_bytes(
        key_path,
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )
    key_path.chmod(0o600)
    return cert_path, key_path


def server_ssl_context(cert: str | Path, key: str | Path) -> ssl.SSLContext:
    """TLS server context from PEM files."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    return ctx


def client_ssl_context(cafile: str | Path) -> ssl.SSLContext:
    """TLS client context that trusts ``cafile`` (e.g. the generated self-signed certificate)."""
    return ssl.create_default_context(cafile=str(cafile))
