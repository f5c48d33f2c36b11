package org.apache.hadoop.hive.common.auth;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import javax.net.ssl.SSLServerSocket;

import org.apache.thrift.transport.TSSLTransportFactory;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;

/**
 * The embedded metastore's socket factories, first on its classpath in place of Hive 2.3's class of this name.
 *
 * <p>Hive 2.3's metastore has no setting for the address it listens on: it asks this class for a server socket
 * with no host, and so listens on every address of the machine, with no authentication. The embedded
 * metastore is the project's own metastore for a laptop, a test run or a demo, reached at
 * {@code thrift://127.0.0.1:PORT}: it should listen there only. A server socket asked for no particular host
 * binds the address in the system property {@value #BIND_HOST} (127.0.0.1 when unset); everything else does
 * what Hive's factories do: plain and TLS client sockets, and TLS server sockets without the protocols the
 * metastore's configuration excludes.
 */
public class HiveAuthUtils {
  /** The address a server socket with no host binds. */
  public static final String BIND_HOST = "hms.catalog.bind.host";

  private static String bindHost(String host) {
    return host == null || host.isEmpty() ? System.getProperty(BIND_HOST, "127.0.0.1") : host;
  }

  public static TTransport getSocketTransport(String host, int port, int loginTimeout) throws TTransportException {
    return new TSocket(host, port, loginTimeout);
  }

  public static TTransport getSSLSocket(String host, int port, int loginTimeout) throws TTransportException {
    return TSSLTransportFactory.getClientSocket(host, port, loginTimeout);
  }

  public static TTransport getSSLSocket(String host, int port, int loginTimeout, String trustStorePath,
                                        String trustStorePassword) throws TTransportException {
    return getSSLSocket(host, port, loginTimeout, loginTimeout, trustStorePath, trustStorePassword);
  }

  public static TTransport getSSLSocket(String host, int port, int socketTimeout, int connectionTimeout,
                                        String trustStorePath, String trustStorePassword) throws TTransportException {
    TSSLTransportFactory.TSSLTransportParameters parameters = new TSSLTransportFactory.TSSLTransportParameters();
    parameters.setTrustStore(trustStorePath, trustStorePassword);
    parameters.requireClientAuth(true);
    TSocket socket = TSSLTransportFactory.getClientSocket(host, port, socketTimeout, parameters);
    socket.setConnectTimeout(connectionTimeout);
    return socket;
  }

  public static TServerSocket getServerSocket(String host, int port) throws TTransportException {
    return new TServerSocket(new InetSocketAddress(bindHost(host), port));
  }

  public static TServerSocket getServerSSLSocket(String host, int port, String keyStorePath, String keyStorePassword,
                                                 List<String> excludedProtocols)
      throws TTransportException, UnknownHostException {
    TSSLTransportFactory.TSSLTransportParameters parameters = new TSSLTransportFactory.TSSLTransportParameters();
    parameters.setKeyStore(keyStorePath, keyStorePassword);
    TServerSocket socket = TSSLTransportFactory.getServerSocket(port, 0, InetAddress.getByName(bindHost(host)), parameters);
    if (socket.getServerSocket() instanceof SSLServerSocket) {
      SSLServerSocket ssl = (SSLServerSocket) socket.getServerSocket();
      List<String> excluded = new ArrayList<>();
      for (String protocol : excludedProtocols) {
        excluded.add(protocol.trim().toLowerCase(Locale.ROOT));
      }
      List<String> kept = new ArrayList<>();
      for (String protocol : ssl.getEnabledProtocols()) {
        if (!excluded.contains(protocol.toLowerCase(Locale.ROOT))) {
          kept.add(protocol);
        }
      }
      ssl.setEnabledProtocols(kept.toArray(new String[0]));
    }
    return socket;
  }
}
