package hmscatalog.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.types.PhysicalDataType$;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import java.lang.reflect.Method;
import java.util.Locale;

import scala.math.Ordering;

/**
 * Spark's V2 predicates on a table's partition columns, evaluated on one partition's values as Spark
 * evaluates them: SQL's three values (TRUE, FALSE, NULL as {@code null}), each type compared by Spark's
 * own ordering of it, literals of the column's exact type only. A predicate that passes
 * {@link #evaluable} is answered exactly, so a split it rejects holds no row the query keeps, and the
 * predicate need not be evaluated again on rows.
 *
 * The partition row holds every partition column, in the table's key order, typed as Spark types them.
 * Spark 4.3's partition predicates (a Catalyst expression Spark binds to that row itself) are evaluated
 * through their {@code eval(InternalRow)}, found by reflection so that the connector still builds
 * against Spark releases without them.
 */
final class PartitionFilter {
    static final String PARTITION_PREDICATE = "PARTITION_PREDICATE";

    private final StructType partitionSchema;

    PartitionFilter(StructType partitionSchema) {
        this.partitionSchema = partitionSchema;
    }

    /** Whether {@code predicate} is answered exactly from partition values alone. */
    boolean evaluable(Predicate predicate) {
        String name = predicate.name();
        Expression[] children = predicate.children();
        switch (name) {
            case "ALWAYS_TRUE":
            case "ALWAYS_FALSE":
                return true;
            case "AND":
            case "OR":
                return children.length == 2 && children[0] instanceof Predicate left && children[1] instanceof Predicate right
                        && evaluable(left) && evaluable(right);
            case "NOT":
                return children.length == 1 && children[0] instanceof Predicate child && evaluable(child);
            case "IS_NULL":
            case "IS_NOT_NULL":
                return children.length == 1 && ordinal(children[0]) >= 0;
            case "=":
            case "<>":
            case "<=>":
            case "<":
            case "<=":
            case ">":
            case ">=":
                return children.length == 2 && comparable(children[0], children[1]);
            case "IN":
                if (children.length < 1 || ordinal(children[0]) < 0) {
                    return false;
                }
                for (int i = 1; i < children.length; i++) {
                    if (!comparable(children[0], children[i])) {
                        return false;
                    }
                }
                return true;
            case "STARTS_WITH":
            case "ENDS_WITH":
            case "CONTAINS":
                return children.length == 2 && ordinal(children[0]) >= 0
                        && type(children[0]) instanceof StringType && children[1] instanceof Literal<?> literal
                        && literal.dataType() instanceof StringType;
            case PARTITION_PREDICATE:
                return evalMethod(predicate) != null;
            default:
                return false;
        }
    }

    /** Whether the partition with these values may hold rows the predicate keeps (it evaluates to TRUE). */
    boolean matches(Predicate predicate, InternalRow values) {
        return Boolean.TRUE.equals(eval(predicate, values));
    }

    /** The predicate's value on the partition row: TRUE, FALSE or null (SQL's NULL). Only for evaluable ones. */
    Boolean eval(Predicate predicate, InternalRow values) {
        Expression[] children = predicate.children();
        switch (predicate.name()) {
            case "ALWAYS_TRUE":
                return true;
            case "ALWAYS_FALSE":
                return false;
            case "AND": {
                Boolean left = eval((Predicate) children[0], values);
                if (Boolean.FALSE.equals(left)) {
                    return false;
                }
                Boolean right = eval((Predicate) children[1], values);
                if (Boolean.FALSE.equals(right)) {
                    return false;
                }
                return left == null || right == null ? null : true;
            }
            case "OR": {
                Boolean left = eval((Predicate) children[0], values);
                if (Boolean.TRUE.equals(left)) {
                    return true;
                }
                Boolean right = eval((Predicate) children[1], values);
                if (Boolean.TRUE.equals(right)) {
                    return true;
                }
                return left == null || right == null ? null : false;
            }
            case "NOT": {
                Boolean child = eval((Predicate) children[0], values);
                return child == null ? null : !child;
            }
            case "IS_NULL":
                return value(children[0], values) == null;
            case "IS_NOT_NULL":
                return value(children[0], values) != null;
            case "IN": {
                Object value = value(children[0], values);
                if (value == null) {
                    return null;
                }
                Ordering<Object> ordering = ordering(type(children[0]));
                boolean sawNull = false;
                for (int i = 1; i < children.length; i++) {
                    Object candidate = value(children[i], values);
                    if (candidate == null) {
                        sawNull = true;
                    } else if (ordering.compare(value, candidate) == 0) {
                        return true;
                    }
                }
                return sawNull ? null : false;
            }
            case "STARTS_WITH":
            case "ENDS_WITH":
            case "CONTAINS": {
                UTF8String value = (UTF8String) value(children[0], values);
                UTF8String pattern = (UTF8String) value(children[1], values);
                if (value == null || pattern == null) {
                    return null;
                }
                return switch (predicate.name()) {
                    case "STARTS_WITH" -> value.startsWith(pattern);
                    case "ENDS_WITH" -> value.endsWith(pattern);
                    default -> value.contains(pattern);
                };
            }
            case PARTITION_PREDICATE:
                try {
                    return (Boolean) evalMethod(predicate).invoke(predicate, values);
                } catch (ReflectiveOperationException e) {
                    return true;  // cannot tell: the split is kept, which only reads more
                }
            default:
                return compare(predicate.name(), children[0], children[1], values);
        }
    }

    private Boolean compare(String op, Expression leftExpression, Expression rightExpression, InternalRow values) {
        Object left = value(leftExpression, values);
        Object right = value(rightExpression, values);
        if (op.equals("<=>")) {
            if (left == null || right == null) {
                return left == null && right == null;
            }
            return ordering(type(leftExpression)).compare(left, right) == 0;
        }
        if (left == null || right == null) {
            return null;
        }
        int order = ordering(type(leftExpression)).compare(left, right);
        return switch (op) {
            case "=" -> order == 0;
            case "<>" -> order != 0;
            case "<" -> order < 0;
            case "<=" -> order <= 0;
            case ">" -> order > 0;
            default -> order >= 0;
        };
    }

    /** Two operands of one comparison: a partition column and a literal (or another partition column) of its type. */
    private boolean comparable(Expression left, Expression right) {
        DataType leftType = type(left);
        DataType rightType = type(right);
        boolean columns = ordinal(left) >= 0 || ordinal(right) >= 0;
        return columns && leftType != null && rightType != null && leftType.sameType(rightType) && orderable(leftType);
    }

    private static boolean orderable(DataType type) {
        try {
            ordering(type);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private DataType type(Expression expression) {
        if (expression instanceof Literal<?> literal) {
            return literal.dataType();
        }
        int ordinal = ordinal(expression);
        return ordinal < 0 ? null : partitionSchema.fields()[ordinal].dataType();
    }

    private Object value(Expression expression, InternalRow values) {
        if (expression instanceof Literal<?> literal) {
            return literal.value();
        }
        int ordinal = ordinal(expression);
        return values.isNullAt(ordinal) ? null : values.get(ordinal, partitionSchema.fields()[ordinal].dataType());
    }

    /** The partition column a reference names (compared without case, as Spark resolves them), or -1. */
    int ordinal(Expression expression) {
        if (!(expression instanceof NamedReference reference) || reference.fieldNames().length != 1) {
            return -1;
        }
        String name = reference.fieldNames()[0].toLowerCase(Locale.ROOT);
        StructField[] fields = partitionSchema.fields();
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].name().toLowerCase(Locale.ROOT).equals(name)) {
                return i;
            }
        }
        return -1;
    }

    @SuppressWarnings("unchecked")
    private static Ordering<Object> ordering(DataType type) {
        return (Ordering<Object>) (Ordering<?>) PhysicalDataType$.MODULE$.ordering(type);
    }

    private static Method evalMethod(Predicate predicate) {
        if (!PARTITION_PREDICATE.equals(predicate.name())) {
            return null;
        }
        try {
            return predicate.getClass().getMethod("eval", InternalRow.class);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }
}
