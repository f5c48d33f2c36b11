import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * A Hadoop filesystem for {@code s3a://}, {@code s3://} and {@code s3n://} that lets the embedded metastore
 * accept object-store locations without reaching any store. For tests and the demo only.
 *
 * <p>Hive 2.3 from PySpark's jars has no S3 filesystem, so the metastore refuses CREATE TABLE, ADD PARTITION
 * and ALTER at an {@code s3a://} location ("Class org.apache.hadoop.fs.s3a.S3AFileSystem not found"): its
 * {@code Warehouse} resolves every location to a filesystem to check the folder, make it, or gather file
 * statistics. This stub answers those questions the way an object store with the folder already there
 * would: every path is an empty directory, {@code mkdirs} and {@code delete} succeed without touching any
 * store. It holds no data and opens no connection, so it needs no credentials. The one thing it remembers,
 * for the life of the JVM, is which folders the metastore deleted (until it makes them again): Hive checks
 * that a folder it deleted is gone, and a drop would fail or log an error otherwise.
 *
 * <p>A real metastore needs {@code hadoop-aws} (of its Hadoop version) and the AWS SDK bundle on its
 * classpath instead, with its {@code fs.s3a.*} settings; this class is no way to run one on S3. The catalog
 * does not rely on the metastore's filesystem for objects: DROP TABLE .. PURGE of a managed table, DROP
 * PARTITION and the writes' cleanup delete the objects themselves, with the catalog's own credentials.
 *
 * <p>Known limit: renaming a managed table whose folder the metastore would move fails with the
 * metastore's "New location for this table ... already exists", since every path exists here; a real
 * S3A moves the objects.
 */
public final class ObjectStoreStub extends FileSystem {
    // Shared by every instance (Hadoop caches one per scheme, bucket and user): qualified paths deleted.
    private static final Set<String> DELETED = ConcurrentHashMap.newKeySet();

    private URI uri;
    private Path workingDirectory;

    @Override
    public void initialize(URI name, Configuration conf) throws IOException {
        super.initialize(name, conf);
        String authority = name.getAuthority() == null ? "" : name.getAuthority();
        uri = URI.create(name.getScheme() + "://" + authority);
        workingDirectory = new Path(uri.toString() + "/");
        setConf(conf);
    }

    @Override
    public String getScheme() {
        return uri == null ? "s3a" : uri.getScheme();
    }

    @Override
    public URI getUri() {
        return uri;
    }

    @Override
    public FileStatus getFileStatus(Path path) throws IOException {
        Path qualified = makeQualified(path);
        for (Path at = qualified; at != null; at = at.getParent()) {
            if (DELETED.contains(at.toString())) {
                throw new FileNotFoundException(qualified + " (deleted through the embedded metastore's stub)");
            }
        }
        return new FileStatus(0L, true, 1, 0L, 0L, qualified);
    }

    @Override
    public FileStatus[] listStatus(Path path) throws IOException {
        getFileStatus(path);
        return new FileStatus[0];
    }

    @Override
    public boolean mkdirs(Path path, FsPermission permission) {
        for (Path at = makeQualified(path); at != null; at = at.getParent()) {
            DELETED.remove(at.toString());
        }
        return true;
    }

    @Override
    public boolean delete(Path path, boolean recursive) {
        DELETED.add(makeQualified(path).toString());
        return true;
    }

    @Override
    public boolean rename(Path source, Path destination) throws IOException {
        throw refused("rename", source);
    }

    @Override
    public FSDataInputStream open(Path path, int bufferSize) throws IOException {
        throw new FileNotFoundException(path + ": the embedded metastore's stub filesystem holds no data");
    }

    @Override
    public FSDataOutputStream create(Path path, FsPermission permission, boolean overwrite, int bufferSize,
                                     short replication, long blockSize, Progressable progress) throws IOException {
        throw refused("create", path);
    }

    @Override
    public FSDataOutputStream append(Path path, int bufferSize, Progressable progress) throws IOException {
        throw refused("append to", path);
    }

    @Override
    public void setWorkingDirectory(Path directory) {
        workingDirectory = directory;
    }

    @Override
    public Path getWorkingDirectory() {
        return workingDirectory;
    }

    private static IOException refused(String what, Path path) {
        return new IOException("cannot " + what + " " + path + ": the embedded metastore's stub filesystem for "
                + "object stores holds no data (a real metastore needs hadoop-aws on its classpath)");
    }
}
