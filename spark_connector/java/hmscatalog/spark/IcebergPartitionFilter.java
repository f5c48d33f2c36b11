package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which splits of an Iceberg table may hold rows matching a predicate on source columns, decided from each
 * data file's partition tuple (the plan's partition values) through the partition fields' transforms:
 * identity, year, month, day, hour, bucket[N] and truncate[W], computed as Iceberg's specification defines
 * them (bucket by 32-bit Murmur3 of the value's single-value serialization). It only ever answers "may
 * match" (a superset): a transform that loses order or precision keeps every split it cannot rule out, and
 * the rows are still filtered by the query.
 *
 * The plan gives a partition value as pyiceberg reads it from the manifest: dates as days, timestamps as
 * microseconds, and a transform's result as an integer.
 */
final class IcebergPartitionFilter {
    private static final long MICROS_PER_HOUR = 3_600_000_000L;
    private static final long MICROS_PER_DAY = 86_400_000_000L;

    /** One partition field: its name in the plan's partition values, its source column and transform. */
    record Field(String name, String source, String transform, DataType sourceType) {
    }

    private final List<Field> fields;

    private IcebergPartitionFilter(List<Field> fields) {
        this.fields = fields;
    }

    /** The partition fields of the plan ({@code partition_fields}) whose source is a top-level column. */
    static IcebergPartitionFilter of(JsonNode plan, StructType schema) {
        List<Field> fields = new ArrayList<>();
        for (JsonNode field : plan.path("partition_fields")) {
            String source = field.path("source").asText("");
            for (StructField column : schema.fields()) {
                if (column.name().equalsIgnoreCase(source)) {
                    fields.add(new Field(field.path("name").asText(), column.name(),
                            field.path("transform").asText("").toLowerCase(Locale.ROOT), column.dataType()));
                }
            }
        }
        return new IcebergPartitionFilter(fields);
    }

    /** The source columns some partition field is derived from (what runtime filters may name). */
    Set<String> sourceColumns() {
        Set<String> columns = new LinkedHashSet<>();
        for (Field field : fields) {
            if (!field.transform.equals("void")) {
                columns.add(field.source);
            }
        }
        return columns;
    }

    /** Whether a predicate can rule out some split (it names a partitioned source column in a form handled here). */
    boolean usable(Predicate predicate) {
        return switch (predicate.name()) {
            case "AND" -> usable((Predicate) predicate.children()[0]) || usable((Predicate) predicate.children()[1]);
            case "OR" -> usable((Predicate) predicate.children()[0]) && usable((Predicate) predicate.children()[1]);
            case "=", "IN", "<", "<=", ">", ">=" -> column(predicate.children()[0]) != null
                    && allLiterals(predicate.children(), 1);
            default -> false;
        };
    }

    /** False only when no row of the split (by its partition values) can satisfy the predicate. */
    boolean mayMatch(Predicate predicate, JsonNode partitionValues) {
        return compile(predicate).mayMatch(partitionValues);
    }

    /** A predicate made ready to test many splits. */
    interface SplitTest {
        /** False only when no row of the split (by its partition values) can satisfy the predicate. */
        boolean mayMatch(JsonNode partitionValues);
    }

    /**
     * The predicate as a test of splits, its literals transformed once: an {@code IN} list is a set of partition
     * values, so a split costs one look-up instead of one transform and comparison per literal (a runtime filter
     * from a join can carry thousands of literals, tested against every split of a fact table).
     */
    SplitTest compile(Predicate predicate) {
        switch (predicate.name()) {
            case "AND": {
                SplitTest left = compile((Predicate) predicate.children()[0]);
                SplitTest right = compile((Predicate) predicate.children()[1]);
                return values -> left.mayMatch(values) && right.mayMatch(values);
            }
            case "OR": {
                SplitTest left = compile((Predicate) predicate.children()[0]);
                SplitTest right = compile((Predicate) predicate.children()[1]);
                return values -> left.mayMatch(values) || right.mayMatch(values);
            }
            case "=":
            case "IN":
            case "<":
            case "<=":
            case ">":
            case ">=":
                break;
            default:
                return values -> true;
        }
        String column = column(predicate.children()[0]);
        if (column == null || !allLiterals(predicate.children(), 1)) {
            return values -> true;
        }
        List<FieldTest> tests = new ArrayList<>();
        for (Field field : fields) {
            if (field.source.equalsIgnoreCase(column) && !field.transform.equals("void")) {
                tests.add(fieldTest(field, predicate));
            }
        }
        return values -> {
            for (FieldTest test : tests) {
                JsonNode pair = pair(values, test.field().name);
                // a file of a spec without this field (partitioning evolved) says nothing about it
                if (pair != null && !test.mayMatch(pair.get(1).isNull() ? null : pair.get(1).asText())) {
                    return false;
                }
            }
            return true;
        };
    }

    /** One partition field's test of its raw partition value (null: the partition of null source values). */
    private record FieldTest(Field field, RawTest test) {
        boolean mayMatch(String raw) {
            return test.mayMatch(raw);
        }
    }

    private interface RawTest {
        boolean mayMatch(String raw);
    }

    private FieldTest fieldTest(Field field, Predicate predicate) {
        if (!predicate.name().equals("=") && !predicate.name().equals("IN")) {
            return new FieldTest(field, raw -> rangeMayMatch(field, predicate, raw));
        }
        Expression[] children = predicate.children();
        Set<Object> images = new HashSet<>();
        boolean uncomputed = false;
        for (int i = 1; i < children.length; i++) {
            Object value = ((Literal<?>) children[i]).value();
            if (value != null) {
                Comparable<Object> transformed = transform(field, value);
                uncomputed |= transformed == null;
                if (transformed != null) {
                    images.add(setKey(transformed));
                }
            }
        }
        boolean anyValue = uncomputed;  // a literal whose image is not computed here may match any partition
        // a null partition value comes from a null source value, which no comparison keeps
        return new FieldTest(field, raw -> raw != null && (anyValue || !images.isEmpty() && images.contains(setKey(parse(field, raw)))));
    }

    /** A value as a set member equal where {@code compareTo} is 0 (decimals of one value and different scales). */
    private static Object setKey(Object value) {
        return value instanceof BigDecimal decimal ? decimal.stripTrailingZeros() : value;
    }

    /** A comparison ({@code <}, {@code <=}, {@code >}, {@code >=}) of a non-void field with one literal. */
    private static boolean rangeMayMatch(Field field, Predicate predicate, String raw) {
        Expression[] children = predicate.children();
        String op = predicate.name();
        if (raw == null) {
            return false;  // a null partition value comes from a null source value, which no comparison keeps
        }
        Object value = ((Literal<?>) children[1]).value();
        if (value == null) {
            return false;
        }
        boolean identity = field.transform.equals("identity");
        if (!identity && !monotonic(field.transform)) {
            return true;
        }
        Comparable<Object> bound = transform(field, value);
        if (bound == null) {
            return true;
        }
        int order = bound.compareTo(parse(field, raw));  // > 0: the literal's image is above the partition's
        return switch (op) {
            case "<" -> identity ? order > 0 : order >= 0;
            case "<=", ">=" -> op.equals("<=") ? order >= 0 : order <= 0;
            default -> identity ? order < 0 : order <= 0;  // ">"
        };
    }

    private static boolean monotonic(String transform) {
        return transform.equals("year") || transform.equals("month") || transform.equals("day") || transform.equals("hour")
                || transform.startsWith("truncate");
    }

    /** The transform's result for a Catalyst value of the source type, as a comparable value; null when not computed. */
    @SuppressWarnings("unchecked")
    private static Comparable<Object> transform(Field field, Object value) {
        DataType type = field.sourceType;
        String transform = field.transform;
        Object result;
        if (transform.equals("identity")) {
            result = canonical(type, value);
        } else if (transform.equals("year") || transform.equals("month") || transform.equals("day")) {
            Long days = days(type, value);
            if (days == null) {
                return null;
            }
            LocalDate date = LocalDate.ofEpochDay(days);
            result = switch (transform) {
                case "year" -> (long) date.getYear() - 1970;
                case "month" -> ((long) date.getYear() - 1970) * 12 + date.getMonthValue() - 1;
                default -> days;
            };
        } else if (transform.equals("hour")) {
            if (!(type instanceof TimestampType || type instanceof TimestampNTZType)) {
                return null;
            }
            result = Math.floorDiv((Long) value, MICROS_PER_HOUR);
        } else if (transform.startsWith("bucket[")) {
            byte[] bytes = bucketBytes(type, value);
            if (bytes == null) {
                return null;
            }
            int buckets = Integer.parseInt(transform.substring(7, transform.length() - 1));
            result = (long) IcebergTransforms.bucket(bytes, buckets);
        } else if (transform.startsWith("truncate[")) {
            int width = Integer.parseInt(transform.substring(9, transform.length() - 1));
            result = truncate(type, value, width);
        } else {
            return null;
        }
        return (Comparable<Object>) result;
    }

    /** A partition value as the plan gives it, in the domain {@link #transform} returns. */
    private static Object parse(Field field, String raw) {
        String transform = field.transform;
        DataType type = field.sourceType;
        if (!transform.equals("identity") && !transform.startsWith("truncate[")) {
            return Long.parseLong(raw);
        }
        if (type instanceof StringType) {
            return raw;
        }
        if (type instanceof DecimalType) {
            return new BigDecimal(raw);
        }
        if (type.sameType(org.apache.spark.sql.types.DataTypes.BooleanType)) {
            return raw.equalsIgnoreCase("true") ? 1L : 0L;
        }
        return Long.parseLong(raw);
    }

    /** Integers, dates (days) and timestamps (microseconds) as longs, decimals as BigDecimal, strings as String. */
    private static Object canonical(DataType type, Object value) {
        if (value instanceof UTF8String s) {
            return s.toString();
        }
        if (value instanceof Decimal d) {
            return d.toJavaBigDecimal();
        }
        if (value instanceof Boolean b) {
            return b ? 1L : 0L;
        }
        if (value instanceof Number n && !(type instanceof org.apache.spark.sql.types.FloatType)
                && !(type instanceof org.apache.spark.sql.types.DoubleType)) {
            return n.longValue();
        }
        return null;
    }

    private static Long days(DataType type, Object value) {
        if (type instanceof DateType) {
            return ((Integer) value).longValue();
        }
        if (type instanceof TimestampType || type instanceof TimestampNTZType) {
            return Math.floorDiv((Long) value, MICROS_PER_DAY);
        }
        return null;
    }

    private static Object truncate(DataType type, Object value, int width) {
        if (type instanceof IntegerType || type instanceof LongType || type instanceof ShortType || type instanceof ByteType) {
            long v = ((Number) value).longValue();
            return v - (((v % width) + width) % width);
        }
        if (value instanceof UTF8String s) {
            String text = s.toString();
            int end = text.offsetByCodePoints(0, Math.min(width, text.codePointCount(0, text.length())));
            return text.substring(0, end);
        }
        if (value instanceof Decimal d) {
            BigDecimal decimal = d.toJavaBigDecimal();
            BigInteger unscaled = decimal.unscaledValue();
            BigInteger w = BigInteger.valueOf(width);
            return new BigDecimal(unscaled.subtract(unscaled.mod(w)), decimal.scale());
        }
        return null;
    }

    /** Iceberg's single-value serialization of a value for bucketing. */
    private static byte[] bucketBytes(DataType type, Object value) {
        if (type instanceof IntegerType || type instanceof LongType || type instanceof ShortType || type instanceof ByteType
                || type instanceof DateType || type instanceof TimestampType || type instanceof TimestampNTZType) {
            return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(((Number) value).longValue()).array();
        }
        if (value instanceof UTF8String s) {
            return s.toString().getBytes(StandardCharsets.UTF_8);
        }
        if (value instanceof Decimal d) {
            return d.toJavaBigDecimal().unscaledValue().toByteArray();
        }
        if (type instanceof BinaryType) {
            return (byte[]) value;
        }
        return null;
    }

    private static JsonNode pair(JsonNode partitionValues, String name) {
        for (JsonNode pair : partitionValues) {
            if (pair.get(0).asText().equals(name)) {
                return pair;
            }
        }
        return null;
    }

    private String column(Expression expression) {
        if (expression instanceof NamedReference reference && reference.fieldNames().length == 1) {
            for (Field field : fields) {
                if (field.source.equalsIgnoreCase(reference.fieldNames()[0])) {
                    return field.source;
                }
            }
        }
        return null;
    }

    private static boolean allLiterals(Expression[] children, int from) {
        if (children.length <= from) {
            return false;
        }
        for (int i = from; i < children.length; i++) {
            if (!(children[i] instanceof Literal<?>)) {
                return false;
            }
        }
        return true;
    }
}
