package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.time.Duration;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The driver's cache of table views and split plans of one service catalog, kept fresh by the service's
 * change feed.
 *
 * A daemon thread long-polls {@code /changes?since=N&wait=...}; every change drops the entries it
 * concerns (a table, a database, or all of them when the feed was truncated or the catalog itself
 * changed). The position is taken before the first load, so no change between a load and the first poll
 * is missed. A TTL bounds staleness when following is off or the service cannot be reached. Every poll names
 * this cache as {@code follower=<id>} (random, fixed for its life): asking for the changes since N tells the
 * service that everything up to N is applied here, which is what a SYNC_DDL statement waits for.
 *
 * Plans are kept by table and request (the WHERE, statistics, aggregates asked): the service makes them
 * from its own caches, which change only with the changes the feed reports (a REFRESH, a metastore event)
 * or with their TTLs, so a plan kept here until the feed says its table changed is the plan the service
 * would make again, and a query that scans a fact table several times (or a dashboard that runs it every
 * minute) asks the service once. At most {@link #MAX_PLANS} plans are kept, the oldest dropped first.
 */
final class TableCache {
    private static final int WAIT_SECONDS = 25;
    static final int MAX_PLANS = 64;
    /** How long the catalog's storage settings are kept at most: credentials changed elsewhere are picked up. */
    static final long STORAGE_MILLIS = 300_000L;

    private final ServiceClient client;
    private final String catalog;
    private final long ttlMillis;
    private final boolean follow;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Entry> plans = new ConcurrentHashMap<>();
    private volatile Thread follower;
    private volatile long position = -1;
    private final String followerId = UUID.randomUUID().toString();
    private volatile StoredSettings storage;  // the catalog's, where they are no table's own; null: to be asked
    private final ConcurrentHashMap<String, StoredSettings> tableStorage = new ConcurrentHashMap<>();  // a role's sessions

    /** Settings as fetched, handed out until {@code renewAt}. */
    private record StoredSettings(StorageSettings settings, long renewAt) {
    }

    private record Entry(JsonNode view, long loadedAt) {
    }

    TableCache(ServiceClient client, String catalog, long ttlMillis, boolean follow) {
        this.client = client;
        this.catalog = catalog;
        this.ttlMillis = ttlMillis;
        this.follow = follow;
    }

    /** The feed's path from {@code since}, naming this follower. */
    private String changesPath(long since) {
        return "/v1/catalogs/" + ServiceClient.segment(catalog) + "/changes?since=" + since + "&follower=" + followerId;
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

    /** The service's plan of a table for {@code request} (posted to {@code path}), kept as the class says. */
    JsonNode plan(String database, String table, String path, ObjectNode request) {
        startFollowing();
        String key = key(database, table) + "\n" + request.toString();
        Entry entry = plans.get(key);
        long now = System.currentTimeMillis();
        if (entry != null && now - entry.loadedAt < ttlMillis) {
            return entry.view;
        }
        JsonNode plan = ServiceBodies.checkedPlan(client.post(path, request), database + "." + table);
        if (plans.size() >= MAX_PLANS) {
            plans.entrySet().stream().min((a, b) -> Long.compare(a.getValue().loadedAt, b.getValue().loadedAt))
                    .ifPresent(oldest -> plans.remove(oldest.getKey(), oldest.getValue()));
        }
        plans.put(key, new Entry(plan, now));
        return plan;
    }

    /**
     * The storage settings (credentials included) for the scans and writes of {@code database.table}. A catalog
     * that vends one credential for all its tables (its own key) or none is asked once per {@link #STORAGE_MILLIS}
     * and again after any change of the catalog itself (an ALTER of its properties). A catalog with a role vends a
     * session per table: each table's is kept until half way to its end (see {@link StorageSettings#renewAt}) or
     * the table changes, whichever comes first, so a scan or write is always given a session with at least half of
     * its life left.
     */
    StorageSettings storage(String database, String table) {
        startFollowing();
        long now = System.currentTimeMillis();
        StoredSettings catalogWide = storage;
        if (catalogWide != null && now < catalogWide.renewAt) {
            return catalogWide.settings;
        }
        String key = key(database, table);
        StoredSettings own = tableStorage.get(key);
        if (own != null && now < own.renewAt) {
            return own.settings;
        }
        return fetchStorage(key, "?table=" + ServiceClient.segment(key), now);
    }

    /**
     * The storage settings for write job {@code job}, a CREATE [OR REPLACE] TABLE AS: its table has no location
     * before the job began, so a role's session is asked for the job's folder ({@code ?job=}), once the job began.
     * Not kept by table: the table the job makes may be at another location than the one it replaces.
     */
    StorageSettings jobStorage(String job) {
        startFollowing();
        long now = System.currentTimeMillis();
        StoredSettings catalogWide = storage;
        if (catalogWide != null && now < catalogWide.renewAt) {
            return catalogWide.settings;
        }
        return fetchStorage(null, "?job=" + ServiceClient.segment(job), now);
    }

    /** Asks the service and keeps the answer: by table ({@code key}) where it is a session scoped to one. */
    private StorageSettings fetchStorage(String key, String scope, long now) {
        StorageSettings fetched = StorageSettings.fetch(client, "/v1/catalogs/" + ServiceClient.segment(catalog), scope);
        long renewAt = fetched.renewAt(now);
        if (!fetched.scoped()) {
            storage = new StoredSettings(fetched, Math.min(renewAt, now + Math.min(ttlMillis, STORAGE_MILLIS)));
        } else if (key != null) {
            tableStorage.values().removeIf(stored -> now >= stored.renewAt);  // bounded by the tables in use
            tableStorage.put(key, new StoredSettings(fetched, Math.min(renewAt, now + ttlMillis)));
        }
        return fetched;
    }

    void invalidate(String database, String table) {
        String key = key(database, table);
        entries.remove(key);
        tableStorage.remove(key);  // an ALTER .. SET LOCATION moves what its session must reach
        plans.keySet().removeIf(planKey -> planKey.startsWith(key + "\n"));
    }

    /** Drops every table of {@code database} (a database dropped or changed here). */
    void invalidateDatabase(String database) {
        String prefix = database.toLowerCase(Locale.ROOT) + ".";
        entries.keySet().removeIf(key -> key.startsWith(prefix));
        tableStorage.keySet().removeIf(key -> key.startsWith(prefix));
        plans.keySet().removeIf(key -> key.startsWith(prefix));
    }

    private synchronized void startFollowing() {
        if (!follow || follower != null) {
            return;
        }
        position = client.get(changesPath(0)).path("current").asLong(0);
        Thread thread = new Thread(this::followChanges, "hms-catalog-changes-" + catalog);
        thread.setDaemon(true);
        thread.start();
        follower = thread;
    }

    private void followChanges() {
        while (!Thread.currentThread().isInterrupted()) {
            try {
                JsonNode answer = client.get(changesPath(position) + "&wait=" + WAIT_SECONDS,
                        Duration.ofSeconds(WAIT_SECONDS + 30));
                if (answer.path("truncated").asBoolean(false)) {
                    entries.clear();
                    plans.clear();
                    storage = null;
                    tableStorage.clear();
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
            plans.clear();
            storage = null;
            tableStorage.clear();
            return;
        }
        String name = parts[1].toLowerCase(Locale.ROOT);
        if (name.contains(".")) {
            entries.remove(name);
            tableStorage.remove(name);
            plans.keySet().removeIf(key -> key.startsWith(name + "\n"));
        } else {
            invalidateDatabase(name);
        }
    }
}
