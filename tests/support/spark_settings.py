"""Spark SQL settings changed for one block of a test, then put back as they were."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["spark_settings"]


@contextlib.contextmanager
def spark_settings(spark: Any, settings: Mapping[str, str]) -> Iterator[None]:
    """``settings`` in ``spark``'s session until the block ends; earlier values (or their absence) restored."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
