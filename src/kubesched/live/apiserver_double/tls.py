"""Certificates for serving the double over HTTPS, made with the ``openssl`` command.

``make_certificates(directory)`` writes a CA and a server certificate it signed
for ``server_name`` only (a DNS name, no IP address: a client dialling
127.0.0.1 must ask for that name, as kubeconfig's ``tls-server-name`` does) and
returns their paths; ``server_context()`` is the ``tls`` argument of
``ApiServerDouble`` and ``kubeconfig_cluster()`` the matching fields of a
kubeconfig's cluster entry. ``OSError`` when ``openssl`` is missing or fails.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SERVER_NAME: Final = "double.test"
_KEY: Final = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")


@dataclass(frozen=True, slots=True)
class Certificates:
    """A CA (``ca``: its certificate) and a server certificate and key it signed."""

    ca: Path
    cert: Path
    key: Path
    server_name: str

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context

    def kubeconfig_cluster(self) -> dict[str, str]:
        return {"certificate-authority": str(self.ca), "tls-server-name": self.server_name}


def make_certificates(
    directory: Path, name: str = "ca", server_name: str = SERVER_NAME
) -> Certificates:
    """``name.crt`` (a CA) and ``name-server.crt``/``.key`` for ``server_name``,
    valid two days, in ``directory``."""
    if shutil.which("openssl") is None:
        raise OSError("the openssl command is needed to make certificates")
    # Python 3.13's default client context verifies strictly (VERIFY_X509_STRICT):
    # the CA needs a critical basicConstraints and keyUsage, and both certificates
    # need key identifiers, so every extension is written out here.
    (directory / "ca.ext").write_text(
        "basicConstraints=critical,CA:TRUE\n"
        "keyUsage=critical,keyCertSign,cRLSign\n"
        "subjectKeyIdentifier=hash\n"
    )
    (directory / "server.ext").write_text(
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid,issuer\n"
        f"subjectAltName=DNS:{server_name}\n"
    )
    for args in (
        ("req", *_KEY, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}"),
        ("x509", "-req", "-in", f"{name}.csr", "-signkey", f"{name}.key", "-out", f"{name}.crt",
         "-days", "2", "-extfile", "ca.ext"),
        ("req", *_KEY, "-keyout", f"{name}-server.key", "-out", f"{name}-server.csr",
         "-subj", f"/CN={server_name}"),
        ("x509", "-req", "-in", f"{name}-server.csr", "-CA", f"{name}.crt", "-CAkey",
         f"{name}.key", "-CAcreateserial", "-out", f"{name}-server.crt", "-days", "2",
         "-extfile", "server.ext"),
    ):  # fmt: skip
        done = subprocess.run(
            ["openssl", *args], cwd=directory, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise OSError(f"openssl {args[0]}: {done.stderr.strip()}")
    return Certificates(
        directory / f"{name}.crt",
        directory / f"{name}-server.crt",
        directory / f"{name}-server.key",
        server_name,
    )
