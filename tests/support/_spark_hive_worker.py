"""The process behind :class:`~tests.support.spark_hive_client.SparkHiveClient`: Spark's Hive support, own JVM.

argv[1] is JSON (``uri``, ``warehouse``, ``scratch``, ``conf``). One JSON line answers the start-up (``ready`` or
``error``), then one each request line ``{"sql": ...}`` (``rows``, or ``error`` and ``condition``); EOF on stdin
ends it. Answers go to a duplicate of the original stdout and fd 1 is pointed at stderr before the JVM starts,
so nothing the JVM or Spark prints can be taken for an answer.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any


def plain(value: Any) -> Any:
    """A JSON-able copy of a value: structs as dicts, map keys as strings, binary as hex, decimals/dates/... as str."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "asDict"):  # a struct (pyspark.sql.Row)
        return {key: plain(item) for key, item in value.asDict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return str(value)


def start(config: dict[str, Any]) -> Any:
    from pyspark.sql import SparkSession

    from hms_catalog.demo.loopback import on_loopback

    scratch = config["scratch"]
    conf = {
        "spark.hadoop.hive.metastore.uris": config["uri"], "spark.sql.warehouse.dir": config["warehouse"],
        "spark.sql.session.timeZone": "UTC", "spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false", "spark.pyspark.python": sys.executable, "spark.local.dir": scratch,
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={scratch}",
        **{f"spark.hadoop.hive.{key}": f"{scratch}/{key}" for key in ("exec.scratchdir", "exec.local.scratchdir",
                                                                      "downloaded.resources.dir")},
    }
    builder = on_loopback(SparkSession.builder.master("local[2]").appName("hms-catalog-spark-hive-client"))
    for key, item in {**conf, **config["conf"]}.items():
        builder = builder.config(key, item)
    session = builder.enableHiveSupport().getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def run(session: Any, request: dict[str, Any]) -> dict[str, Any]:
    try:
        rows = session.sql(request["sql"]).collect()
        return {"rows": [[plain(item) for item in row] for row in rows]}
    except Exception as error:  # noqa: BLE001 - every failure is an answer; the worker lives on
        condition = getattr(error, "getCondition", lambda: None)()
        return {"error": str(error) or type(error).__name__, "condition": condition}


def main() -> int:
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # the JVM inherits fd 1: its output, and any print(), goes to stderr
    config = json.loads(sys.argv[1])
    began = time.monotonic()
    try:
        session = start(config)
        session.sql("SHOW DATABASES").collect()  # reach the metastore now: a wrong URI fails the start-up
    except Exception as error:  # noqa: BLE001 - told to the client, which quotes our stderr with it
        answers.write(json.dumps({"error": f"{type(error).__name__}: {error}"}) + "\n")
        return 1
    answers.write(json.dumps({"ready": time.monotonic() - began}) + "\n")
    for line in sys.stdin:
        if line.strip():
            answers.write(json.dumps(run(session, json.loads(line))) + "\n")
    session.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
