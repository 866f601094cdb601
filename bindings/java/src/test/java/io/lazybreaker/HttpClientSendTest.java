package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lazybreaker.http.BreakerHttpClient;
import io.lazybreaker.http.UpstreamBreakers;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/** docs/http.md's rules for {@link BreakerHttpClient#send}. */
class HttpClientSendTest extends UpstreamConventionRules {
  private final HttpClient bare = HttpClient.newHttpClient();
  private final HttpClient client =
      BreakerHttpClient.wrap(bare, UpstreamBreakers.byConvention(registry, config));

  static HttpRequest get(URI uri) {
    return HttpRequest.newBuilder(uri).build();
  }

  @Override
  int call(URI uri) throws Exception {
    return client.send(get(uri), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @Override
  int callWithTimeout(URI uri) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(uri).timeout(Duration.ofMillis(300)).build();
    return client.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @Override
  void callAndCancel(URI uri, Upstream upstream) throws Exception {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        call(uri);
      } catch (Throwable t) {
        thrown.set(t);
      }
    });
    caller.start();
    awaitArrival(upstream);
    caller.interrupt();
    caller.join();
    assertTrue(thrown.get() instanceof InterruptedException
        || thrown.get() instanceof java.io.IOException, "the interrupt ended the send: " + thrown.get());
  }

  @Override
  Duration rejectionWait(Throwable thrown) {
    assertTrue(thrown instanceof CallNotPermittedException, thrown.toString());
    return ((CallNotPermittedException) thrown).retryAfter();
  }

  @Override
  int callNamed(URI uri, Function<URI, String> naming) throws Exception {
    HttpClient named = BreakerHttpClient.wrap(bare, UpstreamBreakers.named(registry, config, naming));
    return named.send(get(uri), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @org.junit.jupiter.api.Test
  void bad_input_is_refused() {
    assertThrows(NullPointerException.class, () -> BreakerHttpClient.wrap(null, UpstreamBreakers.byConvention(registry, config)));
    assertThrows(NullPointerException.class, () -> UpstreamBreakers.byConvention(registry, null));
    assertThrows(NullPointerException.class, () -> UpstreamBreakers.named(registry, config, null));
  }
}
