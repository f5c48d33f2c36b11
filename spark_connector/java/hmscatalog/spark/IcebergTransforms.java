package hmscatalog.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;

/**
 * Iceberg's partition transforms, as its spec defines them, on the values Spark's rows hold (a date as days
 * since 1970-01-01, a timestamp as microseconds since the epoch, a string, bytes, a decimal): the writer
 * computes each row's partition with these, and the service proves each file's partition with pyiceberg's,
 * so a difference can only make a commit fail, never commit a file under a wrong partition. Pure functions,
 * public so tests can compare them with pyiceberg's value by value.
 */
public final class IcebergTransforms {
    private static final long MICROS_PER_HOUR = 3_600_000_000L;
    private static final long MICROS_PER_DAY = 86_400_000_000L;

    private IcebergTransforms() {
    }

    /** Days since the epoch of a timestamp in microseconds (floored: 1969-12-31T23:59 is day -1). */
    public static int day(long micros) {
        return (int) Math.floorDiv(micros, MICROS_PER_DAY);
    }

    public static int hour(long micros) {
        return (int) Math.floorDiv(micros, MICROS_PER_HOUR);
    }

    /** Months since 1970-01 of a date (days since the epoch). */
    public static int monthOfDate(int days) {
        LocalDate date = LocalDate.ofEpochDay(days);
        return (date.getYear() - 1970) * 12 + date.getMonthValue() - 1;
    }

    /** Years since 1970 of a date (days since the epoch). */
    public static int yearOfDate(int days) {
        return LocalDate.ofEpochDay(days).getYear() - 1970;
    }

    public static int month(long micros) {
        return monthOfDate(day(micros));
    }

    public static int year(long micros) {
        return yearOfDate(day(micros));
    }

    /** Iceberg's bucket of an int, long, date or timestamp: all hash as the 8 little-endian bytes of a long. */
    public static int bucket(long value, int buckets) {
        byte[] bytes = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
        return bucketOf(murmur3(bytes), buckets);
    }

    public static int bucket(String value, int buckets) {
        return bucketOf(murmur3(value.getBytes(StandardCharsets.UTF_8)), buckets);
    }

    public static int bucket(byte[] value, int buckets) {
        return bucketOf(murmur3(value), buckets);
    }

    /** A decimal hashes as the minimal two's-complement big-endian bytes of its unscaled value. */
    public static int bucket(BigDecimal value, int buckets) {
        return bucketOf(murmur3(value.unscaledValue().toByteArray()), buckets);
    }

    private static int bucketOf(int hash, int buckets) {
        return (hash & Integer.MAX_VALUE) % buckets;
    }

    public static long truncate(long value, int width) {
        return value - Math.floorMod(value, (long) width);
    }

    /** The first {@code width} code points (a character outside the BMP counts once, as Iceberg counts it). */
    public static String truncate(String value, int width) {
        if (value.codePointCount(0, value.length()) <= width) {
            return value;
        }
        return value.substring(0, value.offsetByCodePoints(0, width));
    }

    public static byte[] truncate(byte[] value, int width) {
        return value.length <= width ? value : java.util.Arrays.copyOf(value, width);
    }

    public static BigDecimal truncate(BigDecimal value, int width) {
        BigInteger unscaled = value.unscaledValue();
        BigInteger remainder = unscaled.mod(BigInteger.valueOf(width));  // non-negative, as Iceberg's spec asks
        return new BigDecimal(unscaled.subtract(remainder), value.scale());
    }

    /** MurmurHash3 x86 32-bit with seed 0, the hash Iceberg's bucket transform is defined by. */
    public static int murmur3(byte[] data) {
        final int c1 = 0xcc9e2d51;
        final int c2 = 0x1b873593;
        int hash = 0;
        int blocks = data.length / 4;
        for (int i = 0; i < blocks; i++) {
            int offset = i * 4;
            int k = (data[offset] & 0xff) | (data[offset + 1] & 0xff) << 8 | (data[offset + 2] & 0xff) << 16
                    | (data[offset + 3] & 0xff) << 24;
            k *= c1;
            k = Integer.rotateLeft(k, 15);
            k *= c2;
            hash ^= k;
            hash = Integer.rotateLeft(hash, 13);
            hash = hash * 5 + 0xe6546b64;
        }
        int tail = blocks * 4;
        int k = 0;
        switch (data.length & 3) {
            case 3:
                k ^= (data[tail + 2] & 0xff) << 16;
                // fall through
            case 2:
                k ^= (data[tail + 1] & 0xff) << 8;
                // fall through
            case 1:
                k ^= data[tail] & 0xff;
                k *= c1;
                k = Integer.rotateLeft(k, 15);
                k *= c2;
                hash ^= k;
                break;
            default:
                break;
        }
        hash ^= data.length;
        hash ^= hash >>> 16;
        hash *= 0x85ebca6b;
        hash ^= hash >>> 13;
        hash *= 0xc2b2ae35;
        hash ^= hash >>> 16;
        return hash;
    }
}
