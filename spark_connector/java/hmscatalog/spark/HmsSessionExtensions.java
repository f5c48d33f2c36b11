package hmscatalog.spark;

import org.apache.spark.sql.SparkSessionExtensions;

import scala.Function1;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions=hmscatalog.spark.HmsSessionExtensions}: the analyzer rules that give statements
 * on this catalog's tables the meaning Spark gives them on its own tables where Spark's DSv2 path would not.
 * Today one: {@link FullySpecifiedOverwrite}. The session helpers and the plugin set it; without it those
 * statements keep the DSv2 meaning (the docs' Spark connector page says which).
 */
public final class HmsSessionExtensions implements Function1<SparkSessionExtensions, BoxedUnit> {
    /** Spark builds extensions by reflection, with no arguments. */
    public HmsSessionExtensions() {
    }

    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        extensions.injectResolutionRule(session -> new FullySpecifiedOverwrite());
        return BoxedUnit.UNIT;
    }
}
