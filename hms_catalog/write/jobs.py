"""The write jobs a catalog has begun and not ended, and what each commit replaced.

A job begins (its staging folder is named, the table's writers are described) before any file is
written, and ends with its commit or its abort. Two jobs of one table may run at once: at commit, a job
that replaces a partition (or a whole unpartitioned table) which another job's commit has touched since
this one began is refused with :class:`WriteConflictError`, before anything of it is applied. The record
of what commits touched is kept only as long as a live job began before it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hms_catalog.commits.recovery import RecoveringCatalog, finish_unfinished, process_folder
from hms_catalog.commits.staging import new_job_id, staging_folder, valid_job_id
from hms_catalog.commits.undo import UndoLog
from hms_catalog.ddl.specs import TableSpec
from hms_catalog.errors import ConfigurationError, NotFoundError
from hms_catalog.storage.resolver import StorageResolver
from hms_catalog.write.target import WriteTarget

if TYPE_CHECKING:
    from hms_catalog.model import ExternalCatalog

__all__ = ["WriteJob", "WriteJobs", "WHOLE_TABLE", "SILENT_SECONDS", "jobs_of"]

WHOLE_TABLE = ""  # what an unpartitioned table's write touches, in the journal
SILENT_SECONDS = 30.0  # a job not heard of for this long is taken for dead (its driver renews it every 5 s)


@dataclass
class WriteJob:
    id: str
    database: str
    table: str
    root: str  # the table's folder (a new table's, for CREATE TABLE AS)
    target: WriteTarget
    began: int  # the table's commit sequence when the job began
    create: TableSpec | None = None  # CREATE [OR REPLACE] TABLE AS: the table the commit makes
    replace: bool = False
    started: float = field(default_factory=time.time)
    heard: float = field(default_factory=time.monotonic)

    @property
    def staging(self) -> str:
        """Where the job's files go: a hidden folder that a commit swaps in, or for an Iceberg table a folder
        of its ``data/`` that its snapshot will reference."""
        return f"{self.root}/hms-{self.id}" if self.target.iceberg else staging_folder(self.root, self.id)


class WriteJobs:
    """One catalog's live jobs and commit journal (thread-safe), and where its commits keep their undo logs
    (``commits``: the catalog's folder in the home; None keeps them in memory, as a catalog built in memory)."""

    def __init__(self, commits: Path | None = None, storage: StorageResolver | None = None) -> None:
        self.commits = commits
        self.storage = storage if storage is not None else StorageResolver()  # the catalog's, for its undo logs
        self._lock = threading.Lock()
        self._open_logs: set[str] = set()
        self._jobs: dict[str, WriteJob] = {}
        self._sequence = 0
        self._journal: list[tuple[int, str, str, frozenset[str], str]] = []  # (sequence, database, table, names, job)

    def begin(self, database: str, table: str, root: str, target: WriteTarget, *, create: TableSpec | None = None,
              replace: bool = False) -> WriteJob:
        with self._lock:
            job = WriteJob(new_job_id(), database, table, root.rstrip("/"), target, self._sequence, create, replace)
            self._jobs[job.id] = job
            return job

    def get(self, job_id: str) -> WriteJob:
        with self._lock:
            job = self._jobs.get(job_id) if valid_job_id(job_id) else None
        if job is None:
            raise NotFoundError("write job", job_id, "it was committed or aborted already, or began in another service process")
        return job

    def renew(self, job_id: str) -> WriteJob:
        """The job's driver is alive: keep its staging folder from the clean-up of dead jobs."""
        job = self.get(job_id)
        job.heard = time.monotonic()
        return job

    def undo_log(self, job: WriteJob) -> UndoLog:
        """A new undo log for ``job``'s commit."""
        return self.open_log(job.id, job.database, job.table, staging=job.staging, source="write")

    def open_log(self, name: str, database: str, table: str, *, staging: str = "", source: str = "write") -> UndoLog:
        """A new undo log of a change of many steps (a commit, or a DDL of many calls): no recovery in this
        process touches it until it is removed."""
        with self._lock:
            self._open_logs.add(name)

        def closed() -> None:
            with self._lock:
                self._open_logs.discard(name)

        return UndoLog.begin(process_folder(self.commits), name, database, table, staging=staging, source=source, closed=closed,
                             storage=self.storage)

    def left_unfinished(self, name: str) -> bool:
        """Whether the undo log ``name`` is still there (its undo failed): it is then left to the next look of
        :meth:`finish_unfinished` (the table's next write, RECOVER, a start), and what it names is kept."""
        with self._lock:
            if name not in self._open_logs:
                return False
            self._open_logs.discard(name)
            return True

    def finish_unfinished(self, catalog: RecoveringCatalog, table: tuple[str, str] | None = None) -> int:
        """Undo or finish what killed processes' commits left (``table``'s only, when given), never a commit
        this process is running."""
        with self._lock:
            running = set(self._jobs) | self._open_logs
        return finish_unfinished(catalog, self.commits, running, table)

    def end(self, job_id: str) -> None:
        with self._lock:
            self._jobs.pop(job_id, None)
            self._prune()

    def live(self, database: str, table: str) -> list[str]:
        """The table's jobs heard of within :data:`SILENT_SECONDS`; silent ones are forgotten (their drivers died)."""
        now = time.monotonic()
        with self._lock:
            for job in [j for j in self._jobs.values() if now - j.heard > SILENT_SECONDS]:
                del self._jobs[job.id]
            return [j.id for j in self._jobs.values() if (j.database, j.table) == (database, table)]

    def touched_since(self, job: WriteJob, names: set[str]) -> tuple[set[str], str | None]:
        """Which of ``names`` commits since ``job`` began touched, and the job id of one such commit."""
        with self._lock:
            found: set[str] = set()
            other = None
            for sequence, database, table, touched, by in self._journal:
                if sequence > job.began and (database, table) == (job.database, job.table):
                    hit = names & touched if WHOLE_TABLE not in touched else set(names)
                    if hit:
                        found |= hit
                        other = by
            return found, other

    def record(self, job: WriteJob, names: set[str]) -> None:
        with self._lock:
            self._sequence += 1
            self._journal.append((self._sequence, job.database, job.table, frozenset(names), job.id))

    def _prune(self) -> None:
        oldest = min((j.began for j in self._jobs.values()), default=self._sequence)
        self._journal = [entry for entry in self._journal if entry[0] > oldest]


def jobs_of(catalog: ExternalCatalog) -> WriteJobs:
    """The catalog's write jobs, typed: the model holds them without naming this module (it sits below the
    write path), so the write path takes them from it here; a catalog built without them takes no writes."""
    jobs = catalog.write_jobs
    if not isinstance(jobs, WriteJobs):
        raise ConfigurationError(f"catalog '{catalog.name}' was built without write jobs: it takes no writes")
    return jobs
