"""Block placement from Hadoop's FileSystem, through a SparkSession's JVM.

HDFS knows where each block of a file lives; pyarrow's filesystems do not say. With a SparkSession at
hand (the driver of the locality-aware read, the Python API), this locator asks Hadoop's FileSystem for
the blocks of all files of one listing in a single JVM call, through a small helper class compiled with
``javac`` on first use and loaded into the running JVM (no classpath setting needed). Files it cannot
look up fall back to another locator.

    plan = plan_table(catalog, table, locator=JvmBlockLocator(spark))
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from hms_catalog.errors import PlanningError
from hms_catalog.jdk import compile_into, find_java_tool, java_cache_dir, spark_jars_dir
from planner.listing import BlockLocator, Blocks, LocalBlockLocator

__all__ = ["JvmBlockLocator", "compile_block_lister"]

_SOURCE = "BlockLister.java"


def compile_block_lister(cache_dir: Path | None = None) -> Path:
    """The directory holding the compiled helper (compiled once per source version)."""
    source = Path(str(resources.files("planner") / "resources" / _SOURCE))
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    target = (cache_dir or java_cache_dir()) / f"block-lister-{digest}"
    if (target / "BlockLister.class").exists():
        return target
    javac = find_java_tool("javac")
    if javac is None:
        raise PlanningError("javac (a JDK) is needed to compile the block locator's JVM helper")
    failure = compile_into(javac, source, target, f"{spark_jars_dir()}/*")  # renamed into place once whole
    if failure is not None:
        raise PlanningError(f"javac failed on {source.name}:\n{failure}")
    return target


class JvmBlockLocator(BlockLocator):
    """Blocks and hosts as Hadoop's FileSystem reports them, one JVM call per listing."""

    def __init__(self, spark: Any, *, fallback: BlockLocator | None = None, cache_dir: Path | None = None) -> None:
        self._spark = spark
        self._fallback = fallback or LocalBlockLocator()
        self._cache_dir = cache_dir
        self._method: Any = None
        self._loading = threading.Lock()  # the planner lists folders on several threads: one compile and load
        self.calls = 0

    def locate(self, path: str, size: int, block_size: int) -> Blocks:
        return self.locate_all([(path, size)], block_size)[0]

    def locate_all(self, files: Sequence[tuple[str, int]], block_size: int) -> list[Blocks]:
        if not files:
            return []
        gateway = self._spark.sparkContext._gateway
        jvm = self._spark._jvm
        paths = gateway.new_array(jvm.java.lang.String, len(files))
        for index, (path, _) in enumerate(files):
            paths[index] = path
        arguments = gateway.new_array(jvm.java.lang.Object, 2)
        arguments[0] = self._spark._jsc.hadoopConfiguration()
        arguments[1] = paths
        self.calls += 1
        answer = str(self._lister().invoke(None, arguments))
        lines = answer.split("\n")
        return [self._parse(lines[i] if i < len(lines) else "", path, size, block_size) for i, (path, size) in enumerate(files)]

    def _parse(self, line: str, path: str, size: int, block_size: int) -> Blocks:
        if not line:
            return self._fallback.locate(path, size, block_size)
        first, *blocks = line.split("\t")
        offsets, hosts = [], []
        for block in blocks:
            offset, _, names = block.split(",", 2)
            offsets.append(int(offset))
            hosts.append(tuple(host for host in names.split(";") if host))
        if not offsets:  # an empty file: no blocks
            return Blocks((0,), ((),), int(first) or block_size)
        return Blocks(tuple(offsets), tuple(hosts), int(first) or block_size)

    def _lister(self) -> Any:
        with self._loading:
            return self._method if self._method is not None else self._load()

    def _load(self) -> Any:
        gateway = self._spark.sparkContext._gateway
        jvm = self._spark._jvm
        directory = compile_block_lister(self._cache_dir)
        urls = gateway.new_array(jvm.java.net.URL, 1)
        urls[0] = jvm.java.io.File(str(directory)).toURI().toURL()
        loader = jvm.java.net.URLClassLoader(urls, jvm.java.lang.Thread.currentThread().getContextClassLoader())
        helper = loader.loadClass("BlockLister")
        parameters = gateway.new_array(jvm.java.lang.Class, 2)
        parameters[0] = self._spark._jsc.hadoopConfiguration().getClass()
        parameters[1] = gateway.new_array(jvm.java.lang.String, 0).getClass()
        self._method = helper.getMethod("blocks", parameters)
        return self._method
