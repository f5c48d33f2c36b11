-- The hms-catalog catalog store (definitions, versions, change log, leases, audit), beside the metastore's.
CREATE DATABASE hms_catalog OWNER hive;
