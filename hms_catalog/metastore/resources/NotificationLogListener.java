import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStore.HMSHandler;
import org.apache.hadoop.hive.metastore.MetaStoreEventListener;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.api.NotificationEvent;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.events.AddPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterTableEvent;
import org.apache.hadoop.hive.metastore.events.CreateDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.CreateTableEvent;
import org.apache.hadoop.hive.metastore.events.DropDatabaseEvent;
import org.apache.hadoop.hive.metastore.events.DropPartitionEvent;
import org.apache.hadoop.hive.metastore.events.DropTableEvent;
import org.apache.hadoop.hive.metastore.events.InsertEvent;
import org.apache.hadoop.hive.metastore.events.ListenerEvent;
import org.apache.hadoop.hive.metastore.messaging.MessageFactory;
import org.apache.hadoop.hive.metastore.messaging.PartitionFiles;

/**
 * Writes the metastore's notification log (NOTIFICATION_LOG) in the same transaction as each change,
 * with Hive's own JSON messages, so that get_next_notification answers as it does on a production
 * metastore running DbNotificationListener (which the bundled jars do not ship).
 *
 * Registered as hive.metastore.transactional.event.listeners: a failed change writes no event and an
 * event is never written for a change that was rolled back.
 *
 * Messages are built under the same lock as they are written: Hive's JSONMessageFactory shares one thrift
 * (de)serializer between threads, so two concurrent ALTER TABLEs otherwise corrupt each other's message
 * ("Event not set up correctly") and the change fails.
 */
public class NotificationLogListener extends MetaStoreEventListener {
  private static final Object LOCK = new Object();
  private final MessageFactory messages = MessageFactory.getInstance();

  public NotificationLogListener(Configuration conf) {
    super(conf);
  }

  private static int now() {
    return (int) (System.currentTimeMillis() / 1000L);
  }

  private void write(ListenerEvent source, String type, String db, String table, Supplier<Object> message)
      throws MetaException {
    if (!source.getStatus()) {
      return;
    }
    synchronized (LOCK) {
      NotificationEvent event = new NotificationEvent(0, now(), type, message.get().toString());
      event.setMessageFormat(messages.getMessageFormat());
      event.setDbName(db);
      if (table != null) {
        event.setTableName(table);
      }
      HMSHandler.getMSForConf(getConf()).addNotificationEvent(event);
    }
  }

  private static Iterator<PartitionFiles> noFiles() {
    return Collections.<PartitionFiles>emptyList().iterator();
  }

  @Override
  public void onCreateDatabase(CreateDatabaseEvent e) throws MetaException {
    write(e, MessageFactory.CREATE_DATABASE_EVENT, e.getDatabase().getName(), null,
        () -> messages.buildCreateDatabaseMessage(e.getDatabase()));
  }

  @Override
  public void onDropDatabase(DropDatabaseEvent e) throws MetaException {
    write(e, MessageFactory.DROP_DATABASE_EVENT, e.getDatabase().getName(), null,
        () -> messages.buildDropDatabaseMessage(e.getDatabase()));
  }

  @Override
  public void onCreateTable(CreateTableEvent e) throws MetaException {
    Table t = e.getTable();
    write(e, MessageFactory.CREATE_TABLE_EVENT, t.getDbName(), t.getTableName(),
        () -> messages.buildCreateTableMessage(t, Collections.<String>emptyList().iterator()));
  }

  @Override
  public void onDropTable(DropTableEvent e) throws MetaException {
    Table t = e.getTable();
    write(e, MessageFactory.DROP_TABLE_EVENT, t.getDbName(), t.getTableName(),
        () -> messages.buildDropTableMessage(t));
  }

  @Override
  public void onAlterTable(AlterTableEvent e) throws MetaException {
    Table before = e.getOldTable();
    write(e, MessageFactory.ALTER_TABLE_EVENT, before.getDbName(), before.getTableName(),
        () -> messages.buildAlterTableMessage(before, e.getNewTable()));
  }

  @Override
  public void onAddPartition(AddPartitionEvent e) throws MetaException {
    Table t = e.getTable();
    write(e, MessageFactory.ADD_PARTITION_EVENT, t.getDbName(), t.getTableName(),
        () -> messages.buildAddPartitionMessage(t, e.getPartitionIterator(), noFiles()));
  }

  @Override
  public void onAlterPartition(AlterPartitionEvent e) throws MetaException {
    Table t = e.getTable();
    write(e, MessageFactory.ALTER_PARTITION_EVENT, t.getDbName(), t.getTableName(),
        () -> messages.buildAlterPartitionMessage(t, e.getOldPartition(), e.getNewPartition()));
  }

  @Override
  public void onDropPartition(DropPartitionEvent e) throws MetaException {
    Table t = e.getTable();
    write(e, MessageFactory.DROP_PARTITION_EVENT, t.getDbName(), t.getTableName(),
        () -> messages.buildDropPartitionMessage(t, e.getPartitionIterator()));
  }

  @Override
  public void onInsert(InsertEvent e) throws MetaException {
    List<String> files = e.getFiles() == null ? Collections.<String>emptyList() : e.getFiles();
    write(e, MessageFactory.INSERT_EVENT, e.getDb(), e.getTable(),
        () -> messages.buildInsertMessage(e.getDb(), e.getTable(), e.getPartitionKeyValues(), files.iterator()));
  }
}
