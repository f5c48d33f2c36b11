-- Catalogs whose tables live on S3 or an S3-compatible store:
--   hms-catalog -f storage_s3.sql
-- A metastore's tables on MinIO (or Ceph, R2, ...) in Doris's names. Locations may say s3://, s3a:// or
-- s3n://: all three reach this store. Path style: the bucket is in the path, not in the host name.
CREATE CATALOG lake COMMENT 'tables on MinIO' PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    's3.endpoint'='http://127.0.0.1:9000',
    's3.region'='us-east-1',
    's3.access_key'='minio',
    's3.secret_key'='minio-secret',
    'use_path_style'='true',
    's3.connection.timeout'='5000'
);

-- The same store in Hadoop's names, as a core-site.xml has them (AWS_ENDPOINT, AWS_ACCESS_KEY,
-- AWS_SECRET_KEY and AWS_REGION are read too).
CREATE CATALOG lake_hadoop PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'fs.s3a.endpoint'='http://127.0.0.1:9000',
    'fs.s3a.access.key'='minio',
    'fs.s3a.secret.key'='minio-secret',
    'fs.s3a.path.style.access'='true'
);

-- AWS itself: no keys, so the environment's or the instance profile's credentials are used.
CREATE CATALOG aws PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    's3.region'='eu-west-1'
);

-- Folders on the store as tables: a filesystem catalog whose root is a bucket's folder.
CREATE CATALOG raw PROPERTIES (
    'type'='filesystem',
    'root'='s3a://lake/raw',
    's3.endpoint'='http://127.0.0.1:9000',
    's3.access_key'='minio',
    's3.secret_key'='minio-secret',
    'use_path_style'='true'
);
SHOW DATABASES FROM raw;
SHOW TABLES FROM raw.web;
DESCRIBE raw.web.clicks;
EXPLAIN SPLITS FROM raw.web.clicks WHERE dt = DATE '2026-11-02';

-- The secret key is shown as ******, here as in JSON output, logs, the audit log and the console.
SHOW CREATE CATALOG lake;
