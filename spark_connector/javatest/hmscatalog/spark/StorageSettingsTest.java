package hmscatalog.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.junit.Test;

import java.util.List;
import java.util.Map;

public class StorageSettingsTest {
    private final StorageSettings settings = new StorageSettings(
            Map.of("fs.s3a.endpoint", "http://minio:9000", "fs.s3a.secret.key", "not-to-be-shown"),
            Map.of("s3a", "org.apache.hadoop:hadoop-aws (the version of Spark's Hadoop) with software.amazon.awssdk:bundle"));

    @Test
    public void schemesAreReadWithoutDecodingAndPlainPathsHaveNone() {
        assertEquals("s3a", StorageSettings.scheme("s3a://bucket/wh/t/dt=a%2Fb"));
        assertEquals("file", StorageSettings.scheme("file:/tmp/x"));
        assertEquals("abfss", StorageSettings.scheme("ABFSS://c@account.dfs.core.windows.net/x"));
        assertNull(StorageSettings.scheme("/tmp/x:y"));
        assertNull(StorageSettings.scheme("relative/dir:x"));
        assertNull(StorageSettings.scheme(""));
    }

    @Test
    public void settingsGoToTheCopyOnlyAndAreNeverPrinted() {
        Configuration session = new Configuration(false);
        Configuration copy = settings.applyTo(new Configuration(session));
        assertEquals("not-to-be-shown", copy.get("fs.s3a.secret.key"));
        assertNull(session.get("fs.s3a.secret.key"));
        assertTrue(settings.toString().contains("fs.s3a.secret.key"));
        assertTrue(!settings.toString().contains("not-to-be-shown") && !settings.toString().contains("minio"));
    }

    @Test
    public void aSchemeWithoutAFileSystemIsRefusedNamingTheJar() {
        Configuration conf = settings.applyTo(new Configuration());
        settings.checkSchemes("table c.d.t", List.of("file:/tmp/x", "/tmp/y"), conf);  // Hadoop's own: accepted
        UnsupportedOperationException refused = assertThrows(UnsupportedOperationException.class,
                () -> settings.checkSchemes("table c.d.t", List.of("file:/tmp/x", "s3a://bucket/wh/t"), conf));
        assertTrue(refused.getMessage(), refused.getMessage().startsWith("table c.d.t is at s3a://bucket/wh/t, and this Spark "
                + "has no Hadoop FileSystem for 's3a://': add org.apache.hadoop:hadoop-aws"));
        assertTrue(!refused.getMessage().contains("not-to-be-shown"));
        UnsupportedOperationException unknown = assertThrows(UnsupportedOperationException.class,
                () -> settings.checkSchemes("the write to d.t", List.of("weird://x/y"), conf));
        assertTrue(unknown.getMessage(), unknown.getMessage().contains("add a jar with a Hadoop FileSystem for 'weird://'"));
    }

    @Test
    public void aTablesSessionIsRenewedHalfWayToItsEnd() {
        StorageSettings session = new StorageSettings(Map.of("fs.s3a.session.token", "t"), Map.of(), true, 1_000_000L);
        assertTrue(session.scoped());
        assertEquals(600_000L, session.renewAt(200_000L));  // 800 s left when it came: kept 400 s
        assertEquals(1_000_000L, session.renewAt(1_000_000L));  // ended already: asked again at once
        assertEquals(Long.MAX_VALUE, settings.renewAt(200_000L));  // a key without an end
        assertTrue(!settings.scoped());
    }
}
