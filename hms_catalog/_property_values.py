"""Reading one catalog property as a typed value, the error naming the key and the text given.

A leaf module: the property modules of the catalog, of Kerberos and of filesystem catalogs all read their
keys with these, and none of them has to import another to do so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from hms_catalog.errors import ConfigurationError

__all__ = ["property_as_bool", "property_as_int", "property_as_seconds"]

_DURATION = re.compile(r"^(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|sec|m|min|h)?$", re.IGNORECASE)
_UNIT_SECONDS = {None: 1.0, "ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def property_as_int(props: Mapping[str, str], key: str, default: int, *, minimum: int | None = None) -> int:
    """The integer value of ``key`` or ``default``; the error names the key and the text given."""
    text = props.get(key)
    if text is None:
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise ConfigurationError(f"property '{key}' must be an integer, got '{text}'") from None
    if minimum is not None and value < minimum:
        raise ConfigurationError(f"property '{key}' must be at least {minimum}, got {value}")
    return value


def property_as_seconds(props: Mapping[str, str], key: str, default: float, *, positive: bool = False) -> float:
    """A duration in seconds; accepts a plain number of seconds or Hive's unit suffixes (``ms``, ``s``, ``m``, ``h``)."""
    text = props.get(key)
    if text is None:
        return default
    match = _DURATION.match(text.strip())
    if match is None:
        raise ConfigurationError(f"property '{key}' must be a duration such as '30', '30s' or '500ms', got '{text}'")
    unit = match.group("unit")
    seconds = float(match.group("number")) * _UNIT_SECONDS[unit.lower() if unit else None]
    if positive and seconds <= 0:
        raise ConfigurationError(f"property '{key}' must be greater than zero, got '{text}'")
    return seconds


def property_as_bool(props: Mapping[str, str], key: str, default: bool) -> bool:
    """``true``/``false`` (any case); anything else is an error naming the key."""
    text = props.get(key)
    if text is None:
        return default
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise ConfigurationError(f"property '{key}' must be 'true' or 'false', got '{text}'")
