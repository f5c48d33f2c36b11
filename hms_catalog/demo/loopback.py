"""Spark started by the project for itself (the demos, the tests, the benchmarks) stays on this machine.

Left to its defaults, Spark binds its driver (RPC and block manager) to the machine's first non-loopback
address, and in ``local-cluster`` mode its master, workers and executors meet there too: a demo or a test
run then listens on the network for nothing it needs. These helpers pin it to 127.0.0.1, by
``SPARK_LOCAL_IP`` (read by every Spark JVM started afterwards from this process: the driver, the
``local-cluster`` master and workers, ``spark-submit`` children) and by ``spark.driver.host`` /
``spark.driver.bindAddress`` on a builder. A user's own SparkSession (the connector's, ``planner.spark``'s)
keeps Spark's defaults: only what the project starts for itself calls these.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from typing import Any

__all__ = ["LOOPBACK", "SPARK_LOOPBACK_SETTINGS", "keep_spark_on_loopback", "on_loopback"]

LOOPBACK = "127.0.0.1"
SPARK_LOOPBACK_SETTINGS = {"spark.driver.host": LOOPBACK, "spark.driver.bindAddress": LOOPBACK}


def keep_spark_on_loopback(environ: MutableMapping[str, str] | None = None) -> None:
    """Every Spark JVM started from now on by this process (or a child given ``environ``) binds loopback."""
    (os.environ if environ is None else environ)["SPARK_LOCAL_IP"] = LOOPBACK


def on_loopback(builder: Any) -> Any:
    """``builder`` (a ``SparkSession.Builder``) with the driver bound to 127.0.0.1; also sets ``SPARK_LOCAL_IP``."""
    keep_spark_on_loopback()
    for key, value in SPARK_LOOPBACK_SETTINGS.items():
        builder = builder.config(key, value)
    return builder
