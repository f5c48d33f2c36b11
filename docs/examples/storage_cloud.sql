-- Catalogs whose tables live on GCS, ADLS Gen2, or the S3-compatible endpoints of OSS, COS and OBS:
--   hms-catalog -f storage_cloud.sql
-- Google Cloud Storage (gs://): no token, so the environment's credentials (GOOGLE_APPLICATION_CREDENTIALS).
CREATE CATALOG gcs PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'gcs.project-id'='my-project'
);

-- ADLS Gen2 (abfss://container@account.dfs.core.windows.net/...): an account key, in Hadoop's per-account
-- name or as 'adls.account-name' with 'adls.account-key'; or a SAS token; or a service principal.
CREATE CATALOG adls PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'fs.azure.account.key.mylake.dfs.core.windows.net'='base64-account-key'
);
CREATE CATALOG adls_sp PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'adls.account-name'='mylake',
    'adls.tenant-id'='00000000-0000-0000-0000-000000000000',
    'adls.client-id'='11111111-1111-1111-1111-111111111111',
    'adls.client-secret'='service-principal-password'
);

-- Alibaba OSS (oss://), through its S3-compatible endpoint; its own oss.* keys, falling back to s3.*.
CREATE CATALOG oss PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'oss.endpoint'='https://oss-cn-hangzhou.aliyuncs.com',
    'oss.region'='cn-hangzhou',
    'oss.access_key'='oss-access-key',
    'oss.secret_key'='oss-secret-key'
);

-- Tencent COS (cosn:// or cos://) and Huawei OBS (obs://), the same way.
CREATE CATALOG cos PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'cos.endpoint'='https://cos.ap-guangzhou.myqcloud.com',
    'cos.region'='ap-guangzhou',
    'cos.access_key'='cos-secret-id',
    'cos.secret_key'='cos-secret-key'
);
CREATE CATALOG obs PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'obs.endpoint'='https://obs.cn-north-4.myhuaweicloud.com',
    'obs.access_key'='obs-access-key',
    'obs.secret_key'='obs-secret-key'
);

SHOW CREATE CATALOG adls;
SHOW CREATE CATALOG oss;
