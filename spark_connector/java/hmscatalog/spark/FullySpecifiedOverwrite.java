package hmscatalog.spark;

import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.OverwritePartitionsDynamic;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.StringType;

import java.util.List;

/**
 * {@code INSERT OVERWRITE t PARTITION (every key = value) SELECT ..} in DYNAMIC
 * {@code spark.sql.sources.partitionOverwriteMode}, on a Hive or Spark data source table of this catalog, as
 * an overwrite of that partition: Spark's own tables take a full static spec as a static overwrite (its
 * partition is emptied even when the query gives no rows), while Spark's DSv2 analysis hands a catalog the
 * statement as a dynamic overwrite without the spec, which replaces only partitions that receive rows.
 *
 * <p>The rule recognises the statement by the columns Spark's {@code ResolveInsertInto} adds for the static
 * values: a cast of a string literal tagged as made by the table insertion, aliased as the partition column. A
 * DataFrame's {@code overwritePartitions()} never has them (a {@code lit} column is the query's own column),
 * so it keeps its meaning, as does a spec with a dynamic key. Iceberg tables keep the DSv2 meaning, which is
 * the one Iceberg's own Spark catalog gives.
 */
final class FullySpecifiedOverwrite extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
        return Scala.transformDown(plan, node -> node instanceof OverwritePartitionsDynamic dynamic ? rewrite(dynamic) : null);
    }

    /** The static overwrite {@code dynamic} means, or null where it is not this statement on our table. */
    private static LogicalPlan rewrite(OverwritePartitionsDynamic dynamic) {
        if (!(dynamic.table() instanceof DataSourceV2Relation relation) || !(relation.table() instanceof HmsTable table)
                || table.isIceberg() || !dynamic.query().resolved()) {
            return null;
        }
        Transform[] partitioning = table.partitioning();
        if (partitioning.length == 0) {
            return null;
        }
        List<Attribute> tableColumns = Scala.list(relation.output());
        List<Attribute> queryColumns = Scala.list(dynamic.query().output());
        Expression condition = null;
        for (Transform transform : partitioning) {
            NamedReference[] references = transform.references();
            if (!transform.name().equals("identity") || references.length != 1 || references[0].fieldNames().length != 1) {
                return null;
            }
            int index = indexOf(tableColumns, references[0].fieldNames()[0]);
            if (index < 0) {
                return null;
            }
            Attribute column = tableColumns.get(index);
            int queryIndex = dynamic.isByName() ? indexOf(queryColumns, column.name())
                    : queryColumns.size() == tableColumns.size() ? index : -1;
            if (queryIndex < 0) {
                return null;
            }
            Expression value = staticValue(dynamic.query(), queryColumns.get(queryIndex));
            if (value == null) {
                return null;
            }
            Expression equality = new EqualNullSafe(column, value);
            condition = condition == null ? equality : new And(condition, equality);
        }
        return Scala.overwriteByExpression(dynamic, condition);
    }

    /**
     * The static partition value that {@code column} of {@code query} carries, or null if it carries the query's
     * own values: followed through the projections above the query to the tagged cast of a literal.
     */
    private static Expression staticValue(LogicalPlan query, Attribute column) {
        LogicalPlan plan = query;
        Attribute wanted = column;
        while (plan instanceof Project project) {
            Expression found = null;
            for (NamedExpression named : Scala.<NamedExpression>list(project.projectList())) {
                if (named.exprId().equals(wanted.exprId())) {
                    found = (Expression) named;
                    break;
                }
            }
            if (found instanceof Alias alias) {
                found = alias.child();
                if (found instanceof Cast cast && isStaticValue(cast)) {
                    return cast;
                }
            }
            if (!(found instanceof Attribute next)) {
                return null;
            }
            wanted = next;
            plan = project.child();
        }
        return null;
    }

    private static boolean isStaticValue(Cast cast) {
        return cast.child() instanceof Literal literal
                && (literal.dataType() instanceof StringType || literal.dataType() instanceof NullType)
                && cast.getTagValue(Cast.BY_TABLE_INSERTION()).isDefined();
    }

    private static int indexOf(List<Attribute> columns, String name) {
        boolean caseSensitive = SQLConf.get().caseSensitiveAnalysis();
        for (int i = 0; i < columns.size(); i++) {
            String candidate = columns.get(i).name();
            if (caseSensitive ? candidate.equals(name) : candidate.equalsIgnoreCase(name)) {
                return i;
            }
        }
        return -1;
    }
}
