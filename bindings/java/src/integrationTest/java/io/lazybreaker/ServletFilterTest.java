package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lazybreaker.servlet.CircuitBreakerFilter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.atomic.AtomicInteger;
import javax.servlet.AsyncContext;
import javax.servlet.DispatcherType;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.FilterHolder;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** docs/http.md's server side for the servlet filter, in Debian's Jetty 9.4 on loopback. */
class ServletFilterTest {
  private final Registry registry = Registry.withManualClock();
  private final CircuitBreaker breaker = registry.create("checkout",
      BreakerConfig.builder().failureThreshold(2).waitDurationInOpenState(Duration.ofSeconds(30)).build());
  private final AtomicInteger ran = new AtomicInteger();
  private final HttpClient client = HttpClient.newHttpClient();
  private final Server server = new Server(new InetSocketAddress("127.0.0.1", 0));

  /** Answers ?status=N (500 with ?throw, asynchronously with ?async). */
  final class App extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse res) throws IOException {
      ran.incrementAndGet();
      if (req.getParameter("throw") != null) throw new IllegalStateException("the application failed");
      int status = Integer.parseInt(req.getParameter("status"));
      if (req.getParameter("async") != null) {
        AsyncContext ctx = req.startAsync();
        ctx.start(() -> {
          ((HttpServletResponse) ctx.getResponse()).setStatus(status);
          ctx.complete();
        });
        return;
      }
      res.setStatus(status);
      res.getWriter().write("app");
    }
  }

  ServletFilterTest() throws Exception {
    ServletContextHandler ctx = new ServletContextHandler();
    FilterHolder filter = new FilterHolder(new CircuitBreakerFilter(breaker));
    filter.setAsyncSupported(true);
    ctx.addFilter(filter, "/*", EnumSet.of(DispatcherType.REQUEST));
    ServletHolder app = new ServletHolder(new App());
    app.setAsyncSupported(true);
    ctx.addServlet(app, "/*");
    server.setHandler(ctx);
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
    registry.close();
  }

  private HttpResponse<String> get(String pathAndQuery) throws Exception {
    int port = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void the_answer_is_the_outcome() throws Exception {
    assertEquals(200, get("/a?status=200").statusCode());
    assertEquals(404, get("/a?status=404").statusCode());
    assertEquals(2, breaker.stats().successes);
    assertEquals(503, get("/a?status=503").statusCode());
    assertEquals(1, breaker.stats().failures);
  }

  @Test
  void an_exception_from_the_application_is_a_failure() throws Exception {
    assertEquals(500, get("/a?throw=1").statusCode());
    assertEquals(1, breaker.stats().failures);
  }

  @Test
  void an_asynchronous_request_is_judged_when_it_completes() throws Exception {
    assertEquals(502, get("/a?async=1&status=502").statusCode());
    for (int i = 0; i < 500 && breaker.stats().failures == 0; i++) Thread.sleep(10);
    assertEquals(1, breaker.stats().failures);
    assertEquals(201, get("/a?async=1&status=201").statusCode());
    for (int i = 0; i < 500 && breaker.stats().successes == 0; i++) Thread.sleep(10);
    assertEquals(1, breaker.stats().successes);
  }

  @Test
  void while_open_a_503_problem_without_running_the_application() throws Exception {
    get("/a?status=500");
    get("/a?status=500");
    assertEquals(CircuitBreaker.State.OPEN, breaker.state());
    int before = ran.get();
    HttpResponse<String> r = get("/checkout?id=7");
    assertEquals(before, ran.get(), "the application did not run");
    assertEquals(503, r.statusCode());
    assertEquals("30", r.headers().firstValue("Retry-After").orElseThrow());
    assertEquals("application/problem+json", r.headers().firstValue("Content-Type").orElseThrow());
    assertEquals("no-store", r.headers().firstValue("Cache-Control").orElseThrow());
    assertEquals("{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,"
        + "\"detail\":\"The circuit 'checkout' is open: retry after 30 s.\",\"instance\":\"/checkout\","
        + "\"circuit\":\"checkout\",\"state\":\"open\",\"retryAfter\":30}", r.body());
  }

  @Test
  void retry_after_is_whole_seconds_rounded_up_at_least_one() throws Exception {
    breaker.trip(Duration.ofMillis(1500));
    assertEquals("2", get("/").headers().firstValue("Retry-After").orElseThrow());
    registry.advance(Duration.ofMillis(1400));
    HttpResponse<String> r = get("/");
    assertEquals("1", r.headers().firstValue("Retry-After").orElseThrow());
    assertTrue(r.body().endsWith("\"retryAfter\":1}"), r.body());
  }

  @Test
  void forced_open_leaves_retry_after_out() throws Exception {
    breaker.forceOpen();
    HttpResponse<String> r = get("/x");
    assertEquals(503, r.statusCode());
    assertFalse(r.headers().firstValue("Retry-After").isPresent());
    assertEquals("{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,"
        + "\"detail\":\"The circuit 'checkout' is forced open until an operator resets it.\","
        + "\"instance\":\"/x\",\"circuit\":\"checkout\",\"state\":\"forced_open\",\"retryAfter\":null}", r.body());
  }

  @Test
  void after_the_wait_a_probe_runs_the_application() throws Exception {
    breaker.trip(Duration.ofSeconds(5));
    assertEquals(503, get("/?status=200").statusCode());
    registry.advance(Duration.ofSeconds(5));
    assertEquals(200, get("/?status=200").statusCode());
    assertEquals(CircuitBreaker.State.CLOSED, breaker.state());
  }

  @Test
  void bad_input_is_refused() {
    org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class, () -> new CircuitBreakerFilter(null));
  }
}
