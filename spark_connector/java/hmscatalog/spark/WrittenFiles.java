package hmscatalog.spark;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

import java.io.IOException;
import java.io.Serializable;
import java.util.List;

/** What one committed task wrote: each file's path under the staging folder, partition values and counts. */
record WrittenFiles(List<File> files) implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;

    /** One file: {@code k=v/part-...} under the staging folder, its partition values (null for NULL), rows and bytes. */
    record File(String path, List<String> values, long rows, long bytes) implements Serializable {
        private static final long serialVersionUID = 1L;
    }

    /** Delete what an aborted task wrote under the staging folder. */
    static void delete(String staging, Configuration conf, List<File> files) throws IOException {
        for (File file : files) {
            Path path = new Path(staging + "/" + file.path());
            FileSystem filesystem = path.getFileSystem(conf);
            filesystem.delete(path, false);
        }
    }
}
