"""Which property values are secrets, and how they are shown: the one rule every place that shows, logs or
sends properties uses (SHOW CREATE CATALOG, JSON output, logs, audit, the console, the Hadoop helper's
errors). A leaf module, so that any module may use it without importing the catalog's property parsing.

A keytab's path is shown (users need to see which file a catalog reads); its content never is.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["MASK", "is_secret_key", "mask_properties"]

MASK = "******"
# Storage keys too: Azure's account keys, service accounts' private keys (SAS tokens are tokens).
_SECRET_WORDS = ("password", "secret", "token", "credential", "account.key", "account-key", "account_key",
                 "private_key", "private-key")


def is_secret_key(key: str) -> bool:
    """Whether a property's value must never be shown or logged."""
    lowered = key.lower()
    return any(word in lowered for word in _SECRET_WORDS)


def mask_properties(props: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``props`` with secret values replaced by :data:`MASK`."""
    return {key: (MASK if is_secret_key(key) else value) for key, value in props.items()}
