package io.lazybreaker;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback upstream for the HTTP client tests: answers every request with
 * the status and Retry-After set last, or holds it until released (a slow
 * upstream), and counts the requests that reached it.
 */
final class Upstream implements AutoCloseable {
  private final HttpServer server;
  private volatile int status = 200;
  private volatile String retryAfter;
  private volatile CountDownLatch hold; // non-null: requests wait for it
  final AtomicInteger requests = new AtomicInteger();
  final CountDownLatch arrived = new CountDownLatch(1);

  Upstream() throws IOException {
    // headers and body are written apart: without TCP_NODELAY each exchange waits 40 ms
    System.setProperty("sun.net.httpserver.nodelay", "true");
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", exchange -> {
      requests.incrementAndGet();
      arrived.countDown();
      CountDownLatch h = hold;
      if (h != null) {
        try {
          h.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (retryAfter != null) exchange.getResponseHeaders().set("Retry-After", retryAfter);
      byte[] body = "ok".getBytes();
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "upstream");
      t.setDaemon(true);
      return t;
    }));
    server.start();
  }

  Upstream answer(int status, String retryAfter) {
    this.status = status;
    this.retryAfter = retryAfter;
    return this;
  }

  /** Requests wait until {@link #release()}. */
  Upstream holding() {
    hold = new CountDownLatch(1);
    return this;
  }

  void release() {
    CountDownLatch h = hold;
    hold = null;
    if (h != null) h.countDown();
  }

  int port() {
    return server.getAddress().getPort();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port() + path);
  }

  /** The breaker's name of this upstream, by the convention. */
  String breakerName() {
    return "http/127.0.0.1:" + port();
  }

  /** A loopback port nothing listens on (bound, then closed). */
  static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Override
  public void close() {
    release();
    server.stop(0);
  }
}
