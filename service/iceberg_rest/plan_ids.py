"""Plan ids and plan tasks that carry what they name, so that any replica answers them.

A plan id is the metadata file the plan read and the scan request, compressed and base64-encoded; a plan task
is a plan id and one page of its file scan tasks. Nothing is kept that another replica would need: the replica
that gets a plan id it did not make plans the same metadata file again (planning a metadata file is
deterministic: its snapshots and manifests never change) and answers the same tasks, in the same order.

They are not signed, as they need not be: a forged one asks for nothing a client could not ask for with a
scan request of its own. Every use checks the token's reader may read the catalog, and that the metadata
file is one of the table the route names (its current one or one in its metadata log), so a plan id of
another table, or of a file elsewhere, is refused as a plan that does not exist.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass
from typing import Any

from service.iceberg_rest.errors import IcebergError

__all__ = ["PlanKey", "plan_task", "read_plan_id", "read_plan_task"]

_VERSION = "p1"


@dataclass(frozen=True)
class PlanKey:
    """What a plan is of: one metadata file of the table, and the scan request as the spec's JSON."""

    metadata_location: str
    request: str  # canonical JSON (sorted keys): equal requests have equal ids

    @property
    def plan_id(self) -> str:
        body = json.dumps({"m": self.metadata_location, "r": json.loads(self.request)}, sort_keys=True,
                          separators=(",", ":")).encode("utf-8")
        return f"{_VERSION}.{base64.urlsafe_b64encode(zlib.compress(body, 9)).decode('ascii').rstrip('=')}"

    @classmethod
    def of(cls, metadata_location: str, request: dict[str, Any]) -> PlanKey:
        return cls(metadata_location, json.dumps(request, sort_keys=True, separators=(",", ":")))


def plan_task(key: PlanKey, page: int) -> str:
    return f"{key.plan_id}.{page}"


def read_plan_id(plan_id: str, kind: str = "NoSuchPlanIdException") -> PlanKey:
    """The key a plan id carries; 404 ``kind`` for one this service did not give."""
    version, _, encoded = plan_id.partition(".")
    try:
        if version != _VERSION or not encoded:
            raise ValueError("not a plan id of this service")
        body = json.loads(zlib.decompress(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))))
        if not isinstance(body, dict) or not isinstance(body.get("m"), str) or not isinstance(body.get("r"), dict):
            raise ValueError("not a plan id of this service")
    except (ValueError, binascii.Error, zlib.error, UnicodeError):
        what = "plan task" if kind == "NoSuchPlanTaskException" else "plan id"
        raise IcebergError(404, kind, f"{what} {plan_id[:80]!r} is not one this service gave") from None
    return PlanKey.of(body["m"], body["r"])


def read_plan_task(task: str) -> tuple[PlanKey, int]:
    """The plan and page a plan task names; 404 NoSuchPlanTaskException for one this service did not give."""
    plan_id, _, page = task.rpartition(".")
    if not page.isdigit() or not plan_id:
        raise IcebergError(404, "NoSuchPlanTaskException", f"plan task {task[:80]!r} is not one this service gave")
    return read_plan_id(plan_id, "NoSuchPlanTaskException"), int(page)
