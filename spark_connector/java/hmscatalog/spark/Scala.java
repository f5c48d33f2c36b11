package hmscatalog.spark;

import java.util.List;
import java.util.Map;

/** Java collections as the Scala ones Spark's internal APIs take. */
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
}
