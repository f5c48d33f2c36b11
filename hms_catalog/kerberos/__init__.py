"""Kerberos for metastore connections: the catalog properties, keytab checks, and renewing logins."""

from __future__ import annotations

from hms_catalog.kerberos.config import KerberosConfig, canonical_host_name
from hms_catalog.kerberos.keytab import KeytabFormatError, keytab_principals
from hms_catalog.kerberos.login import KerberosLogin

__all__ = ["KerberosConfig", "KerberosLogin", "KeytabFormatError", "canonical_host_name", "keytab_principals"]
