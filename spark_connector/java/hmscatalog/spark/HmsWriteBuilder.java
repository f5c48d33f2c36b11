package hmscatalog.spark;

import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwriteV2;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * How Spark asks to write: append (INSERT INTO, {@code append()}), overwrite by a filter (INSERT OVERWRITE in
 * STATIC mode: the filter is the static partition spec, {@code true} for none), dynamic overwrite (DYNAMIC
 * mode, {@code overwritePartitions()}) or truncate. The service gives each its meaning for the table's kind
 * (a Hive table's overwrite replaces only the partitions written, as Spark overwrites its own). A filter
 * other than equalities on partition columns is refused, naming it.
 */
final class HmsWriteBuilder implements SupportsOverwriteV2, SupportsDynamicOverwrite {
    private final WriteDestination destination;
    private final LogicalWriteInfo info;
    private final StagedHmsTable staged;
    private String mode = WriteRequest.APPEND;
    private final Map<String, String> staticSpec = new LinkedHashMap<>();

    HmsWriteBuilder(WriteDestination destination, LogicalWriteInfo info, StagedHmsTable staged) {
        this.destination = destination;
        this.info = info;
        this.staged = staged;
    }

    @Override
    public WriteBuilder overwrite(Predicate[] predicates) {
        mode = WriteRequest.OVERWRITE;
        for (Predicate predicate : predicates) {
            collect(predicate);
        }
        return this;
    }

    @Override
    public WriteBuilder truncate() {
        mode = WriteRequest.OVERWRITE;
        staticSpec.clear();
        return this;
    }

    @Override
    public WriteBuilder overwriteDynamicPartitions() {
        mode = WriteRequest.DYNAMIC;
        return this;
    }

    private void collect(Predicate predicate) {
        switch (predicate.name()) {
            case "ALWAYS_TRUE" -> {
            }
            case "AND" -> {
                for (Expression child : predicate.children()) {
                    collect((Predicate) child);
                }
            }
            case "=", "<=>" -> {
                Expression[] sides = predicate.children();
                if (sides.length == 2 && sides[0] instanceof NamedReference column && sides[1] instanceof Literal<?> value) {
                    staticSpec.put(String.join(".", column.fieldNames()).toLowerCase(java.util.Locale.ROOT), text(value));
                    return;
                }
                throw refused(predicate);
            }
            default -> throw refused(predicate);
        }
    }

    private IllegalArgumentException refused(Predicate predicate) {
        return new IllegalArgumentException("cannot overwrite " + destination.name() + " where " + predicate
                + ": an overwrite here replaces partitions named by equalities on partition columns (PARTITION (dt='x'), "
                + "or overwritePartitions())");
    }

    /** A literal as the partition value Spark's writer would make of it. */
    private static String text(Literal<?> literal) {
        Object value = literal.value();
        if (value == null) {
            return null;
        }
        DataType type = literal.dataType();
        if (type.equals(DataTypes.DateType)) {
            return LocalDate.ofEpochDay(((Number) value).longValue()).toString();
        }
        return value.toString();
    }

    @Override
    public Write build() {
        return new HmsWrite(destination, info, new WriteRequest(mode, staticSpec), staged);
    }
}
