"""A secure embedded metastore's settings: its principal, keytab and krb5.conf, and the client login its
readiness probe uses."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hms_catalog.errors import ConfigurationError, EmbeddedMetastoreError
from hms_catalog.kerberos.config import (
    CLIENT_KEYTAB,
    CLIENT_PRINCIPAL,
    HOST_PATTERN,
    SASL_ENABLED,
    SERVICE_PRINCIPAL,
    KerberosConfig,
    canonical_host_name,
)

__all__ = ["MetastoreKerberos"]


@dataclass(frozen=True)
class MetastoreKerberos:
    """What a secure embedded metastore needs: its service principal and keytab, and the krb5.conf its JVM
    reads (default: ``KRB5_CONFIG``, else ``/etc/krb5.conf``; Python clients read ``KRB5_CONFIG`` too).

    ``_HOST`` in the principal becomes the canonical name of 127.0.0.1 (``localhost`` on most machines),
    which is what a client given ``hive/_HOST@REALM`` and ``thrift://127.0.0.1:port`` asks for.
    """

    principal: str
    keytab: Path
    krb5_conf: Path | None = None

    @property
    def server_principal(self) -> str:
        return self.principal.replace(HOST_PATTERN, canonical_host_name("127.0.0.1"))

    @property
    def krb5_conf_path(self) -> Path:
        return self.krb5_conf or Path(os.environ.get("KRB5_CONFIG", "/etc/krb5.conf"))

    def client_config(self) -> KerberosConfig:
        """The server's own principal as a client: the readiness probe logs in with it from the keytab.
        EmbeddedMetastoreError when the principal is malformed or the keytab does not hold it."""
        props = {SASL_ENABLED: "true", SERVICE_PRINCIPAL: self.principal, CLIENT_PRINCIPAL: self.server_principal,
                 CLIENT_KEYTAB: str(self.keytab)}
        try:
            config = KerberosConfig.from_properties(props)
            assert config is not None
            config.check_files()
        except ConfigurationError as error:
            raise EmbeddedMetastoreError(f"cannot run the metastore secure: {error}") from None
        return config
