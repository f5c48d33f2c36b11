package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.execution.datasources.DataSource;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import scala.Option;

/**
 * A plan the JVM readers cannot read yet, read by hms-catalog's Python data source ("hms"), which a
 * PySpark driver registers: it applies Iceberg deletes and merges Hudi log files. The source gets the
 * service's plan itself (option "plan") and the columns to read; EXPLAIN says which reader and why.
 */
final class PythonSourceScan implements Scan {
    static final String SOURCE = "hms";

    private final Scan delegate;
    private final String description;

    private PythonSourceScan(Scan delegate, String description) {
        this.delegate = delegate;
        this.description = description;
    }

    /** The Python source's scan of {@code plan}, or null when this session has no such source registered. */
    static Scan of(HmsTable table, JsonNode plan, List<String> columns, String reason) {
        SparkSession spark = SparkSession.active();
        if (!spark.sessionState().dataSourceManager().dataSourceExists(SOURCE)) {
            return null;
        }
        Option<TableProvider> found = DataSource.lookupDataSourceV2(SOURCE, spark.sessionState().conf());
        if (found.isEmpty()) {
            return null;
        }
        Map<String, String> options = new HashMap<>();
        options.put("plan", plan.toString());
        options.put("columns", String.join(",", columns));
        // splits packed into Spark partitions as this session packs its own files
        org.apache.spark.sql.internal.SQLConf conf = spark.sessionState().conf();
        options.put("maxPartitionBytes", Long.toString(conf.filesMaxPartitionBytes()));
        options.put("openCostInBytes", Long.toString(conf.filesOpenCostInBytes()));
        options.put("minPartitionNum", Integer.toString(conf.filesMinPartitionNum().isDefined()
                ? (Integer) conf.filesMinPartitionNum().get() : spark.leafNodeDefaultParallelism()));
        CaseInsensitiveStringMap map = new CaseInsensitiveStringMap(options);
        TableProvider provider = found.get();
        StructType schema = provider.inferSchema(map);
        Table python = provider.getTable(schema, new Transform[0], options);
        Scan scan = ((SupportsRead) python).newScanBuilder(map).build();
        return new PythonSourceScan(scan, "hms-catalog " + table.fullName() + " [" + table.view().path("format").asText()
                + "], Reader: python (the hms source), because " + reason + ", Splits: " + plan.path("splits").size()
                + ", ReadSchema: " + scan.readSchema().simpleString());
    }

    @Override
    public StructType readSchema() {
        return delegate.readSchema();
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public Batch toBatch() {
        return delegate.toBatch();
    }
}
