package hmscatalog.spark;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.serde2.Deserializer;
import org.apache.hadoop.hive.serde2.SerDeException;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.mapred.FileSplit;
import org.apache.hadoop.mapred.InputFormat;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RecordReader;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.util.ReflectionUtils;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.hive.HadoopTableReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;

import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Text tables read as Hive reads them: the table's input format over the split's byte range and its own
 * serde (LazySimpleSerDe with its delimiters, escapes and null format, OpenCSVSerde, RegexSerDe, ...),
 * whose objects Spark's Hive reader code turns into rows. Header lines are skipped in the split that
 * starts the file.
 */
final class HiveSerdeReaderFactory implements PartitionReaderFactory {
    private static final long serialVersionUID = 1L;

    private final Broadcast<SerializableConfiguration> conf;
    private final HiveStorage storage;
    private final StructType readDataSchema;
    private final StructType readPartitionSchema;

    HiveSerdeReaderFactory(Broadcast<SerializableConfiguration> conf, HiveStorage storage, StructType readDataSchema,
                           StructType readPartitionSchema) {
        this.conf = conf;
        this.storage = storage;
        this.readDataSchema = readDataSchema;
        this.readPartitionSchema = readPartitionSchema;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        return FileChainReader.of(partition, this::open);
    }

    private PartitionReader<InternalRow> open(PartitionedFile file) {
        try {
            return new Reader(file);
        } catch (IOException | ReflectiveOperationException | SerDeException | RuntimeException e) {
            throw new IllegalStateException("cannot read " + file.urlEncodedPath() + " with input format "
                    + storage.inputFormat + " and serde " + storage.serde + ": " + e, e);
        }
    }

    private final class Reader implements PartitionReader<InternalRow> {
        private final RecordReader<Writable, Writable> records;
        private final scala.collection.Iterator<InternalRow> rows;
        private InternalRow current;

        @SuppressWarnings("unchecked")
        Reader(PartitionedFile file) throws IOException, ReflectiveOperationException, SerDeException {
            JobConf jobConf = new JobConf(conf.value().value());
            for (String name : storage.properties.stringPropertyNames()) {
                jobConf.set(name, storage.properties.getProperty(name));
            }
            Deserializer deserializer = (Deserializer) Class.forName(storage.serde, true,
                    Thread.currentThread().getContextClassLoader()).getDeclaredConstructor().newInstance();
            deserializer.initialize(jobConf, storage.properties);
            Class<?> formatClass = Class.forName(storage.inputFormat, true, Thread.currentThread().getContextClassLoader());
            InputFormat<Writable, Writable> format = (InputFormat<Writable, Writable>) ReflectionUtils.newInstance(formatClass, jobConf);
            FileSplit split = new FileSplit(new Path(file.toPath().toUri()), file.start(), file.length(), (String[]) null);
            records = format.getRecordReader(split, jobConf, Reporter.NULL);
            int skip = file.start() == 0 ? storage.headerLines : 0;

            int dataColumns = readDataSchema.fields().length;
            GenericInternalRow row = new GenericInternalRow(dataColumns + readPartitionSchema.fields().length);
            InternalRow partitionValues = file.partitionValues();
            for (int i = 0; i < readPartitionSchema.fields().length; i++) {
                row.update(dataColumns + i, partitionValues.get(i, readPartitionSchema.fields()[i].dataType()));
            }
            List<Tuple2<Attribute, Object>> targets = new ArrayList<>();
            List<AttributeReference> attributes = CollectionConverters.asJava(DataTypeUtils.toAttributes(readDataSchema));
            for (int i = 0; i < attributes.size(); i++) {
                targets.add(new Tuple2<>(attributes.get(i), i));
            }
            rows = HadoopTableReader.fillObject(CollectionConverters.asScala(new Values(records, skip)), deserializer,
                    scala.collection.immutable.List.from(CollectionConverters.asScala(targets)), row, deserializer);
        }

        @Override
        public boolean next() {
            if (!rows.hasNext()) {
                return false;
            }
            current = rows.next();
            return true;
        }

        @Override
        public InternalRow get() {
            return current;
        }

        @Override
        public void close() throws IOException {
            records.close();
        }
    }

    /** The values of a record reader, after the first {@code skip} (header lines). */
    private static final class Values implements java.util.Iterator<Writable> {
        private final RecordReader<Writable, Writable> records;
        private final Writable key;
        private final Writable value;
        private boolean ready;
        private boolean done;

        Values(RecordReader<Writable, Writable> records, int skip) throws IOException {
            this.records = records;
            this.key = records.createKey();
            this.value = records.createValue();
            for (int i = 0; i < skip && records.next(key, value); i++) {
                // a header line
            }
        }

        @Override
        public boolean hasNext() {
            if (!ready && !done) {
                try {
                    done = !records.next(key, value);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
                ready = !done;
            }
            return ready;
        }

        @Override
        public Writable next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            ready = false;
            return value;
        }
    }
}
