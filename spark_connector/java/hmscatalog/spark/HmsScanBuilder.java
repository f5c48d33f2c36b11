package hmscatalog.spark;

import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Column pruning and filter pushdown. Filters on partition columns become the plan request's WHERE
 * (the service prunes partitions with them); filters on data columns go to the file readers, which skip
 * row groups and stripes. Spark still evaluates every filter on the rows: none is reported as fully
 * handled, as Spark's own file sources do.
 */
final class HmsScanBuilder implements ScanBuilder, SupportsPushDownFilters, SupportsPushDownRequiredColumns {
    private final HmsTable table;
    private final CaseInsensitiveStringMap options;
    private StructType readDataSchema;
    private StructType readPartitionSchema;
    private Filter[] dataFilters = new Filter[0];
    private Filter[] partitionFilters = new Filter[0];

    HmsScanBuilder(HmsTable table, CaseInsensitiveStringMap options) {
        this.table = table;
        this.options = options;
        this.readDataSchema = table.dataSchema();
        this.readPartitionSchema = table.partitionSchema();
    }

    @Override
    public Filter[] pushFilters(Filter[] filters) {
        List<Filter> onPartitions = new ArrayList<>();
        List<Filter> onData = new ArrayList<>();
        for (Filter filter : filters) {
            boolean partitionOnly = filter.references().length > 0;
            boolean dataOnly = true;
            for (String reference : filter.references()) {
                boolean isKey = table.isPartitionKey(reference);
                partitionOnly &= isKey;
                dataOnly &= !isKey;
            }
            if (partitionOnly && PruningPredicate.sql(filter) != null) {
                onPartitions.add(filter);
            } else if (dataOnly) {
                onData.add(filter);
            }
        }
        partitionFilters = onPartitions.toArray(new Filter[0]);
        dataFilters = onData.toArray(new Filter[0]);
        return filters;
    }

    @Override
    public Filter[] pushedFilters() {
        Filter[] all = new Filter[partitionFilters.length + dataFilters.length];
        System.arraycopy(partitionFilters, 0, all, 0, partitionFilters.length);
        System.arraycopy(dataFilters, 0, all, partitionFilters.length, dataFilters.length);
        return all;
    }

    @Override
    public void pruneColumns(StructType requiredSchema) {
        List<StructField> data = new ArrayList<>();
        Set<String> required = new HashSet<>();
        for (StructField field : requiredSchema.fields()) {
            required.add(field.name().toLowerCase(Locale.ROOT));
            if (!table.isPartitionKey(field.name())) {
                data.add(field);
            }
        }
        // partition columns in the table's key order, which the split plan's partition values follow
        List<StructField> partitions = new ArrayList<>();
        for (StructField field : table.partitionSchema().fields()) {
            if (required.contains(field.name().toLowerCase(Locale.ROOT))) {
                partitions.add(field);
            }
        }
        readDataSchema = new StructType(data.toArray(new StructField[0]));
        readPartitionSchema = new StructType(partitions.toArray(new StructField[0]));
    }

    /**
     * The scan. A plan only the Python source can read (Iceberg delete files, Hudi log files) is read by it
     * when this session has it registered (a PySpark driver); otherwise the scan fails saying why.
     */
    @Override
    public Scan build() {
        HmsScan scan = new HmsScan(table, options, readDataSchema, readPartitionSchema, partitionFilters, dataFilters);
        String reason = scan.plan().pythonOnly();
        if (reason != null) {
            List<String> columns = new ArrayList<>();
            for (StructField field : scan.readSchema().fields()) {
                columns.add(field.name());
            }
            Scan python = PythonSourceScan.of(table, scan.planJson(), columns, reason);
            if (python != null) {
                return python;
            }
        }
        return scan;
    }
}
