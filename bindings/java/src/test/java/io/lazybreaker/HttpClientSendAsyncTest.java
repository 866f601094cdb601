package io.lazybreaker;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lazybreaker.http.BreakerHttpClient;
import io.lazybreaker.http.UpstreamBreakers;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/** docs/http.md's rules for {@link BreakerHttpClient#sendAsync}. */
class HttpClientSendAsyncTest extends UpstreamConventionRules {
  private final HttpClient bare = HttpClient.newHttpClient();
  private final HttpClient client =
      BreakerHttpClient.wrap(bare, UpstreamBreakers.byConvention(registry, config));

  private static int await(CompletableFuture<HttpResponse<Void>> f) throws Exception {
    try {
      return f.get().statusCode();
    } catch (ExecutionException e) {
      throw (Exception) e.getCause();
    }
  }

  @Override
  int call(URI uri) throws Exception {
    return await(client.sendAsync(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding()));
  }

  @Override
  int callWithTimeout(URI uri) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(uri).timeout(Duration.ofMillis(300)).build();
    return await(client.sendAsync(r, HttpResponse.BodyHandlers.discarding()));
  }

  @Override
  void callAndCancel(URI uri, Upstream upstream) throws Exception {
    CompletableFuture<HttpResponse<Void>> f =
        client.sendAsync(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding());
    awaitArrival(upstream);
    assertTrue(f.cancel(true));
  }

  @Override
  Duration rejectionWait(Throwable thrown) {
    assertTrue(thrown instanceof CallNotPermittedException, thrown.toString());
    return ((CallNotPermittedException) thrown).retryAfter();
  }

  @Override
  int callNamed(URI uri, Function<URI, String> naming) throws Exception {
    HttpClient named = BreakerHttpClient.wrap(bare, UpstreamBreakers.named(registry, config, naming));
    return await(named.sendAsync(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding()));
  }
}
