-- A catalog over your metastore, and a first look around it:
--   hms-catalog -f getting_started.sql
-- Several metastores of one cluster: 'thrift://hms-1:9083,thrift://hms-2:9083'. The properties are
-- checked before anything is stored, so a typo fails here and not at the first read.
CREATE CATALOG prod COMMENT 'production HMS' PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'hive.metastore.client.socket.timeout'='30s'
);

SHOW CATALOGS;
SHOW DATABASES FROM prod;
SHOW TABLES FROM prod.sales;
DESCRIBE prod.sales.orders;

-- The splits a read of the orders since November 2nd would get: partitions scanned and pruned, files, bytes.
EXPLAIN SPLITS FROM prod.sales.orders WHERE dt >= DATE '2026-11-02';

-- A table dropped from every cache (after a change the catalog cannot see), and the change log saying so.
REFRESH TABLE prod.sales.orders;
SHOW CHANGES FROM prod;
