package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.sql.catalyst.csv.CSVOptions;
import org.apache.spark.sql.catalyst.json.JSONOptionsInRead;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.orc.OrcOptions;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat$;
import org.apache.spark.sql.execution.datasources.parquet.ParquetOptions;
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport;
import org.apache.spark.sql.execution.datasources.parquet.ParquetWriteSupport;
import org.apache.spark.sql.execution.datasources.v2.csv.CSVPartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.v2.json.JsonPartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.v2.orc.OrcPartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetPartitionReaderFactory;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.util.SerializableConfiguration;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Which of Spark's own reader factories reads a scan's splits, set up as Spark's own scans set them up:
 * vectorized Parquet (with Iceberg deletes applied in the JVM when there are some), ORC, CSV and JSON with
 * the options a data source table was made with, and Hive serdes for text tables. The data filters go to
 * the Parquet and ORC readers, which skip row groups and stripes by them. The Hadoop configuration the
 * factories are broadcast with is the session's plus the table's catalog's storage settings.
 */
final class ScanReaders {
    private final HmsTable table;
    private final CaseInsensitiveStringMap options;
    private final StructType readDataSchema;
    private final StructType readPartitionSchema;
    private final Filter[] dataFilters;

    ScanReaders(HmsTable table, CaseInsensitiveStringMap options, StructType readDataSchema, StructType readPartitionSchema,
                Filter[] dataFilters) {
        this.table = table;
        this.options = options;
        this.readDataSchema = readDataSchema;
        this.readPartitionSchema = readPartitionSchema;
        this.dataFilters = dataFilters;
    }

    /** The factory that reads every split of {@code planned}. */
    PartitionReaderFactory factory(SplitPlanPartitions planned) {
        SparkSession spark = SparkSession.active();
        SQLConf sqlConf = spark.sessionState().conf();
        // A copy of the session's with the catalog's storage settings: this scan's readers only (StorageSettings)
        StorageSettings storage = table.storage();
        Configuration hadoopConf = storage.applyTo(spark.sessionState().newHadoopConf());
        storage.checkSchemes("table " + table.fullName(), locations(planned), hadoopConf);
        scala.collection.immutable.Map<String, String> readerOptions = scalaMap(options);
        switch (planned.reader()) {
            case "parquet": {
                if (planned.deletes() != null) {
                    return deletingParquetFactory(planned, sqlConf, hadoopConf, readerOptions);
                }
                return parquetFactory(readDataSchema, sqlConf, hadoopConf, readerOptions, broadcastAfter(hadoopConf, readDataSchema, sqlConf));
            }
            case "orc": {
                MemoryMode memoryMode = sqlConf.offHeapColumnVectorEnabled() ? MemoryMode.OFF_HEAP : MemoryMode.ON_HEAP;
                return new OrcPartitionReaderFactory(sqlConf, broadcast(hadoopConf), table.dataSchema(), readDataSchema,
                        readPartitionSchema, dataFilters, Option.empty(), new OrcOptions(readerOptions, sqlConf), memoryMode);
            }
            case "spark-csv": {
                scala.collection.immutable.Map<String, String> tableOptions = sourceOptions();
                CSVOptions csv = new CSVOptions(tableOptions, sqlConf.csvColumnPruning(), sqlConf.sessionLocalTimeZone(),
                        sqlConf.columnNameOfCorruptRecord());
                return new CSVPartitionReaderFactory(sqlConf, broadcast(hadoopConf), table.dataSchema(), readDataSchema,
                        readPartitionSchema, csv, scalaSeq(dataFilters));
            }
            case "spark-json":
            case "hive-json": {
                scala.collection.immutable.Map<String, String> jsonOptions = planned.reader().equals("hive-json")
                        ? scalaMap(options) : sourceOptions();
                JSONOptionsInRead json = new JSONOptionsInRead(jsonOptions, sqlConf.sessionLocalTimeZone(),
                        sqlConf.columnNameOfCorruptRecord());
                return new JsonPartitionReaderFactory(sqlConf, broadcast(hadoopConf), table.dataSchema(), readDataSchema,
                        readPartitionSchema, json, scalaSeq(dataFilters));
            }
            case "hive-serde":
                return new HiveSerdeReaderFactory(broadcast(hadoopConf), HiveStorage.of(table), readDataSchema,
                        readPartitionSchema);
            default:
                throw new UnsupportedOperationException("no reader for " + planned.reader());
        }
    }

    /** The table's location and its splits' files: where this scan's readers go. */
    private List<String> locations(SplitPlanPartitions planned) {
        List<String> locations = new ArrayList<>();
        if (table.view().hasNonNull("location")) {
            locations.add(table.view().path("location").asText());
        }
        for (SplitPlanPartitions.PlannedSplit split : planned.splits()) {
            locations.add(split.file().urlEncodedPath());
        }
        return locations;
    }

    /** Spark's ParquetScan sets these for its reader factory; the factory reads them from the Hadoop conf. */
    private Broadcast<SerializableConfiguration> broadcastAfter(Configuration hadoopConf, StructType requested, SQLConf sqlConf) {
        String json = requested.json();
        hadoopConf.set("parquet.read.support.class", ParquetReadSupport.class.getName());
        hadoopConf.set(ParquetReadSupport.SPARK_ROW_REQUESTED_SCHEMA(), json);
        hadoopConf.set(ParquetWriteSupport.SPARK_ROW_SCHEMA(), json);
        hadoopConf.set(SQLConf.SESSION_LOCAL_TIMEZONE().key(), sqlConf.sessionLocalTimeZone());
        hadoopConf.setBoolean(SQLConf.NESTED_SCHEMA_PRUNING_ENABLED().key(), sqlConf.nestedSchemaPruningEnabled());
        hadoopConf.setBoolean(SQLConf.CASE_SENSITIVE().key(), sqlConf.caseSensitiveAnalysis());
        ParquetWriteSupport.setSchema(requested, hadoopConf);
        hadoopConf.setBoolean(SQLConf.PARQUET_BINARY_AS_STRING().key(), sqlConf.isParquetBinaryAsString());
        hadoopConf.setBoolean(SQLConf.PARQUET_INT96_AS_TIMESTAMP().key(), sqlConf.isParquetINT96AsTimestamp());
        hadoopConf.setBoolean(SQLConf.PARQUET_INFER_TIMESTAMP_NTZ_ENABLED().key(), sqlConf.parquetInferTimestampNTZEnabled());
        hadoopConf.setBoolean(SQLConf.LEGACY_PARQUET_NANOS_AS_LONG().key(), sqlConf.legacyParquetNanosAsLong());
        if (table.isIceberg()) {
            // columns by Iceberg field id (the schema's parquet.field.id metadata), so renames read right
            hadoopConf.setBoolean(SQLConf.PARQUET_FIELD_ID_READ_ENABLED().key(), true);
        }
        return broadcast(hadoopConf);
    }

    private PartitionReaderFactory parquetFactory(StructType requested, SQLConf sqlConf, Configuration hadoopConf,
                                                  scala.collection.immutable.Map<String, String> readerOptions,
                                                  Broadcast<SerializableConfiguration> conf) {
        return new ParquetPartitionReaderFactory(sqlConf, conf, table.dataSchema(), requested, readPartitionSchema,
                dataFilters, Option.empty(), new ParquetOptions(readerOptions, sqlConf));
    }

    /** Parquet with Iceberg deletes: equality keys the query did not ask for and the row position are read too. */
    private PartitionReaderFactory deletingParquetFactory(SplitPlanPartitions planned, SQLConf sqlConf, Configuration hadoopConf,
                                                          scala.collection.immutable.Map<String, String> readerOptions) {
        List<StructField> inner = new ArrayList<>(Arrays.asList(readDataSchema.fields()));
        for (IcebergDeletes.SplitDeletes split : planned.deletes().values()) {
            for (IcebergDeletes.DeleteFile file : split.files()) {
                for (String column : file.columns()) {
                    boolean present = inner.stream().anyMatch(field -> field.name().equals(column));
                    if (!present) {
                        inner.add(table.dataSchema().apply(column));
                    }
                }
            }
        }
        inner.add(new StructField(ParquetFileFormat$.MODULE$.ROW_INDEX_TEMPORARY_COLUMN_NAME(), DataTypes.LongType, true,
                Metadata.empty()));
        StructType innerData = new StructType(inner.toArray(new StructField[0]));
        Broadcast<SerializableConfiguration> conf = broadcastAfter(hadoopConf, innerData, sqlConf);
        PartitionReaderFactory parquet = parquetFactory(innerData, sqlConf, hadoopConf, readerOptions, conf);
        return new IcebergDeleteReaderFactory(parquet, conf, planned.deletes(), innerData, readDataSchema.fields().length,
                readPartitionSchema, inner.size() - 1);
    }

    /** The options a Spark data source table was created with (kept as its serde parameters), then the scan's. */
    private scala.collection.immutable.Map<String, String> sourceOptions() {
        java.util.Map<String, String> merged = new java.util.HashMap<>();
        for (java.util.Map.Entry<String, JsonNode> option : table.view().path("storage").path("serde_parameters").properties()) {
            if (!option.getKey().equalsIgnoreCase("path") && !option.getValue().isNull()) {
                merged.put(option.getKey(), option.getValue().asText());
            }
        }
        merged.putAll(options.asCaseSensitiveMap());
        return scala.collection.immutable.Map.from(CollectionConverters.asScala(merged));
    }

    private static scala.collection.immutable.Seq<Filter> scalaSeq(Filter[] filters) {
        return scala.collection.immutable.List.from(CollectionConverters.asScala(Arrays.asList(filters)));
    }

    private static Broadcast<SerializableConfiguration> broadcast(Configuration conf) {
        JavaSparkContext context = JavaSparkContext.fromSparkContext(SparkSession.active().sparkContext());
        return context.broadcast(new SerializableConfiguration(conf));
    }

    private static scala.collection.immutable.Map<String, String> scalaMap(CaseInsensitiveStringMap options) {
        java.util.Map<String, String> copy = options.asCaseSensitiveMap().entrySet().stream()
                .collect(Collectors.toMap(java.util.Map.Entry::getKey, java.util.Map.Entry::getValue));
        return scala.collection.immutable.Map.from(CollectionConverters.asScala(copy));
    }
}
