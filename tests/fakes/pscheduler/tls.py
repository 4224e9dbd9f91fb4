"""A throwaway self-signed certificate for the fake node, made with the openssl CLI.

Real perfSONAR nodes usually present a self-signed certificate, so Fathom pins it by the SHA-256
of its DER encoding; the fake exposes exactly that fingerprint.
"""

from __future__ import annotations

import hashlib
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SelfSignedCert:
    cert_path: Path
    key_path: Path

    @property
    def pem(self) -> str:
        return self.cert_path.read_text()

    @property
    def fingerprint_sha256(self) -> str:
        """Lower-case hex SHA-256 of the certificate's DER bytes (no colons)."""
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(self.pem)).hexdigest()

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_path, self.key_path)
        return context

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts only this certificate (what a pinned client does)."""
        context = ssl.create_default_context(cafile=str(self.cert_path))
        return context


def make_self_signed(directory: Path, common_name: str = "127.0.0.1") -> SelfSignedCert:
    """Creates cert.pem/key.pem in directory (kept if both exist, so restarts keep the fingerprint)."""
    directory.mkdir(parents=True, exist_ok=True)
    cert = SelfSignedCert(directory / "cert.pem", directory / "key.pem")
    if cert.cert_path.exists() and cert.key_path.exists():
        return cert
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "30",
            "-subj",
            f"/CN={common_name}",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(cert.key_path),
            "-out",
            str(cert.cert_path),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert
