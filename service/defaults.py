"""Defaults of ``hms-catalog serve``'s settings, in a module that imports nothing.

Every CLI start builds the ``serve`` command's arguments (the CLI finds it through an entry point) and shows these
defaults in their help; the modules that use them import FastAPI, uvicorn and the thrift server, which took half a
second of every ``hms-catalog -e ...`` run before any statement ran. So the defaults live here, and the modules
that serve import them from here.
"""

from __future__ import annotations

__all__ = ["ALL_PROTECTIONS", "DEFAULT_HOST", "DEFAULT_PORT", "DEFAULT_PRIMARY", "DEFAULT_THREADS", "INSECURE_EXPOSES",
           "PLAN_WAIT_SECONDS", "THRIFT_INSECURE_ENV"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8181
PLAN_WAIT_SECONDS = 5.0  # how long an Iceberg REST plan request waits for its plan before answering ``submitted``
# The SASL security layers (RFC 4752) a Kerberized thrift endpoint offers, by the names SASL gives them.
ALL_PROTECTIONS: tuple[str, ...] = ("auth-conf", "auth-int", "auth")
DEFAULT_PRIMARY = "hive"  # the thrift endpoint's catalog whose databases keep their names
DEFAULT_THREADS = 64  # thrift clients served at once
THRIFT_INSECURE_ENV = "HMS_CATALOG_THRIFT_INSECURE"
INSECURE_EXPOSES = ("authenticates no client: whoever reaches it reads every catalog of this service and changes "
                    "those with 'thrift.access'='write'")
