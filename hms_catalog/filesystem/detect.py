"""What a folder (or file) under a filesystem catalog's database is as a table: its format, options,
columns and partition keys, from one listing and a sample of its files.

Order: table formats first (an Iceberg ``metadata/`` folder, a Hudi ``.hoodie`` folder; a Delta
``_delta_log`` is recognised and refused), then file formats from content (:mod:`.sniff`). A sample of the
files is opened (the first, the last and some between, never all of them): files that disagree, an empty
folder, a file cut short or unreadable make the table UNKNOWN with a reason naming an example file.
Hive-style partition folders (``k=v/``) become partition columns with types inferred from their values.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs

from hms_catalog.filesystem.sniff import HEAD_BYTES, FileFormat, SniffError, compression_of, sniff
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name
from hms_catalog.storage.locations import is_hidden
from hms_catalog.types import from_arrow_type, from_avro_schema, to_hive_string

__all__ = [
    "FILE_FORMATS", "FileListing", "TableLayout", "detect_table", "format_from_settings", "layout_as", "list_table",
    "partition_folders",
]

FILE_FORMATS = ("parquet", "orc", "avro", "csv", "json")
_PARTITION_DIR = re.compile(r"^(?P<key>[^=/]+)=(?P<value>[^/]*)$")
_INTEGER = re.compile(r"^-?\d{1,18}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ICEBERG_METADATA = re.compile(r"^(?:v(?P<v>\d+)|(?P<n>\d+)-[0-9a-f-]+)(?:\.gz)?\.metadata\.json$")


@dataclass(frozen=True)
class TableLayout:
    """A table's format as detected or set, kept by the catalog once promoted.

    ``format``: a file format (:data:`FILE_FORMATS`), ``iceberg``, ``hudi``, or ``unknown`` (then ``reason``
    says why). ``columns`` and ``partition_keys`` are ``(name, hive type)``.
    """

    format: str
    reason: str
    options: dict[str, str] = field(default_factory=dict)
    columns: tuple[tuple[str, str], ...] = ()
    partition_keys: tuple[tuple[str, str], ...] = ()
    single_file: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableLayout:
        return cls(
            format=str(data["format"]), reason=str(data.get("reason", "")), options=dict(data.get("options") or {}),
            columns=tuple((str(n), str(t)) for n, t in data.get("columns") or ()),
            partition_keys=tuple((str(n), str(t)) for n, t in data.get("partition_keys") or ()),
            single_file=bool(data.get("single_file", False)),
        )


@dataclass(frozen=True)
class FileListing:
    """The visible files under a table path (one recursive listing) and the partition folders they sit in."""

    root: str
    files: tuple[pafs.FileInfo, ...]
    markers: frozenset[str]  # names directly under the root: metadata, .hoodie, _delta_log ...
    single_file: bool = False

    def partition_path(self, info: pafs.FileInfo) -> tuple[tuple[str, str], ...] | None:
        """``((key, value), ...)`` of the folders between the root and the file; None when one is not ``k=v``."""
        relative = info.path[len(self.root) :].strip("/")
        parts = relative.split("/")[:-1]
        pairs = []
        for part in parts:
            match = _PARTITION_DIR.match(part)
            if match is None:
                return None
            pairs.append((unquote(match.group("key")), unquote(match.group("value"))))
        return tuple(pairs)


def list_table(filesystem: pafs.FileSystem, path: str) -> FileListing | None:
    """One recursive listing of ``path`` (None when it does not exist); hidden files (``.``, ``_``) left out."""
    info = filesystem.get_file_info(path)
    if info.type == pafs.FileType.NotFound:
        return None
    if info.type == pafs.FileType.File:
        return FileListing(path, (info,), frozenset(), single_file=True)
    root = path.rstrip("/")
    entries = filesystem.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    markers = frozenset(entry.base_name for entry in entries if entry.path.rsplit("/", 1)[0] == root)
    files = tuple(sorted(
        (entry for entry in entries if entry.type == pafs.FileType.File and not is_hidden(entry.path[len(root):])),
        key=lambda entry: entry.path,
    ))
    return FileListing(root, files, markers)


def detect_table(filesystem: pafs.FileSystem, listing: FileListing, sample_files: int) -> TableLayout:
    """The layout of the table whose files ``listing`` holds, opening at most ``sample_files`` of them."""
    if "metadata" in listing.markers:
        metadata = _iceberg_metadata(filesystem, listing.root)
        if metadata is not None:
            return TableLayout("iceberg", f"Iceberg table (metadata/{metadata.rsplit('/', 1)[-1]})",
                               options={"metadata_location": metadata})
    if ".hoodie" in listing.markers:
        properties = _hudi_properties(filesystem, listing.root)
        table_type = properties.get("hoodie.table.type", "COPY_ON_WRITE").upper()
        fields = [name for name in properties.get("hoodie.table.partition.fields", "").split(",") if name]
        return TableLayout("hudi", f"Hudi {table_type.lower()} table (.hoodie)", options={"table_type": table_type},
                           partition_keys=tuple((name, "string") for name in fields))
    if "_delta_log" in listing.markers:
        return TableLayout("unknown", "a Delta Lake table (_delta_log): Delta is not supported; register it "
                                      "through a Delta-aware catalog or convert it to Iceberg")
    if not listing.files:
        return TableLayout("unknown", f"no data files under {listing.root}")
    keys, problem = _partition_keys(listing)
    if problem is not None:
        return TableLayout("unknown", problem)
    sample = _sample(listing.files, sample_files)
    formats: dict[str, FileFormat] = {}
    for info in sample:
        try:
            formats[info.path] = _sniff_file(filesystem, info)
        except (SniffError, OSError) as error:
            return TableLayout("unknown", f"{info.path}: {error}")
    kinds = {found.key for found in formats.values()}
    if len(kinds) > 1:
        examples = {found.kind: path for path, found in formats.items()}
        described = ", ".join(f"{path} is {kind}" for kind, path in sorted(examples.items()))
        if len(examples) == 1:
            described = "; ".join(f"{path}: {found.options}" for path, found in list(formats.items())[:2])
            return TableLayout("unknown", f"text files laid out differently: {described}")
        return TableLayout("unknown", f"mixed formats: {described}")
    chosen = next(iter(formats.values()))
    compressions = sorted({found.compression for found in formats.values() if found.compression})
    reason = f"{chosen.kind}, detected ({len(sample)} of {len(listing.files)} files opened)"
    return _file_layout(filesystem, listing, chosen, keys, list(formats), reason, compressions)


def layout_as(filesystem: pafs.FileSystem, listing: FileListing, settings: dict[str, str], sample_files: int) -> TableLayout:
    """The layout of the table read as ``settings`` say (``SET FORMAT``: 'type' and its options), with the
    columns read from its files that way; ValueError naming a setting that is wrong."""
    chosen = format_from_settings(settings)
    keys, problem = _partition_keys(listing)
    if problem is not None:
        raise ValueError(problem)
    if not listing.files:
        raise ValueError(f"no data files under {listing.root}")
    sample = [info.path for info in _sample(listing.files, min(sample_files, 2))]
    compressions = sorted({found for path in sample if (found := _compression_of(filesystem, path)) is not None})
    layout = _file_layout(filesystem, listing, chosen, keys, sample, f"{chosen.kind}, set by SET FORMAT", compressions)
    if layout.format == "unknown":
        raise ValueError(layout.reason)
    return layout


def format_from_settings(settings: dict[str, str]) -> FileFormat:
    """A :class:`FileFormat` from SET FORMAT's settings; ValueError naming what is wrong."""
    lowered = {key.lower(): value for key, value in settings.items()}
    kind = lowered.pop("type", "").strip().lower()
    if kind not in FILE_FORMATS:
        raise ValueError(f"'type' must be one of {', '.join(FILE_FORMATS)}, got '{kind}'")
    allowed = ("delimiter", "quote", "escape", "header") if kind == "csv" else ()
    unknown = sorted(set(lowered) - set(allowed))
    if unknown:
        raise ValueError(f"'{unknown[0]}' is not a setting of {kind} (settings: {', '.join(allowed) or 'none'})")
    options: dict[str, str] = {}
    if kind == "csv":
        options = {"delimiter": ",", "quote": '"', "escape": "\\", "header": "false"}
        for key in ("delimiter", "quote", "escape"):
            if key in lowered:
                value = lowered[key].replace("\\t", "\t")
                if len(value) != 1:
                    raise ValueError(f"'{key}' must be one character, got '{lowered[key]}'")
                options[key] = value
        if "header" in lowered:
            if lowered["header"].strip().lower() not in ("true", "false"):
                raise ValueError(f"'header' must be 'true' or 'false', got '{lowered['header']}'")
            options["header"] = lowered["header"].strip().lower()
    return FileFormat(kind, None, options)


def _file_layout(filesystem: pafs.FileSystem, listing: FileListing, chosen: FileFormat, keys: list[tuple[str, str]],
                 sample_paths: list[str], reason: str, compressions: list[str]) -> TableLayout:
    by_path = {info.path: info for info in listing.files}
    sample = [by_path[path] for path in sample_paths]
    first = sample[0]
    text_format = FileFormat(chosen.kind, compressions[0] if compressions else None, chosen.options)
    try:
        columns = _columns(filesystem, text_format, sample)
    except (SniffError, OSError, pa.ArrowException, ValueError) as error:
        return TableLayout("unknown", f"{first.path}: the schema cannot be read as {chosen.kind}: {error}")
    options = dict(chosen.options)
    if compressions:
        options["compression"] = ",".join(compressions)
    partition_keys = {name.lower() for name, _ in keys}
    clashing = [name for name, _ in columns if name.lower() in partition_keys]
    if clashing:
        return TableLayout("unknown", f"column {clashing[0]} is also a partition folder name in {listing.root}")
    return TableLayout(chosen.kind, reason, options, tuple(columns), tuple(keys), listing.single_file)


def _compression_of(filesystem: pafs.FileSystem, path: str) -> str | None:
    with filesystem.open_input_file(path) as handle:
        head = handle.read_at(4, 0)
    return compression_of(head)


def partition_folders(listing: FileListing, keys: Sequence[str]) -> dict[str, str]:
    """Partition name (``k1=v1/k2=v2``, as a metastore spells it) -> the folder holding it, relative to the
    table, as it is on disk: a folder's own escaping need not be Hive's, so the name is not the path."""
    folders: dict[str, str] = {}
    for info in listing.files:
        pairs = listing.partition_path(info)
        if not pairs or [key for key, _ in pairs] != list(keys):
            continue
        name = make_partition_name(keys, [None if value == DEFAULT_PARTITION else value for _, value in pairs])
        folders.setdefault(name, info.path[len(listing.root):].strip("/").rsplit("/", 1)[0])
    return folders


def _sample(files: Sequence[pafs.FileInfo], count: int) -> list[pafs.FileInfo]:
    """The first, the last and evenly spaced files between: a bad file anywhere is likely met."""
    candidates = [info for info in files if (info.size or 0) > 0] or list(files)
    if len(candidates) <= count:
        return list(candidates)
    if count == 1:
        return [candidates[0]]
    step = (len(candidates) - 1) / (count - 1)
    return [candidates[round(i * step)] for i in range(count)]


def _sniff_file(filesystem: pafs.FileSystem, info: pafs.FileInfo) -> FileFormat:
    size = int(info.size or 0)
    if size == 0:
        raise SniffError("the file is empty")
    with filesystem.open_input_file(info.path) as handle:
        head = handle.read_at(min(size, HEAD_BYTES), 0)
        tail = handle.read_at(4, size - 4) if size >= 4 else b""
    return sniff(head, tail, size, info.base_name)


def _partition_keys(listing: FileListing) -> tuple[list[tuple[str, str]], str | None]:
    """Partition keys with inferred Hive types, or the reason the folders are not a partitioned table."""
    layouts: dict[tuple[str, ...], str] = {}
    values: dict[str, set[str]] = {}
    for info in listing.files:
        pairs = listing.partition_path(info)
        if pairs is None:
            return [], f"{info.path} sits in a folder that is not a partition folder (key=value)"
        layouts.setdefault(tuple(key for key, _ in pairs), info.path)
        for key, value in pairs:
            values.setdefault(key, set()).add(value)
    if len(layouts) > 1:
        (first, first_path), (second, second_path) = list(layouts.items())[:2]
        return [], f"partition folders differ: {first_path} is under {'/'.join(first) or 'no partition'}, " \
                   f"{second_path} under {'/'.join(second) or 'no partition'}"
    keys = next(iter(layouts), ())
    return [(key, _partition_type(values[key])) for key in keys], None


def _partition_type(values: set[str]) -> str:
    present = [value for value in values if value != DEFAULT_PARTITION]
    if present and all(_INTEGER.match(value) for value in present):
        return "int" if all(-(2**31) <= int(value) < 2**31 for value in present) else "bigint"
    if present and all(_DATE.match(value) for value in present):
        return "date"
    return "string"


def _columns(filesystem: pafs.FileSystem, found: FileFormat, sample: list[pafs.FileInfo]) -> list[tuple[str, str]]:
    schema = _arrow_schema(filesystem, found, sample[0]) if found.kind != "avro" else None
    if found.kind == "avro":
        return _avro_columns(filesystem, sample[0])
    if found.kind in ("parquet", "orc") and len(sample) > 1:
        schemas = [schema] + [_arrow_schema(filesystem, found, info) for info in sample[1:]]
        try:
            schema = pa.unify_schemas(schemas)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
            raise SniffError(f"the files' schemas disagree: {error}") from None
    assert schema is not None
    return [(f.name, to_hive_string(from_arrow_type(_hive_friendly(f.type)))) for f in schema]


def _arrow_schema(filesystem: pafs.FileSystem, found: FileFormat, info: pafs.FileInfo) -> pa.Schema:
    if found.kind == "parquet":
        import pyarrow.parquet as pq

        with filesystem.open_input_file(info.path) as handle:
            return pq.read_schema(handle)
    if found.kind == "orc":
        import pyarrow.orc as orc

        with filesystem.open_input_file(info.path) as handle:
            return orc.ORCFile(handle).schema
    text = _text_sample(filesystem, info, found)
    if found.kind == "json":
        import pyarrow.json as pajson

        return pajson.read_json(io.BytesIO(text)).schema
    import pyarrow.csv as pacsv

    header = found.options.get("header") == "true"
    quote, escape = found.options.get("quote", '"'), found.options.get("escape", "\\")
    parse = pacsv.ParseOptions(delimiter=found.options.get("delimiter", ","), quote_char=quote,
                               double_quote=escape == quote, escape_char=False if escape == quote else escape)
    first = pacsv.read_csv(io.BytesIO(text), parse_options=parse,
                           read_options=pacsv.ReadOptions(autogenerate_column_names=not header))
    if header:
        return first.schema
    return pa.schema([pa.field(f"_c{i}", f.type) for i, f in enumerate(first.schema)])  # Spark's names


def _text_sample(filesystem: pafs.FileSystem, info: pafs.FileInfo, found: FileFormat) -> bytes:
    """Whole lines from the start of a text file (decompressed), at most about 1 MiB."""
    with filesystem.open_input_stream(info.path, compression=found.compression) as stream:
        data = stream.read(1 << 20)
    if len(data) == 1 << 20 and b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]
    return bytes(data)


def _hive_friendly(arrow_type: pa.DataType) -> pa.DataType:
    """Types Hive has no name for, as the nearest it has (nanosecond and zoned timestamps, large strings)."""
    if pa.types.is_timestamp(arrow_type):
        return pa.timestamp("us")
    if pa.types.is_large_string(arrow_type):
        return pa.string()
    if pa.types.is_null(arrow_type):
        return pa.string()  # a JSON or CSV column with no value in the sample
    if pa.types.is_struct(arrow_type):
        return pa.struct([pa.field(f.name, _hive_friendly(f.type)) for f in arrow_type])
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return pa.list_(_hive_friendly(arrow_type.value_type))
    return arrow_type


def _avro_columns(filesystem: pafs.FileSystem, info: pafs.FileInfo) -> list[tuple[str, str]]:
    """Columns from the writer's schema in an Avro object container's header (read by fastavro; no record is read)."""
    import fastavro

    with filesystem.open_input_file(info.path) as handle:
        header = handle.read_at(min(int(info.size or 0), HEAD_BYTES), 0)
    try:
        schema = fastavro.reader(io.BytesIO(header)).writer_schema
    except (ValueError, EOFError, StopIteration) as error:
        raise SniffError(f"an Avro header that cannot be read: {error or type(error).__name__}") from None
    if not isinstance(schema, dict):
        raise SniffError("an Avro file whose schema is not a record")
    struct = from_avro_schema(schema)
    return [(f.name, to_hive_string(f.type)) for f in struct.fields]


def _iceberg_metadata(filesystem: pafs.FileSystem, root: str) -> str | None:
    """The newest metadata file of an Iceberg table at ``root`` (version-hint.text, else the highest number)."""
    folder = f"{root}/metadata"
    hint = filesystem.get_file_info(f"{folder}/version-hint.text")
    if hint.type == pafs.FileType.File:
        with filesystem.open_input_stream(hint.path) as stream:
            version = stream.read().decode().strip()
        candidate = f"{folder}/v{version}.metadata.json"
        if filesystem.get_file_info(candidate).type == pafs.FileType.File:
            return candidate
    best: tuple[int, str] | None = None
    for entry in filesystem.get_file_info(pafs.FileSelector(folder)):
        match = _ICEBERG_METADATA.match(entry.base_name)
        if match:
            number = int(match.group("v") or match.group("n"))
            if best is None or number > best[0]:
                best = (number, entry.path)
    return best[1] if best else None


def _hudi_properties(filesystem: pafs.FileSystem, root: str) -> dict[str, str]:
    """``.hoodie/hoodie.properties`` (table type, partition fields); empty when it cannot be read."""
    try:
        with filesystem.open_input_stream(f"{root}/.hoodie/hoodie.properties") as stream:
            text = stream.read().decode("utf-8", "replace")
    except OSError:
        return {}
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}
