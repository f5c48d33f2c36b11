import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.HiveMetaStore.HMSHandler;
import org.apache.hadoop.hive.metastore.MetaStoreEventListener;
import org.apache.hadoop.hive.metastore.ObjectStore;
import org.apache.hadoop.hive.metastore.RawStore;
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
 *
 * Hive 2.3 reads and advances the next event id in a transaction of its own (HIVE-16886): two changes at once read
 * the same id, and a follower asking for the events after the last id it saw never sees one of them. Each event is
 * written in a transaction that first locks the id's row (SELECT ... FOR UPDATE, held to its commit), as Hive 3's
 * ObjectStore does; the Java lock alone cannot, for it is released before the transaction commits.
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
    RawStore store = HMSHandler.getMSForConf(getConf());
    // A transaction of its own (or the change's, when the caller runs one: then this one is nested in it) that
    // holds the id's row lock from before the id is read until it is committed.
    boolean committed = false;
    store.openTransaction();
    try {
      lockNextEventId(store);
      synchronized (LOCK) {
        NotificationEvent event = new NotificationEvent(0, now(), type, message.get().toString());
        event.setMessageFormat(messages.getMessageFormat());
        event.setDbName(db);
        if (table != null) {
          event.setTableName(table);
        }
        store.addNotificationEvent(event);
      }
      committed = store.commitTransaction();
    } finally {
      if (!committed) {
        store.rollbackTransaction();
      }
    }
  }

  /** Lock NOTIFICATION_SEQUENCE's row until this transaction ends (nothing to lock before the first event). */
  private void lockNextEventId(RawStore store) throws MetaException {
    String sql = "SELECT \"NEXT_EVENT_ID\" FROM \"NOTIFICATION_SEQUENCE\" FOR UPDATE";
    if (getConf().get("javax.jdo.option.ConnectionURL", "").startsWith("jdbc:derby:")) {
      sql += " WITH RS";  // Derby keeps the lock to the end of the transaction only at read stability
    }
    javax.jdo.PersistenceManager manager = persistenceManager(objectStore(store));
    javax.jdo.Query query = manager.newQuery("javax.jdo.query.SQL", sql);
    try {
      query.execute();
    } finally {
      query.closeAll();
    }
  }

  /** The store's own persistence manager, whose transaction openTransaction began (its public
   *  getPersistenceManager() makes a new one, outside that transaction). */
  private static javax.jdo.PersistenceManager persistenceManager(ObjectStore store) throws MetaException {
    try {
      Field pm = ObjectStore.class.getDeclaredField("pm");
      pm.setAccessible(true);
      return (javax.jdo.PersistenceManager) pm.get(store);
    } catch (ReflectiveOperationException e) {
      throw new MetaException("cannot reach the metastore's persistence manager to lock the next event id: " + e);
    }
  }

  /** The ObjectStore behind the handler's RawStore (a proxy that retries calls). */
  private static ObjectStore objectStore(RawStore store) throws MetaException {
    Object found = store;
    if (Proxy.isProxyClass(found.getClass())) {
      InvocationHandler handler = Proxy.getInvocationHandler(found);
      try {
        Field base = handler.getClass().getDeclaredField("base");
        base.setAccessible(true);
        found = base.get(handler);
      } catch (ReflectiveOperationException e) {
        throw new MetaException("cannot reach the metastore's ObjectStore to lock the next event id: " + e);
      }
    }
    if (!(found instanceof ObjectStore)) {
      throw new MetaException("the notification log needs Hive's ObjectStore, not " + found.getClass().getName());
    }
    return (ObjectStore) found;
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
