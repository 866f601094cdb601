package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lazybreaker.http.UpstreamBreakers;
import io.lazybreaker.okhttp.BreakerInterceptor;
import io.lazybreaker.okhttp.CircuitOpenIOException;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/** docs/http.md's rules for the OkHttp interceptor (Debian's OkHttp 3.13). */
class OkHttpInterceptorTest extends UpstreamConventionRules {
  private final OkHttpClient client = new OkHttpClient.Builder()
      .retryOnConnectionFailure(false)
      .addInterceptor(new BreakerInterceptor(UpstreamBreakers.byConvention(registry, config)))
      .build();

  private static int status(OkHttpClient c, URI uri) throws IOException {
    try (Response r = c.newCall(new Request.Builder().url(uri.toURL()).build()).execute()) {
      return r.code();
    }
  }

  @Override
  int call(URI uri) throws Exception {
    return status(client, uri);
  }

  @Override
  int callWithTimeout(URI uri) throws Exception {
    return status(client.newBuilder().readTimeout(300, TimeUnit.MILLISECONDS).build(), uri);
  }

  @Override
  void callAndCancel(URI uri, Upstream upstream) throws Exception {
    Call call = client.newCall(new Request.Builder().url(uri.toURL()).build());
    CompletableFuture<Throwable> failed = new CompletableFuture<>();
    call.enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        failed.complete(e);
      }

      @Override
      public void onResponse(Call c, Response r) {
        r.close();
        failed.complete(null);
      }
    });
    awaitArrival(upstream);
    call.cancel();
    assertTrue(failed.get(30, TimeUnit.SECONDS) instanceof IOException, "the cancel ended the call");
  }

  @Override
  Duration rejectionWait(Throwable thrown) {
    assertTrue(thrown instanceof CircuitOpenIOException, thrown.toString());
    return ((CircuitOpenIOException) thrown).retryAfter();
  }

  @Override
  int callNamed(URI uri, Function<URI, String> naming) throws Exception {
    return status(new OkHttpClient.Builder()
        .addInterceptor(new BreakerInterceptor(UpstreamBreakers.named(registry, config, naming)))
        .build(), uri);
  }

  @Test
  void an_enqueued_call_to_an_open_breaker_fails_through_its_callback() throws Exception {
    upstream.answer(503, "20");
    call(upstream.uri("/"));
    CompletableFuture<IOException> failed = new CompletableFuture<>();
    client.newCall(new Request.Builder().url(upstream.uri("/").toURL()).build()).enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        failed.complete(e);
      }

      @Override
      public void onResponse(Call c, Response r) {
        r.close();
        failed.complete(null);
      }
    });
    IOException e = failed.get(30, TimeUnit.SECONDS);
    assertTrue(e instanceof CircuitOpenIOException, String.valueOf(e));
    assertEquals(Duration.ofSeconds(20), ((CircuitOpenIOException) e).retryAfter());
  }

  @Test
  void a_call_timeout_is_a_failure_although_okhttp_cancels_the_call() throws Exception {
    upstream.holding();
    OkHttpClient timed = client.newBuilder().callTimeout(300, TimeUnit.MILLISECONDS).build();
    org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> status(timed, upstream.uri("/slow")));
    upstream.release();
    assertEquals(1, breaker().stats().failures);
    assertEquals(0, breaker().stats().ignored);
  }

  @Test
  void bad_input_is_refused() {
    org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class, () -> new BreakerInterceptor(null));
  }
}
