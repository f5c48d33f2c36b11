"""``hms-catalog metastore start|stop`` as a newcomer meets it: a catalog defined over a metastore keeps
working after ``stop`` and a plain ``start`` on the same directory."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.metastore, pytest.mark.slow]  # two starts of a metastore of its own, ~45 s


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), *args],
                          capture_output=True, text=True, timeout=180, check=False)


def test_a_stopped_metastore_started_again_is_where_its_catalogs_look(tmp_path: Path) -> None:
    home, directory = tmp_path / "home", str(tmp_path / "metastore")
    started = _cli(home, "metastore", "start", "--dir", directory, "--port", "0")  # as make demo: any free port
    try:
        assert started.returncode == 0, started.stderr
        uri = started.stdout.strip()
        created = _cli(home, "-e", f"CREATE CATALOG demo PROPERTIES ('type'='hms', 'hive.metastore.uris'='{uri}'); "
                                   "CREATE DATABASE demo.sales")
        assert created.returncode == 0, created.stderr
        assert _cli(home, "metastore", "stop", "--dir", directory).returncode == 0
        again = _cli(home, "metastore", "start", "--dir", directory)  # no --port: the one it had
        assert again.returncode == 0, again.stderr
        assert again.stdout.strip() == uri
        shown = _cli(home, "-e", "SHOW DATABASES FROM demo")
        assert shown.returncode == 0, shown.stderr
        assert "sales" in shown.stdout
        assert _cli(home, "metastore", "stop", "--dir", directory).returncode == 0
        port = int(uri.rsplit(":", 1)[1])
        with socket.socket() as taken:  # something else took the port meanwhile: say which, and what to do
            taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            taken.bind(("127.0.0.1", port))
            taken.listen(1)
            refused = _cli(home, "metastore", "start", "--dir", directory)
        assert refused.returncode == 1 and refused.stdout == ""
        assert f"port {port} is already in use" in refused.stderr and "--port N" in refused.stderr
    finally:
        _cli(home, "metastore", "stop", "--dir", directory)
