package hmscatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.schema.GroupType;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;
import org.apache.spark.paths.SparkPath;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

import java.io.IOException;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Iceberg delete files of one split, applied in the JVM: position deletes by the row's position in its
 * data file (Spark's Parquet reader gives it), equality deletes by the values of the key columns, matched
 * by field id and with NULL equal to NULL. The planner attached to each split only the delete files that
 * apply to it (sequence numbers and partitions), so every one given here applies.
 */
final class IcebergDeletes implements Serializable {
    private static final long serialVersionUID = 1L;

    /** One delete file: its path and, for equality deletes, the field ids and names of its key columns. */
    record DeleteFile(String path, boolean positional, int[] fieldIds, String[] columns) implements Serializable {
    }

    /** The delete files of one split, and its data file's path as the plan (and Iceberg) spell it. */
    record SplitDeletes(String dataPath, List<DeleteFile> files) implements Serializable {
    }

    /**
     * The delete files of every data file with some (by its path encoded as PartitionedFile encodes it), or a reason the JVM cannot apply them: a delete
     * file that is not Parquet, or an equality key that is not a top-level column of a supported type.
     */
    static Object plan(JsonNode splits, StructType dataSchema) {
        Map<Integer, StructField> byId = new HashMap<>();
        for (StructField field : dataSchema.fields()) {
            if (field.metadata().contains("parquet.field.id")) {
                byId.put((int) field.metadata().getLong("parquet.field.id"), field);
            }
        }
        Map<String, SplitDeletes> deletes = new HashMap<>();
        for (JsonNode split : splits) {
            List<DeleteFile> files = new ArrayList<>();
            for (JsonNode delete : split.path("delete_files")) {
                String path = delete.path("path").asText();
                if (!delete.path("file_format").asText("").equalsIgnoreCase("parquet")) {
                    return "its delete file " + path + " is " + delete.path("file_format").asText();
                }
                boolean positional = delete.path("content").asText().startsWith("position");
                JsonNode ids = delete.path("equality_ids");
                int[] fieldIds = new int[ids.size()];
                String[] columns = new String[ids.size()];
                for (int i = 0; i < fieldIds.length; i++) {
                    fieldIds[i] = ids.get(i).asInt();
                    StructField field = byId.get(fieldIds[i]);
                    if (field == null || !keyType(field.dataType())) {
                        return "its equality delete file " + path + " keys on field id " + fieldIds[i]
                                + (field == null ? ", not a top-level column" : " of type " + field.dataType().simpleString());
                    }
                    columns[i] = field.name();
                }
                files.add(new DeleteFile(path, positional, fieldIds, columns));
            }
            if (!files.isEmpty()) {
                String dataPath = split.path("path").asText();
                deletes.put(SparkPath.fromPathString(dataPath).urlEncoded(), new SplitDeletes(dataPath, files));
            }
        }
        return deletes;
    }

    static boolean keyType(DataType type) {
        return type instanceof StringType || type instanceof IntegerType || type instanceof LongType
                || type instanceof ShortType || type instanceof ByteType || type instanceof DateType
                || type instanceof TimestampType || type instanceof TimestampNTZType || type instanceof DecimalType
                || type instanceof BooleanType || type instanceof DoubleType || type instanceof FloatType;
    }

    /** The positions of {@code dataPath}'s rows deleted by these position delete files. */
    static Set<Long> positions(List<DeleteFile> files, String dataPath, Configuration conf) throws IOException {
        Set<Long> deleted = new HashSet<>();
        for (DeleteFile file : files) {
            if (!file.positional()) {
                continue;
            }
            try (ParquetReader<Group> reader = ParquetReader.builder(new GroupReadSupport(), new Path(file.path()))
                    .withConf(conf).build()) {
                for (Group row = reader.read(); row != null; row = reader.read()) {
                    if (row.getString("file_path", 0).equals(dataPath)) {
                        deleted.add(row.getLong("pos", 0));
                    }
                }
            }
        }
        return deleted;
    }

    /** The key tuples an equality delete file deletes, values normalised as {@link #rowValue} gives them. */
    static Set<List<Object>> keys(DeleteFile file, Configuration conf) throws IOException {
        Set<List<Object>> keys = new HashSet<>();
        try (ParquetReader<Group> reader = ParquetReader.builder(new GroupReadSupport(), new Path(file.path()))
                .withConf(conf).build()) {
            int[] indexes = null;
            for (Group row = reader.read(); row != null; row = reader.read()) {
                if (indexes == null) {
                    indexes = indexesById(row.getType(), file);
                }
                Object[] values = new Object[indexes.length];
                for (int i = 0; i < indexes.length; i++) {
                    values[i] = fileValue(row, indexes[i]);
                }
                keys.add(Arrays.asList(values));
            }
        }
        return keys;
    }

    private static int[] indexesById(GroupType schema, DeleteFile file) {
        int[] indexes = new int[file.fieldIds().length];
        for (int i = 0; i < indexes.length; i++) {
            indexes[i] = -1;
            for (int f = 0; f < schema.getFieldCount(); f++) {
                Type.ID id = schema.getType(f).getId();
                if (id != null && id.intValue() == file.fieldIds()[i]) {
                    indexes[i] = f;
                }
            }
            if (indexes[i] < 0) {
                throw new IllegalStateException("equality delete file " + file.path() + " has no column of field id "
                        + file.fieldIds()[i]);
            }
        }
        return indexes;
    }

    private static Object fileValue(Group row, int field) {
        if (row.getFieldRepetitionCount(field) == 0) {
            return null;
        }
        PrimitiveType type = row.getType().getType(field).asPrimitiveType();
        LogicalTypeAnnotation logical = type.getLogicalTypeAnnotation();
        if (logical instanceof LogicalTypeAnnotation.DecimalLogicalTypeAnnotation decimal) {
            BigInteger unscaled = switch (type.getPrimitiveTypeName()) {
                case INT32 -> BigInteger.valueOf(row.getInteger(field, 0));
                case INT64 -> BigInteger.valueOf(row.getLong(field, 0));
                default -> new BigInteger(row.getBinary(field, 0).getBytes());
            };
            return new BigDecimal(unscaled, decimal.getScale());
        }
        return switch (type.getPrimitiveTypeName()) {
            case INT32 -> (long) row.getInteger(field, 0);
            case INT64 -> row.getLong(field, 0);
            case BOOLEAN -> row.getBoolean(field, 0);
            case FLOAT -> (double) row.getFloat(field, 0);
            case DOUBLE -> row.getDouble(field, 0);
            default -> row.getBinary(field, 0).toStringUsingUTF8();
        };
    }

    /** A row's value in the same normal form as a delete file's: integers and dates as longs, strings as String. */
    static Object rowValue(InternalRow row, int ordinal, DataType type) {
        if (row.isNullAt(ordinal)) {
            return null;
        }
        if (type instanceof StringType) {
            return row.getUTF8String(ordinal).toString();
        } else if (type instanceof IntegerType || type instanceof DateType) {
            return (long) row.getInt(ordinal);
        } else if (type instanceof LongType || type instanceof TimestampType || type instanceof TimestampNTZType) {
            return row.getLong(ordinal);
        } else if (type instanceof ShortType) {
            return (long) row.getShort(ordinal);
        } else if (type instanceof ByteType) {
            return (long) row.getByte(ordinal);
        } else if (type instanceof DecimalType decimal) {
            return row.getDecimal(ordinal, decimal.precision(), decimal.scale()).toJavaBigDecimal();
        } else if (type instanceof BooleanType) {
            return row.getBoolean(ordinal);
        } else if (type instanceof FloatType) {
            return (double) row.getFloat(ordinal);
        }
        return row.getDouble(ordinal);
    }
}
