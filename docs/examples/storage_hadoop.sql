-- Catalogs whose tables live on HDFS:
--   hms-catalog -f storage_hadoop.sql
-- Doris's example: an HA nameservice of two NameNodes, and Kerberos for HDFS. Every dfs.*, fs.*, hadoop.*
-- and ipc.* key reaches Hadoop's own client as given. Add the keys of the Kerberos page
-- ('hive.metastore.sasl.enabled', 'hive.metastore.kerberos.principal') when the metastore is secure too.
CREATE CATALOG hdfs_ha COMMENT 'HDFS HA with Kerberos' PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'dfs.nameservices'='your-nameservice',
    'dfs.ha.namenodes.your-nameservice'='nn1,nn2',
    'dfs.namenode.rpc-address.your-nameservice.nn1'='172.21.0.2:8020',
    'dfs.namenode.rpc-address.your-nameservice.nn2'='172.21.0.3:8020',
    'dfs.client.failover.proxy.provider.your-nameservice'='org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider',
    'hadoop.security.authentication'='kerberos',
    'hadoop.kerberos.principal'='doris@EXAMPLE.COM',
    'hadoop.kerberos.keytab'='/etc/security/keytabs/doris.keytab'
);

-- A plain (simple auth) cluster: the user the NameNode sees.
CREATE CATALOG hdfs_simple PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'hadoop.username'='hive'
);

-- viewfs://: a mount table over several nameservices, as in core-site.xml.
CREATE CATALOG federated PROPERTIES (
    'type'='hms',
    'hive.metastore.uris'='thrift://localhost:9083',
    'fs.viewfs.mounttable.cluster.link./warehouse'='hdfs://ns1/warehouse',
    'fs.viewfs.mounttable.cluster.link./logs'='hdfs://ns2/logs'
);

SHOW CREATE CATALOG hdfs_ha;
