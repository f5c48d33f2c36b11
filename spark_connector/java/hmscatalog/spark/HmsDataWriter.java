package hmscatalog.spark;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import scala.Option;

/**
 * One task's writer: rows arrive sorted by partition (the write asks Spark for that order), so one file is
 * open at a time, in {@code <staging>/k=v/..} named as Spark's own insert names it ({@code dt=50%25},
 * {@code __HIVE_DEFAULT_PARTITION__} for NULL or an empty string). Partition values are the columns cast to
 * strings in the session's time zone, as Spark's writer casts them. Files are written straight to their
 * final names in the staging folder, each with the task attempt in its name; the commit message lists
 * them, and an aborted attempt deletes its own. The service deletes any other file there at commit.
 */
final class HmsDataWriter implements DataWriter<InternalRow> {
    private final HmsDataWriterFactory job;
    private final int partitionId;
    private final long taskId;
    private final TaskAttemptContext context;
    private final UnsafeProjection dataProjection;
    private final UnsafeProjection keyProjection;
    private final UnsafeProjection valueProjection;
    private final String extension;
    private final List<WrittenFiles.File> files = new ArrayList<>();

    private OutputWriter current;
    private UnsafeRow currentKey;
    private String currentRelative;
    private List<String> currentValues = List.of();
    private long currentRows;
    private int fileCount;

    HmsDataWriter(HmsDataWriterFactory job, int partitionId, long taskId) {
        this.job = job;
        this.partitionId = partitionId;
        this.taskId = taskId;
        this.context = taskContext(job.prepared.conf().value(), job.jobId, partitionId, taskId);
        List<Expression> data = new ArrayList<>();
        for (int ordinal : job.dataOrdinals) {
            data.add(reference(ordinal));
        }
        List<Expression> keys = new ArrayList<>();
        List<Expression> values = new ArrayList<>();
        for (int ordinal : job.partitionOrdinals) {
            keys.add(reference(ordinal));
            values.add(new Cast(reference(ordinal), DataTypes.StringType, Option.apply(job.timeZone)));
        }
        this.dataProjection = UnsafeProjection.create(Scala.seq(data));
        this.keyProjection = UnsafeProjection.create(Scala.seq(keys));
        this.valueProjection = UnsafeProjection.create(Scala.seq(values));
        this.extension = job.prepared.factory().getFileExtension(context);
    }

    private BoundReference reference(int ordinal) {
        StructField field = job.inputSchema.fields()[ordinal];
        return new BoundReference(ordinal, field.dataType(), true);
    }

    static TaskAttemptContext taskContext(Configuration base, String jobId, int partitionId, long taskId) {
        Configuration conf = new Configuration(base);
        JobID hadoopJob = new JobID("hmscatalog" + jobId, 0);
        TaskAttemptID attempt = new TaskAttemptID(new TaskID(hadoopJob, TaskType.MAP, partitionId), (int) (taskId & 0x7fffffff));
        conf.set("mapreduce.job.id", hadoopJob.toString());
        conf.set("mapreduce.task.id", attempt.getTaskID().toString());
        conf.set("mapreduce.task.attempt.id", attempt.toString());
        conf.setBoolean("mapreduce.task.ismap", true);
        conf.setInt("mapreduce.task.partition", partitionId);
        return new TaskAttemptContextImpl(conf, attempt);
    }

    @Override
    public void write(InternalRow row) throws IOException {
        if (job.partitionOrdinals.length > 0) {
            UnsafeRow key = keyProjection.apply(row);
            if (currentKey == null || !key.equals(currentKey)) {
                closeCurrent();
                currentKey = key.copy();
                open(folder(valueProjection.apply(row)));
            }
        } else if (current == null) {
            open("");
        }
        current.write(dataProjection.apply(row));
        currentRows++;
    }

    /** {@code k=v/k2=v2} for the row's partition values, as Spark's own insert names the folders. */
    private String folder(InternalRow strings) {
        StringBuilder path = new StringBuilder();
        List<String> values = new ArrayList<>();
        for (int i = 0; i < job.partitionKeys.length; i++) {
            String value = strings.isNullAt(i) ? null : strings.getUTF8String(i).toString();
            if (value != null && value.isEmpty()) {
                value = null;
            }
            values.add(value);
            path.append(ExternalCatalogUtils.getPartitionPathString(job.partitionKeys[i], value)).append('/');
        }
        currentValues = values;
        return path.toString();
    }

    private void open(String folder) {
        currentRelative = String.format(Locale.ROOT, "%spart-%05d-%s-%d.c%03d%s", folder, partitionId, job.jobId, taskId, fileCount++, extension);
        currentRows = 0;
        current = job.prepared.factory().newInstance(job.staging + "/" + currentRelative, job.dataSchema(), context);
    }

    private void closeCurrent() throws IOException {
        if (current == null) {
            return;
        }
        OutputWriter closing = current;
        current = null;
        closing.close();
        Path path = new Path(job.staging + "/" + currentRelative);
        long bytes = path.getFileSystem(context.getConfiguration()).getFileStatus(path).getLen();
        files.add(new WrittenFiles.File(currentRelative, currentValues, currentRows, bytes));
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        closeCurrent();
        return new WrittenFiles(List.copyOf(files));
    }

    @Override
    public void abort() throws IOException {
        try {
            if (current != null) {
                current.close();
                files.add(new WrittenFiles.File(currentRelative, currentValues, currentRows, 0));
                current = null;
            }
        } finally {
            WrittenFiles.delete(job.staging, context.getConfiguration(), files);
        }
    }

    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return "HmsDataWriter(" + job.staging + ", partition " + partitionId + ", keys " + Arrays.toString(job.partitionKeys) + ")";
    }
}
