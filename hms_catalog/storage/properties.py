"""Storage properties of a catalog: how to reach the stores its tables' locations name.

Users write the names they already know, so each setting is read under several spellings, first found
wins: Doris's (``s3.endpoint``, ``s3.access_key``, ``use_path_style``), their ``AWS_*`` aliases, Hadoop's
(``fs.s3a.endpoint``, ``fs.s3a.access.key``), and the names Iceberg's FileIO and Trino use
(``s3.access-key-id``, ``s3.path-style-access``). ``s3://``, ``s3a://`` and ``s3n://`` all reach one store;
``oss://``, ``cosn://``/``cos://`` and ``obs://`` reach S3-compatible endpoints with their own prefixes
(``oss.endpoint``), falling back to the ``s3.*`` settings. No credentials at all: the environment's or the
instance profile's, as the AWS SDK finds them.

HDFS and any other Hadoop filesystem take every ``dfs.*``, ``fs.*``, ``hadoop.*`` and ``ipc.*`` key as given
(``dfs.nameservices`` with its HA keys, ``hadoop.security.authentication`` and the Kerberos login).
Values are checked here, once, when the catalog is defined; the errors name the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from urllib.parse import urlsplit

from hms_catalog._property_values import property_as_bool, property_as_int, property_as_seconds
from hms_catalog.errors import ConfigurationError

__all__ = [
    "STORAGE_VENDING",
    "STORAGE_VENDING_DURATION",
    "STORAGE_VENDING_DURATION_DEFAULT",
    "S3_ROLE_ARN",
    "S3_EXTERNAL_ID",
    "S3_STS_ENDPOINT",
    "VendingMode",
    "VendingConfig",
    "S3_SCHEMES",
    "S3_COMPATIBLE_SCHEMES",
    "HADOOP_KEY_PREFIXES",
    "S3Settings",
    "GcsSettings",
    "AzureSettings",
    "HadoopSettings",
    "StorageConfig",
]

S3_SCHEMES = ("s3", "s3a", "s3n")
# Other S3-compatible stores, by scheme: the prefix of their own settings (``oss.endpoint`` ...).
S3_COMPATIBLE_SCHEMES = {"oss": "oss", "cos": "cos", "cosn": "cos", "obs": "obs", "gs": "gs"}
HADOOP_KEY_PREFIXES = ("dfs.", "fs.", "hadoop.", "ipc.", "viewfs.")

# Credentials vended to engines that reach a table's files themselves (Iceberg REST clients, the Spark driver):
# ``role`` vends STS AssumeRole sessions of ``s3.role_arn`` scoped to one table (the default where a role is set),
# ``catalog_key`` the catalog's own key (only when asked for by name), ``none`` nothing (the default otherwise).
STORAGE_VENDING = "storage.vending"
STORAGE_VENDING_DURATION = "storage.vending.duration"
STORAGE_VENDING_DURATION_DEFAULT = 900  # seconds: the least STS grants
_STS_MAX_DURATION = 43200  # the most STS grants (a role's own maximum may be lower: STS says so then)
# Doris's names for the role a catalog assumes and the external id its trust policy asks for.
S3_ROLE_ARN = "s3.role_arn"
S3_EXTERNAL_ID = "s3.external_id"
S3_STS_ENDPOINT = "s3.sts_endpoint"
_ARN = re.compile(r"^arn:[a-z0-9-]*:[a-z0-9-]+:[^:]*:[^:]*:\S+$")
_EXTERNAL_ID = re.compile(r"^[\w+=,.@:/-]{2,1224}$")  # STS's own rule for ExternalId

# Each S3 setting and the keys it is read from, in order of preference.
_S3_KEYS: dict[str, tuple[str, ...]] = {
    "endpoint": ("s3.endpoint", "AWS_ENDPOINT", "fs.s3a.endpoint", "hive.s3.endpoint"),
    "region": ("s3.region", "AWS_REGION", "fs.s3a.endpoint.region", "client.region", "hive.s3.region"),
    "access_key": ("s3.access_key", "AWS_ACCESS_KEY", "fs.s3a.access.key", "s3.access-key-id",
                   "s3.aws-access-key", "hive.s3.aws-access-key"),
    "secret_key": ("s3.secret_key", "AWS_SECRET_KEY", "fs.s3a.secret.key", "s3.secret-access-key",
                   "s3.aws-secret-key", "hive.s3.aws-secret-key"),
    "session_token": ("s3.session_token", "AWS_TOKEN", "fs.s3a.session.token", "s3.session-token"),
    "path_style": ("use_path_style", "s3.path-style-access", "fs.s3a.path.style.access", "s3.path_style_access",
                   "hive.s3.path-style-access"),
    "max_connections": ("s3.connection.maximum", "AWS_MAX_CONNECTIONS", "fs.s3a.connection.maximum"),
    "connect_timeout": ("s3.connection.timeout", "AWS_CONNECTION_TIMEOUT_MS", "fs.s3a.connection.establish.timeout"),
    "request_timeout": ("s3.request.timeout", "AWS_REQUEST_TIMEOUT_MS", "fs.s3a.connection.request.timeout"),
    "ssl": ("s3.use_ssl", "fs.s3a.connection.ssl.enabled"),
}
# Timeouts given in milliseconds unless a unit says otherwise (Doris's and Hadoop's convention).
_S3_DEFAULT_CONNECT_TIMEOUT = 10.0
_S3_DEFAULT_REQUEST_TIMEOUT = 60.0
_S3_DEFAULT_MAX_CONNECTIONS = 50
_GCS_KEYS: dict[str, tuple[str, ...]] = {
    "endpoint": ("gcs.endpoint", "gs.endpoint.override"),
    "access_token": ("gcs.oauth2.token", "gs.oauth2.token"),
    "project_id": ("gcs.project-id", "gs.project_id"),
    "anonymous": ("gcs.anonymous",),
}
_AZURE_KEYS: dict[str, tuple[str, ...]] = {
    "account_name": ("adls.account-name", "azure.account_name", "fs.azure.account.name"),
    "account_key": ("adls.account-key", "azure.account_key"),
    "sas_token": ("adls.sas-token", "azure.sas_token"),
    "tenant_id": ("adls.tenant-id", "azure.tenant_id", "fs.azure.account.oauth2.client.tenant"),
    "client_id": ("adls.client-id", "azure.client_id", "fs.azure.account.oauth2.client.id"),
    "client_secret": ("adls.client-secret", "azure.client_secret", "fs.azure.account.oauth2.client.secret"),
    "endpoint": ("adls.endpoint", "azure.endpoint"),
}


def _first(props: Mapping[str, str], keys: tuple[str, ...]) -> tuple[str, str] | None:
    """(key, value) of the first of ``keys`` set to a non-empty value."""
    for key in keys:
        value = props.get(key)
        if value is not None and value.strip():
            return key, value.strip()
    return None


def _milliseconds(props: Mapping[str, str], found: tuple[str, str] | None, default: float) -> float:
    """A timeout given in milliseconds (a bare number) or with a unit (``10s``), in seconds."""
    if found is None:
        return default
    key, text = found
    if text.isdigit():
        seconds = int(text) / 1000.0
        if seconds <= 0:
            raise ConfigurationError(f"property '{key}' must be greater than zero, got '{text}'")
        return seconds
    return property_as_seconds({key: text}, key, default, positive=True)


@dataclass(frozen=True)
class S3Settings:
    """How to reach one S3 or S3-compatible store. ``endpoint`` None: AWS itself, by region.

    ``endpoint`` is kept as given; :attr:`endpoint_host` and :attr:`scheme` are what a client dials.
    Secret fields are excluded from ``repr`` so that no log line of a settings object shows them.
    """

    endpoint: str | None = None
    region: str | None = None
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    path_style: bool = False
    max_connections: int = _S3_DEFAULT_MAX_CONNECTIONS
    connect_timeout: float = _S3_DEFAULT_CONNECT_TIMEOUT
    request_timeout: float = _S3_DEFAULT_REQUEST_TIMEOUT  # the whole wait for a request, retries included (timeouts.py)
    ssl: bool = True
    request_timeout_key: str = _S3_KEYS["request_timeout"][0]  # the key it was read from, for errors to name

    @classmethod
    def from_properties(cls, props: Mapping[str, str], prefix: str | None = None) -> S3Settings:
        """The settings of ``s3.*`` (prefix None) or of an S3-compatible store's own prefix (``oss``),
        each of its settings falling back to the S3 one."""
        def find(name: str) -> tuple[str, str] | None:
            if prefix is not None:
                own = _first(props, (f"{prefix}.{name}", f"{prefix}.{name.replace('_', '-')}"))
                if own is not None:
                    return own
            return _first(props, _S3_KEYS[name])

        access, secret = find("access_key"), find("secret_key")
        if (access is None) != (secret is None):
            given, missing = ("access key", "secret key") if access else ("secret key", "access key")
            raise ConfigurationError(
                f"storage: an S3 {given} is set ('{(access or secret)[0]}') without its {missing}"  # type: ignore[index]
                f" (e.g. '{_S3_KEYS[missing.replace(' ', '_')][0]}'); set both, or neither to use the environment's"
            )
        endpoint = find("endpoint")
        if endpoint is not None:
            _check_endpoint(*endpoint)
        path_style = find("path_style")
        ssl = find("ssl")
        max_connections = find("max_connections")
        request_timeout = find("request_timeout")
        return cls(
            endpoint=endpoint[1] if endpoint else None,
            region=(find("region") or (None, None))[1],
            access_key=access[1] if access else None,
            secret_key=secret[1] if secret else None,
            session_token=(find("session_token") or (None, None))[1],
            path_style=property_as_bool(dict([path_style]), path_style[0], False) if path_style else False,
            max_connections=(property_as_int(dict([max_connections]), max_connections[0], 0, minimum=1)
                             if max_connections else _S3_DEFAULT_MAX_CONNECTIONS),
            connect_timeout=_milliseconds(props, find("connect_timeout"), _S3_DEFAULT_CONNECT_TIMEOUT),
            request_timeout=_milliseconds(props, request_timeout, _S3_DEFAULT_REQUEST_TIMEOUT),
            ssl=property_as_bool(dict([ssl]), ssl[0], True) if ssl else True,
            request_timeout_key=request_timeout[0] if request_timeout else _S3_KEYS["request_timeout"][0],
        )

    @property
    def endpoint_host(self) -> str | None:
        """``host[:port]`` of the endpoint (no scheme, no path), or None for AWS."""
        if self.endpoint is None:
            return None
        text = self.endpoint if "://" in self.endpoint else f"//{self.endpoint}"
        return urlsplit(text).netloc or None

    @property
    def scheme(self) -> str:
        """``http`` or ``https``: the endpoint's own scheme, else by the SSL setting."""
        if self.endpoint and "://" in self.endpoint:
            return self.endpoint.split("://", 1)[0].lower()
        return "https" if self.ssl else "http"

    @property
    def has_credentials(self) -> bool:
        return self.access_key is not None


@dataclass(frozen=True)
class GcsSettings:
    """Google Cloud Storage through pyarrow's GCS filesystem (``gs://``); no token: the environment's."""

    endpoint: str | None = None
    access_token: str | None = field(default=None, repr=False)
    project_id: str | None = None
    anonymous: bool = False

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> GcsSettings:
        found = {name: _first(props, keys) for name, keys in _GCS_KEYS.items()}
        anonymous = found["anonymous"]
        return cls(
            endpoint=found["endpoint"][1] if found["endpoint"] else None,
            access_token=found["access_token"][1] if found["access_token"] else None,
            project_id=found["project_id"][1] if found["project_id"] else None,
            anonymous=property_as_bool(dict([anonymous]), anonymous[0], False) if anonymous else False,
        )


@dataclass(frozen=True)
class AzureSettings:
    """ADLS Gen2 and Blob storage through pyarrow's Azure filesystem (``abfs[s]://``, ``wasb[s]://``).

    The account comes from the location (``container@account.dfs.core.windows.net``) when not set; Hadoop's
    per-account key ``fs.azure.account.key.<account>.dfs.core.windows.net`` is read too.
    """

    account_name: str | None = None
    account_key: str | None = field(default=None, repr=False)
    sas_token: str | None = field(default=None, repr=False)
    tenant_id: str | None = None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    endpoint: str | None = None
    account_keys: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> AzureSettings:
        found = {name: _first(props, keys) for name, keys in _AZURE_KEYS.items()}
        keys = {key[len("fs.azure.account.key."):].split(".", 1)[0]: value
                for key, value in props.items() if key.startswith("fs.azure.account.key.") and value.strip()}
        return cls(**{name: value[1] if value else None for name, value in found.items()},
                   account_keys=MappingProxyType(keys))

    def key_of(self, account: str) -> str | None:
        return self.account_keys.get(account) or self.account_key


@dataclass(frozen=True)
class HadoopSettings:
    """Every Hadoop key of the catalog as given (``dfs.*``, ``fs.*``, ``hadoop.*``, ...): what Hadoop's own
    FileSystem is configured with for ``hdfs://``, ``viewfs://`` and any other Hadoop scheme."""

    conf: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> HadoopSettings:
        # Kerberos with no principal and keytab logs in from the ticket cache, as Hadoop's client does.
        conf = {key: value for key, value in props.items() if key.startswith(HADOOP_KEY_PREFIXES)}
        return cls(conf=MappingProxyType(conf))

    @property
    def nameservices(self) -> tuple[str, ...]:
        return tuple(name.strip() for name in self.conf.get("dfs.nameservices", "").split(",") if name.strip())


class VendingMode(str, Enum):
    """What a catalog hands to an engine that asks for credentials to its tables' files."""

    NONE = "none"
    ROLE = "role"
    CATALOG_KEY = "catalog_key"


@dataclass(frozen=True)
class VendingConfig:
    """How a catalog vends storage credentials: ``mode`` and, for ``role``, the role, its trust policy's external
    id, where STS is asked (None: derived from the S3 endpoint or region) and how long a session lasts."""

    mode: VendingMode = VendingMode.NONE
    role_arn: str | None = None
    external_id: str | None = None
    sts_endpoint: str | None = None
    duration: int = STORAGE_VENDING_DURATION_DEFAULT

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> VendingConfig:
        role = _first(props, (S3_ROLE_ARN,))
        if role is not None and not _ARN.match(role[1]):
            raise ConfigurationError(f"property '{S3_ROLE_ARN}' must be a role's ARN "
                                     f"(arn:aws:iam::<account>:role/<name>), got {role[1]!r}")
        external = _first(props, (S3_EXTERNAL_ID,))
        if external is not None and not _EXTERNAL_ID.match(external[1]):
            raise ConfigurationError(f"property '{S3_EXTERNAL_ID}' must be 2 to 1224 letters, digits or +=,.@:/-_ "
                                     f"(as STS takes it), got {external[1]!r}")
        sts = _first(props, (S3_STS_ENDPOINT,))
        if sts is not None:
            _check_endpoint(*sts)
        given = _first(props, (STORAGE_VENDING,))
        mode = VendingMode.ROLE if role is not None else VendingMode.NONE
        if given is not None:
            try:
                mode = VendingMode(given[1].lower())
            except ValueError:
                choices = ", ".join(f"'{each.value}'" for each in VendingMode)
                raise ConfigurationError(f"property '{STORAGE_VENDING}' must be one of {choices}, got {given[1]!r}") from None
        if mode is VendingMode.ROLE and role is None:
            raise ConfigurationError(f"property '{STORAGE_VENDING}' is 'role', but no role is set: set '{S3_ROLE_ARN}' "
                                     f"(and '{S3_EXTERNAL_ID}' if its trust policy asks for one), or choose "
                                     f"'{VendingMode.CATALOG_KEY.value}' to vend the catalog's own key")
        duration = property_as_int(props, STORAGE_VENDING_DURATION, STORAGE_VENDING_DURATION_DEFAULT,
                                   minimum=STORAGE_VENDING_DURATION_DEFAULT)
        if duration > _STS_MAX_DURATION:
            raise ConfigurationError(f"property '{STORAGE_VENDING_DURATION}' must be at most {_STS_MAX_DURATION} seconds "
                                     f"(12 hours, the most STS grants), got {duration}")
        return cls(mode=mode, role_arn=role[1] if role else None, external_id=external[1] if external else None,
                   sts_endpoint=sts[1] if sts else None, duration=duration)


@dataclass(frozen=True)
class StorageConfig:
    """The storage part of a catalog's properties (see the module's docstring for the names read)."""

    s3: S3Settings = S3Settings()
    s3_compatible: Mapping[str, S3Settings] = field(default_factory=dict)  # by setting prefix: oss, cos, obs, gs
    gcs: GcsSettings = GcsSettings()
    azure: AzureSettings = AzureSettings()
    hadoop: HadoopSettings = HadoopSettings()
    vending: VendingConfig = VendingConfig()

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> StorageConfig:
        compatible = {
            prefix: S3Settings.from_properties(props, prefix)
            for prefix in sorted(set(S3_COMPATIBLE_SCHEMES.values()))
            if any(key.startswith(f"{prefix}.") for key in props)
        }
        return cls(
            s3=S3Settings.from_properties(props), s3_compatible=MappingProxyType(compatible),
            gcs=GcsSettings.from_properties(props), azure=AzureSettings.from_properties(props),
            hadoop=HadoopSettings.from_properties(props), vending=VendingConfig.from_properties(props),
        )

    def s3_for(self, scheme: str) -> S3Settings:
        """The S3 settings serving ``scheme`` (``oss`` -> the ``oss.*`` settings when given, else ``s3.*``)."""
        prefix = S3_COMPATIBLE_SCHEMES.get(scheme)
        return self.s3_compatible.get(prefix, self.s3) if prefix else self.s3


def _check_endpoint(key: str, value: str) -> None:
    text = value if "://" in value else f"//{value}"
    try:
        parsed = urlsplit(text)
        parsed.port  # noqa: B018 - raises on a bad port
    except ValueError as error:
        raise ConfigurationError(f"property '{key}' is not an endpoint (host[:port] or http[s]://host[:port]): {value!r}: "
                                 f"{error}") from None
    if "://" in value and parsed.scheme.lower() not in ("http", "https"):
        raise ConfigurationError(f"property '{key}' must be an http:// or https:// endpoint, got {value!r}")
    if not parsed.hostname:
        raise ConfigurationError(f"property '{key}' names no host: {value!r}")
