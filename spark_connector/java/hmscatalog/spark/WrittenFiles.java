package hmscatalog.spark;

import org.apache.spark.sql.connector.write.WriterCommitMessage;

import java.io.Serializable;
import java.util.List;

/** What one committed task wrote: each file's path under the staging folder, partition values and counts. */
record WrittenFiles(List<File> files) implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;

    /** One file: {@code k=v/part-...} under the staging folder, its partition values (null for NULL), rows and bytes. */
    record File(String path, List<String> values, long rows, long bytes) implements Serializable {
        private static final long serialVersionUID = 1L;
    }
}
