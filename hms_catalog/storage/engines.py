"""A catalog's storage settings in the names other engines read: pyiceberg's FileIO (hudi-rs's are made from
those, :func:`hms_catalog.formats.hudi_schema.hudi_storage_options`, with its timeouts from
:func:`object_store_timeouts`), and Hadoop's Configuration (what Spark's readers and writers use).

Users write one set of properties (Doris's, Hadoop's or Iceberg's names, see
:mod:`hms_catalog.storage.properties`); each engine gets the same store, endpoint and credentials in its
own spelling, so a table read through pyiceberg, hudi-rs, pyarrow or Spark reaches the same objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from hms_catalog._secrets import is_secret_key
from hms_catalog.storage.properties import HADOOP_KEY_PREFIXES, S3Settings, StorageConfig
from hms_catalog.storage.timeouts import RETRY_STRATEGIES, s3_attempts

if TYPE_CHECKING:
    from hms_catalog.storage.vending import VendedCredentials

__all__ = ["pyiceberg_properties", "object_store_timeouts", "hadoop_settings", "iceberg_client_properties",
           "vended_hadoop_settings", "SPARK_JARS_BY_SCHEME"]

# What Spark needs on its classpath to reach each scheme (the connector's error names it when missing).
SPARK_JARS_BY_SCHEME = {
    "s3a": "org.apache.hadoop:hadoop-aws (the version of Spark's Hadoop) with software.amazon.awssdk:bundle",
    "gs": "com.google.cloud.bigdataoss:gcs-connector (hadoop3 shaded)",
    "abfs": "org.apache.hadoop:hadoop-azure (the version of Spark's Hadoop)",
    "abfss": "org.apache.hadoop:hadoop-azure (the version of Spark's Hadoop)",
    "wasb": "org.apache.hadoop:hadoop-azure (the version of Spark's Hadoop)",
    "wasbs": "org.apache.hadoop:hadoop-azure (the version of Spark's Hadoop)",
    "oss": "org.apache.hadoop:hadoop-aliyun",
    "cosn": "com.qcloud.cos:hadoop-cos",
    "obs": "com.huaweicloud:hadoop-huaweicloud",
}
SPARK_JARS_BY_SCHEME["s3"] = SPARK_JARS_BY_SCHEME["s3n"] = SPARK_JARS_BY_SCHEME["s3a"]


def _endpoint_url(settings: S3Settings) -> str | None:
    host = settings.endpoint_host
    return f"{settings.scheme}://{host}" if host else None


def pyiceberg_properties(config: StorageConfig, raw: Mapping[str, str]) -> dict[str, str]:
    """The catalog's properties with pyiceberg's FileIO names added for the settings given in other names
    (a name pyiceberg reads that the user set is kept as set)."""
    found = dict(raw)
    s3 = config.s3
    attempts = s3_attempts(s3.request_timeout, s3.connect_timeout)
    derived = {
        "s3.endpoint": _endpoint_url(s3),
        "s3.region": s3.region or ("us-east-1" if s3.endpoint else None),
        "s3.access-key-id": s3.access_key,
        "s3.secret-access-key": s3.secret_key,
        "s3.session-token": s3.session_token,
        "s3.path-style-access": "true" if s3.path_style else None,
        # the catalog's request timeout as the whole wait, shared by the attempts (see storage/timeouts.py)
        "s3.connect-timeout": str(attempts.connect_timeout),
        "s3.request-timeout": str(attempts.silence),
        "s3.retry-strategy-impl": RETRY_STRATEGIES[attempts.attempts],
        "gcs.oauth2.token": config.gcs.access_token,
        "gcs.service.host": config.gcs.endpoint,
        "gcs.project-id": config.gcs.project_id,
        "adls.account-name": config.azure.account_name,
        "adls.account-key": config.azure.account_key,
        "adls.sas-token": config.azure.sas_token,
    }
    for key, value in derived.items():
        if value is not None:
            found.setdefault(key, value)
    if s3.endpoint:
        found["s3.endpoint"] = _endpoint_url(s3) or found["s3.endpoint"]  # a bare host:port gets its scheme
    return found


def object_store_timeouts(settings: S3Settings) -> dict[str, str]:
    """hudi-rs's timeouts for a store, in the names of Rust's ``object_store``: an attempt of a request (connection,
    request and answer) within the catalog's request timeout, its connection within the connect timeout (its
    defaults are 30 s and 5 s). Its retries cannot be set (ten, within three minutes): the catalog holds the
    whole call to the request timeout from outside (:mod:`hms_catalog.storage.bounded`), and these make the
    call it leaves behind end sooner."""
    return {"timeout": _milliseconds(settings.request_timeout),
            "connect_timeout": _milliseconds(min(settings.connect_timeout, settings.request_timeout))}


def _milliseconds(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"  # object_store reads durations as humantime ("2000ms")


def hadoop_settings(config: StorageConfig, *, secrets: bool) -> dict[str, str]:
    """Hadoop Configuration keys for Spark's readers and writers of this catalog's tables.

    Hadoop keys the user gave pass unchanged; the S3 settings given in other names become ``fs.s3a.*``
    (with ``s3://`` and ``s3n://`` served by S3A, as on EMR). ``secrets=False`` leaves out credentials:
    what may be shown (a plan, a listing); the driver fetches the rest from the service's endpoint for it.
    """
    settings = {key: value for key, value in config.hadoop.conf.items() if key.startswith(HADOOP_KEY_PREFIXES)}
    s3 = config.s3
    derived = {
        "fs.s3a.endpoint": _endpoint_url(s3),
        "fs.s3a.endpoint.region": s3.region,
        "fs.s3a.path.style.access": "true" if s3.path_style else None,
        "fs.s3a.connection.maximum": str(s3.max_connections) if s3.endpoint or s3.region else None,
        "fs.s3a.connection.ssl.enabled": "false" if s3.scheme == "http" and s3.endpoint else None,
    }
    if s3.endpoint or s3.has_credentials or s3.region:
        derived["fs.s3.impl"] = "org.apache.hadoop.fs.s3a.S3AFileSystem"
        derived["fs.s3n.impl"] = "org.apache.hadoop.fs.s3a.S3AFileSystem"
    if secrets and s3.has_credentials:
        derived["fs.s3a.access.key"] = s3.access_key
        derived["fs.s3a.secret.key"] = s3.secret_key
        derived["fs.s3a.session.token"] = s3.session_token
        if s3.session_token:
            derived["fs.s3a.aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
    for key, value in derived.items():
        if value is not None:
            settings.setdefault(key, value)
    if not secrets:
        settings = {key: value for key, value in settings.items() if not is_secret_key(key) and not _is_access_key(key)}
    return settings


def _is_access_key(key: str) -> bool:
    """An access key id: not a secret alone, but kept with its secret (never shown without it either)."""
    lowered = key.lower().replace("_", ".").replace("-", ".")
    return "access.key" in lowered or "account.key" in lowered


def iceberg_client_properties(config: StorageConfig, vended: VendedCredentials | None) -> dict[str, str]:
    """What an Iceberg REST client (pyiceberg's FileIO, DuckDB's secret, Iceberg Java's S3FileIO) needs to reach
    the catalog's S3 store with ``vended``, in the names the Iceberg REST spec's clients read: the store's
    endpoint, region and addressing, and the key (with its session token and expiry for an STS session)."""
    s3 = config.s3
    found = {
        "s3.endpoint": _endpoint_url(s3),
        "s3.region": s3.region or ("us-east-1" if s3.endpoint else None),
        "client.region": s3.region or ("us-east-1" if s3.endpoint else None),
        "s3.path-style-access": "true" if s3.path_style else None,
        "s3.force-virtual-addressing": "false" if s3.path_style else None,
    }
    if vended is not None:
        found["s3.access-key-id"] = vended.access_key
        found["s3.secret-access-key"] = vended.secret_key
        found["s3.session-token"] = vended.session_token
        if vended.expiration is not None:  # Iceberg Java refreshes the session before then
            found["s3.session-token-expires-at-ms"] = str(int(vended.expiration.timestamp() * 1000))
    return {key: value for key, value in found.items() if value is not None}


def vended_hadoop_settings(config: StorageConfig, vended: VendedCredentials | None) -> dict[str, str]:
    """:func:`hadoop_settings` without the catalog's key, with ``vended`` in its place. A session's key comes with
    its token and S3A's provider for it, and turns off Hadoop's FileSystem cache for S3: a cached FileSystem keeps
    the first key it was made with for the JVM's life, past the session's end and across tables."""
    settings = hadoop_settings(config, secrets=False)
    if vended is None:
        return settings
    settings["fs.s3a.access.key"] = vended.access_key
    settings["fs.s3a.secret.key"] = vended.secret_key
    if vended.session_token is not None:
        settings["fs.s3a.session.token"] = vended.session_token
        settings["fs.s3a.aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
        for scheme in ("s3a", "s3", "s3n"):
            settings[f"fs.{scheme}.impl.disable.cache"] = "true"
    return settings
