"""Request and answer bodies of the write routes: a job begun, the files a job wrote, what its commit did."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from hms_catalog.write.request import CommitRequest, WriteOutcome, WrittenFile
from service.bodies import Body
from service.ddl_bodies import NewTable

__all__ = ["NewTableWrite", "WriteJobAnswer", "WrittenFileBody", "CommitBody", "CommitAnswer"]


class NewTableWrite(Body):
    """``CREATE [OR REPLACE] TABLE .. AS SELECT``: the table the commit creates (or replaces) with the job's files."""

    table: NewTable
    replace: bool = False


class WriteJobAnswer(Body):
    job: str
    staging: str = Field(description="the folder the job's files go to; the commit lists them relative to it")
    target: dict[str, Any] = Field(description="the table's writer (parquet, orc, csv, json, text, avro or hive) and its options")


class WrittenFileBody(Body):
    path: str = Field(description="relative to the staging folder: k=v/k2=v2/part-00000-....parquet")
    values: list[str | None] = Field(default=[], description="the file's partition values in partition-key order; null for NULL")
    rows: int = Field(default=0, ge=0)
    bytes: int = Field(default=0, ge=0)


class CommitBody(Body):
    mode: Literal["append", "overwrite", "dynamic"]
    static: dict[str, str | None] = Field(default={}, description="an overwrite's static partition spec; empty: every partition")
    files: list[WrittenFileBody] = []

    def request(self) -> CommitRequest:
        files = tuple(WrittenFile(f.path, tuple(f.values), f.bytes, f.rows) for f in self.files)
        return CommitRequest(self.mode, files, dict(self.static))


class CommitAnswer(Body):
    result: str
    version: int
    files: int
    rows: int
    added: int
    replaced: int
    appended: int
    dropped: int

    @classmethod
    def of(cls, outcome: WriteOutcome) -> CommitAnswer:
        return cls(result=outcome.message, version=outcome.version, files=outcome.files, rows=outcome.rows, added=outcome.added,
                   replaced=outcome.replaced, appended=outcome.appended, dropped=outcome.dropped)
