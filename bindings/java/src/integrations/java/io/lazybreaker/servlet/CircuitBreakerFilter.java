package io.lazybreaker.servlet;

import io.lazybreaker.CircuitBreaker;
import io.lazybreaker.Permit;
import io.lazybreaker.http.ShedAnswer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import javax.servlet.AsyncEvent;
import javax.servlet.AsyncListener;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * A servlet filter (javax.servlet) putting a breaker in front of the
 * application, by docs/http.md's server side: while the breaker rejects, the
 * request is answered 503 at once (problem+json, {@code Retry-After} in
 * whole seconds, left out while forced open) without running the chain;
 * otherwise the answer's status is the outcome (500 or more a failure), and
 * an exception the chain throws is a failure. An asynchronous request is
 * judged when it completes.
 */
public final class CircuitBreakerFilter implements Filter {
  private final CircuitBreaker breaker;

  public CircuitBreakerFilter(CircuitBreaker breaker) {
    this.breaker = Objects.requireNonNull(breaker, "breaker");
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)) {
      chain.doFilter(req, res);
      return;
    }
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    Permit permit = breaker.tryAcquire();
    if (permit == null) {
      shed(request, response);
      return;
    }
    try {
      chain.doFilter(request, response);
    } catch (Throwable t) {
      permit.failure();
      throw t;
    }
    if (request.isAsyncStarted()) {
      request.getAsyncContext().addListener(new Verdict(permit, response));
    } else {
      judge(permit, response.getStatus());
    }
  }

  private static void judge(Permit permit, int status) {
    if (status >= 500) permit.failure();
    else permit.success();
  }

  private void shed(HttpServletRequest request, HttpServletResponse response) throws IOException {
    ShedAnswer answer = ShedAnswer.of(breaker, request.getRequestURI());
    byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
    response.setStatus(ShedAnswer.STATUS);
    response.setContentType(ShedAnswer.CONTENT_TYPE);
    response.setHeader("Cache-Control", "no-store");
    if (answer.retryAfterHeader() != null) response.setHeader("Retry-After", answer.retryAfterHeader());
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  /** An asynchronous request's outcome, reported once when it ends. */
  private static final class Verdict implements AsyncListener {
    private final Permit permit;
    private final HttpServletResponse response;
    private boolean reported;

    Verdict(Permit permit, HttpServletResponse response) {
      this.permit = permit;
      this.response = response;
    }

    @Override
    public synchronized void onComplete(AsyncEvent event) {
      if (reported) return;
      reported = true;
      judge(permit, response.getStatus());
    }

    @Override
    public synchronized void onTimeout(AsyncEvent event) {
      if (reported) return;
      reported = true;
      permit.failure();
    }

    @Override
    public synchronized void onError(AsyncEvent event) {
      if (reported) return;
      reported = true;
      permit.failure();
    }

    @Override
    public void onStartAsync(AsyncEvent event) {
      event.getAsyncContext().addListener(this);
    }
  }
}
