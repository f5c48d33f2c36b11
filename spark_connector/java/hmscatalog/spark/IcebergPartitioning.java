package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;

import java.io.Serializable;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * An Iceberg table's partition spec as the writer applies it to Spark's rows: for each field, the position
 * of its source column in the written rows, the column's type, the transform and its width. Built on the
 * driver from the service's target ({@link ServiceBodies#icebergPartition}); {@link #key} is a row's partition, the
 * values of {@link IcebergTransforms}. Also where the driver adapts the job to Iceberg's files: the schema's
 * field ids on the written columns (a new table's, which Spark's schema does not carry yet), and timestamps
 * written as INT64 microseconds, Iceberg's only timestamp encoding.
 */
final class IcebergPartitioning implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final String FIELD_ID = "parquet.field.id";

    private final String[] names;
    private final int[] ordinals;
    private final DataType[] types;
    private final String[] transforms;
    private final int[] widths;

    private IcebergPartitioning(String[] names, int[] ordinals, DataType[] types, String[] transforms, int[] widths) {
        this.names = names;
        this.ordinals = ordinals;
        this.types = types;
        this.transforms = transforms;
        this.widths = widths;
    }

    /** The partitioning of {@code target}, over rows of {@code schema}; checked here so a task never fails on it. */
    static IcebergPartitioning of(List<ServiceBodies.IcebergField> fields, StructType schema, String table) {
        int n = fields.size();
        String[] names = new String[n];
        int[] ordinals = new int[n];
        DataType[] types = new DataType[n];
        String[] transforms = new String[n];
        int[] widths = new int[n];
        for (int i = 0; i < n; i++) {
            ServiceBodies.IcebergField field = fields.get(i);
            names[i] = field.name();
            transforms[i] = field.transform();
            widths[i] = field.width();
            String source = field.source();
            ordinals[i] = -1;
            for (int j = 0; j < schema.fields().length; j++) {
                if (schema.fields()[j].name().equalsIgnoreCase(source)) {
                    ordinals[i] = j;
                }
            }
            if (ordinals[i] < 0) {
                throw new IllegalStateException("the rows written to " + table + " have no column '" + source
                        + "', the source of its partition field " + names[i]);
            }
            types[i] = schema.fields()[ordinals[i]].dataType();
            check(transforms[i], types[i], table, source);
        }
        return new IcebergPartitioning(names, ordinals, types, transforms, widths);
    }

    private static void check(String transform, DataType type, String table, String source) {
        boolean temporal = type instanceof DateType || timestamp(type);
        boolean ok = switch (transform) {
            case "identity", "void" -> true;
            case "year", "month", "day" -> temporal;
            case "hour" -> timestamp(type);
            case "bucket" -> integral(type) || temporal || type instanceof StringType || type instanceof BinaryType
                    || type instanceof DecimalType;
            case "truncate" -> integral(type) || type instanceof StringType || type instanceof BinaryType || type instanceof DecimalType;
            default -> false;
        };
        if (!ok) {
            throw new UnsupportedOperationException("cannot write " + table + ": its partition transform " + transform + " of column "
                    + source + " (" + type.simpleString() + ") is not one this connector computes");
        }
    }

    private static boolean timestamp(DataType type) {
        return type instanceof TimestampType || type instanceof TimestampNTZType;
    }

    private static boolean integral(DataType type) {
        return type instanceof IntegerType || type instanceof LongType;
    }

    int size() {
        return names.length;
    }

    String name(int field) {
        return names[field];
    }

    /** The row's partition: one value per field (null for NULL and for void), comparable with equals. */
    List<Object> key(InternalRow row) {
        Object[] key = new Object[names.length];
        for (int i = 0; i < key.length; i++) {
            key[i] = row.isNullAt(ordinals[i]) || transforms[i].equals("void") ? null : apply(i, row);
        }
        return Arrays.asList(key);
    }

    private Object apply(int field, InternalRow row) {
        int ordinal = ordinals[field];
        DataType type = types[field];
        int width = widths[field];
        switch (transforms[field]) {
            case "identity":
                return plain(row.get(ordinal, type));
            case "year":
                return type instanceof DateType ? IcebergTransforms.yearOfDate(row.getInt(ordinal)) : IcebergTransforms.year(row.getLong(ordinal));
            case "month":
                return type instanceof DateType ? IcebergTransforms.monthOfDate(row.getInt(ordinal)) : IcebergTransforms.month(row.getLong(ordinal));
            case "day":
                return type instanceof DateType ? row.getInt(ordinal) : IcebergTransforms.day(row.getLong(ordinal));
            case "hour":
                return IcebergTransforms.hour(row.getLong(ordinal));
            case "bucket":
                if (type instanceof IntegerType || type instanceof DateType) {
                    return IcebergTransforms.bucket(row.getInt(ordinal), width);
                }
                if (type instanceof LongType || timestamp(type)) {
                    return IcebergTransforms.bucket(row.getLong(ordinal), width);
                }
                if (type instanceof StringType) {
                    return IcebergTransforms.bucket(row.getUTF8String(ordinal).toString(), width);
                }
                if (type instanceof BinaryType) {
                    return IcebergTransforms.bucket(row.getBinary(ordinal), width);
                }
                return IcebergTransforms.bucket(decimal(row, ordinal, (DecimalType) type), width);
            case "truncate":
                if (type instanceof IntegerType) {
                    return (int) IcebergTransforms.truncate(row.getInt(ordinal), width);
                }
                if (type instanceof LongType) {
                    return IcebergTransforms.truncate(row.getLong(ordinal), width);
                }
                if (type instanceof StringType) {
                    return IcebergTransforms.truncate(row.getUTF8String(ordinal).toString(), width);
                }
                if (type instanceof BinaryType) {
                    return ByteBuffer.wrap(IcebergTransforms.truncate(row.getBinary(ordinal), width));
                }
                return IcebergTransforms.truncate(decimal(row, ordinal, (DecimalType) type), width);
            default:
                throw new IllegalStateException("unknown transform " + transforms[field]);
        }
    }

    private static BigDecimal decimal(InternalRow row, int ordinal, DecimalType type) {
        return row.getDecimal(ordinal, type.precision(), type.scale()).toJavaBigDecimal();
    }

    /** A value of Spark's row as an immutable Java value that compares by content. */
    private static Object plain(Object value) {
        if (value instanceof UTF8String text) {
            return text.toString();
        }
        if (value instanceof Decimal decimal) {
            return decimal.toJavaBigDecimal();
        }
        if (value instanceof byte[] bytes) {
            return ByteBuffer.wrap(bytes.clone());
        }
        return value;
    }

    /** A partition value as the file's folder and the commit's values show it (not parsed back: the service
     * computes each file's partition itself). */
    static String text(Object value) {
        if (value == null) {
            return null;
        }
        if (value instanceof ByteBuffer bytes) {
            byte[] copy = new byte[bytes.remaining()];
            bytes.duplicate().get(copy);
            return HexFormat.of().formatHex(copy);
        }
        return value.toString();
    }

    /** The written columns with the field ids of {@code target.iceberg_field_ids} where they have none. */
    static StructField[] withFieldIds(StructField[] fields, JsonNode ids) {
        StructField[] annotated = new StructField[fields.length];
        for (int i = 0; i < fields.length; i++) {
            annotated[i] = withFieldId(fields[i], ids);
        }
        return annotated;
    }

    private static StructField withFieldId(StructField field, JsonNode ids) {
        JsonNode entry = null;
        var names = ids.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (name.equalsIgnoreCase(field.name())) {
                entry = ids.path(name);
            }
        }
        if (entry == null) {
            return field;
        }
        DataType type = field.dataType();
        if (type instanceof StructType struct && entry.path("fields").size() > 0) {
            type = new StructType(withFieldIds(struct.fields(), entry.path("fields")));
        }
        Metadata metadata = field.metadata().contains(FIELD_ID) ? field.metadata()
                : new MetadataBuilder().withMetadata(field.metadata()).putLong(FIELD_ID, entry.path("id").asLong()).build();
        return new StructField(field.name(), type, field.nullable(), metadata);
    }

    /** Iceberg stores timestamps as INT64 microseconds (Spark's Parquet writer makes INT96 unless told). */
    static void adaptConf(WriterFormats.Prepared prepared) {
        prepared.conf().value().set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS");
        prepared.conf().value().set("spark.sql.parquet.fieldId.write.enabled", "true");
    }

    @Override
    public String toString() {
        return "IcebergPartitioning(" + String.join(", ", names).toLowerCase(Locale.ROOT) + ")";
    }
}
