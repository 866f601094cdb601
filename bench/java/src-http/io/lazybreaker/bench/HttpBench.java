package io.lazybreaker.bench;

import com.sun.net.httpserver.HttpServer;
import io.lazybreaker.BreakerConfig;
import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Permit;
import io.lazybreaker.Registry;
import io.lazybreaker.http.BreakerHttpClient;
import io.lazybreaker.http.UpstreamBreakers;
import io.lazybreaker.http.UpstreamOutcomes;
import io.lazybreaker.okhttp.BreakerInterceptor;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.concurrent.Executors;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * What the HttpClient wrapper and the OkHttp interceptor add to a request:
 * a loopback round trip through the bare client and through the wrapped one,
 * in alternating rounds (medians of each), and the breaker's part alone
 * (naming, admission, verdict) without a socket, which is the added cost
 * without the round trip's noise.
 *
 * <p>Usage: HttpBench [rounds] [requests per round]
 */
public final class HttpBench {
  interface Call {
    void run() throws Exception;
  }

  private static double nsPerCall(Call call, int n) throws Exception {
    long t0 = System.nanoTime();
    for (int i = 0; i < n; i++) call.run();
    return (System.nanoTime() - t0) / (double) n;
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  private static void compare(String what, Call bare, Call wrapped, int rounds, int n) throws Exception {
    nsPerCall(bare, n);
    nsPerCall(wrapped, n); // warm-up of both
    double[] b = new double[rounds];
    double[] w = new double[rounds];
    for (int r = 0; r < rounds; r++) {
      b[r] = nsPerCall(bare, n);
      w[r] = nsPerCall(wrapped, n);
    }
    double mb = median(b);
    double mw = median(w);
    System.out.printf("%-34s bare %9.0f ns  wrapped %9.0f ns  ratio %.4f  added %+7.0f ns%n",
        what, mb, mw, mw / mb, mw - mb);
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
    int n = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
    // the JDK server writes headers and body apart: without TCP_NODELAY, Nagle and
    // the client's delayed ACK add 40 ms to every exchange
    System.setProperty("sun.net.httpserver.nodelay", "true");
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    byte[] ok = "ok".getBytes();
    server.createContext("/", ex -> {
      ex.getRequestBody().readAllBytes();
      ex.sendResponseHeaders(200, ok.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(ok);
      }
    });
    server.setExecutor(Executors.newFixedThreadPool(2));
    server.start();
    URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/ping");
    try (Registry registry = Registry.open(io.lazybreaker.RegistryOptions.builder().build())) {
      BreakerConfig config = BreakerConfig.builder().failureThreshold(5).build();
      UpstreamBreakers breakers = UpstreamBreakers.byConvention(registry, config);

      HttpClient bare = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpClient wrapped = BreakerHttpClient.wrap(bare, breakers);
      HttpRequest req = HttpRequest.newBuilder(uri).build();
      compare("java.net.http.HttpClient send", () -> bare.send(req, HttpResponse.BodyHandlers.ofByteArray()),
          () -> wrapped.send(req, HttpResponse.BodyHandlers.ofByteArray()), rounds, n);

      OkHttpClient okBare = new OkHttpClient();
      OkHttpClient okWrapped = okBare.newBuilder().addInterceptor(new BreakerInterceptor(breakers)).build();
      Request okReq = new Request.Builder().url(uri.toURL()).build();
      compare("OkHttp execute", () -> {
        try (Response r = okBare.newCall(okReq).execute()) {
          r.body().bytes();
        }
      }, () -> {
        try (Response r = okWrapped.newCall(okReq).execute()) {
          r.body().bytes();
        }
      }, rounds, n);

      // the breaker's part alone, as both integrations run it per request
      int m = 2_000_000;
      Call part = () -> {
        CircuitBreaker b = breakers.of(uri);
        Permit p = b.acquirePermission();
        UpstreamOutcomes.answered(b, p, 200, null);
      };
      nsPerCall(part, m);
      double[] v = new double[rounds];
      for (int r = 0; r < rounds; r++) v[r] = nsPerCall(part, m);
      System.out.printf("%-34s %9.1f ns per request (median of %d x %d)%n",
          "breaker part alone (no socket)", median(v), rounds, m);
    } finally {
      server.stop(0);
      System.exit(0);
    }
  }
}
