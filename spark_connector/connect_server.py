"""``hms-catalog serve --spark-connect``: a Spark Connect server next to the catalog service.

It is Spark's own server (the class pyspark's ``start-connect-server.sh`` starts), run by ``spark-submit``
with the connector's jar and plugin pointed at the service, so every catalog of the service is a Spark
catalog there. The service's SELECTs run on it warm, and any PySpark client can
``SparkSession.builder.remote("sc://host:port")``. Spark Connect has no authentication of its own: it
listens on the service's host (loopback by default), and its log goes to ``HOME/spark-connect.log``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hms_catalog._private import private_file
from hms_catalog.demo.loopback import SPARK_LOOPBACK_SETTINGS, keep_spark_on_loopback
from hms_catalog.errors import ConfigurationError
from hms_catalog.jdk import spark_jars_dir
from spark_connector.build import connector_jar
from spark_connector.session import PLUGIN_CLASS

__all__ = ["COMPANION", "SparkConnectCompanion", "SparkConnectServer"]

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DEFAULT_PORT = 15002
START_TIMEOUT = 180.0
STOP_TIMEOUT = 30.0


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class SparkConnectServer:
    """One Spark Connect server process: started, watched until it listens, stopped with its process group."""

    def __init__(self, *, service_url: str, token: str, host: str, port: int, master: str, log_path: Path) -> None:
        self.host = host
        self.port = port or _free_port(host)
        shown = f"[{host}]" if ":" in host else host
        self.url = f"sc://{shown}:{self.port}"
        self.log_path = log_path
        self.state = "starting"
        self.error: str | None = None
        # The token goes in a properties file only its owner reads, not in argv: anyone on the machine can
        # read a process's arguments.
        self._properties = log_path.with_name("spark-connect.properties")
        self._token = token
        submit = spark_jars_dir().parent / "bin" / "spark-submit"
        self._command = [
            str(submit), "--properties-file", str(self._properties),
            "--class", SERVER_CLASS, "--name", "hms-catalog Spark Connect", "--master", master,
            "--jars", str(connector_jar()),
            "--conf", f"spark.plugins={PLUGIN_CLASS}",
            "--conf", f"spark.hmscatalog.uri={service_url}",
            "--conf", f"spark.connect.grpc.binding.address={host}",
            "--conf", f"spark.connect.grpc.binding.port={self.port}",
            "--conf", "spark.ui.enabled=false",
            "--conf", "spark.sql.session.timeZone=UTC",
            "--conf", f"spark.pyspark.python={sys.executable}",
        ]
        self._environment = {**os.environ, "PYSPARK_PYTHON": sys.executable}
        if master.startswith("local"):
            # Its driver (and local-cluster's master and workers) serve only this machine: only the gRPC port
            # listens on --host. On a cluster master the executors must reach the driver: Spark's defaults.
            for key, value in SPARK_LOOPBACK_SETTINGS.items():
                self._command += ["--conf", f"{key}={value}"]
            keep_spark_on_loopback(self._environment)
        self._process: subprocess.Popen[bytes] | None = None
        self._ready = threading.Event()

    def start(self) -> None:
        """Start the process; a thread watches for its port (the caller goes on serving meanwhile)."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        partial = self._properties.with_name(self._properties.name + ".partial")
        with os.fdopen(private_file(partial, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as properties:
            properties.write(f"spark.hmscatalog.token={self._token}\n")
        os.replace(partial, self._properties)
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child, closed after it starts
        try:
            self._process = subprocess.Popen(self._command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                             env=self._environment, start_new_session=True)
        finally:
            log.close()
        threading.Thread(target=self._watch, name="spark-connect-watch", daemon=True).start()

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def _watch(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        assert self._process is not None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._fail(f"the Spark Connect server exited with {self._process.returncode} before listening")
                return
            with contextlib.suppress(OSError), socket.create_connection((self.host, self.port), timeout=1):
                self.state = "ready"
                self._ready.set()
                print(f"Spark Connect server at {self.url} (log {self.log_path})", file=sys.stderr, flush=True)
                return
            time.sleep(0.5)
        self._fail(f"the Spark Connect server did not listen on {self.host}:{self.port} within {START_TIMEOUT:g} s")

    def _fail(self, message: str) -> None:
        self.state = "failed"
        self.error = f"{message}; see {self.log_path}"
        self._ready.set()
        print(f"error: {self.error}", file=sys.stderr, flush=True)

    def health(self) -> dict[str, Any]:
        return {"url": self.url, "state": self.state, **({"error": self.error} if self.error else {})}

    def engine_options(self) -> dict[str, str]:
        """What the service's SELECTs need to run here; nothing until the server listens."""
        return {"remote": self.url, "native_catalogs": "true"} if self.state == "ready" else {}

    def stop(self) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        self.state = "stopped"


class SparkConnectCompanion:
    """The serve options of this companion, found by the service through ``hms_catalog.serve_companions``."""

    name = "spark-connect"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("Spark Connect")
        group.add_argument("--spark-connect", action="store_true",
                           help="also run a Spark Connect server with every catalog of the service as a Spark catalog "
                                "(native reads); SELECTs sent to the service run there, warm")
        group.add_argument("--spark-connect-port", type=int, default=DEFAULT_PORT, metavar="PORT",
                           help=f"its port (default {DEFAULT_PORT}; 0 picks a free one); it listens on --host")
        group.add_argument("--spark-master", default="local[*]", metavar="URL",
                           help="the Spark master it runs on (default local[*])")

    def start(self, args: argparse.Namespace, *, service_url: str, token: str, host: str, home: Path) -> SparkConnectServer | None:
        if not args.spark_connect:
            return None
        if not 0 <= args.spark_connect_port <= 65535:
            raise ConfigurationError(f"--spark-connect-port must be a port number, got {args.spark_connect_port}")
        server = SparkConnectServer(service_url=service_url, token=token, host=host, port=args.spark_connect_port,
                                    master=args.spark_master, log_path=home / "spark-connect.log")
        server.start()
        return server


COMPANION = SparkConnectCompanion()
