package hmscatalog.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.Test;

/** Partition predicates answered with SQL's three values, as Spark answers them on rows. */
public class PartitionFilterTest {
    private static final StructType SCHEMA = new StructType().add("dt", DataTypes.StringType).add("h", DataTypes.IntegerType);
    private final PartitionFilter filter = new PartitionFilter(SCHEMA);

    private static InternalRow row(String dt, Integer h) {
        return new GenericInternalRow(new Object[] {dt == null ? null : UTF8String.fromString(dt), h});
    }

    private static Predicate p(String name, Expression... children) {
        return new Predicate(name, children);
    }

    private static Expression col(String name) {
        return Expressions.column(name);
    }

    /** A literal as Spark's predicates hold one (a string as UTF8String). */
    private static Expression lit(Object value) {
        if (value instanceof String text) {
            return new org.apache.spark.sql.connector.expressions.LiteralValue<>(UTF8String.fromString(text), DataTypes.StringType);
        }
        return Expressions.literal(value);
    }

    @Test
    public void evaluableOnlyOnPartitionColumnsWithLiteralsOfTheirType() {
        assertTrue(filter.evaluable(p("=", col("dt"), lit("x"))));
        assertTrue(filter.evaluable(p("=", col("DT"), lit("x"))));  // resolved without case, as Spark does
        assertFalse(filter.evaluable(p("=", col("dt"), lit(5))));  // a string column and an int literal
        assertFalse(filter.evaluable(p("=", col("other"), lit("x"))));
        assertFalse(filter.evaluable(p("LIKE", col("dt"), lit("x%"))));
        assertTrue(filter.evaluable(p("AND", p("<", col("h"), lit(3)), p("IS_NULL", col("dt")))));
        assertFalse(filter.evaluable(p("OR", p("<", col("h"), lit(3)), p("=", col("other"), lit(1)))));
        assertTrue(filter.evaluable(p("IN", col("h"), lit(1), lit(2))));
        assertFalse(filter.evaluable(p("IN", col("h"), lit(1), lit("2"))));
        assertTrue(filter.evaluable(p("STARTS_WITH", col("dt"), lit("20"))));
        assertFalse(filter.evaluable(p("STARTS_WITH", col("h"), lit("20"))));
    }

    @Test
    public void comparisonsUseTheColumnsOrdering() {
        assertEquals(Boolean.TRUE, filter.eval(p("=", col("dt"), lit("x")), row("x", 1)));
        assertEquals(Boolean.FALSE, filter.eval(p("=", col("dt"), lit("x")), row("k=v", 1)));
        assertEquals(Boolean.TRUE, filter.eval(p("<", col("h"), lit(10)), row("x", 9)));
        assertEquals(Boolean.FALSE, filter.eval(p("<", col("h"), lit(10)), row("x", 10)));
        assertEquals(Boolean.TRUE, filter.eval(p("<=", col("h"), lit(10)), row("x", 10)));
        assertEquals(Boolean.TRUE, filter.eval(p(">", col("h"), lit(-1)), row("x", 0)));
        assertEquals(Boolean.TRUE, filter.eval(p(">=", col("dt"), lit("b")), row("ba", 0)));  // string order, not length
        assertEquals(Boolean.TRUE, filter.eval(p("<>", col("dt"), lit("a")), row("b", 0)));
    }

    @Test
    public void nullsFollowSqlsThreeValuedLogic() {
        InternalRow nullDt = row(null, 1);
        Predicate isX = p("=", col("dt"), lit("x"));
        assertNull(filter.eval(isX, nullDt));
        assertNull(filter.eval(p("NOT", isX), nullDt));
        assertFalse(filter.matches(p("NOT", isX), nullDt));  // NOT NULL keeps no row
        assertEquals(Boolean.FALSE, filter.eval(p("AND", p("ALWAYS_FALSE"), isX), nullDt));
        assertNull(filter.eval(p("AND", p("ALWAYS_TRUE"), isX), nullDt));
        assertEquals(Boolean.TRUE, filter.eval(p("OR", p("ALWAYS_TRUE"), isX), nullDt));
        assertNull(filter.eval(p("OR", p("ALWAYS_FALSE"), isX), nullDt));
        assertEquals(Boolean.TRUE, filter.eval(p("IS_NULL", col("dt")), nullDt));
        assertEquals(Boolean.FALSE, filter.eval(p("IS_NOT_NULL", col("dt")), nullDt));
        assertEquals(Boolean.TRUE, filter.eval(p("<=>", col("dt"), lit(null)), nullDt));
        assertEquals(Boolean.FALSE, filter.eval(p("<=>", col("dt"), lit("x")), nullDt));
    }

    @Test
    public void inIsNullWhenNoCandidateMatchesAndOneIsNull() {
        assertEquals(Boolean.TRUE, filter.eval(p("IN", col("h"), lit(1), lit(2)), row("x", 2)));
        assertEquals(Boolean.FALSE, filter.eval(p("IN", col("h"), lit(1), lit(2)), row("x", 3)));
        Expression nullInt = new org.apache.spark.sql.connector.expressions.LiteralValue<>(null, DataTypes.IntegerType);
        assertNull(filter.eval(p("IN", col("h"), lit(1), nullInt), row("x", 3)));
        assertNull(filter.eval(p("IN", col("h"), lit(1)), row("x", null)));
    }

    @Test
    public void stringPredicates() {
        assertEquals(Boolean.TRUE, filter.eval(p("STARTS_WITH", col("dt"), lit("20")), row("2024-01-01", 0)));
        assertEquals(Boolean.FALSE, filter.eval(p("ENDS_WITH", col("dt"), lit("02")), row("2024-01-01", 0)));
        assertEquals(Boolean.TRUE, filter.eval(p("CONTAINS", col("dt"), lit("4-0")), row("2024-01-01", 0)));
        assertNull(filter.eval(p("CONTAINS", col("dt"), lit("4")), row(null, 0)));
    }

    @Test
    public void ordinalNamesPartitionColumnsOnly() {
        assertEquals(0, filter.ordinal(col("dt")));
        assertEquals(1, filter.ordinal(col("H")));
        assertEquals(-1, filter.ordinal(col("other")));
        assertEquals(-1, filter.ordinal(lit("dt")));
    }
}
