"""A class-data archive for the test session's Spark driver JVMs, so each one starts on less CPU.

The suite starts dozens of Spark drivers besides its session's own (the CLI's and the service's SELECT, Spark
Connect servers, spark-submit jobs, the drivers the kill tests kill, the Spark Hive harness): each loads and
verifies thousands of classes from pyspark's jars before its first statement, a large part of a start's CPU
on this machine (a start and two small jobs took 12.7 and 11.4 CPU-s, 6.3 and 7.4 with the archive). The
JVM's dynamic class-data sharing (``-XX:ArchiveClassesAtExit``, then ``-XX:SharedArchiveFile``: JDK 13 and
later) maps those classes, parsed and verified, from one file instead. What the JVMs run is the same code.

The archive is dumped once per pyspark installation and Java (the key below), by a small Spark job that runs
in the background while the first tests run, and is named to the drivers (``SPARK_SUBMIT_OPTS``) only once it
exists: a ``-XX:SharedArchiveFile`` that cannot be opened turns off the JDK's own default archive too, so a
driver started before then starts as it always did, without the option. A driver whose class path the archive
does not match passes over it; its warning is turned off (a driver's stdout is sometimes a CLI's output under
test).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from hms_catalog.errors import HmsCatalogError
from hms_catalog.jdk import find_java_tool, spark_jars_dir

__all__ = ["archive_options", "archive_path", "driver_options", "finish_dump", "start_dump", "wait_until_dumped", "without_archive"]

# Unified-logging tags the JVM warns under (on stdout) when an archive does not match the class path.
_QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
_OPTION = "-XX:SharedArchiveFile="
# The first four bytes of a finished dynamic archive (JDK's CDS_DYNAMIC_ARCHIVE_MAGIC, little-endian): the JVM
# writes its header last, so an archive cut short has none.
_DYNAMIC_MAGIC = 0xF00BABA8.to_bytes(4, "little")
_KEPT_ARCHIVES = 2


def archive_path(cache: Path) -> Path | None:
    """Where the archive for the installed pyspark and Java lives (whether or not it exists yet); None when
    either is missing."""
    java = find_java_tool("java")
    try:
        jars = spark_jars_dir()
    except HmsCatalogError:
        return None
    if java is None:
        return None
    digest = hashlib.sha256()
    java_path = Path(java).resolve()
    stat = java_path.stat()
    digest.update(f"{java_path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    for jar in sorted(jars.glob("*.jar")):  # the JVM checks each jar of the class path against the archive's record
        jar_stat = jar.stat()
        digest.update(f"{jar}:{jar_stat.st_size}:{jar_stat.st_mtime_ns}\n".encode())
    return cache / f"spark-driver-{digest.hexdigest()[:16]}.jsa"


def archive_options(archive: Path) -> str:
    """JVM options that map ``archive`` (which must exist) and say nothing when it does not match."""
    return " ".join([f"{_OPTION}{archive}", *_QUIET])


def driver_options(options: str, archive: Path | None) -> str:
    """``options`` (a driver's ``SPARK_SUBMIT_OPTS``) naming ``archive`` when it exists, and naming none when it
    does not: the JVM would then go without the JDK's own default archive as well."""
    base = without_archive(options)
    return f"{base} {archive_options(archive)}" if archive is not None and archive.is_file() else base


def without_archive(options: str) -> str:
    """``options`` without any archive options: a dump given ``-XX:SharedArchiveFile`` takes it as its base."""
    return " ".join(word for word in options.split() if not word.startswith(_OPTION) and word not in _QUIET)


def start_dump(archive: Path, spark_options: str) -> subprocess.Popen[bytes] | None:
    """Dump ``archive`` in the background unless it exists or another process is dumping it; the dumping
    process, or None. Its job runs with ``spark_options`` (the session's other driver options), holds the
    dump's lock for as long as it lives (a lock the kernel releases when it ends, however it ends) and puts
    the archive in place itself, so a test session that ends first leaves no half of it behind."""
    if archive.is_file():
        return None
    archive.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(_lock(archive), os.O_CREAT | os.O_WRONLY, 0o644)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # another test session (an xdist worker) is dumping it
        if archive.is_file():
            return None  # dumped while this session looked
        staging = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
        options = f"{without_archive(spark_options)} -XX:ArchiveClassesAtExit={staging} {' '.join(_QUIET)}"
        log = open(archive.with_name(archive.name + ".log"), "wb")  # noqa: SIM115 - handed to the child
        with log:
            return subprocess.Popen(
                [sys.executable, "-m", "tests.support._class_archive_job", str(staging), str(archive)],
                env={**os.environ, "SPARK_SUBMIT_OPTS": options}, cwd=Path(__file__).parents[2], pass_fds=(lock,),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError:
        return None  # no archive: every driver starts as it did without one
    finally:
        os.close(lock)  # the job's copy keeps the lock


def finish_dump(staging: Path, archive: Path, exit_code: int | None) -> None:
    """Put the dumped ``staging`` in place of ``archive`` when its JVM exited cleanly and wrote it whole (a
    JVM never maps half an archive), then forget all but the newest archives; called by the dump's job."""
    try:
        if exit_code == 0 and staging.is_file():
            with staging.open("rb") as dumped:
                whole = dumped.read(4) == _DYNAMIC_MAGIC
            if whole:
                os.replace(staging, archive)
                _forget_old(archive)
    finally:
        with contextlib.suppress(FileNotFoundError):
            staging.unlink()


def wait_until_dumped(archive: Path, timeout: float = 300.0) -> bool:
    """Whether ``archive`` exists, once no dump of it is under way (or ``timeout`` has passed)."""
    deadline = time.monotonic() + timeout
    while not archive.is_file() and _dumping(archive) and time.monotonic() < deadline:
        time.sleep(0.5)
    return archive.is_file()


def _dumping(archive: Path) -> bool:
    try:
        lock = os.open(_lock(archive), os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(lock)
    return False


def _lock(archive: Path) -> Path:
    return archive.with_name(archive.name + ".lock")


def _forget_old(kept: Path) -> None:
    """Keep the newest archives only (each is some 230 MB; a fresh clone's venv has jars of its own, so needs
    one of its own), and no pieces of dumps that were killed."""
    folder = kept.parent
    archives = sorted(folder.glob("spark-driver-*.jsa"), key=_modified, reverse=True)
    for other in [path for path in archives if path != kept][_KEPT_ARCHIVES - 1:]:
        with contextlib.suppress(FileNotFoundError):
            other.unlink()
            other.with_name(other.name + ".lock").unlink(missing_ok=True)
            other.with_name(other.name + ".log").unlink(missing_ok=True)
    for piece in folder.glob("spark-driver-*.jsa.*.partial"):
        with contextlib.suppress(FileNotFoundError):
            if time.time() - piece.stat().st_mtime > 3600:
                piece.unlink()


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0
