package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;

import java.net.URI;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * A catalog's storage settings as Hadoop's Configuration takes them ({@code fs.s3a.endpoint},
 * {@code fs.s3a.access.key}, the HDFS HA keys, ...), credentials included, as the service's
 * {@code /storage-credentials} answer gives them to the driver.
 *
 * They go only into the Configuration copy that one scan's reader factories or one write's tasks are
 * given ({@link #applyTo}), never into the session's own Hadoop configuration, so two catalogs on two
 * stores work in one session, and never into a scan's options or description, so no plan, explain output,
 * UI page or event log shows them. {@link #toString} names the keys only.
 *
 * Hadoop keeps one FileSystem per scheme, authority and user for the JVM's life: the first catalog to
 * reach a bucket sets how it is reached. Catalogs on different stores whose buckets share a name need
 * {@code fs.s3a.impl.disable.cache=true} in their properties (a role's sessions come with it).
 *
 * A catalog with a role ({@code 'storage.vending'='role'}) vends a session per table: {@link #scoped} says
 * so, and {@link #expiresAtMillis} when the session ends, so the driver keeps these settings for that one
 * table, and not past half of what was left of the session when they came.
 */
final class StorageSettings {
    static final StorageSettings NONE = new StorageSettings(Map.of(), Map.of(), false, 0L);
    /** The service's refusal when a catalog vends no credentials: not a failure of the driver. */
    private static final String VENDING_DISABLED = "VendingDisabledError";
    /** The vending of sessions scoped to one table ({@code vending} of the answer). */
    private static final String ROLE = "role";

    private final Map<String, String> hadoop;
    private final Map<String, String> jars;
    private final boolean scoped;
    private final long expiresAtMillis;

    StorageSettings(Map<String, String> hadoop, Map<String, String> jars) {
        this(hadoop, jars, false, 0L);
    }

    StorageSettings(Map<String, String> hadoop, Map<String, String> jars, boolean scoped, long expiresAtMillis) {
        this.hadoop = Collections.unmodifiableMap(new LinkedHashMap<>(hadoop));
        this.jars = Collections.unmodifiableMap(new LinkedHashMap<>(jars));
        this.scoped = scoped;
        this.expiresAtMillis = expiresAtMillis;
    }

    /**
     * The settings of the service's catalog at {@code catalogPath} for the table or write job that {@code scope}
     * names ({@code ?table=<db>.<table>} or {@code ?job=<id>}), asked with the catalog's token. A catalog with a
     * role answers a session scoped to it; one that vends its own key answers that whatever the scope. Where the
     * catalog vends no credentials (403 VendingDisabledError), its settings without any ({@code /storage-settings}):
     * Spark's own S3 credentials reach its store then.
     */
    static StorageSettings fetch(ServiceClient client, String catalogPath, String scope) {
        JsonNode answer;
        try {
            answer = client.get(catalogPath + "/storage-credentials" + scope);
        } catch (ServiceClient.ServiceException e) {
            if (e.status != 403 || !VENDING_DISABLED.equals(e.type)) {
                throw e;
            }
            answer = client.get(catalogPath + "/storage-settings");
        }
        Map<String, String> hadoop = new LinkedHashMap<>();
        answer.path("hadoop_settings").properties().forEach(entry -> hadoop.put(entry.getKey(), entry.getValue().asText()));
        Map<String, String> jars = new LinkedHashMap<>();
        answer.path("spark_jars").properties().forEach(entry -> jars.put(entry.getKey(), entry.getValue().asText()));
        return new StorageSettings(hadoop, jars, ROLE.equals(answer.path("vending").asText("")),
                answer.path("expires_at_ms").asLong(0L));
    }

    /** Whether these settings hold a session scoped to one table (or one write job's table), not the catalog's. */
    boolean scoped() {
        return scoped;
    }

    /**
     * Until when these settings, fetched at {@code fetchedAt}, may be handed to a scan or a write: half way to
     * the session's end, so that what a scan or write is given has at least half of its life left (the service
     * keeps a session for the first half of its life too); {@code Long.MAX_VALUE} for settings without a session.
     */
    long renewAt(long fetchedAt) {
        if (expiresAtMillis <= 0) {
            return Long.MAX_VALUE;
        }
        return fetchedAt + Math.max(0L, expiresAtMillis - fetchedAt) / 2;
    }

    /**
     * {@code conf} (a copy made for one scan or write) with the catalog's settings set on it. Classes it names
     * ({@code fs.<scheme>.impl}) are looked up as Spark looks up classes, through the thread's context class
     * loader, so a FileSystem jar added at run time (ADD JAR) serves the driver as it serves the executors.
     */
    Configuration applyTo(Configuration conf) {
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        if (context != null) {
            conf.setClassLoader(context);
        }
        hadoop.forEach(conf::set);
        return conf;
    }

    /**
     * Refuses, naming the jar to add, a location whose scheme has no Hadoop FileSystem in this Spark
     * ({@code s3a://} without hadoop-aws): said once on the driver, instead of a ClassNotFoundException in
     * every task. {@code what}: the table or write, for the message.
     */
    void checkSchemes(String what, Iterable<String> locations, Configuration conf) {
        TreeSet<String> schemes = new TreeSet<>();
        for (String location : locations) {
            String scheme = scheme(location);
            if (scheme != null && schemes.add(scheme)) {
                check(what, location, scheme, conf);
            }
        }
    }

    private void check(String what, String location, String scheme, Configuration conf) {
        try {
            FileSystem.getFileSystemClass(scheme, conf);
        } catch (java.io.IOException | RuntimeException e) {  // no FileSystem for the scheme, or its class is not found
            String jar = jars.get(scheme);
            String add = jar != null ? jar : "a jar with a Hadoop FileSystem for '" + scheme + "://'";
            throw new UnsupportedOperationException(what + " is at " + location + ", and this Spark has no Hadoop FileSystem for '"
                    + scheme + "://': add " + add + " to Spark's classpath (spark.jars.packages or spark.jars) ("
                    + e.getClass().getSimpleName() + ": " + e.getMessage() + ")", e);
        }
    }

    /** The scheme of a location (lower case), or null for a plain path (the default filesystem's). */
    static String scheme(String location) {
        if (location == null || location.isEmpty()) {
            return null;
        }
        int colon = location.indexOf(':');
        int slash = location.indexOf('/');
        if (colon <= 0 || (slash >= 0 && slash < colon)) {
            return null;
        }
        try {
            String scheme = URI.create(location.substring(0, colon) + ":/").getScheme();
            return scheme == null ? null : scheme.toLowerCase(Locale.ROOT);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    @Override
    public String toString() {
        return "StorageSettings(" + hadoop.keySet() + ")";
    }
}
