"""The JDK and Spark's jars on this machine, for every part that starts or compiles Java: the embedded metastore,
the Hadoop filesystem helper, the planner's block lister and the Spark connector.

A module of its own, below them all, so that none of them needs another (storage's Hadoop helper once imported
the metastore package for these, and the metastore package needs storage's neighbours back).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

from hms_catalog.errors import EmbeddedMetastoreError

__all__ = ["JAVA_CACHE_ENV", "compile_into", "find_java_tool", "java_cache_dir", "spark_jars_dir"]

JAVA_CACHE_ENV = "HMS_CATALOG_JAVA_CACHE"


def spark_jars_dir() -> Path:
    """The ``jars`` folder of the installed pyspark, which carries Hive 2.3's metastore and Derby."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedMetastoreError("pyspark is not installed; the embedded metastore runs from its Hive jars")
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    if not any(jars.glob("hive-metastore-*.jar")):
        raise EmbeddedMetastoreError(f"no hive-metastore jar under {jars}; reinstall pyspark")
    return jars


def find_java_tool(name: str) -> str | None:
    """``$JAVA_HOME/bin/<name>`` when set, else ``<name>`` on PATH; None when neither exists."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def java_cache_dir() -> Path:
    """Where compiled Java helpers (and the prepared metastore database) are kept between runs."""
    return Path(os.environ.get(JAVA_CACHE_ENV) or Path.home() / ".cache" / "hms-catalog" / "java")


def compile_into(javac: str, source: Path | Sequence[Path], target: Path, classpath: str, *,
                 files: dict[str, str] | None = None) -> str | None:
    """Compile ``source`` (one file or several; and write ``files``, name -> text, beside them) into a private
    folder, then rename that folder to ``target``: a process or thread that finds the class in ``target`` never
    reads half of it. Another compile that finished first keeps its (same) folder. javac's error text when it
    fails, else None."""
    sources = [source] if isinstance(source, Path) else list(source)
    staging = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}")
    staging.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(staging), "-cp", classpath, *map(str, sources)],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        return result.stderr[-2000:]
    for name, text in (files or {}).items():
        (staging / name).write_text(text, encoding="utf-8")
    try:
        staging.rename(target)
    except OSError:  # another compile finished first; its copy is the same
        shutil.rmtree(staging, ignore_errors=True)
    return None
