"""Copy-on-write Hudi tables written in Hudi's own layout (for the demo and the tests).

Nothing installable here writes Hudi, so tests build the tables they need: ``.hoodie/hoodie.properties``,
one ``<instant>.commit`` JSON per commit (with ``.commit.requested`` and ``.inflight`` beside it) whose
``extraMetadata.schema`` holds the Avro schema, and base files ``<fileId>_<writeToken>_<instant>.parquet``
carrying Hudi's five meta columns. The ``hudi`` package (hudi-rs) reads them; tests compare against it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hms_catalog.client.hive_thrift import ttypes

__all__ = ["HudiCommit", "write_cow_table", "hive_sync_table", "META_FIELDS"]

META_FIELDS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")
COW_INPUT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
MOR_RT_INPUT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
PARQUET_OUTPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


@dataclass(frozen=True)
class HudiCommit:
    """One commit: its instant (yyyyMMddHHmmssSSS), Avro record schema, and rows by partition path."""

    instant: str
    avro_schema: dict[str, object]
    rows_by_partition: dict[str, pa.Table]


def _properties(name: str, record_key: str, partition_field: str | None, schema: dict[str, object]) -> str:
    create_schema = json.dumps(schema, separators=(",", ":")).replace(":", "\\:")
    lines = [
        "#Properties saved by the test builder",
        f"hoodie.table.name={name}",
        "hoodie.table.type=COPY_ON_WRITE",
        "hoodie.table.version=6",
        "hoodie.timeline.layout.version=1",
        "hoodie.archivelog.folder=archived",
        f"hoodie.table.recordkey.fields={record_key}",
        "hoodie.table.keygenerator.class=org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.datasource.write.hive_style_partitioning=true",
        "hoodie.datasource.write.drop.partition.columns=false",
        "hoodie.database.name=default",
        f"hoodie.table.create.schema={create_schema}",
    ]
    if partition_field:
        lines.append(f"hoodie.table.partition.fields={partition_field}")
    return "\n".join(lines) + "\n"


def write_cow_table(
    base: Path, name: str, commits: Sequence[HudiCommit], *, record_key: str = "id", partition_field: str | None = None
) -> Path:
    """Write the table under ``base``; each commit adds new file groups. Returns ``base``."""
    hoodie = base / ".hoodie"
    (hoodie / "archived").mkdir(parents=True, exist_ok=True)
    (hoodie / "hoodie.properties").write_text(_properties(name, record_key, partition_field, commits[0].avro_schema))
    for sequence, commit in enumerate(commits):
        stats: dict[str, list[dict[str, object]]] = {}
        for file_index, (partition, rows) in enumerate(sorted(commit.rows_by_partition.items())):
            file_id = f"{uuid.UUID(int=sequence * 1000 + file_index + 1)}-0"
            file_name = f"{file_id}_{file_index}-{sequence + 10}-{sequence + 20}_{commit.instant}.parquet"
            directory = base / partition if partition else base
            directory.mkdir(parents=True, exist_ok=True)
            meta = {
                "_hoodie_commit_time": [commit.instant] * rows.num_rows,
                "_hoodie_commit_seqno": [f"{commit.instant}_{file_index}_{i}" for i in range(rows.num_rows)],
                "_hoodie_record_key": [str(v) for v in rows.column(record_key).to_pylist()],
                "_hoodie_partition_path": [partition] * rows.num_rows,
                "_hoodie_file_name": [file_name] * rows.num_rows,
            }
            table = pa.table({**{k: pa.array(v, pa.string()) for k, v in meta.items()}, **{c: rows.column(c) for c in rows.column_names}})
            pq.write_table(table, directory / file_name)
            relative = f"{partition}/{file_name}" if partition else file_name
            size = (directory / file_name).stat().st_size
            stats.setdefault(partition, []).append({
                "fileId": file_id, "path": relative, "prevCommit": "null", "numWrites": rows.num_rows,
                "numDeletes": 0, "numUpdateWrites": 0, "numInserts": rows.num_rows, "totalWriteBytes": size,
                "totalWriteErrors": 0, "partitionPath": partition, "fileSizeInBytes": size,
            })
        document = {
            "partitionToWriteStats": stats,
            "compacted": False,
            "extraMetadata": {"schema": json.dumps(commit.avro_schema)},
            "operationType": "INSERT",
        }
        (hoodie / f"{commit.instant}.commit.requested").write_text("")
        (hoodie / f"{commit.instant}.inflight").write_text(json.dumps({"partitionToWriteStats": {}, "operationType": "INSERT"}))
        (hoodie / f"{commit.instant}.commit").write_text(json.dumps(document, indent=2))
    return base


def hive_sync_table(
    database: str,
    name: str,
    base: Path,
    columns: Sequence[tuple[str, str]],
    *,
    partition_keys: Sequence[tuple[str, str]] = (),
    realtime: bool = False,
) -> ttypes.Table:
    """The thrift Table Hudi's hive sync registers: meta columns first, partition fields as partition keys."""
    cols = [ttypes.FieldSchema(field, "string", "") for field in META_FIELDS]
    cols += [ttypes.FieldSchema(column, kind, "") for column, kind in columns]
    sd = ttypes.StorageDescriptor(
        cols=cols, location=base.as_uri(), inputFormat=MOR_RT_INPUT if realtime else COW_INPUT,
        outputFormat=PARQUET_OUTPUT,
        serdeInfo=ttypes.SerDeInfo(serializationLib=PARQUET_SERDE, parameters={"hoodie.query.as.ro.table": "false"}),
        numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
    )
    return ttypes.Table(
        tableName=name, dbName=database, owner="hudi", sd=sd,
        partitionKeys=[ttypes.FieldSchema(k, t, "") for k, t in partition_keys],
        parameters={"EXTERNAL": "TRUE", "last_commit_time_sync": "0"}, tableType="EXTERNAL_TABLE",
    )
