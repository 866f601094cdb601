package io.lazybreaker.http;

import io.lazybreaker.CallNotPermittedException;
import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Permit;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * A {@link HttpClient} whose requests pass a breaker per upstream, by the
 * convention of docs/http.md: while an upstream's breaker is open nothing is
 * sent, and {@code send} throws (and {@code sendAsync}'s future completes
 * with) {@link CallNotPermittedException}. An answer of 500 or more, or no
 * answer (refused, reset, timed out) is a failure; a caller's interrupt or
 * cancellation is ignored; a 429 or 503 with {@code Retry-After} trips the
 * breaker for that long. Everything else is the wrapped client's.
 */
public final class BreakerHttpClient extends HttpClient {
  private final HttpClient client;
  private final UpstreamBreakers breakers;

  private BreakerHttpClient(HttpClient client, UpstreamBreakers breakers) {
    this.client = Objects.requireNonNull(client, "client");
    this.breakers = Objects.requireNonNull(breakers, "breakers");
  }

  /** {@code client}, each request through its upstream's breaker in {@code breakers}. */
  public static BreakerHttpClient wrap(HttpClient client, UpstreamBreakers breakers) {
    return new BreakerHttpClient(client, breakers);
  }

  @Override
  public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
      throws IOException, InterruptedException {
    CircuitBreaker breaker = breakers.of(request.uri());
    Permit permit = breaker.acquirePermission();
    HttpResponse<T> response;
    try {
      response = client.send(request, handler);
    } catch (Throwable t) {
      UpstreamOutcomes.unanswered(permit, t);
      throw t;
    }
    UpstreamOutcomes.answered(
        breaker, permit, response.statusCode(), response.headers().firstValue("Retry-After").orElse(null));
    return response;
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(
      HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    return sendAsync(request, handler, null);
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(
      HttpRequest request,
      HttpResponse.BodyHandler<T> handler,
      HttpResponse.PushPromiseHandler<T> pushPromiseHandler) {
    CircuitBreaker breaker = breakers.of(request.uri());
    Permit permit;
    try {
      permit = breaker.acquirePermission();
    } catch (CallNotPermittedException rejected) {
      return CompletableFuture.failedFuture(rejected);
    }
    CompletableFuture<HttpResponse<T>> exchange;
    try {
      exchange = pushPromiseHandler == null
          ? client.sendAsync(request, handler)
          : client.sendAsync(request, handler, pushPromiseHandler);
    } catch (Throwable t) {
      UpstreamOutcomes.unanswered(permit, t);
      throw t;
    }
    CompletableFuture<HttpResponse<T>> answer = new CompletableFuture<>();
    exchange.whenComplete(
        (response, thrown) -> {
          try {
            if (thrown != null) {
              UpstreamOutcomes.unanswered(permit, thrown);
            } else {
              UpstreamOutcomes.answered(breaker, permit, response.statusCode(),
                  response.headers().firstValue("Retry-After").orElse(null));
            }
          } finally {
            if (thrown != null) answer.completeExceptionally(thrown);
            else answer.complete(response);
          }
        });
    // The caller's cancel reaches the exchange, whose CancellationException is then ignored.
    answer.whenComplete(
        (response, thrown) -> {
          if (thrown instanceof CancellationException) exchange.cancel(true);
        });
    return answer;
  }

  @Override
  public Optional<CookieHandler> cookieHandler() {
    return client.cookieHandler();
  }

  @Override
  public Optional<Duration> connectTimeout() {
    return client.connectTimeout();
  }

  @Override
  public Redirect followRedirects() {
    return client.followRedirects();
  }

  @Override
  public Optional<ProxySelector> proxy() {
    return client.proxy();
  }

  @Override
  public SSLContext sslContext() {
    return client.sslContext();
  }

  @Override
  public SSLParameters sslParameters() {
    return client.sslParameters();
  }

  @Override
  public Optional<Authenticator> authenticator() {
    return client.authenticator();
  }

  @Override
  public Version version() {
    return client.version();
  }

  @Override
  public Optional<Executor> executor() {
    return client.executor();
  }

  /** The wrapped client's: a WebSocket is not a request the breaker can judge. */
  @Override
  public WebSocket.Builder newWebSocketBuilder() {
    return client.newWebSocketBuilder();
  }
}
