package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The driver's cache of table views of one service catalog, kept fresh by the service's change feed.
 *
 * A daemon thread long-polls {@code /changes?since=N&wait=...}; every change drops the entries it
 * concerns (a table, a database, or all of them when the feed was truncated or the catalog itself
 * changed). The position is taken before the first load, so no change between a load and the first poll
 * is missed. A TTL bounds staleness when following is off or the service cannot be reached.
 */
final class TableCache {
    private static final int WAIT_SECONDS = 25;

    private final ServiceClient client;
    private final String catalog;
    private final long ttlMillis;
    private final boolean follow;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private volatile Thread follower;
    private volatile long position = -1;

    private record Entry(JsonNode view, long loadedAt) {
    }

    TableCache(ServiceClient client, String catalog, long ttlMillis, boolean follow) {
        this.client = client;
        this.catalog = catalog;
        this.ttlMillis = ttlMillis;
        this.follow = follow;
    }

    private String changesPath() {
        return "/v1/catalogs/" + ServiceClient.segment(catalog) + "/changes";
    }

    private static String key(String database, String table) {
        return database.toLowerCase(Locale.ROOT) + "." + table.toLowerCase(Locale.ROOT);
    }

    JsonNode view(String database, String table) {
        startFollowing();
        String key = key(database, table);
        Entry entry = entries.get(key);
        long now = System.currentTimeMillis();
        if (entry != null && now - entry.loadedAt < ttlMillis) {
            return entry.view;
        }
        JsonNode view = client.get("/v1/catalogs/" + ServiceClient.segment(catalog) + "/databases/"
                + ServiceClient.segment(database) + "/tables/" + ServiceClient.segment(table));
        entries.put(key, new Entry(view, now));
        return view;
    }

    void invalidate(String database, String table) {
        entries.remove(key(database, table));
    }

    private synchronized void startFollowing() {
        if (!follow || follower != null) {
            return;
        }
        position = client.get(changesPath() + "?since=0").path("current").asLong(0);
        Thread thread = new Thread(this::followChanges, "hms-catalog-changes-" + catalog);
        thread.setDaemon(true);
        thread.start();
        follower = thread;
    }

    private void followChanges() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                JsonNode answer = client.get(changesPath() + "?since=" + position + "&wait=" + WAIT_SECONDS,
                        Duration.ofSeconds(WAIT_SECONDS + 30));
                if (answer.path("truncated").asBoolean(false)) {
                    entries.clear();
                }
                for (JsonNode change : answer.path("changes")) {
                    apply(change.path("object").asText(""));
                }
                position = answer.path("current").asLong(position);
            } catch (RuntimeException e) {
                try {
                    Thread.sleep(2000);  // the service restarts or is unreachable; the TTL still bounds staleness
                } catch (InterruptedException interrupted) {
                    return;
                }
            }
        }
    }

    /** Objects read as the service writes them: "table db.t", "partitions db.t", "database db", "catalog". */
    private void apply(String object) {
        String[] parts = object.split(" ", 3);
        if (parts.length < 2) {
            entries.clear();  // the catalog or its list of databases: anything may have changed
            return;
        }
        String name = parts[1].toLowerCase(Locale.ROOT);
        if (name.contains(".")) {
            entries.remove(name);
        } else {
            String prefix = name + ".";
            entries.keySet().removeIf(key -> key.startsWith(prefix));
        }
    }
}
