"""Listing the files of table and partition locations through pyarrow.fs (local, HDFS, S3 by URI).

Hive's rules: names starting with ``.`` or ``_`` are hidden (``_SUCCESS``, ``.crc`` files,
``_temporary`` directories), at any depth; subdirectories are read only when recursive listing is on
(Spark's Hive reader does not recurse by default). Listings are cached per location; block locations
are kept per file identity (path, size, mtime), so after a REFRESH an unchanged file is not looked up
again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import pyarrow.fs as pafs

from hms_catalog.cache import CatalogCaches
from hms_catalog.storage.locations import is_hidden, join_location, normalize_location
from hms_catalog.storage.resolver import StorageResolver
from planner._parallel import run_all

__all__ = ["FileEntry", "Blocks", "BlockLocator", "LocalBlockLocator", "ListingResult", "SharedRoot", "list_locations",
           "with_blocks"]

LOCAL_HOST = "localhost"  # where Hadoop's local filesystem places every block
# Locations per unit of work handed to a listing thread: a few units per thread keep threads evenly busy,
# and the bound keeps a slow remote listing from holding a large share of the work.
_CHUNKS_PER_THREAD = 4
_CHUNK_LIMIT = 256
# Locations under one root from which an object store's root is listed once instead of each location.
_ROOT_LISTING_MIN = 8


class Blocks(NamedTuple):
    """Where a file's blocks are: start offsets (sorted) and the hosts of each."""

    offsets: tuple[int, ...]
    hosts: tuple[tuple[str, ...], ...]
    block_size: int


class FileEntry(NamedTuple):
    path: str
    size: int
    modification_time: int  # milliseconds since the epoch
    blocks: Blocks


class BlockLocator:
    """Finds block locations for files. ``locate_all`` is asked once per chunk of listed locations, so a
    locator that talks to a remote service (the HDFS namenode through the JVM) makes at most one call per
    listing."""

    def locate(self, path: str, size: int, block_size: int) -> Blocks:
        raise NotImplementedError

    def asks(self, path: str) -> bool:
        """Whether locating ``path`` asks something outside the process (a namenode): only such answers are
        worth caching. One made up from the size alone costs less than the cache's bookkeeping would."""
        return True

    def locate_all(self, files: Sequence[tuple[str, int]], block_size: int) -> list[Blocks]:
        return [self.locate(path, size, block_size) for path, size in files]

    def make_up(self, files: Sequence[tuple[str, int]], block_size: int) -> list[Blocks]:
        """Blocks of files for which :meth:`asks` said no: a locator that sorts files by kind overrides this to
        skip sorting them again (a listing asks ``asks`` of every file first)."""
        return self.locate_all(files, block_size)


class LocalBlockLocator(BlockLocator):
    """Blocks of ``block_size`` for filesystems that do not place blocks on hosts.

    Local files are on ``localhost``, as Hadoop's local filesystem describes them (and Spark's own file
    scans then prefer no host: its file partitions never ask for ``localhost``); files elsewhere (object
    stores, or HDFS without a locator that asks the namenode) get no hosts: an unknown location is
    better than a wrong one, which would pin tasks to the wrong machine. The machine's own name was one: no
    executor of a local Spark carries it, and a stage mixing such tasks with tasks Spark can place waited
    for ever in local mode (delay scheduling with nothing to offer the executor again: TPC-DS q75).
    """

    def __init__(self, host: str | None = None) -> None:
        self.host = host or LOCAL_HOST
        self.calls = 0

    def asks(self, path: str) -> bool:
        return False

    def locate(self, path: str, size: int, block_size: int) -> Blocks:
        self.calls += 1
        count = max(1, -(-size // block_size))
        hosts: tuple[str, ...] = (self.host,) if path.startswith("file:") or "://" not in path else ()
        return Blocks(tuple(i * block_size for i in range(count)), (hosts,) * count, block_size)


@dataclass
class ListingResult:
    files: dict[str, list[FileEntry]]
    absent: list[str]
    seconds: float


def _list_one(storage: StorageResolver, location: str, recursive: bool) -> list[tuple[str, int, int]] | None:
    """(location, size, mtime ms) of the visible files under ``location``; None when it does not exist.

    One listing call for the usual folder; a location that is a file costs a second call. A store that
    refuses or cannot be reached is a StorageError naming the catalog and the location."""
    try:
        filesystem, root = storage.resolve(location)
        try:
            entries = filesystem.get_file_info(pafs.FileSelector(root, recursive=recursive))
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            info = filesystem.get_file_info(root)
            if info.type == pafs.FileType.NotFound:
                return None
            entries = [info]
    except (ValueError, OSError) as error:  # pyarrow's ArrowInvalid is a ValueError
        raise storage.error(location, error, "list") from None
    found = []
    base = root.rstrip("/")
    for entry in entries:
        if entry.type != pafs.FileType.File:
            continue
        relative = entry.path[len(base) :] if entry.path.startswith(base) else entry.base_name
        if is_hidden(relative):
            continue
        found.append(_file_of(location, entry))
    found.sort()
    return found


def _file_of(location: str, entry: pafs.FileInfo) -> tuple[str, int, int]:
    """(location, size, mtime ms) of a file a listing of ``location`` (or of a root above it) returned."""
    mtime = int(entry.mtime_ns // 1_000_000) if entry.mtime_ns is not None else 0
    return join_location(location, entry.path), int(entry.size or 0), mtime


def _list_under_root(storage: StorageResolver, root: str, locations: Sequence[str],
                     recursive: bool) -> dict[str, list[tuple[str, int, int]] | None]:
    """The listings of the ``locations`` under ``root`` from one recursive listing of ``root``: on an object
    store a page of a thousand keys costs one request, where listing each partition costs one each. Locations
    not under ``root`` (a partition with a LOCATION of its own) are left out, for the caller to list; one
    under it with neither files nor a folder marker is absent (None), as its own listing would say."""
    base = normalize_location(root).rstrip("/")
    wanted = {normalize_location(location).rstrip("/"): location for location in locations}
    under = {key: location for key, location in wanted.items() if key.startswith(base + "/")}
    try:
        filesystem, path = storage.resolve(root)
        entries = filesystem.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    except (ValueError, OSError) as error:
        raise storage.error(root, error, "list") from None
    found: dict[str, list[tuple[str, int, int]] | None] = dict.fromkeys(under.values())
    for entry in entries:
        full = join_location(root, entry.path).rstrip("/")
        if entry.type == pafs.FileType.Directory:
            if full in under and found[under[full]] is None:
                found[under[full]] = []
            continue
        if entry.type != pafs.FileType.File:
            continue
        owner, parent = None, full.rsplit("/", 1)[0]
        while len(parent) >= len(base):
            if parent in under:
                owner = parent
                break
            if not recursive:
                break
            parent = parent.rsplit("/", 1)[0]
        if owner is None or is_hidden(full[len(owner):]):
            continue
        listed = found[under[owner]]
        if listed is None:
            listed = found[under[owner]] = []
        listed.append(_file_of(under[owner], entry))
    for listed in found.values():
        if listed:
            listed.sort()
    return found


class SharedRoot:
    """A table's root on an object store, listed once (recursively) for the locations of many partitions.

    A plan that takes its partitions in batches names them all up front (``locations``: where the metastore
    puts a partition by default, the table's root and the partition's name), so the one listing serves every
    batch, and is made only when a batch has enough locations that no cache answers (:data:`_ROOT_LISTING_MIN`).
    A location it was not made for (a partition with a LOCATION of its own) is listed by itself. What a batch
    took is dropped from it.
    """

    def __init__(self, root: str, locations: Iterable[str] = ()) -> None:
        self.root = root
        self._locations: Iterable[str] | None = locations  # made only if the root is listed
        self._listed: dict[str, list[tuple[str, int, int]] | None] | None = None
        self.ticket = 0

    def answers(self, caches: CatalogCaches, storage: StorageResolver, todo: Sequence[str],
                recursive: bool) -> dict[str, list[tuple[str, int, int]] | None]:
        """The listings of those of ``todo`` under the root (None: absent); {} when the root is not worth
        listing for them (too few, or not on an object store)."""
        if self._listed is None:
            if len(todo) < _ROOT_LISTING_MIN or not storage.is_object_store(self.root):
                return {}
            self.ticket = caches.files.ticket()  # read before the listing, as each chunk's is
            wanted = list(self._locations or ()) or list(todo)
            listed = _list_under_root(storage, self.root, wanted, recursive)
            self._listed = {normalize_location(location).rstrip("/"): found for location, found in listed.items()}
            self._locations = None
        found = {}
        for location in todo:
            key = normalize_location(location).rstrip("/")
            if key in self._listed:
                found[location] = self._listed.pop(key)
        return found


def with_blocks(files: Sequence[tuple[str, int, int]], caches: CatalogCaches, locator: BlockLocator,
                block_size: int) -> list[FileEntry]:
    """``(path, size, mtime)`` files with their blocks: known ones from the cache (keyed by that identity,
    so a changed file is looked up anew), the rest in one locator call, never one per file. Blocks the locator
    makes up without asking anyone (local files, object stores) are neither looked up in the cache nor kept:
    for a plan of 30,000 partitions that bookkeeping was a quarter of the listing threads' samples (py-spy)."""
    asked = [locator.asks(path) for path, _, _ in files]
    known = {identity: caches.file_blocks.peek(identity, used=True) for identity, asks in zip(files, asked) if asks}
    unknown = [identity for identity, blocks in known.items() if blocks is None]
    made_up = [identity for identity, asks in zip(files, asked) if not asks]
    if made_up:
        known.update(zip(made_up, locator.make_up([(path, size) for path, size, _ in made_up], block_size)))
    if unknown:
        ticket = caches.file_blocks.ticket()
        located = locator.locate_all([(path, size) for path, size, _ in unknown], block_size)
        for identity, blocks in zip(unknown, located):
            known[identity] = blocks
        caches.file_blocks.put_all([(identity, known[identity]) for identity in unknown], ticket=ticket)
    return [FileEntry(path, size, mtime, known[(path, size, mtime)]) for path, size, mtime in files]  # type: ignore[arg-type]


def list_locations(
    locations: Sequence[tuple[tuple[str, str, str], str]],
    caches: CatalogCaches,
    *,
    storage: StorageResolver,
    recursive: bool,
    block_size: int,
    locator: BlockLocator,
    parallelism: int,
    progress: Callable[[int, int], None] | None = None,
    shared_root: str | SharedRoot | None = None,
    keep: bool = True,
    workers: ThreadPoolExecutor | None = None,
) -> ListingResult:
    """List ``(cache_key, location)`` pairs in parallel; cached listings are served without I/O.

    The work goes to the threads in chunks of locations (a few per thread), each chunk's files located
    in one locator call: a future per location cost more than listing a local folder does. With
    ``shared_root`` on an object store and many locations to list under it (most of a table's partitions),
    one recursive listing of the root answers them all (a :class:`SharedRoot`: one listing for several calls).
    ``keep=False`` leaves the listings out of the cache (a scan larger than it, which would only flush it).
    ``workers``: the threads of a caller that lists many times (a plan, batch by batch), as many as ``parallelism``.
    """
    started = time.perf_counter()
    files: dict[str, list[FileEntry]] = {}
    absent: list[str] = []
    todo = []
    for key, location in locations:
        cached = caches.files.peek(key, used=True)
        if cached is not None:
            files[location] = list(cached)
        else:
            todo.append((key, location))

    root_ticket: int | None = None
    from_root: dict[str, list[tuple[str, int, int]] | None] = {}
    if shared_root is not None:
        root = SharedRoot(shared_root) if isinstance(shared_root, str) else shared_root
        from_root = root.answers(caches, storage, [location for _, location in todo], recursive)
        if from_root:
            root_ticket = root.ticket

    def work(chunk: list[tuple[tuple[str, str, str], str]], stop: threading.Event) -> list[tuple[str, list[FileEntry] | None]]:
        ticket = root_ticket if root_ticket is not None else caches.files.ticket()  # a change while listing is not undone
        listed = []
        for key, location in chunk:
            if stop.is_set():  # another chunk failed: the plan fails with its error, list nothing more
                return []
            listed.append((key, location, from_root[location] if location in from_root else _list_one(storage, location, recursive)))
        located = iter(with_blocks([f for *_, found in listed if found for f in found], caches, locator, block_size))
        answers: list[tuple[str, list[FileEntry] | None]] = []
        kept = []
        for key, location, found in listed:
            if found is None:
                answers.append((location, None))
                continue
            entries = [next(located) for _ in found]
            if keep:
                kept.append((key, tuple(entries)))
            answers.append((location, entries))
        if keep:  # a chunk's listings weighed together: a sample of them walked, not every one
            caches.files.put_all(kept, ticket=ticket)
        return answers

    threads = max(1, min(parallelism, len(todo) or 1))
    size = max(1, min(_CHUNK_LIMIT, -(-len(todo) // (threads * _CHUNKS_PER_THREAD))))
    chunks = [todo[start : start + size] for start in range(0, len(todo), size)]
    done = 0

    def answered(answers: list[tuple[str, list[FileEntry] | None]]) -> None:
        nonlocal done
        for _ in answers:
            done += 1
            if progress is not None:
                progress(done, len(todo))

    # the first failure (a store that refuses or does not answer) ends the listing: no chunk waits its turn for it
    for answers in run_all(work, chunks, threads, answered, workers=workers):
        for location, entries in answers:
            if entries is None:
                absent.append(location)
            else:
                files[location] = entries
    return ListingResult(files, absent, time.perf_counter() - started)
