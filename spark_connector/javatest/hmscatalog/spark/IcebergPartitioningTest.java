package hmscatalog.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.Arrays;

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.Test;

/** A row's Iceberg partition as the writer computes it from the service's target. */
public class IcebergPartitioningTest {
    private static final long SAMPLE_MICROS = 1_510_871_468_000_000L;  // 2017-11-16T22:31:08Z
    private static final StructType SCHEMA = new StructType().add("ts", DataTypes.TimestampType).add("d", DataTypes.DateType)
            .add("id", DataTypes.IntegerType).add("s", DataTypes.StringType).add("m", DataTypes.createDecimalType(9, 2))
            .add("b", DataTypes.BinaryType);

    private static JsonNode json(String text) {
        try {
            return new ObjectMapper().readTree(text.replace('\'', '"'));
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static IcebergPartitioning of(String fields) {
        return IcebergPartitioning.of(ServiceBodies.icebergPartition(json("{'iceberg_partition': [" + fields + "]}")), SCHEMA, "db.t");
    }

    private static GenericInternalRow row(Long ts, Integer d, Integer id, String s, String m, byte[] b) {
        return new GenericInternalRow(new Object[] {ts, d, id, s == null ? null : UTF8String.fromString(s),
            m == null ? null : Decimal.apply(new BigDecimal(m)), b});
    }

    @Test
    public void keyAppliesEachFieldsTransform() {
        IcebergPartitioning partitioning = of("{'name': 'ts_hour', 'source': 'ts', 'transform': 'hour'},"
                + "{'name': 'd_month', 'source': 'D', 'transform': 'month'},"
                + "{'name': 'id_bucket', 'source': 'id', 'transform': 'bucket', 'width': 16},"
                + "{'name': 's_trunc', 'source': 's', 'transform': 'truncate', 'width': 3},"
                + "{'name': 'm_trunc', 'source': 'm', 'transform': 'truncate', 'width': 50},"
                + "{'name': 'b', 'source': 'b', 'transform': 'identity'},"
                + "{'name': 'gone', 'source': 'id', 'transform': 'void'}");
        assertEquals(7, partitioning.size());
        assertEquals("d_month", partitioning.name(1));
        assertEquals(Arrays.asList(17486 * 24 + 22, 574, 3, "ice", new BigDecimal("10.50"), ByteBuffer.wrap(new byte[] {1, 2}), null),
                partitioning.key(row(SAMPLE_MICROS, 17486, 34, "iceberg", "10.65", new byte[] {1, 2})));
    }

    @Test
    public void nullSourcesHaveNullPartitions() {
        IcebergPartitioning partitioning = of("{'name': 'ts_day', 'source': 'ts', 'transform': 'day'},"
                + "{'name': 'd_year', 'source': 'd', 'transform': 'year'}");
        assertEquals(Arrays.asList(null, 47), partitioning.key(row(null, 17486, 1, "x", "1.00", null)));
        assertEquals(Arrays.asList(17486, null), partitioning.key(row(SAMPLE_MICROS, null, 1, "x", "1.00", null)));
    }

    @Test
    public void partitionsTheConnectorCannotComputeAreRefusedOnTheDriver() {
        assertThrows(IllegalStateException.class, () -> of("{'name': 'x', 'source': 'missing', 'transform': 'identity'}"));
        assertThrows(UnsupportedOperationException.class, () -> of("{'name': 'x', 'source': 'd', 'transform': 'hour'}"));
        assertThrows(UnsupportedOperationException.class, () -> of("{'name': 'x', 'source': 's', 'transform': 'day'}"));
        assertThrows(UnsupportedOperationException.class, () -> of("{'name': 'x', 'source': 's', 'transform': 'zorder'}"));
    }

    @Test
    public void textShowsBinaryAsHex() {
        assertEquals("0aff", IcebergPartitioning.text(ByteBuffer.wrap(new byte[] {10, -1})));
        assertEquals("17486", IcebergPartitioning.text(17486));
        assertEquals(null, IcebergPartitioning.text(null));
    }

    @Test
    public void fieldIdsAnnotateColumnsWithoutOne() {
        StructField[] fields = IcebergPartitioning.withFieldIds(
                new StructType().add("ID", DataTypes.IntegerType).add("other", DataTypes.StringType).fields(),
                json("{'id': {'id': 7}}"));
        assertEquals(7L, fields[0].metadata().getLong("parquet.field.id"));
        assertEquals(false, fields[1].metadata().contains("parquet.field.id"));
    }
}
