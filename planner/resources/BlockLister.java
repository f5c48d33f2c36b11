import java.util.Arrays;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Block locations of many files in one call from Python, so planning asks the JVM (and through it the
 * HDFS namenode) once per listing rather than once per file.
 *
 * Answer: one line per file, "blockSize\toffset,length,host1;host2\toffset,..." in the order asked;
 * a file that cannot be looked up gets an empty line.
 */
public final class BlockLister {
  private BlockLister() {}

  public static String blocks(Configuration conf, String[] paths) {
    StringBuilder out = new StringBuilder();
    for (String location : paths) {
      try {
        Path path = new Path(location);
        FileSystem fs = path.getFileSystem(conf);
        FileStatus status = fs.getFileStatus(path);
        out.append(status.getBlockSize());
        for (BlockLocation block : fs.getFileBlockLocations(status, 0, status.getLen())) {
          out.append('\t').append(block.getOffset()).append(',').append(block.getLength()).append(',');
          out.append(String.join(";", Arrays.asList(block.getHosts())));
        }
      } catch (Exception e) {
        // leave the line empty: the caller falls back to the configured block size
      }
      out.append('\n');
    }
    return out.toString();
  }
}
