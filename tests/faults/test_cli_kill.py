"""``kill -9`` of CLI processes in the middle of CREATE and ALTER CATALOG, several at a time: the store
always parses, every change a process acknowledged is kept, no update is half applied or lost, and no
temporary file outlives the next write."""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hms_catalog.state import open_definitions
from hms_catalog.store import CatalogDefinition
from tests.support.forkserver import ForkedProcess, fork_cli

pytestmark = [pytest.mark.metastore, pytest.mark.slow]  # with its suite; it needs no metastore

SEED = 20260522
MAX_PROCESSES = 200
# Seconds of killing. Each process is forked from one that has imported the CLI already (killing it is killing
# a process like any): it starts in milliseconds, where a fresh interpreter spent most of a second of CPU.
TIME_BUDGET = 8.0
STARTING = 0.15  # seconds after its start in which a process "killed while starting" is killed
CONCURRENCY = 4
ALTERS = 15  # per catalog, per process
URI = "thrift://127.0.0.1:9083"  # never contacted: CREATE and ALTER only validate and store


def _statements(worker: int) -> list[str]:
    own = f"w{worker}"
    statements = [f"CREATE CATALOG {own} PROPERTIES ('type'='hms', 'hive.metastore.uris'='{URI}')"]
    for n in range(1, ALTERS + 1):
        statements.append(f"ALTER CATALOG shared SET PROPERTIES ('k{worker}_{n}'='{n}')")
        statements.append(f"ALTER CATALOG {own} SET PROPERTIES ('n'='{n}')")
    return statements


@dataclass
class Worker:
    """One CLI process and when to kill it: after a number of acknowledged statements, at a moment of its
    start-up, or never."""

    number: int
    process: ForkedProcess
    statements: list[str]
    kill_after_acks: int | None
    kill_delay: float | None
    started: float = field(default_factory=time.monotonic)
    kill_at: float | None = None
    output: bytes = b""
    killed: bool = False

    def read(self) -> bool:
        """Take what the process wrote so far; False once it has exited and everything is read."""
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while chunk := os.read(stdout.fileno(), 65536):
                self.output += chunk
        except BlockingIOError:
            return True
        if self.process.poll() is None:
            return True
        stdout.close()
        return False

    def kill_when_due(self, now: float) -> None:
        if self.kill_at is None and self.kill_delay is not None:
            if self.kill_after_acks is None:
                self.kill_at = self.started + self.kill_delay
            elif self.output.count(b"\n") >= self.kill_after_acks:
                self.kill_at = now + self.kill_delay
        if self.kill_at is not None and now >= self.kill_at and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.killed = True

    def acknowledged(self) -> list[str]:
        """Statements whose result line reached us in full, in order."""
        done = [json.loads(line)["statement"] for line in self.output.split(b"\n")[:-1]]  # the rest is unfinished
        assert done == self.statements[: len(done)]
        return done


def _spawn(home: Path, number: int, rng: random.Random) -> Worker:
    statements = _statements(number)
    process = fork_cli(["--home", str(home), "--format", "json", "-e", ";\n".join(statements)], capture_stdout=True,
                       capture_stderr=False)
    os.set_blocking(process.stdout.fileno(), False)  # type: ignore[union-attr]
    chance = rng.random()
    if chance < 0.1:
        return Worker(number, process, statements, None, None)  # left to finish
    if chance < 0.25:
        return Worker(number, process, statements, None, rng.uniform(0.0, STARTING))  # killed while starting
    return Worker(number, process, statements, rng.randrange(len(statements)), rng.uniform(0.0, 0.01))


def _watch_store(home: Path, stop: threading.Event, seen: dict[str, int], errors: list[BaseException]) -> None:
    """Read the store while writers die around it; count reads and the temporary files present at once."""
    store = open_definitions(home)
    while not stop.is_set():
        try:
            store.list()
            seen["reads"] += 1
            temporaries = sum(1 for name in os.listdir(home) if name.endswith(".tmp"))
            seen["max_temporaries"] = max(seen["max_temporaries"], temporaries)
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)
            return


def test_kill_9_in_the_middle_of_create_and_alter_catalog_loses_no_acknowledged_change(home: Path) -> None:
    rng = random.Random(SEED)
    open_definitions(home).create(CatalogDefinition(name="shared", properties={"type": "hms", "hive.metastore.uris": URI}))
    seen = {"reads": 0, "max_temporaries": 0}
    errors: list[BaseException] = []
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_store, args=(home, stop, seen, errors))
    watcher.start()
    running: list[Worker] = []
    finished: list[Worker] = []
    began = time.monotonic()
    try:
        while running or (len(finished) < MAX_PROCESSES and time.monotonic() - began < TIME_BUDGET):
            while (len(running) < CONCURRENCY and len(finished) + len(running) < MAX_PROCESSES
                   and time.monotonic() - began < TIME_BUDGET):
                running.append(_spawn(home, len(finished) + len(running), rng))
            time.sleep(0.002)
            now = time.monotonic()
            for worker in list(running):
                worker.kill_when_due(now)
                if not worker.read():
                    running.remove(worker)
                    finished.append(worker)
    finally:
        stop.set()
        watcher.join(timeout=30)
        for worker in running:
            worker.process.kill()
            worker.process.wait()
            worker.process.stdout.close()  # type: ignore[union-attr]
    seconds = time.monotonic() - began
    assert not errors, f"the store could not be read while writers were killed: {errors[0]!r}"

    store = open_definitions(home)
    catalogs = {definition.name: definition for definition in store.list()}
    shared = catalogs["shared"]
    for worker in finished:
        assert worker.killed or worker.process.returncode == 0
        done = worker.acknowledged()
        if worker.process.returncode == 0:
            assert len(done) == len(worker.statements)
        if not done:
            continue
        own = catalogs[f"w{worker.number}"]
        for statement in done[1:]:
            if "shared" in statement:
                key, value = statement.split("('")[1].rstrip("')").split("'='")
                assert shared.properties.get(key) == value, f"acknowledged but lost: {statement}"
        acknowledged_n = sum(1 for statement in done if f"CATALOG w{worker.number} SET" in statement)
        assert int(own.properties.get("n", "0")) >= acknowledged_n
    # Every applied ALTER is whole and counted once: one version per property it added or set.
    for name, definition in catalogs.items():
        if name.startswith("w"):
            assert definition.version == 1 + int(definition.properties.get("n", "0"))
    assert shared.version == 1 + sum(1 for key in shared.properties if key.startswith("k"))

    # The store is SQLite's own files only (its write-ahead log beside it): a killed writer leaves nothing else.
    assert seen["max_temporaries"] == 0
    store.update("shared", lambda d: CatalogDefinition(name=d.name, properties={**d.properties, "last": "1"}))
    assert set(os.listdir(home)) - {"catalog.db-wal", "catalog.db-shm"} == {"catalog.db"}
    assert store.get("shared").properties["last"] == "1"

    killed = [w for w in finished if w.killed]
    mid_work = [w for w in killed if 0 < len(w.acknowledged()) < len(w.statements)]
    acknowledged = sum(len(w.acknowledged()) for w in finished)
    print(
        f"\nkill -9: {len(finished)} CLI processes in {seconds:.1f}s ({CONCURRENCY} at a time), {len(killed)} killed "
        f"({len(mid_work)} between two acknowledged statements), {len(finished) - len(killed)} finished; "
        f"{acknowledged} acknowledged changes all kept; shared at version {shared.version}; "
        f"{seen['reads']} store reads while killing, none failed, no file but the store's own"
    )
