-- DDL on the catalog prod of getting_started.sql: a database, a partitioned table and its partitions.
--   hms-catalog -f ddl.sql
CREATE DATABASE IF NOT EXISTS prod.scratch COMMENT 'a place to try DDL';
ALTER DATABASE prod.scratch SET DBPROPERTIES ('team'='data-eng');

CREATE TABLE prod.scratch.events (id BIGINT, payload STRING COMMENT 'raw JSON')
    PARTITIONED BY (dt DATE, hour INT)
    STORED AS PARQUET;
ALTER TABLE prod.scratch.events ADD PARTITION (dt='2026-11-01', hour=0) PARTITION (dt='2026-11-01', hour=1);
SHOW PARTITIONS prod.scratch.events WHERE hour > 0;

-- A new column: old partitions get it too (Hive's CASCADE). Then drop every partition of a day.
ALTER TABLE prod.scratch.events ADD COLUMNS (source STRING) CASCADE;
ALTER TABLE prod.scratch.events DROP PARTITION (dt='2026-11-01');
SHOW CREATE TABLE prod.scratch.events;

DROP TABLE prod.scratch.events;
DROP DATABASE prod.scratch RESTRICT;
