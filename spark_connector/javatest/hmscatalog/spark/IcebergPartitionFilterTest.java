package hmscatalog.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.util.List;

import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.LiteralValue;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.Test;

/**
 * Splits of an Iceberg table ruled out by their partition tuple through each field's transform: never a split
 * that may hold a matching row (the answer is a superset), and the ones a transform can rule out.
 */
public class IcebergPartitionFilterTest {
    private static final long DAY = 86_400_000_000L;
    private static final long SAMPLE_MICROS = 1_510_871_468_000_000L;  // 2017-11-16T22:31:08Z, day 17486
    private static final StructType SCHEMA = new StructType().add("ts", DataTypes.TimestampType)
            .add("id", DataTypes.LongType).add("s", DataTypes.StringType).add("v", DataTypes.IntegerType);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text.replace('\'', '"'));
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static final IcebergPartitionFilter FILTER = IcebergPartitionFilter.of(json("{'partition_fields': ["
            + "{'name': 'ts_day', 'source': 'ts', 'transform': 'day'},"
            + "{'name': 'id_bucket', 'source': 'ID', 'transform': 'bucket[16]'},"
            + "{'name': 's_trunc', 'source': 's', 'transform': 'truncate[3]'},"
            + "{'name': 'v_null', 'source': 'v', 'transform': 'void'}]}"), SCHEMA);
    /** The file of day 17486, bucket 3 (where id 34 hashes), strings starting "ice". */
    private static final JsonNode FILE = json("[['ts_day', 17486], ['id_bucket', 3], ['s_trunc', 'ice'], ['v_null', null]]");

    private static Predicate p(String name, Expression... children) {
        return new Predicate(name, children);
    }

    private static Expression ts(long micros) {
        return new LiteralValue<>(micros, DataTypes.TimestampType);
    }

    private static Expression str(String text) {
        return new LiteralValue<>(org.apache.spark.unsafe.types.UTF8String.fromString(text), DataTypes.StringType);
    }

    private static Predicate on(String op, String column, Expression literal) {
        return p(op, Expressions.column(column), literal);
    }

    @Test
    public void sourceColumnsLeaveOutVoidFields() {
        assertEquals(List.of("ts", "id", "s"), List.copyOf(FILTER.sourceColumns()));
    }

    @Test
    public void usableOnlyOnPartitionedSourcesAgainstLiterals() {
        assertTrue(FILTER.usable(on("=", "ts", ts(SAMPLE_MICROS))));
        assertFalse(FILTER.usable(on("=", "other", Expressions.literal(1))));
        assertFalse(FILTER.usable(p("=", Expressions.column("id"), Expressions.column("ts"))));
        assertTrue(FILTER.usable(p("AND", on("=", "id", Expressions.literal(34L)), on("=", "other", Expressions.literal(1)))));
        assertFalse(FILTER.usable(p("OR", on("=", "id", Expressions.literal(34L)), on("=", "other", Expressions.literal(1)))));
    }

    @Test
    public void dayTransformRulesOutOtherDaysAndOrdersBounds() {
        assertTrue(FILTER.mayMatch(on("=", "ts", ts(SAMPLE_MICROS)), FILE));
        assertFalse(FILTER.mayMatch(on("=", "ts", ts(SAMPLE_MICROS + DAY)), FILE));
        assertFalse(FILTER.mayMatch(on("<", "ts", ts(17486 * DAY - 1)), FILE));  // before the day began
        assertTrue(FILTER.mayMatch(on("<", "ts", ts(17486 * DAY + 1)), FILE));
        assertTrue(FILTER.mayMatch(on(">", "ts", ts(SAMPLE_MICROS)), FILE));  // later the same day
        assertFalse(FILTER.mayMatch(on(">=", "ts", ts(17487 * DAY)), FILE));
    }

    @Test
    public void bucketTransformMatchesEqualityOnly() {
        assertTrue(FILTER.mayMatch(on("=", "id", Expressions.literal(34L)), FILE));  // bucket[16] of 34 is 3
        assertFalse(FILTER.mayMatch(on("=", "id", Expressions.literal(35L)), FILE));  // bucket 5
        assertTrue(FILTER.mayMatch(p("IN", Expressions.column("id"), Expressions.literal(99L), Expressions.literal(34L)), FILE));
        assertFalse(FILTER.mayMatch(p("IN", Expressions.column("id"), Expressions.literal(99L), Expressions.literal(35L)), FILE));
        assertTrue(FILTER.mayMatch(on("<", "id", Expressions.literal(0L)), FILE));  // a hash keeps no order
    }

    @Test
    public void truncateTransformOnStrings() {
        assertTrue(FILTER.mayMatch(on("=", "s", str("iceberg")), FILE));
        assertFalse(FILTER.mayMatch(on("=", "s", str("icy")), FILE));
        assertFalse(FILTER.mayMatch(on(">=", "s", str("id")), FILE));
        assertTrue(FILTER.mayMatch(on("<=", "s", str("icf")), FILE));
    }

    @Test
    public void combinationsNullsAndEvolvedSpecs() {
        Predicate otherDay = on("=", "ts", ts(SAMPLE_MICROS + DAY));
        Predicate thisId = on("=", "id", Expressions.literal(34L));
        assertFalse(FILTER.mayMatch(p("AND", thisId, otherDay), FILE));
        assertTrue(FILTER.mayMatch(p("OR", thisId, otherDay), FILE));
        // a null partition value holds rows whose source is null, which no comparison keeps
        assertFalse(FILTER.mayMatch(thisId, json("[['id_bucket', null]]")));
        // a file written before the field existed says nothing about it
        assertTrue(FILTER.mayMatch(otherDay, json("[['id_bucket', 3]]")));
        assertTrue(FILTER.mayMatch(on("=", "v", Expressions.literal(1)), FILE));  // void rules nothing out
    }

    /** A literal that counts how often its value is read. */
    private static final class CountedLiteral implements org.apache.spark.sql.connector.expressions.Literal<Integer> {
        private final int value;
        private final int[] reads;

        CountedLiteral(int value, int[] reads) {
            this.value = value;
            this.reads = reads;
        }

        @Override
        public Integer value() {
            reads[0]++;
            return value;
        }

        @Override
        public org.apache.spark.sql.types.DataType dataType() {
            return DataTypes.IntegerType;
        }
    }

    @Test
    public void aLongInListIsTransformedOnceForAllSplits() {
        // a runtime filter from a join on a date key: thousands of values tested against every split of a fact table
        IcebergPartitionFilter byDate = IcebergPartitionFilter.of(json(
                "{'partition_fields': [{'name': 'd', 'source': 'date_sk', 'transform': 'identity'}]}"),
                new StructType().add("date_sk", DataTypes.IntegerType));
        int[] reads = {0};
        Expression[] children = new Expression[3001];
        children[0] = Expressions.column("date_sk");
        for (int i = 0; i < 3000; i++) {
            children[i + 1] = new CountedLiteral(1000 + 7 * i, reads);
        }
        IcebergPartitionFilter.SplitTest test = byDate.compile(p("IN", children));
        assertEquals(3000, reads[0]);
        int kept = 0;
        for (int day = 0; day < 2000; day++) {
            boolean expected = day >= 1000 && (day - 1000) % 7 == 0;
            assertEquals("day " + day, expected, test.mayMatch(json("[['d', '" + day + "']]")));
            kept += expected ? 1 : 0;
        }
        assertEquals(143, kept);
        assertEquals("splits are tested against the values read once, not per split", 3000, reads[0]);
        assertFalse(test.mayMatch(json("[['d', null]]")));
    }

    @Test
    public void decimalInListIgnoresScale() {
        IcebergPartitionFilter byPrice = IcebergPartitionFilter.of(json(
                "{'partition_fields': [{'name': 'p', 'source': 'price', 'transform': 'identity'}]}"),
                new StructType().add("price", DataTypes.createDecimalType(7, 2)));
        Expression onePointFive = new LiteralValue<>(org.apache.spark.sql.types.Decimal.apply("1.50"),
                DataTypes.createDecimalType(7, 2));
        Expression two = new LiteralValue<>(org.apache.spark.sql.types.Decimal.apply("2.00"), DataTypes.createDecimalType(7, 2));
        Predicate in = p("IN", Expressions.column("price"), onePointFive, two);
        assertTrue(byPrice.mayMatch(in, json("[['p', '1.5']]")));
        assertTrue(byPrice.mayMatch(in, json("[['p', '2']]")));
        assertFalse(byPrice.mayMatch(in, json("[['p', '1.51']]")));
    }
}
