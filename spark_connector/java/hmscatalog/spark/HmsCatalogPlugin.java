package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

import java.util.Collections;
import java.util.Map;

/**
 * {@code spark.plugins=hmscatalog.spark.HmsCatalogPlugin}: at driver start, every catalog the service
 * ({@code spark.hmscatalog.uri}, {@code spark.hmscatalog.token}) has becomes a Spark catalog of the same
 * name, so no per-catalog configuration is needed. A catalog name already configured in Spark is left
 * as it is. The plugin runs before any session exists, so every session of the application sees them, and
 * the connector's session extensions ({@link HmsSessionExtensions}), which it appends to {@code spark.sql.extensions}.
 */
public class HmsCatalogPlugin implements SparkPlugin {
    @Override
    public DriverPlugin driverPlugin() {
        return new Driver();
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return null;
    }

    static final String EXTENSIONS = "spark.sql.extensions";

    /**
     * {@code spark.sql.extensions} with {@link HmsSessionExtensions} appended (the ones set stay): sessions read
     * it from the application's conf after the plugin has run, so a job that names only the plugin gets them.
     */
    static String withExtensions(String existing) {
        String name = HmsSessionExtensions.class.getName();
        java.util.List<String> names = new java.util.ArrayList<>();
        for (String part : existing.split(",")) {
            if (!part.isBlank()) {
                names.add(part.strip());
            }
        }
        if (!names.contains(name)) {
            names.add(name);
        }
        return String.join(",", names);
    }

    static final class Driver implements DriverPlugin {
        @Override
        public Map<String, String> init(SparkContext context, PluginContext pluginContext) {
            SparkConf conf = context.conf();
            if (!conf.contains(ConnectorConf.URI)) {
                throw new IllegalArgumentException("spark.plugins names " + HmsCatalogPlugin.class.getName()
                        + " but " + ConnectorConf.URI + " (the catalog service's http[s]://host:port) is not set");
            }
            conf.set(EXTENSIONS, withExtensions(conf.get(EXTENSIONS, "")));
            String uri = conf.get(ConnectorConf.URI);
            ServiceClient client = new ServiceClient(uri, conf.contains(ConnectorConf.TOKEN) ? conf.get(ConnectorConf.TOKEN) : null);
            JsonNode catalogs;
            try {
                catalogs = client.get("/v1/catalogs").path("catalogs");
            } catch (ServiceClient.ServiceException e) {
                throw new IllegalStateException("cannot register hms-catalog's catalogs in Spark: " + e.getMessage(), e);
            }
            for (JsonNode catalog : catalogs) {
                String name = catalog.path("name").asText();
                String key = "spark.sql.catalog." + name;
                if (name.isEmpty() || conf.contains(key)) {
                    continue;
                }
                conf.set(key, ConnectorConf.CATALOG_CLASS);
                conf.set(key + ".uri", client.urls());  // every replica: the catalog fails over as the plugin does
            }
            return Collections.emptyMap();
        }
    }
}
