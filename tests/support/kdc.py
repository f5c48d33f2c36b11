"""A real MIT Kerberos KDC for tests: a private realm on a loopback TCP port, its files in one folder.

The realm's configuration is written where ``KRB5_CONFIG`` (clients) and ``KRB5_KDC_PROFILE`` (the KDC and
``kadmin.local``) point, so nothing of the machine's own Kerberos set-up is read or changed. Host names are
taken literally (no DNS canonicalisation, no reverse lookups), so ``hive/localhost@REALM`` is the same name
for the Java server, the Python client and the KDC.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

__all__ = ["MiniKdc", "KDC_PROGRAMS", "free_port", "missing_programs"]

REALM = "HMS.TEST"
KDC_PROGRAMS = ("krb5kdc", "kdb5_util", "kadmin.local", "kinit", "kdestroy", "klist")
_MASTER_PASSWORD = "hms-catalog-test-master"  # the throwaway realm's database key


def missing_programs() -> list[str]:
    """The MIT Kerberos programs the KDC needs that are not installed (Debian: krb5-kdc, krb5-admin-server, krb5-user)."""
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    return [name for name in KDC_PROGRAMS if shutil.which(name, path=search) is None]


def _program(name: str) -> str:
    found = shutil.which(name, path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))
    if found is None:
        raise FileNotFoundError(f"{name} is not installed (Debian: krb5-kdc krb5-admin-server krb5-user)")
    return found


class MiniKdc:
    """Start a KDC for ``realm`` with its database, configuration and log under ``directory``."""

    def __init__(self, directory: Path, realm: str = REALM) -> None:
        self.directory = directory
        self.realm = realm
        self.port = free_port()
        self.krb5_conf = directory / "krb5.conf"
        self.kdc_conf = directory / "kdc.conf"
        self.log_file = directory / "kdc.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        """The variables that make MIT programs and libraries use this realm only."""
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf)}

    def __enter__(self) -> MiniKdc:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._write_configuration()
        self._run(_program("kdb5_util"), "create", "-s", "-r", self.realm, "-P", _MASTER_PASSWORD)
        self._process = subprocess.Popen(
            [_program("krb5kdc"), "-n", "-r", self.realm], env={**os.environ, **self.env},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"krb5kdc exited with {self._process.returncode}: {self._log_tail()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
            time.sleep(0.1)
        raise RuntimeError(f"krb5kdc did not listen on {self.port}: {self._log_tail()}")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)

    def principal(self, name: str) -> str:
        """``name`` with this realm added (``hive/localhost`` becomes ``hive/localhost@HMS.TEST``)."""
        return name if "@" in name else f"{name}@{self.realm}"

    def add_principal(self, name: str, keytab: Path | None = None, *, max_life: str | None = None) -> str:
        """Add ``name`` with a random key and, with ``keytab``, export its keys there; the full principal.

        ``max_life`` (kadmin's syntax, such as ``"1 minute"``) bounds every ticket issued to or for it.
        """
        principal = self.principal(name)
        life = f"-maxlife \"{max_life}\" " if max_life else ""
        self.kadmin(f"addprinc -randkey {life}{principal}")
        if keytab is not None:
            self.kadmin(f"ktadd -k {keytab} {principal}")
        return principal

    def export(self, principal: str, keytab: Path) -> None:
        """Write ``principal``'s keys to ``keytab`` with a new key version (the old keytabs go stale)."""
        self.kadmin(f"ktadd -k {keytab} {self.principal(principal)}")

    def kadmin(self, query: str) -> str:
        return self._run(_program("kadmin.local"), "-r", self.realm, "-q", query)

    def kinit(self, principal: str, keytab: Path, ccache: str) -> None:
        """Put a ticket for ``principal`` into ``ccache`` from its keytab, as a user's ``kinit -kt`` does."""
        self._run(_program("kinit"), "-kt", str(keytab), "-c", ccache, self.principal(principal))

    def _run(self, *argv: str) -> str:
        result = subprocess.run(argv, env={**os.environ, **self.env}, capture_output=True, text=True, check=False,
                                stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log_file.read_text(errors="replace")[-2000:]
        return "(no log)"

    def _write_configuration(self) -> None:
        data = self.directory / "db"
        data.mkdir(exist_ok=True)
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f"  default_realm = {self.realm}\n"
            "  dns_lookup_kdc = false\n"
            "  dns_lookup_realm = false\n"
            "  dns_canonicalize_hostname = false\n"
            "  rdns = false\n"
            "  udp_preference_limit = 1\n"
            "  ticket_lifetime = 10h\n"
            "  forwardable = true\n"
            "[realms]\n"
            f"  {self.realm} = {{\n    kdc = 127.0.0.1:{self.port}\n  }}\n",
            encoding="utf-8",
        )
        self.kdc_conf.write_text(
            "[kdcdefaults]\n"
            f"  kdc_listen = 127.0.0.1:{self.port}\n"
            f"  kdc_tcp_listen = 127.0.0.1:{self.port}\n"
            "[realms]\n"
            f"  {self.realm} = {{\n"
            f"    database_name = {data / 'principal'}\n"
            f"    key_stash_file = {data / 'stash'}\n"
            f"    acl_file = {data / 'kadm5.acl'}\n"
            "    max_life = 10h\n"
            "    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n"
            "  }\n"
            "[logging]\n"
            f"  kdc = FILE:{self.log_file}\n",
            encoding="utf-8",
        )
        (data / "kadm5.acl").write_text("", encoding="utf-8")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
