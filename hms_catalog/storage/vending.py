"""Storage credentials vended to engines that reach a table's files themselves: an Iceberg REST client
(pyiceberg, DuckDB, Spark's Iceberg runtime) and the Spark connector's driver.

A catalog's own S3 key reaches every object it can, for as long as it lives: handing it to a client hands over
the store. So a catalog with a role (``s3.role_arn``) vends STS AssumeRole sessions instead, each with a session
policy that allows one table's location only (its objects, and a listing of its prefix that no sibling whose name
merely begins with the same text passes), reads only unless the token may write, for
``storage.vending.duration`` seconds. The effective permissions are the role's intersected with that policy, so a
role broader than any table is still safe to use. Vending the catalog's own key takes
``'storage.vending'='catalog_key'`` on the catalog, by name; otherwise a catalog vends nothing.

Sessions are kept per (location, access, requester) for half their life, so a client that loads a table in a
loop does not make an STS call each time, and what it is handed always has at least half its life left.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cachetools import TTLCache

from hms_catalog.errors import StorageError, StorageUnavailableError, VendingDisabledError
from hms_catalog.storage.properties import (
    S3_ROLE_ARN,
    S3_SCHEMES,
    STORAGE_VENDING,
    StorageConfig,
    VendingMode,
)

__all__ = ["VendedCredentials", "CredentialVendor", "session_policy", "sts_endpoint", "StsCall"]

_SESSIONS_KEPT = 1024
_SESSION_NAME = re.compile(r"[^\w+=,.@-]")
_POLICY_LITERAL = {"$": "${$}", "*": "${*}", "?": "${?}"}  # IAM's escapes: a key's own '*' is no wildcard
# One AssumeRole call: (endpoint, region, catalog's key or None, keyword arguments of AssumeRole) -> its answer.
StsCall = Callable[[str, str, "tuple[str, str, str | None] | None", dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class VendedCredentials:
    """An S3 key for a client; ``session_token`` and ``expiration`` set for an STS session (None: the catalog's own
    long-lived key). Secret fields stay out of ``repr`` so that no log line shows them."""

    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)
    expiration: datetime | None = None


def _bucket_and_prefix(location: str) -> tuple[str, str]:
    scheme, _, rest = location.partition("://")
    if scheme.lower() not in S3_SCHEMES or not rest:
        raise StorageError(f"credentials are vended for S3 locations (s3://, s3a://, s3n://), not for {location!r}")
    bucket, _, key = rest.partition("/")
    return bucket, key.strip("/")


def _literal(text: str) -> str:
    return "".join(_POLICY_LITERAL.get(char, char) for char in text)


def session_policy(location: str, *, write: bool, partition: str = "aws") -> dict[str, Any]:
    """The session policy of a credential for the table at ``location``: Get (and, to write, Put and Delete) of
    the objects under it, and List of its prefix as ``prefix/`` and ``prefix/*`` only, so that a table ``t``
    lists nothing of a table ``t2`` beside it."""
    bucket, prefix = _bucket_and_prefix(location)
    objects = ["s3:GetObject", "s3:GetObjectVersion"]
    if write:
        objects += ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]
    bucket_arn = f"arn:{partition}:s3:::{_literal(bucket)}"
    listing: dict[str, Any] = {"Sid": "ListTheTable", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [bucket_arn]}
    if prefix:
        listing["Condition"] = {"StringLike": {"s3:prefix": [f"{_literal(prefix)}/", f"{_literal(prefix)}/*"]}}
    statements = [
        {"Sid": "TheTableObjects", "Effect": "Allow", "Action": objects,
         "Resource": [f"{bucket_arn}/{_literal(prefix)}/*" if prefix else f"{bucket_arn}/*"]},
        listing,
        {"Sid": "TheBucketRegion", "Effect": "Allow", "Action": ["s3:GetBucketLocation"], "Resource": [bucket_arn]},
    ]
    return {"Version": "2012-10-17", "Statement": statements}


def sts_endpoint(config: StorageConfig) -> str:
    """Where AssumeRole is asked: ``s3.sts_endpoint``; else an S3-compatible store's own scheme, host and port
    (MinIO and Ceph serve STS there); else AWS's regional STS endpoint of ``s3.region``."""
    given = config.vending.sts_endpoint
    s3 = config.s3
    if given is not None:
        return given if "://" in given else f"{s3.scheme if s3.endpoint else 'https'}://{given}"
    if s3.endpoint_host is not None:
        return f"{s3.scheme}://{s3.endpoint_host}"
    region = s3.region or "us-east-1"
    return f"https://sts.{region}.amazonaws.com" + (".cn" if region.startswith("cn-") else "")


def _partition(role_arn: str) -> str:
    return role_arn.split(":", 2)[1] or "aws"


def _boto3_assume_role(endpoint: str, region: str, key: tuple[str, str, str | None] | None,
                       arguments: dict[str, Any]) -> dict[str, Any]:
    """AssumeRole with boto3, signed with the catalog's key (None: the environment's credentials, as the AWS SDK
    finds them)."""
    import boto3
    from botocore.config import Config

    credentials = {} if key is None else {"aws_access_key_id": key[0], "aws_secret_access_key": key[1],
                                          "aws_session_token": key[2]}
    client = boto3.client("sts", endpoint_url=endpoint, region_name=region, **credentials,
                          config=Config(connect_timeout=10, read_timeout=30, retries={"max_attempts": 3}))
    answer: dict[str, Any] = client.assume_role(**arguments)
    return answer


class CredentialVendor:
    """A catalog's vending of storage credentials (see the module's docstring); ``name``: the catalog's, for
    errors and session names. ``assume_role``: how STS is called (boto3 unless given)."""

    def __init__(self, config: StorageConfig, *, name: str = "", assume_role: StsCall | None = None) -> None:
        self.config = config
        self.name = name
        self._assume_role = assume_role or _boto3_assume_role
        self._sessions: TTLCache[tuple[str, bool, str], VendedCredentials] = TTLCache(
            _SESSIONS_KEPT, config.vending.duration / 2)
        self._lock = threading.Lock()

    @property
    def mode(self) -> VendingMode:
        return self.config.vending.mode

    def check_enabled(self) -> None:
        """VendingDisabledError unless the catalog vends credentials."""
        if self.mode is VendingMode.NONE:
            raise VendingDisabledError(
                f"storage credential vending is off for catalog '{self.name}': set '{S3_ROLE_ARN}' to vend scoped STS "
                f"sessions, or '{STORAGE_VENDING}'='{VendingMode.CATALOG_KEY.value}' to vend the catalog's own key; "
                "until then, clients reach its store with their own settings")

    def catalog_key(self) -> VendedCredentials | None:
        """The catalog's own key, where it vends it (``catalog_key``); None when it has none (the environment's)."""
        self.check_enabled()
        if self.mode is not VendingMode.CATALOG_KEY:
            raise VendingDisabledError(f"catalog '{self.name}' vends sessions scoped to one table, never its own key: "
                                       "ask for a table's credentials")
        s3 = self.config.s3
        if s3.access_key is None or s3.secret_key is None:
            return None
        return VendedCredentials(s3.access_key, s3.secret_key, s3.session_token)

    def vend(self, location: str, *, write: bool, requester: str) -> VendedCredentials | None:
        """Credentials for the table at ``location``: a session scoped to it (``role``), or the catalog's own key
        (``catalog_key``, any location); ``requester`` (a token's name) names the STS session, as CloudTrail shows it."""
        if self.mode is not VendingMode.ROLE:
            return self.catalog_key()
        if location.partition("://")[0].lower() not in S3_SCHEMES:
            return None  # a role is an S3 role: a table elsewhere (HDFS) is reached with the client's own settings
        key = (location.rstrip("/"), write, requester)
        with self._lock:
            found = self._sessions.get(key)
        if found is not None:
            return found
        vended = self._session(key[0], write=write, requester=requester)
        with self._lock:
            self._sessions[key] = vended
        return vended

    def _session(self, location: str, *, write: bool, requester: str) -> VendedCredentials:
        vending, s3 = self.config.vending, self.config.s3
        assert vending.role_arn is not None, "role vending is validated to have a role"
        arguments: dict[str, Any] = {
            "RoleArn": vending.role_arn,
            "RoleSessionName": _SESSION_NAME.sub("-", f"hms-{self.name}-{requester}")[:64],
            "Policy": json.dumps(session_policy(location, write=write, partition=_partition(vending.role_arn)),
                                 separators=(",", ":")),
            "DurationSeconds": vending.duration,
        }
        if vending.external_id is not None:
            arguments["ExternalId"] = vending.external_id
        endpoint = sts_endpoint(self.config)
        key = (s3.access_key, s3.secret_key, s3.session_token) if s3.access_key and s3.secret_key else None
        try:
            answer = self._assume_role(endpoint, s3.region or "us-east-1", key, arguments)
        except Exception as error:  # botocore's errors, imported only where boto3 is used
            raise _sts_error(error, self.name, vending.role_arn, endpoint) from error
        credentials = answer["Credentials"]
        return VendedCredentials(credentials["AccessKeyId"], credentials["SecretAccessKey"],
                                 credentials["SessionToken"], credentials.get("Expiration"))


def _sts_error(error: Exception, catalog: str, role: str, endpoint: str) -> StorageError:
    """STS's refusal as StorageError (502), an STS out of reach as StorageUnavailableError (503); the message
    names the catalog, the role and the endpoint, never a key."""
    response = getattr(error, "response", None)
    if isinstance(response, dict) and "Error" in response:
        found = response["Error"]
        return StorageError(f"catalog '{catalog}': STS at {endpoint} refused to assume role {role}: "
                            f"{found.get('Code', 'error')}: {found.get('Message', '')}")
    what = type(error).__name__
    if what in ("EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError", "ConnectionClosedError"):
        return StorageUnavailableError(f"catalog '{catalog}': STS at {endpoint} cannot be reached to assume role "
                                       f"{role}: {error}")
    return StorageError(f"catalog '{catalog}': assuming role {role} at {endpoint} failed: {what}: {error}")
