"""View metadata: a new view's first metadata, the spec's view updates applied, and its files.

pyiceberg 0.12 has the view metadata models (``pyiceberg.view.metadata``) but applies no view updates (its
``update_table_metadata`` knows tables only, and has no ``add-view-version``), so the spec's eight view updates
are applied here as Iceberg's Java ``ViewMetadata.Builder`` applies them: an added schema or version identical
to a known one reuses its id, ``-1`` names the last one added by the same request, a change of the current
version appends to the version log, and versions past ``version.history.num-entries`` (10 by default) are
expired (the current one and those the request added are kept; the log loses what comes before an expired
version). Metadata files are named as ``BaseViewOperations`` names them
(``<location>/metadata/<nnnnn>-<uuid>.metadata.json``, uncompressed).
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from service.iceberg_rest.errors import IcebergError

__all__ = ["apply_view_updates", "check_view_requirements", "metadata_file_for", "new_view_metadata",
           "read_view_metadata", "write_view_metadata"]

_LAST_ADDED = -1
HISTORY_SIZE = "version.history.num-entries"  # Java's ViewProperties.VERSION_HISTORY_SIZE
HISTORY_SIZE_DEFAULT = 10
_FILE_NUMBER = re.compile(r"/(\d+)-[^/]*\.metadata\.json$")


def _bad(message: str) -> IcebergError:
    return IcebergError(400, "BadRequestException", message)


def new_view_metadata(schema: Any, version: Any, location: str, properties: dict[str, str]) -> Any:
    """A created view's metadata: its one schema, its first version (id 1) current, a new UUID."""
    from pyiceberg.view.metadata import ViewHistoryEntry, ViewMetadata

    first = version.model_copy(update={"version_id": 1, "schema_id": schema.schema_id})
    return ViewMetadata.model_validate({
        "view-uuid": str(uuid.uuid4()), "format-version": 1, "location": location.rstrip("/"), "schemas": [schema],
        "current-version-id": 1, "versions": [first],
        "version-log": [ViewHistoryEntry(**{"timestamp-ms": first.timestamp_ms, "version-id": 1})],
        "properties": dict(properties)})


def check_view_requirements(metadata: Any, requirements: list[dict[str, Any]]) -> None:
    """``assert-view-uuid``, the spec's one view requirement; a failed one is a 409 CommitFailedException."""
    for requirement in requirements:
        kind = requirement.get("type")
        if kind != "assert-view-uuid":
            raise _bad(f"unknown view requirement {kind!r} (the spec has assert-view-uuid only)")
        if requirement.get("uuid") != metadata.view_uuid:
            raise IcebergError(409, "CommitFailedException", f"requirement failed: the view's UUID is {metadata.view_uuid}, "
                                                             f"not {requirement.get('uuid')}")


def apply_view_updates(metadata: Any, updates: list[dict[str, Any]]) -> Any:
    """``metadata`` with ``updates`` applied in order (a new object; the metadata given is not changed)."""
    state = _Builder(metadata)
    for update in updates:
        action = update.get("action")
        apply = _ACTIONS.get(str(action))
        if apply is None:
            raise _bad(f"unknown view update {action!r}")
        try:
            apply(state, update)
        except (KeyError, TypeError, ValueError) as error:
            raise _bad(f"view update {action!r} is malformed: {error}") from error
    return state.build()


class _Builder:
    def __init__(self, metadata: Any) -> None:
        self.fields: dict[str, Any] = {
            "view-uuid": metadata.view_uuid, "format-version": metadata.format_version, "location": metadata.location,
            "schemas": list(metadata.schemas), "current-version-id": metadata.current_version_id,
            "versions": list(metadata.versions), "version-log": list(metadata.version_log),
            "properties": dict(metadata.properties)}
        self.last_schema: int | None = None
        self.last_version: int | None = None
        self.added_versions = 0

    def build(self) -> Any:
        from pyiceberg.view.metadata import ViewMetadata

        self._expire_versions()
        return ViewMetadata(**self.fields)

    def _expire_versions(self) -> None:
        """Keep the newest versions (by id, as Java's builder), the current one always and every version this
        request added; the version log keeps what follows the newest entry of an expired version."""
        raw = self.fields["properties"].get(HISTORY_SIZE, str(HISTORY_SIZE_DEFAULT))
        try:
            size = int(raw)
        except ValueError:
            raise _bad(f"view property {HISTORY_SIZE} must be a whole number, got {raw!r}") from None
        if size < 1:
            raise _bad(f"view property {HISTORY_SIZE} must be at least 1, got {size}")
        keep = max(self.added_versions + 1, size)
        versions: list[Any] = self.fields["versions"]
        if len(versions) <= keep:
            return
        current = self.fields["current-version-id"]
        newest = sorted((v.version_id for v in versions if v.version_id != current), reverse=True)[: keep - 1]
        kept = {current, *newest}
        self.fields["versions"] = [v for v in versions if v.version_id in kept]
        log: list[Any] = []
        for entry in self.fields["version-log"]:
            if entry.version_id in kept:
                log.append(entry)
            else:
                log.clear()  # an expired version: what came before it goes too
        self.fields["version-log"] = log


def _assign_uuid(state: _Builder, update: dict[str, Any]) -> None:
    if update["uuid"] != state.fields["view-uuid"]:
        raise _bad(f"a view's UUID cannot be changed (it is {state.fields['view-uuid']})")


def _upgrade_format_version(state: _Builder, update: dict[str, Any]) -> None:
    if int(update["format-version"]) != 1:
        raise _bad(f"view format version {update['format-version']} is not supported (the spec has 1)")


def _add_schema(state: _Builder, update: dict[str, Any]) -> None:
    from pyiceberg.schema import Schema

    schema = Schema.model_validate(update["schema"])
    schemas: list[Any] = state.fields["schemas"]
    same = next((known for known in schemas if known.fields == schema.fields
                 and known.identifier_field_ids == schema.identifier_field_ids), None)
    if same is not None:
        state.last_schema = same.schema_id
        return
    new_id = max((known.schema_id for known in schemas), default=-1) + 1
    schemas.append(schema.model_copy(update={"schema_id": new_id}))
    state.last_schema = new_id


def _set_location(state: _Builder, update: dict[str, Any]) -> None:
    state.fields["location"] = str(update["location"]).rstrip("/")


def _set_properties(state: _Builder, update: dict[str, Any]) -> None:
    state.fields["properties"].update({str(k): str(v) for k, v in dict(update["updates"]).items()})


def _remove_properties(state: _Builder, update: dict[str, Any]) -> None:
    for key in update["removals"]:
        state.fields["properties"].pop(key, None)


def _add_view_version(state: _Builder, update: dict[str, Any]) -> None:
    from pyiceberg.view.metadata import ViewVersion

    version = ViewVersion.model_validate(update["view-version"])
    if version.schema_id == _LAST_ADDED:
        if state.last_schema is None:
            raise _bad("a view version's schema-id is -1 (the last added schema), but no schema was added")
        version = version.model_copy(update={"schema_id": state.last_schema})
    if version.schema_id not in {schema.schema_id for schema in state.fields["schemas"]}:
        raise _bad(f"a view version names schema {version.schema_id}, which the view does not have")
    dialects = [r.root.dialect.lower() for r in version.representations]
    if len(set(dialects)) != len(dialects):
        raise _bad(f"a view version has more than one SQL representation of one dialect: {dialects}")
    versions: list[Any] = state.fields["versions"]
    same = next((known for known in versions if _same_version(known, version)), None)
    if same is not None:
        state.last_version = same.version_id
        return
    new_id = max((known.version_id for known in versions), default=0) + 1
    versions.append(version.model_copy(update={"version_id": new_id}))
    state.last_version = new_id
    state.added_versions += 1


def _same_version(one: Any, other: Any) -> bool:
    """As Java's ``sameViewVersion``: equal but for id and timestamp."""
    ignored = {"version_id", "timestamp_ms"}
    return bool(one.model_dump(exclude=ignored) == other.model_dump(exclude=ignored))


def _set_current_view_version(state: _Builder, update: dict[str, Any]) -> None:
    from pyiceberg.view.metadata import ViewHistoryEntry

    wanted = int(update["view-version-id"])
    if wanted == _LAST_ADDED:
        if state.last_version is None:
            raise _bad("set-current-view-version -1 (the last added version), but no version was added")
        wanted = state.last_version
    version = next((known for known in state.fields["versions"] if known.version_id == wanted), None)
    if version is None:
        raise _bad(f"view version {wanted} does not exist")
    if wanted != state.fields["current-version-id"]:
        state.fields["current-version-id"] = wanted
        timestamp = version.timestamp_ms if state.last_version == wanted else int(time.time() * 1000)
        state.fields["version-log"].append(ViewHistoryEntry(**{"timestamp-ms": timestamp, "version-id": wanted}))


_ACTIONS = {"assign-uuid": _assign_uuid, "upgrade-format-version": _upgrade_format_version, "add-schema": _add_schema,
            "set-location": _set_location, "set-properties": _set_properties, "remove-properties": _remove_properties,
            "add-view-version": _add_view_version, "set-current-view-version": _set_current_view_version}


def metadata_file_for(metadata: Any, previous: str | None) -> str:
    """The next metadata file's location: one number past the previous file's, under the view's location."""
    number = 0
    found = _FILE_NUMBER.search(previous or "")
    if found:
        number = int(found.group(1)) + 1
    return f"{metadata.location.rstrip('/')}/metadata/{number:05d}-{uuid.uuid4()}.metadata.json"


def write_view_metadata(io: Any, metadata: Any, location: str) -> None:
    with io.new_output(location).create(overwrite=False) as stream:
        stream.write(metadata.model_dump_json().encode("utf-8"))


def read_view_metadata(io: Any, location: str) -> Any:
    from pyiceberg.view.metadata import ViewMetadata

    with io.new_input(location).open() as stream:
        return ViewMetadata.model_validate_json(stream.read())
