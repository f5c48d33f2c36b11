package hmscatalog.spark;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.datasources.OutputWriter;
import org.apache.spark.sql.types.StructField;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One task's writer for an Iceberg table: each row's partition is computed with Iceberg's transforms
 * ({@link IcebergPartitioning}) and the row goes to the open file of that partition, one file per partition
 * per task, as Iceberg's own fanout writer does (rows of a bucket transform arrive in no useful order). At
 * most {@link #MAX_OPEN} files are open at once: the least recently written is closed when another is
 * needed, and a later row of its partition starts a new file (more files, never a file of two partitions).
 * Files are named {@code <field>=<value>/part-...} under the job's folder and keep every column (Iceberg's
 * data files hold the partition sources). The commit message lists each file with its partition values;
 * the service proves them from the file itself.
 */
final class IcebergFanoutWriter implements DataWriter<InternalRow> {
    private final HmsDataWriterFactory job;
    private final IcebergPartitioning partitioning;
    private final int partitionId;
    private final long taskId;
    private final TaskAttemptContext context;
    private final UnsafeProjection dataProjection;
    private final String extension;
    static final int MAX_OPEN = 100;

    private final Map<List<Object>, Open> open = new LinkedHashMap<>(16, 0.75f, true);  // least recently written first
    private final List<WrittenFiles.File> files = new ArrayList<>();
    private int fileCount;

    /** A file being written: its writer, path under the staging folder, partition values and rows so far. */
    private static final class Open {
        final OutputWriter writer;
        final String relative;
        final List<String> values;
        long rows;

        Open(OutputWriter writer, String relative, List<String> values) {
            this.writer = writer;
            this.relative = relative;
            this.values = values;
        }
    }

    IcebergFanoutWriter(HmsDataWriterFactory job, int partitionId, long taskId) {
        this.job = job;
        this.partitioning = job.iceberg;
        this.partitionId = partitionId;
        this.taskId = taskId;
        this.context = HmsDataWriter.taskContext(job.prepared.conf().value(), job.jobId, partitionId, taskId);
        List<Expression> data = new ArrayList<>();
        for (int ordinal : job.dataOrdinals) {
            StructField field = job.inputSchema.fields()[ordinal];
            data.add(new BoundReference(ordinal, field.dataType(), true));
        }
        this.dataProjection = UnsafeProjection.create(Scala.seq(data));
        this.extension = job.prepared.factory().getFileExtension(context);
    }

    @Override
    public void write(InternalRow row) throws IOException {
        List<Object> key = partitioning.key(row);
        Open file = open.get(key);
        if (file == null) {
            if (open.size() >= MAX_OPEN) {
                var eldest = open.entrySet().iterator();
                Open closing = eldest.next().getValue();
                eldest.remove();
                close(closing);
            }
            file = open(key);
            open.put(key, file);
        }
        file.writer.write(dataProjection.apply(row));
        file.rows++;
    }

    private Open open(List<Object> key) {
        StringBuilder folder = new StringBuilder();
        List<String> values = new ArrayList<>();
        for (int i = 0; i < partitioning.size(); i++) {
            String value = IcebergPartitioning.text(key.get(i));
            values.add(value);
            folder.append(ExternalCatalogUtils.escapePathName(partitioning.name(i))).append('=')
                    .append(value == null ? "null" : ExternalCatalogUtils.escapePathName(value)).append('/');
        }
        String relative = String.format(Locale.ROOT, "%spart-%05d-%s-%d.c%03d%s", folder, partitionId, job.jobId, taskId, fileCount++,
                extension);
        OutputWriter writer = job.prepared.factory().newInstance(job.staging + "/" + relative, job.dataSchema(), context);
        return new Open(writer, relative, values);
    }

    /** Closes {@code file} and lists it (with no size if the close failed, so an abort still deletes it). */
    private void close(Open file) throws IOException {
        try {
            file.writer.close();
            Path path = new Path(job.staging + "/" + file.relative);
            long bytes = path.getFileSystem(context.getConfiguration()).getFileStatus(path).getLen();
            files.add(new WrittenFiles.File(file.relative, file.values, file.rows, bytes));
        } catch (IOException e) {
            files.add(new WrittenFiles.File(file.relative, file.values, file.rows, 0));
            throw e;
        }
    }

    private void closeAll() throws IOException {
        IOException failure = null;
        for (Open file : open.values()) {
            try {
                close(file);
            } catch (IOException e) {
                failure = failure == null ? e : failure;
            }
        }
        open.clear();
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        closeAll();
        return new WrittenFiles(List.copyOf(files));
    }

    @Override
    public void abort() throws IOException {
        try {
            closeAll();
        } finally {
            WrittenFiles.delete(job.staging, context.getConfiguration(), files);
        }
    }

    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return "IcebergFanoutWriter(" + job.staging + ", partition " + partitionId + ", " + partitioning + ")";
    }
}
