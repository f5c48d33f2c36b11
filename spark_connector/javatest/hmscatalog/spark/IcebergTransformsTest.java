package hmscatalog.spark;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import org.junit.Test;

/**
 * Iceberg's transforms against the worked values of Iceberg's specification (its appendix on 32-bit hash
 * requirements and its truncate examples): the service proves each written file's partition with
 * pyiceberg, so a value off here would make every such commit fail.
 */
public class IcebergTransformsTest {
    /** 2017-11-16T22:31:08Z, the specification's sample timestamp, in microseconds. */
    private static final long SAMPLE_MICROS = 1_510_871_468_000_000L;
    /** 2017-11-16, the specification's sample date, in days since 1970-01-01. */
    private static final int SAMPLE_DAYS = 17_486;

    private static byte[] longBytes(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
    }

    @Test
    public void murmur3MatchesTheSpecificationsHashes() {
        assertEquals(2017239379, IcebergTransforms.murmur3(longBytes(34)));  // int 34 and long 34L hash alike
        assertEquals(-653330422, IcebergTransforms.murmur3(longBytes(SAMPLE_DAYS)));  // date 2017-11-16
        assertEquals(-2047944441, IcebergTransforms.murmur3(longBytes(SAMPLE_MICROS)));  // timestamp
        assertEquals(1210000089, IcebergTransforms.murmur3("iceberg".getBytes(StandardCharsets.UTF_8)));
        assertEquals(-188683207, IcebergTransforms.murmur3(new byte[] {0, 1, 2, 3}));
        // decimal 14.20: the unscaled 1420 as minimal big-endian two's complement bytes
        assertEquals(-500754589, IcebergTransforms.murmur3(new BigDecimal("14.20").unscaledValue().toByteArray()));
    }

    @Test
    public void bucketIsTheHashWithoutSignModuloN() {
        assertEquals(2017239379 % 16, IcebergTransforms.bucket(34L, 16));
        assertEquals(2017239379 % 100, IcebergTransforms.bucket(34, 100));
        assertEquals(1210000089 % 7, IcebergTransforms.bucket("iceberg", 7));
        assertEquals((-653330422 & Integer.MAX_VALUE) % 10, IcebergTransforms.bucket(SAMPLE_DAYS, 10));
        assertEquals((-2047944441 & Integer.MAX_VALUE) % 10, IcebergTransforms.bucket(SAMPLE_MICROS, 10));
        assertEquals((-188683207 & Integer.MAX_VALUE) % 3, IcebergTransforms.bucket(new byte[] {0, 1, 2, 3}, 3));
        assertEquals((-500754589 & Integer.MAX_VALUE) % 5, IcebergTransforms.bucket(new BigDecimal("14.20"), 5));
    }

    @Test
    public void temporalTransformsOfTheSampleTimestamp() {
        assertEquals(SAMPLE_DAYS, IcebergTransforms.day(SAMPLE_MICROS));
        assertEquals(SAMPLE_DAYS * 24 + 22, IcebergTransforms.hour(SAMPLE_MICROS));
        assertEquals((2017 - 1970) * 12 + 10, IcebergTransforms.month(SAMPLE_MICROS));
        assertEquals(47, IcebergTransforms.year(SAMPLE_MICROS));
    }

    @Test
    public void temporalTransformsOfDates() {
        assertEquals(574, IcebergTransforms.monthOfDate(SAMPLE_DAYS));
        assertEquals(47, IcebergTransforms.yearOfDate(SAMPLE_DAYS));
        assertEquals(0, IcebergTransforms.monthOfDate(0));
        assertEquals(0, IcebergTransforms.yearOfDate(364));
        assertEquals(1, IcebergTransforms.yearOfDate(365));
        assertEquals(-1, IcebergTransforms.monthOfDate(-1));  // 1969-12-31
        assertEquals(-1, IcebergTransforms.yearOfDate(-1));
    }

    @Test
    public void temporalTransformsFloorBeforeTheEpoch() {
        long oneMinuteBefore = -60_000_000L;  // 1969-12-31T23:59:00Z
        assertEquals(-1, IcebergTransforms.day(oneMinuteBefore));
        assertEquals(-1, IcebergTransforms.hour(oneMinuteBefore));
        assertEquals(-1, IcebergTransforms.month(oneMinuteBefore));
        assertEquals(-1, IcebergTransforms.year(oneMinuteBefore));
        assertEquals(0, IcebergTransforms.day(0));
        assertEquals(-1, IcebergTransforms.day(-1));
    }

    @Test
    public void truncateOfIntegersFloorsToTheWidth() {
        assertEquals(0, IcebergTransforms.truncate(1L, 10));
        assertEquals(-10, IcebergTransforms.truncate(-1L, 10));
        assertEquals(10, IcebergTransforms.truncate(10L, 10));
        assertEquals(-10, IcebergTransforms.truncate(-10L, 10));
        assertEquals(1_510_871_400L, IcebergTransforms.truncate(1_510_871_468L, 100));
    }

    @Test
    public void truncateOfStringsCountsCodePoints() {
        assertEquals("ice", IcebergTransforms.truncate("iceberg", 3));
        assertEquals("ab", IcebergTransforms.truncate("ab", 3));
        // U+1F600 is two UTF-16 chars but one code point, as Iceberg counts it
        assertEquals("a\uD83D\uDE00", IcebergTransforms.truncate("a\uD83D\uDE00b", 2));
    }

    @Test
    public void truncateOfDecimalsAndBinary() {
        assertEquals(new BigDecimal("10.50"), IcebergTransforms.truncate(new BigDecimal("10.65"), 50));
        assertEquals(new BigDecimal("-0.10"), IcebergTransforms.truncate(new BigDecimal("-0.05"), 10));
        assertArrayEquals(new byte[] {1, 2}, IcebergTransforms.truncate(new byte[] {1, 2, 3}, 2));
        assertArrayEquals(new byte[] {1}, IcebergTransforms.truncate(new byte[] {1}, 2));
    }
}
