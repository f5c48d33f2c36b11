"""Clients of the catalog service (``hms-catalog serve``): the REST client and a remote session."""

from __future__ import annotations

from hms_catalog.remote.client import SERVER_ENV, TOKEN_ENV, TOKEN_FILE, CatalogServiceClient, resolve_token
from hms_catalog.remote.session import RemoteSession
from hms_catalog.remote.values import decode_value, encode_value

__all__ = [
    "SERVER_ENV",
    "TOKEN_ENV",
    "TOKEN_FILE",
    "CatalogServiceClient",
    "RemoteSession",
    "decode_value",
    "encode_value",
    "resolve_token",
]
