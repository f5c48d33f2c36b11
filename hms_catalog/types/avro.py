"""Avro schemas (Hudi's ``extraMetadata.schema`` in commit metadata) into the type tree.

Spark reads Hudi tables through Spark's own Avro schema converter, so this module reproduces its
choices (``org.apache.spark.sql.avro.SchemaConverters.toSqlType``), not a reading of the Avro spec:

* a union with ``"null"`` makes the value nullable; any other non-union type is NOT NULL;
* unions of several non-null branches: ``[int, long]`` -> bigint, ``[float, double]`` -> double,
  anything else a struct of nullable ``member0``, ``member1``, ... fields (this is what Spark shows;
  a Hive ``uniontype`` node would make the column unreadable);
* ``enum`` -> string, ``fixed`` -> ``FixedType`` (Spark: binary), map keys are strings;
* logical types: ``decimal`` on bytes/fixed, ``date`` on int, ``timestamp-millis/micros`` -> timestamp,
  ``local-timestamp-millis/micros`` -> timestamp_ntz. ``uuid`` stays a string and ``time-millis`` /
  ``time-micros`` stay int / bigint, because Spark reads them so. A logical type that is invalid
  (a decimal whose scale exceeds its precision, or that does not fit its fixed size) or sits on the
  wrong base type is ignored, as the Avro library does; a valid decimal beyond 38 digits is refused;
* Spark's own ``spark.sql.catalyst.type`` property marks its interval columns;
* recursive records are refused, as Spark does by default.

Field ``doc`` becomes the comment. Errors name the field path in ``column``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeGuard

from hms_catalog.errors import SchemaError, UnsupportedTypeError
from hms_catalog.types.tree import (
    MAX_DECIMAL_PRECISION,
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntervalDayTimeType,
    IntervalYearMonthType,
    IntType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNtzType,
    TimestampType,
    VoidType,
)

__all__ = ["from_avro_schema"]

_PRIMITIVES: dict[str, DataType] = {
    "null": VoidType(),
    "boolean": BooleanType(),
    "int": IntType(),
    "long": BigIntType(),
    "float": FloatType(),
    "double": DoubleType(),
    "bytes": BinaryType(),
    "string": StringType(),
}

# (base type, logicalType) -> type; pairs not listed fall back to the base type, as Spark does.
_LOGICAL_TYPES: dict[tuple[str, str], DataType] = {
    ("int", "date"): DateType(),
    ("long", "timestamp-millis"): TimestampType(),
    ("long", "timestamp-micros"): TimestampType(),
    ("long", "local-timestamp-millis"): TimestampNtzType(),
    ("long", "local-timestamp-micros"): TimestampNtzType(),
}

CATALYST_TYPE_PROP = "spark.sql.catalyst.type"
_CATALYST_TYPES: dict[tuple[str, str], DataType] = {
    ("int", "interval year to month"): IntervalYearMonthType(),
    ("long", "interval day to second"): IntervalDayTimeType(),
}

_NAMED_KINDS = frozenset({"record", "error", "enum", "fixed"})

_Result = tuple[DataType, bool]  # a type and whether it is nullable


def from_avro_schema(schema: str | Mapping[str, Any]) -> StructType:
    """Translate a table's Avro schema (JSON text or parsed JSON); it must be a record."""
    if isinstance(schema, str):
        try:
            parsed: Any = json.loads(schema)
        except json.JSONDecodeError as e:
            raise SchemaError(f"Avro schema is not valid JSON: {e.msg}", position=e.pos) from e
    else:
        parsed = schema
    if not (isinstance(parsed, Mapping) and parsed.get("type") in ("record", "error")):
        raise SchemaError(f"a table's Avro schema must be a record, not {_show(parsed)}")
    result, _ = _Reader().read(parsed, namespace="", path=None)
    assert isinstance(result, StructType)
    return result


def _show(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class _Reader:
    """One translation: holds the named types defined so far, which later branches may reference."""

    def __init__(self) -> None:
        self.named: dict[str, DataType] = {}
        self.in_progress: set[str] = set()

    def fail(self, message: str, path: str | None) -> SchemaError:
        return SchemaError(message, column=path)

    def read(self, schema: Any, namespace: str, path: str | None) -> _Result:
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return _PRIMITIVES[schema], schema == "null"
            return self.reference(schema, namespace, path), False
        if isinstance(schema, list):
            return self.union(schema, namespace, path)
        if isinstance(schema, Mapping):
            return self.complex(schema, namespace, path)
        raise self.fail(f"expected an Avro schema but found {_show(schema)}", path)

    def reference(self, name: str, namespace: str, path: str | None) -> DataType:
        candidates = [name] if "." in name else ([f"{namespace}.{name}", name] if namespace else [name])
        for full_name in candidates:
            if full_name in self.in_progress:
                raise UnsupportedTypeError(
                    f"recursive reference to record '{full_name}': Spark cannot read recursive Avro schemas",
                    column=path,
                )
            if full_name in self.named:
                return self.named[full_name]
        raise self.fail(f"unknown Avro type '{name}'", path)

    def complex(self, schema: Mapping[str, Any], namespace: str, path: str | None) -> _Result:
        kind = schema.get("type")
        if not isinstance(kind, str):
            raise self.fail(f"an Avro schema object needs a string 'type' but has {_show(kind)}", path)
        if kind in _PRIMITIVES:
            return self.primitive(kind, schema, path), kind == "null"
        if kind == "array":
            if "items" not in schema:
                raise self.fail("Avro array has no 'items'", path)
            element, nullable = self.read(schema["items"], namespace, path)
            return ArrayType(element, nullable), False
        if kind == "map":
            if "values" not in schema:
                raise self.fail("Avro map has no 'values'", path)
            value, nullable = self.read(schema["values"], namespace, path)
            return MapType(StringType(), value, nullable), False
        if kind in _NAMED_KINDS:
            return self.named_type(kind, schema, namespace, path), False
        return self.reference(kind, namespace, path), False

    def primitive(self, kind: str, schema: Mapping[str, Any], path: str | None) -> DataType:
        logical = schema.get("logicalType")
        if kind == "bytes" and logical == "decimal":
            return self.decimal(schema, None, path) or BinaryType()
        found = _LOGICAL_TYPES.get((kind, logical)) if isinstance(logical, str) else None
        if found is not None:
            return found
        catalyst = schema.get(CATALYST_TYPE_PROP)
        if kind in ("int", "long") and catalyst is not None:
            interval = _CATALYST_TYPES.get((kind, " ".join(str(catalyst).lower().split())))
            if interval is None:
                raise UnsupportedTypeError(f"unsupported {CATALYST_TYPE_PROP} '{catalyst}' on Avro {kind}", column=path)
            return interval
        return _PRIMITIVES[kind]

    def decimal(self, schema: Mapping[str, Any], size: int | None, path: str | None) -> DataType | None:
        """The decimal a ``decimal`` logical type stands for, or None where Avro deems it invalid."""
        precision, scale = schema.get("precision"), schema.get("scale", 0)
        if not (_is_int(precision) and _is_int(scale)) or precision <= 0 or not 0 <= scale <= precision:
            return None  # an invalid decimal: Avro ignores the logical type
        if size is not None and precision > _max_precision(size):
            return None
        if precision > MAX_DECIMAL_PRECISION:
            raise UnsupportedTypeError(
                f"decimal({precision},{scale}) exceeds Spark's maximum precision of {MAX_DECIMAL_PRECISION}",
                column=path,
            )
        return DecimalType(precision, scale)

    def named_type(self, kind: str, schema: Mapping[str, Any], namespace: str, path: str | None) -> DataType:
        name = schema.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(f"Avro {kind} has no 'name'", path)
        if "." in name:
            full_name = name
            namespace = name.rsplit(".", 1)[0]
        else:
            own = schema.get("namespace")
            namespace = own if isinstance(own, str) else namespace
            full_name = f"{namespace}.{name}" if namespace else name
        if full_name in self.named or full_name in self.in_progress:
            raise self.fail(f"Avro type '{full_name}' is defined twice", path)
        if kind in ("record", "error"):
            self.in_progress.add(full_name)
            result: DataType = self.record(schema, namespace, path)
            self.in_progress.discard(full_name)
        elif kind == "enum":
            symbols = schema.get("symbols")
            if not (isinstance(symbols, list) and all(isinstance(s, str) for s in symbols)):
                raise self.fail(f"Avro enum '{full_name}' needs a list of string 'symbols'", path)
            result = StringType()
        else:
            size = schema.get("size")
            if not _is_int(size) or size < 0:
                raise self.fail(f"Avro fixed '{full_name}' needs a non-negative integer 'size'", path)
            decimal = self.decimal(schema, size, path) if schema.get("logicalType") == "decimal" else None
            result = decimal or FixedType(size)
        self.named[full_name] = result
        return result

    def record(self, schema: Mapping[str, Any], namespace: str, path: str | None) -> StructType:
        fields = schema.get("fields")
        if not isinstance(fields, list):
            raise self.fail(f"Avro record '{schema.get('name')}' needs a list of 'fields'", path)
        seen: set[str] = set()
        result: list[StructField] = []
        for field in fields:
            name = field.get("name") if isinstance(field, Mapping) else None
            if not isinstance(name, str) or not name:
                raise self.fail(f"Avro record field without a 'name': {_show(field)}", path)
            field_path = f"{path}.{name}" if path else name
            if name in seen:
                raise self.fail(f"duplicate field '{name}' in Avro record", field_path)
            seen.add(name)
            if "type" not in field:
                raise self.fail(f"Avro field '{name}' has no 'type'", field_path)
            field_type, nullable = self.read(field["type"], namespace, field_path)
            doc = field.get("doc")
            result.append(StructField(name, field_type, nullable, doc if isinstance(doc, str) else None))
        return StructType(tuple(result))

    def union(self, branches: list[Any], namespace: str, path: str | None) -> _Result:
        if not branches:
            raise self.fail("an Avro union needs at least one branch", path)
        seen: set[str] = set()
        non_null: list[Any] = []
        for branch in branches:
            if isinstance(branch, list):
                raise self.fail("an Avro union may not directly contain another union", path)
            key = _branch_key(branch)
            if key in seen:
                raise self.fail(f"Avro union contains '{key}' twice", path)
            seen.add(key)
            if key != "null":
                non_null.append(branch)
        has_null = len(non_null) < len(branches)
        if not non_null:
            return VoidType(), True
        if len(non_null) == 1:
            data_type, nullable = self.read(non_null[0], namespace, path)
            return data_type, nullable or has_null
        bases = {_base_type(b) for b in non_null}
        if len(non_null) == 2 and bases == {"int", "long"}:
            return BigIntType(), has_null
        if len(non_null) == 2 and bases == {"float", "double"}:
            return DoubleType(), has_null
        members = []
        for i, branch in enumerate(non_null):
            member_type, _ = self.read(branch, namespace, path)
            members.append(StructField(f"member{i}", member_type, nullable=True))
        return StructType(tuple(members)), has_null


def _branch_key(branch: Any) -> str:
    """What makes union branches duplicates: the type for unnamed types, the name for named ones."""
    if isinstance(branch, Mapping):
        kind = branch.get("type")
        if kind in _NAMED_KINDS:
            return f"{kind}:{branch.get('name')}"
        return str(kind)
    return str(branch)


def _base_type(branch: Any) -> str:
    return str(branch.get("type")) if isinstance(branch, Mapping) else str(branch)


def _max_precision(size: int) -> int:
    """The most decimal digits a two's-complement number of ``size`` bytes always holds (Avro's rule)."""
    if size == 0:
        return 0
    return len(str(2 ** (8 * size - 1))) - 1
