package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * How Hive reads a text table's files: its input format, its serde and the properties the serde is
 * initialised with (serde and table parameters, data columns and their Hive types), as Hive builds them.
 */
final class HiveStorage implements Serializable {
    private static final long serialVersionUID = 1L;

    final String inputFormat;
    final String serde;
    final Properties properties;
    final int headerLines;

    private HiveStorage(String inputFormat, String serde, Properties properties) {
        this.inputFormat = inputFormat;
        this.serde = serde;
        this.properties = properties;
        this.headerLines = Integer.parseInt(properties.getProperty("skip.header.line.count", "0").strip());
    }

    static HiveStorage of(HmsTable table) {
        JsonNode storage = table.view().path("storage");
        Properties properties = new Properties();
        putAll(properties, storage.path("table_parameters"));
        putAll(properties, storage.path("serde_parameters"));
        List<String> names = new ArrayList<>();
        List<String> types = new ArrayList<>();
        for (JsonNode column : table.view().path("columns")) {
            if (!column.path("partition_key").asBoolean(false)) {
                names.add(column.path("name").asText());
                types.add(column.path("type").asText());
            }
        }
        properties.setProperty("columns", String.join(",", names));
        properties.setProperty("columns.types", String.join(":", types));
        String serde = storage.path("serde").asText();
        properties.setProperty("serialization.lib", serde);
        String inputFormat = storage.path("input_format").asText("org.apache.hadoop.mapred.TextInputFormat");
        return new HiveStorage(inputFormat, serde, properties);
    }

    private static void putAll(Properties properties, JsonNode map) {
        for (Map.Entry<String, JsonNode> field : map.properties()) {
            if (!field.getValue().isNull()) {
                properties.setProperty(field.getKey(), field.getValue().asText());
            }
        }
    }
}
