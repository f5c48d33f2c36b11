import java.io.BufferedReader;
import java.io.FileNotFoundException;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.AccessController;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Base64;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import javax.security.auth.Subject;
import javax.security.auth.kerberos.KerberosTicket;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.VersionInfo;

/**
 * Hadoop's own FileSystem client for a Python process that has no libhdfs: one long-lived JVM per catalog
 * whose requests and answers are JSON lines on stdin and stdout.
 *
 * The first line holds the settings ({"settings": {...}}): a Configuration is built from them, the process
 * logs in (Kerberos from a keytab, a named simple user, or the OS user) and answers with id 0. Every later
 * line is a request {"id": n, "op": ..., ...}, run on a pool of threads so many Python threads can share the
 * process; answers carry the request's id and come back in any order. A failure is answered as
 * {"id": n, "error": {"class": ..., "kind": ..., "message": ...}}. Stdout carries answers only: System.out is
 * pointed at stderr, where Hadoop's logging goes too. End of stdin ends the process.
 */
public final class HadoopFsServer {
  private static final int MAX_READ = 64 << 20;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String GROUP_OVERRIDES = "hadoop.user.group.static.mapping.overrides";

  private final Configuration conf;
  private final UserGroupInformation ugi;
  private final boolean kerberos;
  private final PrintStream out;
  private final Map<String, FileSystem> filesystems = new ConcurrentHashMap<>();

  private HadoopFsServer(Configuration conf, UserGroupInformation ugi, boolean kerberos, PrintStream out) {
    this.conf = conf;
    this.ugi = ugi;
    this.kerberos = kerberos;
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    System.setOut(System.err);  // nothing but answers on the real stdout
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
    int threads = args.length > 0 ? Integer.parseInt(args[0]) : 16;
    String first = in.readLine();
    if (first == null) {
      return;
    }
    HadoopFsServer server;
    try {
      server = start(JSON.readTree(first).path("settings"), out);
    } catch (Throwable e) {
      write(out, failure(0, e));
      out.flush();
      System.exit(2);
      return;
    }
    write(out, server.identity(JSON.createObjectNode().put("id", 0)));
    server.serve(in, Executors.newFixedThreadPool(threads, runnable -> {
      Thread thread = new Thread(runnable, "hadoop-fs-request");
      thread.setDaemon(true);
      return thread;
    }));
  }

  private static HadoopFsServer start(JsonNode settings, PrintStream out) throws IOException {
    Configuration conf = new Configuration();
    for (Map.Entry<String, JsonNode> field : settings.properties()) {
      conf.set(field.getKey(), field.getValue().asText());
    }
    if (conf.get("fs.viewfs.mount.links.as.symlinks") == null) {
      conf.setBoolean("fs.viewfs.mount.links.as.symlinks", false);  // mount points listed as the folders they are
    }
    String krb5 = conf.get("java.security.krb5.conf");
    if (krb5 != null && !krb5.isEmpty()) {
      System.setProperty("java.security.krb5.conf", krb5);
    }
    boolean kerberos = "kerberos".equalsIgnoreCase(conf.get("hadoop.security.authentication", "simple").trim());
    String user = conf.getTrimmed("hadoop.username", "");
    String overrides = conf.getTrimmed(GROUP_OVERRIDES, "dr.who=;");
    if (!kerberos && !user.isEmpty() && !(";" + overrides).contains(";" + user + "=")) {
      // The named user need not exist on this host, but viewfs asks for its primary group: the user's own
      // name, on the client only (HDFS checks permissions with the NameNode's groups).
      conf.set(GROUP_OVERRIDES, (overrides.isEmpty() || overrides.endsWith(";") ? overrides : overrides + ";") + user + "=" + user);
    }
    UserGroupInformation.setConfiguration(conf);
    UserGroupInformation ugi;
    if (kerberos) {
      String principal = conf.getTrimmed("hadoop.kerberos.principal", "");
      String keytab = conf.getTrimmed("hadoop.kerberos.keytab", "");
      if (!principal.isEmpty() && !keytab.isEmpty()) {
        if (principal.contains("_HOST")) {  // a per-host principal (etl/_HOST@REALM) names this host
          principal = SecurityUtil.getServerPrincipal(principal, InetAddress.getLocalHost().getCanonicalHostName());
        }
        UserGroupInformation.loginUserFromKeytab(principal, keytab);
      }
      ugi = UserGroupInformation.getLoginUser();  // from the ticket cache when no keytab is given
      if (!ugi.hasKerberosCredentials()) {
        throw new IOException("Kerberos is required but no Kerberos credentials were found for " + ugi.getUserName()
            + " (give hadoop.kerberos.principal and hadoop.kerberos.keytab, or a ticket cache)");
      }
    } else {
      ugi = user.isEmpty() ? UserGroupInformation.getCurrentUser() : UserGroupInformation.createRemoteUser(user);
    }
    return new HadoopFsServer(conf, ugi, kerberos, out);
  }

  private void serve(BufferedReader in, ExecutorService pool) throws IOException, InterruptedException {
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) {
        continue;
      }
      final String request = line;
      pool.execute(() -> write(out, answer(request)));
    }
    pool.shutdown();  // end of input: answer what was asked, then leave
    pool.awaitTermination(30, TimeUnit.SECONDS);
    for (FileSystem fs : filesystems.values()) {
      try {
        fs.close();
      } catch (IOException e) {
        // closing on the way out: nothing left to tell
      }
    }
    System.exit(0);
  }

  private static void write(PrintStream out, ObjectNode answer) {
    String text;
    try {
      text = JSON.writeValueAsString(answer);
    } catch (IOException e) {
      text = "{\"id\":" + answer.path("id").asLong() + ",\"error\":{\"class\":\"java.io.IOException\",\"kind\":\"other\","
          + "\"message\":\"answer could not be encoded\"}}";
    }
    synchronized (out) {
      out.print(text);
      out.print('\n');
      out.flush();
    }
  }

  private ObjectNode answer(String line) {
    long id = -1;
    try {
      JsonNode request = JSON.readTree(line);
      id = request.path("id").asLong(-1);
      final long requestId = id;
      if (kerberos) {
        ugi.checkTGTAndReloginFromKeytab();  // cheap unless the ticket nears its end
      }
      return ugi.doAs((PrivilegedExceptionAction<ObjectNode>) () -> run(requestId, request));
    } catch (Throwable e) {
      return failure(id, e);
    }
  }

  private ObjectNode run(long id, JsonNode request) throws IOException {
    ObjectNode answer = JSON.createObjectNode().put("id", id);
    String op = request.path("op").asText();
    switch (op) {
      case "whoami":
        return identity(answer);
      case "list": {
        Path path = new Path(request.path("path").asText());
        list(filesystem(path), path, request.path("recursive").asBoolean(false), answer.putArray("entries"));
        return answer;
      }
      case "stat": {
        Path path = new Path(request.path("path").asText());
        entry(answer.putObject("entry"), filesystem(path).getFileStatus(path));
        return answer;
      }
      case "blocks": {
        ArrayNode files = answer.putArray("files");
        for (JsonNode location : request.path("paths")) {
          blocks(files.addObject(), new Path(location.asText()));
        }
        return answer;
      }
      case "read": {
        Path path = new Path(request.path("path").asText());
        long offset = request.path("offset").asLong(0);
        int length = (int) Math.min(request.path("length").asLong(0), MAX_READ);
        answer.put("data", Base64.getEncoder().encodeToString(read(filesystem(path), path, offset, length)));
        return answer;
      }
      case "delete": {
        Path path = new Path(request.path("path").asText());
        FileSystem fs = filesystem(path);
        if (!fs.exists(path)) {
          throw new FileNotFoundException("No such file or directory: " + path);
        }
        answer.put("done", fs.delete(path, request.path("recursive").asBoolean(false)));
        return answer;
      }
      case "rename": {
        Path source = new Path(request.path("source").asText());
        Path target = new Path(request.path("target").asText());
        FileSystem fs = filesystem(source);
        if (!fs.exists(source)) {
          throw new FileNotFoundException("No such file or directory: " + source);
        }
        answer.put("done", fs.rename(source, target));
        return answer;
      }
      case "mkdirs": {
        Path path = new Path(request.path("path").asText());
        answer.put("done", filesystem(path).mkdirs(path));
        return answer;
      }
      default:
        throw new IllegalArgumentException("unknown operation '" + op + "'");
    }
  }

  private ObjectNode identity(ObjectNode answer) throws IOException {
    answer.put("user", ugi.getUserName());
    answer.put("short_user", ugi.getShortUserName());
    answer.put("authentication", String.valueOf(ugi.getAuthenticationMethod()).toLowerCase());
    answer.put("kerberos", kerberos && ugi.hasKerberosCredentials());
    answer.put("keytab", ugi.isFromKeytab());
    answer.put("hadoop", VersionInfo.getVersion());
    answer.put("ticket_end", ticketEnd());
    return answer;
  }

  /** When the login's ticket-granting ticket ends (ms since the epoch), 0 without one: shows a relogin. */
  private long ticketEnd() {
    try {
      return ugi.doAs((PrivilegedExceptionAction<Long>) () -> {
        @SuppressWarnings("removal")
        Subject subject = Subject.getSubject(AccessController.getContext());
        long end = 0;
        if (subject != null) {
          for (KerberosTicket ticket : subject.getPrivateCredentials(KerberosTicket.class)) {
            if (ticket.getServer().getName().startsWith("krbtgt/")) {
              end = Math.max(end, ticket.getEndTime().getTime());
            }
          }
        }
        return end;
      });
    } catch (Exception e) {
      return 0;
    }
  }

  /** One FileSystem per scheme and authority, made as the logged-in user and kept for the process's life. */
  private FileSystem filesystem(Path path) throws IOException {
    URI uri = path.toUri();
    String scheme = uri.getScheme() == null ? "file" : uri.getScheme().toLowerCase();
    String authority = uri.getAuthority() == null ? "" : uri.getAuthority();
    String key = scheme + "://" + authority;
    FileSystem found = filesystems.get(key);
    if (found != null) {
      return found;
    }
    synchronized (filesystems) {
      found = filesystems.get(key);
      if (found == null) {
        found = FileSystem.newInstance(URI.create(key + "/"), conf);
        filesystems.put(key, found);
      }
      return found;
    }
  }

  private static void list(FileSystem fs, Path root, boolean recursive, ArrayNode entries) throws IOException {
    FileStatus top = fs.getFileStatus(root);
    if (!top.isDirectory()) {
      entry(entries.addObject(), top);
      return;
    }
    Deque<Path> folders = new ArrayDeque<>();
    folders.add(root);
    while (!folders.isEmpty()) {
      RemoteIterator<FileStatus> children = fs.listStatusIterator(folders.poll());
      while (children.hasNext()) {
        FileStatus status = children.next();
        if (status.isSymlink()) {
          status = resolved(fs, status);
        }
        entry(entries.addObject(), status);
        if (recursive && status.isDirectory()) {
          folders.add(status.getPath());
        }
      }
    }
  }

  /** A link's target's status under the link's own path (a file or folder as the reader sees it). */
  private static FileStatus resolved(FileSystem fs, FileStatus link) {
    try {
      FileStatus target = fs.getFileStatus(link.getPath());
      target.setPath(link.getPath());
      return target;
    } catch (IOException e) {
      return link;  // a dangling link stays "other"
    }
  }

  private static void entry(ObjectNode node, FileStatus status) {
    node.put("path", status.getPath().toUri().getPath());
    node.put("type", status.isFile() ? "file" : status.isDirectory() ? "dir" : "other");
    node.put("size", status.isFile() ? status.getLen() : 0);
    node.put("mtime", status.getModificationTime());
    node.put("block_size", status.getBlockSize());
  }

  private void blocks(ObjectNode node, Path path) {
    try {
      FileSystem fs = filesystem(path);
      FileStatus status = fs.getFileStatus(path);
      node.put("size", status.getLen());
      node.put("block_size", status.getBlockSize());
      ArrayNode blocks = node.putArray("blocks");
      for (BlockLocation block : fs.getFileBlockLocations(status, 0, status.getLen())) {
        ObjectNode one = blocks.addObject();
        one.put("offset", block.getOffset());
        one.put("length", block.getLength());
        ArrayNode hosts = one.putArray("hosts");
        Arrays.stream(block.getHosts()).forEach(hosts::add);
      }
    } catch (Throwable e) {
      node.removeAll();
      node.set("error", failure(-1, e).get("error"));
    }
  }

  private static byte[] read(FileSystem fs, Path path, long offset, int length) throws IOException {
    byte[] buffer = new byte[length];
    int done = 0;
    try (FSDataInputStream stream = fs.open(path)) {
      while (done < length) {
        int got = stream.read(offset + done, buffer, done, length - done);
        if (got < 0) {
          break;
        }
        done += got;
      }
    }
    return done == length ? buffer : Arrays.copyOf(buffer, done);
  }

  private static ObjectNode failure(long id, Throwable error) {
    Throwable cause = error;
    while ((cause instanceof java.lang.reflect.UndeclaredThrowableException
        || cause instanceof java.security.PrivilegedActionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    String name = cause.getClass().getName();
    if (cause instanceof RemoteException) {
      name = ((RemoteException) cause).getClassName();
    }
    String kind = "other";
    if (cause instanceof FileNotFoundException || name.endsWith("FileNotFoundException")) {
      kind = "not_found";
    } else if (cause instanceof AccessControlException || name.endsWith("AccessControlException")) {
      kind = "permission";
    } else if (cause instanceof FileAlreadyExistsException || name.endsWith("FileAlreadyExistsException")) {
      kind = "exists";
    }
    String message = cause instanceof RemoteException ? ((RemoteException) cause).getLocalizedMessage() : cause.getMessage();
    if (message == null || message.isEmpty()) {
      Throwable inner = cause.getCause();
      message = inner != null && inner.getMessage() != null ? inner.getClass().getSimpleName() + ": " + inner.getMessage() : "";
    }
    ObjectNode answer = JSON.createObjectNode().put("id", id);
    answer.putObject("error").put("class", name).put("kind", kind).put("message", message.split("\n", 2)[0]);
    return answer;
  }
}
