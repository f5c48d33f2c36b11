package hmscatalog.spark;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;

/** The Spark configuration keys of the connector, and where the driver reads them. */
final class ConnectorConf {
    static final String URI = "spark.hmscatalog.uri";
    static final String TOKEN = "spark.hmscatalog.token";
    static final String CATALOG_CLASS = "hmscatalog.spark.HmsSparkCatalog";

    private ConnectorConf() {
    }

    /** A key of the running application's SparkConf, or null (no SparkEnv: a catalog used outside Spark). */
    static String sparkConf(String key) {
        SparkEnv env = SparkEnv.get();
        if (env == null) {
            return null;
        }
        SparkConf conf = env.conf();
        return conf.contains(key) ? conf.get(key) : null;
    }
}
