"""The service's bearer token: where it comes from and how a request's is checked.

On first start a random token is written to ``<home>/server.token`` (0600), so local clients of the
same home find it with no configuration; ``--token-file`` names another. Comparison is constant-time.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from hms_catalog._private import private_directory
from hms_catalog.errors import ConfigurationError
from hms_catalog.remote import TOKEN_FILE

__all__ = ["MIN_TOKEN_LENGTH", "bearer_token", "load_token", "token_matches"]

MIN_TOKEN_LENGTH = 16
_MIN_LENGTH = MIN_TOKEN_LENGTH


def load_token(home: Path, token_file: Path | None = None) -> tuple[str, Path]:
    """The token and the file it is in: ``token_file`` as given, else the home's, made on first use."""
    if token_file is not None:
        try:
            token = token_file.expanduser().read_text(encoding="utf-8").strip()
        except OSError as error:
            raise ConfigurationError(f"--token-file {token_file}: cannot read it: {error.strerror}") from error
        if len(token) < _MIN_LENGTH:
            raise ConfigurationError(f"--token-file {token_file}: the token must be at least {_MIN_LENGTH} characters")
        return token, token_file
    path = home / TOKEN_FILE
    private_directory(home)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        token = path.read_text(encoding="utf-8").strip()
        if len(token) < _MIN_LENGTH:
            raise ConfigurationError(f"{path}: the token must be at least {_MIN_LENGTH} characters") from None
        return token, path
    token = "hmsc" + secrets.token_urlsafe(32)  # never starting with '-', which a command line would take for an option
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token, path


def bearer_token(header: str | None) -> bytes | None:
    """The token an ``Authorization: Bearer <token>`` header carries, as bytes to compare in constant time."""
    if not header:
        return None
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return given.strip().encode("utf-8")


def token_matches(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries ``token`` as a bearer token (constant-time)."""
    given = bearer_token(header)
    return given is not None and hmac.compare_digest(given, token.encode("utf-8"))
