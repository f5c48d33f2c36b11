package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.plan.FileSinkDesc;
import org.apache.hadoop.hive.ql.plan.TableDesc;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.csv.CSVFileFormat;
import org.apache.spark.sql.execution.datasources.json.JsonFileFormat;
import org.apache.spark.sql.execution.datasources.orc.OrcFileFormat;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.datasources.text.TextFileFormat;
import org.apache.spark.sql.hive.execution.HiveFileFormat;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * The writer of a table's files, as the service describes it ({@code target.writer}), prepared on the
 * driver: Spark's own Parquet, ORC, CSV, JSON and text writers with the table's options (its compression,
 * a CSV table's separator and header), or Hive's serde and output format for other Hive tables (delimited
 * text with its delimiters, escapes and null format). What the executors need goes in a
 * {@link Prepared}: the serializable writer factory and the job's Hadoop configuration, with the catalog's
 * storage settings (sent inside the tasks, never shown in a plan).
 */
final class WriterFormats {
    private WriterFormats() {
    }

    /** What each task needs to make files: the writer factory and the configuration it was prepared with. */
    record Prepared(OutputWriterFactory factory, SerializableConfiguration conf) implements java.io.Serializable {
    }

    /** {@code storage}: the catalog's settings, set on this job's copy of the Hadoop configuration only. */
    static Prepared prepare(JsonNode target, String staging, StructType dataSchema, StorageSettings storage) {
        SparkSession spark = SparkSession.active();
        Map<String, String> options = new LinkedHashMap<>();
        target.path("options").properties().forEach(option -> options.put(option.getKey(), option.getValue().asText()));
        Configuration conf = storage.applyTo(new Configuration(spark.sparkContext().hadoopConfiguration()));
        storage.checkSchemes("the write to " + name(target), java.util.List.of(staging), conf);
        options.forEach(conf::set);
        Job job;
        try {
            job = Job.getInstance(conf);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("cannot set up the write job: " + e, e);
        }
        job.setOutputKeyClass(Void.class);
        job.setOutputValueClass(InternalRow.class);
        FileOutputFormat.setOutputPath(job, new Path(staging));
        FileFormat format = format(target, staging);
        OutputWriterFactory factory = format.prepareWrite(spark, job, Scala.map(options), dataSchema);
        return new Prepared(factory, new SerializableConfiguration(job.getConfiguration()));
    }

    private static FileFormat format(JsonNode target, String staging) {
        String writer = target.path("writer").asText();
        switch (writer) {
            case "parquet":
                return new ParquetFileFormat();
            case "orc":
                return new OrcFileFormat();
            case "csv":
                return new CSVFileFormat();
            case "json":
                return new JsonFileFormat();
            case "text":
                return new TextFileFormat();
            case "avro":
                try {
                    return (FileFormat) Class.forName("org.apache.spark.sql.avro.AvroFileFormat").getDeclaredConstructor().newInstance();
                } catch (ReflectiveOperationException e) {
                    throw new UnsupportedOperationException("table " + name(target) + " is an Avro data source table: writing it "
                            + "takes Spark's avro module (spark-avro) on the driver's and executors' classpath", e);
                }
            case "hive":
                return new HiveFileFormat(new FileSinkDesc(new Path(staging), tableDesc(target), false));
            default:
                throw new UnsupportedOperationException("table " + name(target) + " has writer '" + writer + "', which this "
                        + "connector does not know (a newer service?)");
        }
    }

    /** Hive's description of the table for its serde and output format: the properties Hive's own writer reads. */
    private static TableDesc tableDesc(JsonNode target) {
        JsonNode hive = target.path("hive");
        Properties properties = new Properties();
        hive.path("properties").properties().forEach(p -> properties.setProperty(p.getKey(), p.getValue().asText()));
        try {
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            Class<?> input = Class.forName(hive.path("input_format").asText(), true, loader);
            Class<?> output = Class.forName(hive.path("output_format").asText(), true, loader);
            @SuppressWarnings({"unchecked", "rawtypes"})
            TableDesc desc = new TableDesc((Class) input, output, properties);
            return desc;
        } catch (ClassNotFoundException e) {
            throw new UnsupportedOperationException("table " + name(target) + " is stored with " + e.getMessage()
                    + ", which is not on this Spark's classpath", e);
        }
    }

    static String name(JsonNode target) {
        return target.path("database").asText() + "." + target.path("table").asText();
    }
}
