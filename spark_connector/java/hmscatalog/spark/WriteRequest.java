package hmscatalog.spark;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What Spark asked a write to do, fixed when its builder builds it: the mode the service gives a meaning
 * ({@code append}, {@code overwrite} of the partitions the static spec names, or of all for an empty spec,
 * {@code dynamic}: of the partitions written) and the static partition spec, column (lower case) to value
 * as Spark's writer would write it, null for NULL, in the statement's order. One value passed down instead
 * of two loose ones, so the builder's later changes cannot reach a write already built.
 */
record WriteRequest(String mode, Map<String, String> staticSpec) {
    static final String APPEND = "append";
    static final String OVERWRITE = "overwrite";
    static final String DYNAMIC = "dynamic";

    WriteRequest {
        if (!mode.equals(APPEND) && !mode.equals(OVERWRITE) && !mode.equals(DYNAMIC)) {
            throw new IllegalArgumentException("unknown write mode '" + mode + "'");
        }
        // a copy that keeps the order and NULL values (Map.copyOf takes neither)
        staticSpec = Collections.unmodifiableMap(new LinkedHashMap<>(staticSpec));
    }

    static WriteRequest append() {
        return new WriteRequest(APPEND, Map.of());
    }
}
