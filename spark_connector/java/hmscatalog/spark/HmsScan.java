package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.expressions.FieldReference;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.connector.read.SupportsRuntimeV2Filtering;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;


/**
 * The scan of one table: its split plan (made by the service, partitions pruned by the pushed filters),
 * filtered again here by the partition filters Spark handed over whole and by the filters Spark derives
 * at run time from the other side of a join (dynamic partition pruning), then packed into Spark
 * partitions as Spark packs its own files ({@link SplitPacking}), and read by Spark's own reader factory
 * for the files' format.
 *
 * Runtime filtering reuses the plan already made: no second call to the service or the metastore. Spark
 * may call {@link #filter} and then {@link #planInputPartitions} again, so the splits kept are computed
 * from the filters each time.
 */
final class HmsScan implements Scan, Batch, SupportsReportStatistics, SupportsRuntimeV2Filtering {
    private final HmsTable table;
    private final CaseInsensitiveStringMap options;
    private final StructType readDataSchema;
    private final StructType readPartitionSchema;
    private final List<Predicate> partitionPredicates;
    private final Filter[] dataFilters;
    private final ObjectNode planRequest;
    private final int limit;
    private final PartitionFilter partitionFilter;
    private final List<Predicate> runtimeFilters = new ArrayList<>();
    private final List<IcebergPartitionFilter.SplitTest> icebergRuntimeTests = new ArrayList<>();
    private List<SplitPlanPartitions.PlannedSplit> runtimeKept;  // filtered() for the runtime filters so far
    private JsonNode planJson;
    private SplitPlanPartitions plan;
    private List<SplitPlanPartitions.PlannedSplit> kept;  // after the partition filters, before runtime filters
    private IcebergPartitionFilter icebergFilter;
    private Map<String, Long> metrics = Map.of();
    // Spark plans one scan into more than one BatchScanExec (adaptive execution plans the query's stages again), and
    // each asks the scan for its reader factory and input partitions: made once here, they are not made again. A
    // reader factory broadcasts the scan's Hadoop configuration: made for every BatchScanExec, that was about half of
    // a query's physical planning (TPC-DS q83: 0.39-0.60 s, 0.17-0.33 s after).
    private PartitionReaderFactory readerFactory;
    private FilePartition[] packed;  // filtered() packed: dropped with runtimeKept when a runtime filter arrives

    HmsScan(HmsTable table, CaseInsensitiveStringMap options, StructType readDataSchema, StructType readPartitionSchema,
            List<Predicate> partitionPredicates, Filter[] dataFilters, ObjectNode planRequest, int limit, JsonNode prefetched) {
        this.table = table;
        this.options = options;
        this.readDataSchema = readDataSchema;
        this.readPartitionSchema = readPartitionSchema;
        this.partitionPredicates = List.copyOf(partitionPredicates);
        this.dataFilters = dataFilters;
        this.planRequest = planRequest;
        this.limit = limit;
        this.partitionFilter = new PartitionFilter(table.partitionSchema());
        this.planJson = prefetched;
    }

    @Override
    public StructType readSchema() {
        List<StructField> fields = new ArrayList<>(Arrays.asList(readDataSchema.fields()));
        fields.addAll(Arrays.asList(readPartitionSchema.fields()));
        return new StructType(fields.toArray(new StructField[0]));
    }

    @Override
    public String description() {
        StringBuilder text = new StringBuilder("hms-catalog ").append(table.fullName())
                .append(" [").append(table.view().path("format").asText()).append(", ")
                .append(table.view().path("file_format").asText()).append("]");
        String where = planRequest.path("where").asText(null);
        text.append(", PartitionFilters: ").append(where == null ? "[]" : "[" + where + "]");
        text.append(", PushedFilters: ").append(Arrays.toString(dataFilters));
        if (limit >= 0) {
            text.append(", PushedLimit: ").append(limit);
        }
        text.append(", ReadSchema: ").append(readSchema().simpleString());
        if (plan != null) {
            List<SplitPlanPartitions.PlannedSplit> left = filtered();
            text.append(", Splits: ").append(left.size()).append(" of ").append(plan.splits().size())
                    .append(", Partitions: ").append(packed().length)
                    .append(", Reader: ").append(plan.reader());
            if (plan.deletes() != null) {
                long files = plan.deletes().values().stream().flatMap(split -> split.files().stream())
                        .map(IcebergDeletes.DeleteFile::path).distinct().count();
                text.append(", IcebergDeletes: ").append(files).append(" files applied in the JVM");
            }
        }
        return text.toString();
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    synchronized SplitPlanPartitions plan() {
        if (plan == null) {
            if (planJson == null) {
                planJson = table.plan(planRequest);
            }
            String timeZone = SQLConf.get().sessionLocalTimeZone();
            plan = SplitPlanPartitions.of(table, planJson, readPartitionSchema, timeZone);
            List<SplitPlanPartitions.PlannedSplit> left = new ArrayList<>();
            for (SplitPlanPartitions.PlannedSplit split : plan.splits()) {
                if (matchesAll(partitionPredicates, split)) {
                    left.add(split);
                }
            }
            kept = left;
            if (table.isIceberg()) {
                icebergFilter = IcebergPartitionFilter.of(planJson, table.dataSchema());
            }
        }
        return plan;
    }

    /**
     * The service's plan with only the splits the partition filters keep: what the Python source reads
     * when the JVM readers cannot (those filters were taken whole, so Spark will not apply them again).
     */
    synchronized JsonNode keptPlanJson() {
        plan();
        ObjectNode copy = planJson.deepCopy();
        ArrayNode splits = copy.putArray("splits");
        for (SplitPlanPartitions.PlannedSplit split : kept) {
            splits.add(split.json());
        }
        return copy;
    }

    private boolean matchesAll(List<Predicate> predicates, SplitPlanPartitions.PlannedSplit split) {
        for (Predicate predicate : predicates) {
            if (!partitionFilter.matches(predicate, split.partitionRow())) {
                return false;
            }
        }
        return true;
    }

    /**
     * The splits left after the partition filters and the runtime filters received so far. Kept until another
     * runtime filter arrives: both {@link #planInputPartitions} and every rendering of the plan ({@link #description})
     * ask for it, and a runtime filter from a join can carry thousands of values.
     */
    private synchronized List<SplitPlanPartitions.PlannedSplit> filtered() {
        plan();
        if (runtimeFilters.isEmpty()) {
            return kept;
        }
        if (runtimeKept != null) {
            return runtimeKept;
        }
        List<SplitPlanPartitions.PlannedSplit> left = new ArrayList<>();
        for (SplitPlanPartitions.PlannedSplit split : kept) {
            boolean keep = true;
            if (icebergFilter != null) {
                JsonNode values = split.json().path("partition_values");
                for (IcebergPartitionFilter.SplitTest test : icebergRuntimeTests) {
                    keep &= test.mayMatch(values);
                }
            } else {
                for (Predicate predicate : runtimeFilters) {
                    keep &= partitionFilter.matches(predicate, split.partitionRow());
                }
            }
            if (keep) {
                left.add(split);
            }
        }
        runtimeKept = left;
        return left;
    }

    /** The Spark partitions of {@link #filtered}'s splits, packed again only after another runtime filter. */
    private synchronized FilePartition[] packed() {
        if (packed == null) {
            List<SplitPlanPartitions.PlannedSplit> left = filtered();
            List<PartitionedFile> files = new ArrayList<>(left.size());
            for (SplitPlanPartitions.PlannedSplit split : left) {
                files.add(split.file());
            }
            packed = SplitPacking.pack(SparkSession.active(), files);
            metrics = countMetrics(left);
        }
        return packed;
    }

    @Override
    public InputPartition[] planInputPartitions() {
        SplitPlanPartitions planned = plan();
        if (planned.pythonOnly() != null) {
            throw SplitPlanPartitions.unsupported(table, planned.pythonOnly());
        }
        return packed().clone();
    }

    private Map<String, Long> countMetrics(List<SplitPlanPartitions.PlannedSplit> left) {
        Set<String> files = new HashSet<>();
        Set<String> partitions = new HashSet<>();
        long bytes = 0;
        for (SplitPlanPartitions.PlannedSplit split : left) {
            files.add(split.file().urlEncodedPath());
            partitions.add(ScanStatistics.partitionKey(split.json().path("partition_values")));
            bytes += split.length();
        }
        Set<String> before = new HashSet<>();
        long bytesBefore = 0;
        for (SplitPlanPartitions.PlannedSplit split : kept) {
            before.add(split.file().urlEncodedPath());
            bytesBefore += split.length();
        }
        Map<String, Long> counts = new LinkedHashMap<>();
        counts.put(ScanMetrics.FILES, (long) files.size());
        counts.put(ScanMetrics.BYTES, bytes);
        counts.put(ScanMetrics.SPLITS, (long) left.size());
        counts.put(ScanMetrics.PARTITIONS, table.partitionSchema().fields().length == 0 ? 0L : partitions.size());
        counts.put(ScanMetrics.SKIPPED_FILES, (long) (before.size() - files.size()));
        counts.put(ScanMetrics.SKIPPED_BYTES, bytesBefore - bytes);
        return counts;
    }

    @Override
    public CustomMetric[] supportedCustomMetrics() {
        return ScanMetrics.supported();
    }

    @Override
    public synchronized CustomTaskMetric[] reportDriverMetrics() {
        return ScanMetrics.values(metrics);
    }

    @Override
    public Statistics estimateStatistics() {
        SplitPlanPartitions planned = plan();
        boolean partitionFiltered = !partitionPredicates.isEmpty() || planRequest.hasNonNull("where");
        return ScanStatistics.of(table, planJson, planned.bytes(), kept, readSchema(), SQLConf.get().sessionLocalTimeZone(),
                partitionFiltered);
    }

    // Runtime filtering -------------------------------------------------------------------------------

    /**
     * The columns read that runtime filters can prune by: partition columns (Hive tables) or the source
     * columns of partition fields (Iceberg tables). Spark accepts only columns of the scan's output.
     */
    @Override
    public NamedReference[] filterAttributes() {
        List<NamedReference> attributes = new ArrayList<>();
        if (table.isIceberg()) {
            plan();
            if (icebergFilter != null) {
                for (String column : icebergFilter.sourceColumns()) {
                    for (StructField field : readDataSchema.fields()) {
                        if (field.name().equalsIgnoreCase(column)) {
                            attributes.add(FieldReference.column(field.name()));
                        }
                    }
                }
            }
        } else {
            for (StructField field : readPartitionSchema.fields()) {
                attributes.add(FieldReference.column(field.name()));
            }
        }
        return attributes.toArray(new NamedReference[0]);
    }

    /** Keeps the filters that can rule out splits; the others are left to the join, which applies them anyway. */
    @Override
    public synchronized void filter(Predicate[] predicates) {
        plan();
        for (Predicate predicate : predicates) {
            boolean usable = icebergFilter != null ? icebergFilter.usable(predicate) : partitionFilter.evaluable(predicate);
            if (usable && !runtimeFilters.contains(predicate)) {
                runtimeFilters.add(predicate);
                if (icebergFilter != null) {
                    icebergRuntimeTests.add(icebergFilter.compile(predicate));  // its literals transformed once
                }
                runtimeKept = null;
                packed = null;
            }
        }
    }

    @Override
    public synchronized Predicate[] pushedPredicates() {
        return runtimeFilters.toArray(new Predicate[0]);
    }

    /** Spark 4.3 asks this: runtime filters refused above come back as partition predicates. */
    public boolean supportsIterativePushdown() {
        return !table.isIceberg() && table.partitionSchema().fields().length > 0;
    }

    // Equality: Spark reuses an exchange or a subquery when two scans are equal -------------------------

    @Override
    public boolean equals(Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof HmsScan that)) {
            return false;
        }
        return table.fullName().equals(that.table.fullName())
                && table.view().path("version").asText("").equals(that.table.view().path("version").asText(""))
                && readSchema().equals(that.readSchema())
                && planRequest.equals(that.planRequest)
                && Arrays.equals(dataFilters, that.dataFilters)
                && partitionPredicates.toString().equals(that.partitionPredicates.toString())
                && limit == that.limit;
    }

    @Override
    public int hashCode() {
        return Objects.hash(table.fullName(), readSchema(), planRequest, Arrays.hashCode(dataFilters), limit);
    }

    @Override
    public synchronized PartitionReaderFactory createReaderFactory() {
        if (readerFactory == null) {
            PartitionReaderFactory factory = new ScanReaders(table, options, readDataSchema, readPartitionSchema, dataFilters)
                    .factory(plan());
            readerFactory = limit >= 0 ? new LimitedReaderFactory(factory, limit) : factory;
        }
        return readerFactory;
    }
}
