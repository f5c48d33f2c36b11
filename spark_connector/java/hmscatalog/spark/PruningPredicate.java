package hmscatalog.spark;

import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * Spark filters as the WHERE text the service's planner reads, for partition pruning. A filter with a
 * value of a kind the planner's SQL cannot spell gives null: it is not sent, which only prunes less.
 */
final class PruningPredicate {
    private PruningPredicate() {
    }

    static String where(Filter[] filters) {
        List<String> parts = new ArrayList<>();
        for (Filter filter : filters) {
            String sql = sql(filter);
            if (sql != null) {
                parts.add(sql);
            }
        }
        return parts.isEmpty() ? null : String.join(" AND ", parts);
    }

    static String sql(Filter filter) {
        if (filter instanceof EqualTo f) {
            return compare(f.attribute(), "=", f.value());
        } else if (filter instanceof EqualNullSafe f) {
            return f.value() == null ? name(f.attribute()) + " IS NULL" : compare(f.attribute(), "=", f.value());
        } else if (filter instanceof GreaterThan f) {
            return compare(f.attribute(), ">", f.value());
        } else if (filter instanceof GreaterThanOrEqual f) {
            return compare(f.attribute(), ">=", f.value());
        } else if (filter instanceof LessThan f) {
            return compare(f.attribute(), "<", f.value());
        } else if (filter instanceof LessThanOrEqual f) {
            return compare(f.attribute(), "<=", f.value());
        } else if (filter instanceof IsNull f) {
            return name(f.attribute()) + " IS NULL";
        } else if (filter instanceof IsNotNull f) {
            return name(f.attribute()) + " IS NOT NULL";
        } else if (filter instanceof In f) {
            List<String> values = new ArrayList<>();
            for (Object value : f.values()) {
                String literal = literal(value);
                if (literal == null) {
                    return null;
                }
                values.add(literal);
            }
            return values.isEmpty() ? null : name(f.attribute()) + " IN (" + String.join(", ", values) + ")";
        } else if (filter instanceof And f) {
            String left = sql(f.left());
            String right = sql(f.right());
            if (left == null || right == null) {
                return left == null ? right : left;  // a conjunct left out only keeps more partitions
            }
            return "(" + left + " AND " + right + ")";
        } else if (filter instanceof Or f) {
            String left = sql(f.left());
            String right = sql(f.right());
            return left == null || right == null ? null : "(" + left + " OR " + right + ")";
        } else if (filter instanceof Not f) {
            String child = sql(f.child());
            return child == null || !exact(f.child()) ? null : "NOT (" + child + ")";
        }
        return null;
    }

    /** Whether sql(filter) says all of the filter: only then may it be negated. */
    private static boolean exact(Filter filter) {
        if (filter instanceof And f) {
            return exact(f.left()) && exact(f.right()) && sql(f.left()) != null && sql(f.right()) != null;
        } else if (filter instanceof Or f) {
            return exact(f.left()) && exact(f.right());
        } else if (filter instanceof Not f) {
            return exact(f.child());
        }
        return sql(filter) != null;
    }

    private static String compare(String attribute, String op, Object value) {
        String literal = literal(value);
        return literal == null ? null : name(attribute) + " " + op + " " + literal;
    }

    static String name(String attribute) {
        return "`" + attribute.replace("`", "``") + "`";
    }

    static String literal(Object value) {
        if (value instanceof String s) {
            return "'" + s.replace("'", "''") + "'";
        } else if (value instanceof Boolean b) {
            return b ? "TRUE" : "FALSE";
        } else if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            return value.toString();
        } else if (value instanceof BigDecimal d) {
            return d.toPlainString();
        } else if (value instanceof java.sql.Date d) {
            return "DATE '" + d.toLocalDate() + "'";
        } else if (value instanceof LocalDate d) {
            return "DATE '" + d + "'";
        } else if (value instanceof LocalDateTime t) {
            return "TIMESTAMP '" + t.toString().replace('T', ' ') + "'";
        } else if (value instanceof java.sql.Timestamp || value instanceof Instant) {
            return null;  // an instant: its wall-clock text depends on a time zone the metastore's strings lack
        }
        return null;
    }
}
