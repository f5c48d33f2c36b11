package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.internal.connector.PredicateUtils$;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import scala.Option;

/**
 * What Spark pushes into a scan of one table: columns, filters, an aggregate, a limit.
 *
 * Filters on partition columns that {@link PartitionFilter} answers exactly are taken whole: they prune
 * partitions in the service (sent as the plan request's WHERE) and are evaluated again on each split's
 * partition values here, so Spark need not evaluate them on rows, as with its own file sources. With
 * Spark 4.3's iterative pushdown, a partition filter not understood the first time comes back as a
 * partition predicate Spark evaluates for us, and is taken then. Filters on data columns go to the Parquet
 * and ORC readers, which skip row groups and stripes by them (and, for Iceberg tables, to the service,
 * which skips files by their column metrics); Spark still evaluates those on the rows.
 */
final class HmsScanBuilder implements ScanBuilder, SupportsPushDownV2Filters, SupportsPushDownRequiredColumns,
        SupportsPushDownAggregates, SupportsPushDownLimit {
    static final String AGGREGATE_PUSHDOWN = "spark.hmscatalog.aggregatePushdown";

    private final HmsTable table;
    private final CaseInsensitiveStringMap options;
    private final PartitionFilter partitionFilter;
    private StructType readDataSchema;
    private StructType readPartitionSchema;
    private final List<Predicate> partitionPredicates = new ArrayList<>();
    private final List<Predicate> pushed = new ArrayList<>();
    private final List<Filter> dataFilters = new ArrayList<>();
    private final List<String> where = new ArrayList<>();
    private int limit = -1;
    private Aggregation aggregation;
    private JsonNode prefetched;  // the plan fetched while asking about an aggregate, reused by the scan

    HmsScanBuilder(HmsTable table, CaseInsensitiveStringMap options) {
        this.table = table;
        this.options = options;
        this.readDataSchema = table.dataSchema();
        this.readPartitionSchema = table.partitionSchema();
        this.partitionFilter = new PartitionFilter(table.partitionSchema());
    }

    @Override
    public Predicate[] pushPredicates(Predicate[] predicates) {
        List<Predicate> postScan = new ArrayList<>();
        for (Predicate predicate : predicates) {
            boolean onPartitions = predicate.references().length > 0;
            boolean onData = true;
            for (NamedReference reference : predicate.references()) {
                boolean isKey = reference.fieldNames().length == 1 && table.isPartitionKey(reference.fieldNames()[0]);
                onPartitions &= isKey;
                onData &= !isKey;
            }
            Filter v1 = v1(predicate);
            String sql = v1 == null ? null : PruningPredicate.sql(v1);
            if (onPartitions && partitionFilter.evaluable(predicate)) {
                partitionPredicates.add(predicate);
                pushed.add(predicate);
                if (sql != null) {
                    where.add(sql);
                }
                continue;
            }
            postScan.add(predicate);
            if (onPartitions && sql != null) {
                where.add(sql);  // prunes in the service; Spark checks the rows again
            } else if (onData && v1 != null) {
                dataFilters.add(v1);
                pushed.add(predicate);
                if (table.isIceberg() && sql != null) {
                    where.add(sql);  // Iceberg's planning skips data files by their column metrics
                }
            }
        }
        return postScan.toArray(new Predicate[0]);
    }

    @Override
    public Predicate[] pushedPredicates() {
        return pushed.toArray(new Predicate[0]);
    }

    /** Spark 4.3 asks this: partition filters refused above come back as partition predicates. */
    public boolean supportsIterativePushdown() {
        return table.partitionSchema().fields().length > 0;
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
     * Takes an aggregate when the service says metadata answers it exactly (asked now, with the plan, so
     * the scan reuses that plan when it cannot). Spark offers one only when every filter was taken whole.
     */
    @Override
    public boolean pushAggregation(Aggregation offered) {
        if (!Boolean.parseBoolean(SQLConf.get().getConfString(AGGREGATE_PUSHDOWN, "true"))) {
            return false;
        }
        ObjectNode request = AggregateScan.request(table, offered);
        if (request == null) {
            return false;
        }
        ObjectNode body = planRequest();
        body.set("aggregate", request);
        prefetched = table.plan(body);
        JsonNode answer = prefetched.path("aggregate");
        if (!answer.path("answered").asBoolean(false)) {
            return false;
        }
        aggregation = offered;
        return true;
    }

    @Override
    public boolean supportCompletePushDown(Aggregation offered) {
        return false;  // one row per partition: Spark's final aggregation combines them
    }

    @Override
    public boolean pushLimit(int offered) {
        limit = offered;
        return true;
    }

    /** The body of a plan request for this scan's pushed filters. */
    ObjectNode planRequest() {
        ObjectNode request = ServiceClient.JSON.createObjectNode();
        request.put("statistics", true);  // row counts and column statistics for Spark's optimizer
        if (!where.isEmpty()) {
            request.put("where", String.join(" AND ", where));
        }
        return request;
    }

    /**
     * The scan. A plan only the Python source can read (Iceberg delete files, Hudi log files) is read by it
     * when this session has it registered (a PySpark driver); otherwise the scan fails saying why.
     */
    @Override
    public Scan build() {
        String timeZone = SQLConf.get().sessionLocalTimeZone();
        if (aggregation != null) {
            Scan answered = AggregateScan.of(table, aggregation, prefetched.path("aggregate"), partitionPredicates, timeZone);
            if (answered != null) {
                return answered;
            }
        }
        HmsScan scan = new HmsScan(table, options, readDataSchema, readPartitionSchema, partitionPredicates,
                dataFilters.toArray(new Filter[0]), planRequest(), limit, prefetched);
        String reason = scan.plan().pythonOnly();
        if (reason != null) {
            List<String> columns = new ArrayList<>();
            for (StructField field : scan.readSchema().fields()) {
                columns.add(field.name());
            }
            Scan python = PythonSourceScan.of(table, scan.keptPlanJson(), columns, reason);
            if (python != null) {
                return python;
            }
        }
        return scan;
    }

    private static Filter v1(Predicate predicate) {
        Option<Filter> converted = PredicateUtils$.MODULE$.toV1(predicate);
        return converted.isDefined() ? converted.get() : null;
    }
}
