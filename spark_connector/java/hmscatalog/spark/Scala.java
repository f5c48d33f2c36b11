package hmscatalog.spark;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.OverwriteByExpression;
import org.apache.spark.sql.catalyst.plans.logical.OverwritePartitionsDynamic;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** Java collections as the Scala ones Spark's internal APIs take, and the Spark-internal plan nodes we build. */
final class Scala {
    private Scala() {
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static scala.collection.immutable.Map<String, String> map(Map<String, String> map) {
        return (scala.collection.immutable.Map<String, String>) (scala.collection.immutable.Map) scala.collection.immutable.Map$.MODULE$
                .from((scala.collection.IterableOnce) scala.jdk.javaapi.CollectionConverters.asScala(map));
    }

    static <T> scala.collection.immutable.Seq<T> seq(List<T> list) {
        return scala.jdk.javaapi.CollectionConverters.asScala(list).toList();
    }

    static <T> List<T> list(scala.collection.Seq<? extends T> seq) {
        return new ArrayList<>(scala.jdk.javaapi.CollectionConverters.asJava(seq));
    }

    /** {@code plan} with every node that {@code rule} rewrites (a non-null result) replaced, top down, as an analyzer rule does (analysed subtrees skipped). */
    static LogicalPlan transformDown(LogicalPlan plan, Function<LogicalPlan, LogicalPlan> rule) {
        return plan.resolveOperatorsDown(new scala.runtime.AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
            @Override
            public boolean isDefinedAt(LogicalPlan node) {
                return rule.apply(node) != null;
            }

            @Override
            public LogicalPlan apply(LogicalPlan node) {
                return rule.apply(node);
            }
        });
    }

    /**
     * The overwrite by {@code condition} of what {@code dynamic} writes, with its options and its by-name or
     * by-position matching: what Spark's analyzer makes of an INSERT OVERWRITE in STATIC mode.
     */
    static OverwriteByExpression overwriteByExpression(OverwritePartitionsDynamic dynamic, Expression condition) {
        return dynamic.isByName()
                ? OverwriteByExpression.byName(dynamic.table(), dynamic.query(), condition, dynamic.writeOptions(),
                        dynamic.withSchemaEvolution())
                : OverwriteByExpression.byPosition(dynamic.table(), dynamic.query(), condition, dynamic.writeOptions(),
                        dynamic.withSchemaEvolution());
    }
}
