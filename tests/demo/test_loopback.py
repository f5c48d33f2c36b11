"""What the project starts for itself listens on 127.0.0.1 only: Spark's driver (the tests' session and what
it starts), the embedded metastore and the S3 server; never the machine's other addresses."""

from __future__ import annotations

import os
from typing import Any

from hms_catalog.demo.loopback import LOOPBACK
from hms_catalog.metastore import EmbeddedMetastore
from tests.support.listeners import descendants, listeners, not_on_loopback
from tests.support.s3 import S3Server


def test_the_session_helper_binds_spark_to_loopback(spark: Any) -> None:
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.driver.host") == LOOPBACK
    assert conf.get("spark.driver.bindAddress") == LOOPBACK
    assert os.environ["SPARK_LOCAL_IP"] == LOOPBACK  # for the Spark JVMs the tests start in other processes
    driver = spark.sparkContext._gateway.proc.pid
    bound = listeners(descendants(driver))
    assert len(bound) >= 2, bound  # the driver's RPC and its block manager at least
    assert [found for found in bound if not found.loopback] == []


def test_every_server_the_test_session_started_listens_on_loopback_only(
        metastore: EmbeddedMetastore, spark: Any, s3_server: S3Server) -> None:
    port = int(metastore.uri.rsplit(":", 1)[1])
    assert any(found.port == port for found in listeners(descendants(os.getpid())))
    assert not_on_loopback() == []
