"""Vended credentials on moto's S3 with IAM auth: a served service whose catalogs reach the bucket ``vended`` with
the tests' IAM user key, and clients (pyiceberg's RestCatalog, DuckDB's ``ATTACH``) that have nothing but a token.

Catalog ``vend`` has a role (``s3.role_arn`` with an external id its trust policy asks for): every credential is an
STS session of that role, whose own policy allows the bucket ``vended`` only, so moto refuses the session anything
elsewhere. moto applies a role's policies to its sessions but not a session policy (the one that scopes a session to
one table, reads only for a read token): that policy is checked as STS received it, from moto's record of the
assumed roles and its request recorder (the duration). Catalog ``keyed`` vends its own key by name
(``catalog_key``), catalog ``plain`` vends nothing.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import requests

from tests.service.iceberg_rest.conftest import checked
from tests.support.s3 import S3Server
from tests.support.service import Answer, Server, served, tokens_file
from tests.support.sts import assumable_role, assume_role_requests

pytestmark = pytest.mark.metastore

BUCKET = "vended"
ROLE, EXTERNAL_ID = "hms-vending-tests", "hms-catalog-external-id"
VEND, KEYED, PLAIN = "vend", "keyed", "plain"
DURATION = 1200
READ_TOKEN = "vending-read-token-of-the-tests-0001"
WRITE_TOKEN = "vending-etl-token-of-the-tests-00002"
TOKENS = {"tokens": [{"name": "ro", "token": READ_TOKEN, "access": "read"},
                     {"name": "etl", "token": WRITE_TOKEN, "access": "write", "catalogs": [VEND, KEYED, PLAIN]}]}
DELEGATION = {"X-Iceberg-Access-Delegation": "vended-credentials"}
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("page", pa.string())])


def _rows(first: int, last: int) -> pa.Table:
    return pa.table({"id": list(range(first, last)), "page": [f"/p{i}" for i in range(first, last)]}, schema=SCHEMA)


@pytest.fixture(scope="module")
def role_arn(s3_server: S3Server) -> str:
    """A role the tests' user may assume with the external id, allowed everything on the bucket ``vended`` only."""
    arn = assumable_role(s3_server, ROLE, BUCKET, EXTERNAL_ID)
    s3_server.bucket("elsewhere")
    s3_server.client.put_object(Bucket="elsewhere", Key="secret.txt", Body=b"not for the role")
    return arn


@pytest.fixture(scope="module")
def recording(s3_server: S3Server) -> Iterator[None]:
    """moto's request recorder on for the module: the STS requests the service makes are read back from it (moto's
    own record of assumed roles cannot be read once the bucket holds objects)."""
    requests.post(f"{s3_server.endpoint}/moto-api/recorder/reset-recording", timeout=30)
    requests.post(f"{s3_server.endpoint}/moto-api/recorder/start-recording", timeout=30)
    yield
    requests.post(f"{s3_server.endpoint}/moto-api/recorder/stop-recording", timeout=30)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str, s3_server: S3Server, role_arn: str,
            recording: None) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("vending")
    tokens = tokens_file(directory / "tokens.json", TOKENS)
    store = {"type": "hms", "hive.metastore.uris": metastore_uri, **s3_server.catalog_properties()}
    with served(directory / "home", "--tokens", str(tokens)) as running:
        client = running.client()
        try:
            client.create_catalog(VEND, {**store, "s3.role_arn": role_arn, "s3.external_id": EXTERNAL_ID,
                                         "storage.vending.duration": str(DURATION)})
            client.create_catalog(KEYED, {**store, "storage.vending": "catalog_key"})
            client.create_catalog(PLAIN, store)
        finally:
            client.close()
        yield running


def rest(server: Server, catalog: str, token: str) -> Any:
    """pyiceberg's RestCatalog with a token and nothing else: no S3 setting of its own."""
    from pyiceberg.catalog.rest import RestCatalog

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pyiceberg's note about the oauth2-server-uri default
        return RestCatalog("rest", uri=f"{server.url}/iceberg", warehouse=catalog, token=token)


@pytest.fixture(scope="module")
def table(service: Server) -> Iterator[tuple[str, str]]:
    """``(namespace, table)`` of catalog ``vend`` at ``s3://vended/<ns>.db/clicks``, created and appended to by the
    write token's client with vended credentials; a sibling ``clicks2`` (whose name begins with ``clicks``) too."""
    namespace = f"ns{int(time.time() * 1000) % 10**9}"
    writer = rest(service, VEND, WRITE_TOKEN)
    writer.create_namespace(namespace, {"location": f"s3://{BUCKET}/{namespace}.db"})
    created = writer.create_table((namespace, "clicks"), schema=SCHEMA)
    created.append(_rows(0, 3))
    writer.create_table((namespace, "clicks2"), schema=SCHEMA).append(_rows(100, 101))
    yield namespace, "clicks"
    for name in ("clicks", "clicks2"):
        writer.drop_table((namespace, name), purge_requested=True)
    writer.drop_namespace(namespace)
    writer.close()


def _load(service: Server, catalog: str, namespace: str, name: str, token: str, delegated: bool = True) -> Answer:
    return service.request("GET", f"/iceberg/v1/{catalog}/namespaces/{namespace}/tables/{name}",
                           headers=DELEGATION if delegated else None, token=token)


def _sts_requests(s3_server: S3Server, session_name: str, location: str) -> list[dict[str, str]]:
    """The AssumeRole requests moto received for ``session_name`` whose policy names the objects of ``location``
    (``bucket/key``): one, as the service keeps a session for its life's first half."""
    return [sent for sent in assume_role_requests(s3_server, session_name)
            if json.loads(sent["Policy"])["Statement"][0]["Resource"] == [f"arn:aws:s3:::{location}/*"]]


def _s3(s3_server: S3Server, config: dict[str, str]) -> Any:
    import boto3

    return boto3.client("s3", endpoint_url=config["s3.endpoint"], region_name=config["s3.region"],
                        aws_access_key_id=config["s3.access-key-id"], aws_secret_access_key=config["s3.secret-access-key"],
                        aws_session_token=config.get("s3.session-token"))


def test_the_config_lists_the_credentials_endpoint(service: Server) -> None:
    config = checked(service.request("GET", f"/iceberg/v1/config?warehouse={VEND}", token=READ_TOKEN), 200, "CatalogConfig")
    assert "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials" in config["endpoints"]


def test_a_write_token_appends_and_a_read_token_reads_with_a_token_only(service: Server, table: tuple[str, str],
                                                                        s3_server: S3Server) -> None:
    namespace, name = table
    writer = rest(service, VEND, WRITE_TOKEN)
    loaded = writer.load_table((namespace, name))
    assert loaded.io.properties["s3.access-key-id"].startswith("ASIA")  # an STS session's key, not the catalog's
    loaded.append(_rows(3, 5))
    reader = rest(service, VEND, READ_TOKEN)
    try:
        rows = reader.load_table((namespace, name)).scan().to_arrow().sort_by("id")
        assert rows.column("id").to_pylist() == [0, 1, 2, 3, 4]
        assert s3_server.keys(BUCKET, f"{namespace}.db/{name}/data/")  # the appends' files are on the bucket
    finally:
        writer.close()
        reader.close()


def test_each_session_is_scoped_to_the_table_and_the_token(service: Server, table: tuple[str, str],
                                                         s3_server: S3Server, role_arn: str) -> None:
    namespace, name = table
    prefix = f"{namespace}.db/{name}"
    for token, write in ((READ_TOKEN, False), (WRITE_TOKEN, True)):
        body = checked(_load(service, VEND, namespace, name, token), 200, "LoadTableResult")
        config = body["config"]
        assert body["storage-credentials"] == [{"prefix": f"s3://{BUCKET}/{prefix}", "config": config}]
        assert config["s3.endpoint"] == s3_server.endpoint and config["s3.path-style-access"] == "true"
        assert config["s3.access-key-id"].startswith("ASIA") and config["s3.session-token"]
        sent = _sts_requests(s3_server, f"hms-{VEND}-{'etl' if write else 'ro'}", f"{BUCKET}/{prefix}")
        assert len(sent) == 1, sent
        assert sent[0]["RoleArn"] == role_arn and sent[0]["ExternalId"] == EXTERNAL_ID
        assert sent[0]["DurationSeconds"] == str(DURATION)
        statements = {statement["Sid"]: statement for statement in json.loads(sent[0]["Policy"])["Statement"]}
        objects = statements["TheTableObjects"]
        assert objects["Resource"] == [f"arn:aws:s3:::{BUCKET}/{prefix}/*"]
        assert ("s3:PutObject" in objects["Action"], "s3:DeleteObject" in objects["Action"]) == (write, write)
        assert "s3:GetObject" in objects["Action"]
        listing = statements["ListTheTable"]
        assert listing["Action"] == ["s3:ListBucket"] and listing["Resource"] == [f"arn:aws:s3:::{BUCKET}"]
        # the table's prefix as a folder: clicks2 begins with the same text and is not listed
        assert listing["Condition"] == {"StringLike": {"s3:prefix": [f"{prefix}/", f"{prefix}/*"]}}
        assert not any(action.startswith("s3:Put") for statement in statements.values() if statement is not objects
                       for action in statement["Action"])
        # moto enforces the role's own policy on the session: nothing outside the bucket
        client = _s3(s3_server, config)
        assert client.get_object(Bucket=BUCKET, Key=s3_server.keys(BUCKET, f"{prefix}/metadata/")[0])["Body"].read()
        with pytest.raises(Exception, match="AccessDenied"):
            client.get_object(Bucket="elsewhere", Key="secret.txt")


def test_the_credentials_endpoint_vends_a_session_of_the_catalogs_duration(service: Server, table: tuple[str, str],
                                                                         s3_server: S3Server) -> None:
    namespace, _ = table
    # etl's first credential for clicks2 through the endpoint (its create was a session of its own, kept)
    answer = service.request("GET", f"/iceberg/v1/{VEND}/namespaces/{namespace}/tables/clicks2/credentials", token=READ_TOKEN)
    body = checked(answer, 200, "LoadCredentialsResponse")
    assert answer.headers["cache-control"] == "no-store"
    [credential] = body["storage-credentials"]
    assert credential["prefix"] == f"s3://{BUCKET}/{namespace}.db/clicks2"
    [sent] = _sts_requests(s3_server, f"hms-{VEND}-ro", f"{BUCKET}/{namespace}.db/clicks2")
    assert sent["Action"] == "AssumeRole" and sent["DurationSeconds"] == str(DURATION)
    assert "s3:PutObject" not in json.loads(sent["Policy"])["Statement"][0]["Action"]
    assert int(credential["config"]["s3.session-token-expires-at-ms"]) / 1000 > time.time()  # moto: DurationSeconds on


def test_duckdb_reads_with_no_s3_secret(service: Server, table: tuple[str, str], tmp_path: Path) -> None:
    from tests.service.iceberg_rest.test_duckdb import connection

    namespace, name = table
    duck = connection(tmp_path / "extensions")
    duck.execute(f"CREATE SECRET endpoint (TYPE iceberg, TOKEN '{READ_TOKEN}')")
    duck.execute(f"ATTACH '{VEND}' AS cat (TYPE iceberg, SECRET endpoint, ENDPOINT '{service.url}/iceberg')")
    assert [row[0] for row in duck.execute("SELECT type FROM duckdb_secrets()").fetchall()].count("s3") == 0
    ids = [row[0] for row in duck.execute(f"SELECT id FROM cat.{namespace}.{name} ORDER BY id").fetchall()]
    assert ids[:3] == [0, 1, 2]


def test_catalog_key_is_vended_only_where_the_catalog_says_so(service: Server, table: tuple[str, str],
                                                             s3_server: S3Server, metastore_uri: str) -> None:
    namespace, name = table
    location = f"s3://{BUCKET}/{namespace}.db/{name}"
    # the same table registered in the other two catalogs (they share the metastore)
    for catalog in (KEYED, PLAIN):
        plain = checked(_load(service, catalog, namespace, name, READ_TOKEN), 200, "LoadTableResult")
        assert plain["metadata"]["location"] == location
    keyed = checked(_load(service, KEYED, namespace, name, READ_TOKEN), 200, "LoadTableResult")["config"]
    assert keyed["s3.access-key-id"] == s3_server.access_key and "s3.session-token" not in keyed
    assert checked(_load(service, PLAIN, namespace, name, READ_TOKEN), 200, "LoadTableResult").get("config", {}) == {}
    refused = service.request("GET", f"/iceberg/v1/{PLAIN}/namespaces/{namespace}/tables/{name}/credentials", token=READ_TOKEN)
    error = checked(refused, 403, "IcebergErrorResponse")["error"]
    assert error["type"] == "ForbiddenException" and "vending is off for catalog 'plain'" in error["message"]
    # no header, no credential, whatever the catalog
    assert checked(_load(service, VEND, namespace, name, READ_TOKEN, delegated=False), 200, "LoadTableResult").get("config", {}) == {}


def test_the_spark_drivers_endpoint_follows_the_same_rule(service: Server, table: tuple[str, str], s3_server: S3Server) -> None:
    namespace, name = table
    path = "/v1/catalogs/{}/storage-credentials"
    off = service.request("GET", path.format(PLAIN), token=READ_TOKEN)
    assert off.status == 403 and off.error()["type"] == "VendingDisabledError", off
    assert "vending is off for catalog 'plain'" in off.error()["message"]
    keyed = service.request("GET", path.format(KEYED), token=READ_TOKEN).json()["hadoop_settings"]
    assert keyed["fs.s3a.access.key"] == s3_server.access_key
    unnamed = service.request("GET", path.format(VEND), token=READ_TOKEN)
    assert unnamed.status == 400 and "?table=<database>.<table>" in unnamed.error()["message"], unnamed
    scoped = service.request("GET", path.format(VEND) + f"?table={namespace}.{name}", token=READ_TOKEN)
    assert scoped.status == 200 and scoped.headers["cache-control"] == "no-store", scoped
    settings = scoped.json()["hadoop_settings"]
    assert settings["fs.s3a.access.key"].startswith("ASIA") and settings["fs.s3a.session.token"]
    assert settings["fs.s3a.aws.credentials.provider"].endswith("TemporaryAWSCredentialsProvider")
    assert settings["fs.s3a.impl.disable.cache"] == "true"
    [sent] = _sts_requests(s3_server, f"hms-{VEND}-ro", f"{BUCKET}/{namespace}.db/{name}")  # the Iceberg load's, kept
    assert "s3:PutObject" not in json.loads(sent["Policy"])["Statement"][0]["Action"]


def test_no_long_lived_secret_in_any_answer_log_or_audit_line(service: Server, table: tuple[str, str],
                                                            s3_server: S3Server) -> None:
    namespace, name = table
    secret = s3_server.secret_key.encode()
    answers = [_load(service, VEND, namespace, name, token) for token in (READ_TOKEN, WRITE_TOKEN)]
    answers.append(service.request("GET", f"/iceberg/v1/{VEND}/namespaces/{namespace}/tables/{name}/credentials",
                                   token=READ_TOKEN))
    answers.append(service.request("GET", f"/v1/catalogs/{VEND}/storage-credentials?table={namespace}.{name}",
                                   token=WRITE_TOKEN))
    assert [answer.status for answer in answers] == [200] * 4
    assert [index for index, answer in enumerate(answers) if secret in answer.body] == []
    vended = [answer.json()["config"]["s3.secret-access-key"] for answer in answers[:2]]
    audit = (service.home / "audit.log").read_text(encoding="utf-8")
    lines = [json.loads(line) for line in audit.splitlines()]
    vendings = [line for line in lines if line.get("vending") == "role" and line["outcome"] == "ok"]
    assert {line["access"] for line in vendings} == {"read", "write"}
    iceberg = [line for line in vendings if line.get("via") == "iceberg-rest"]
    assert iceberg and all("s3.session-token" in line["keys"] and line["expires"] for line in iceberg)
    logs = {path.name: path.read_bytes() for path in service.home.rglob("*.log")}
    for value in (secret, *(each.encode() for each in vended)):
        assert [log for log, text in logs.items() if value in text] == []
        assert value.decode() not in service.stderr()
