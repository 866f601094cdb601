package io.lazybreaker.http;

import java.net.IDN;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Objects;

/**
 * The name of an upstream's breaker, {@code http/<host>:<port>}, by the rules
 * of docs/http.md that every language follows: the host lowercased, an
 * internationalized name in its ASCII form, an IPv6 address in brackets in
 * its shortest form, the port always written (80 for http, 443 for https).
 */
public final class HttpBreakerNames {
  private HttpBreakerNames() {}

  /**
   * {@code http/<host>:<port>} of {@code uri}.
   *
   * @throws IllegalArgumentException if {@code uri} has no host, or a scheme other than http
   *     or https and no port
   */
  public static String of(URI uri) {
    Objects.requireNonNull(uri, "uri");
    String host = uri.getHost();
    if (host == null) {
      // java.net.URI leaves the host null for a name it does not parse as one (an
      // internationalized name, say): take it from the authority.
      String authority = uri.getRawAuthority();
      if (authority == null) throw new IllegalArgumentException("uri has no host: " + uri);
      String a = authority.substring(authority.lastIndexOf('@') + 1);
      int colon = a.startsWith("[") ? a.indexOf(':', a.indexOf(']')) : a.lastIndexOf(':');
      host = colon < 0 ? a : a.substring(0, colon);
      if (host.isEmpty()) throw new IllegalArgumentException("uri has no host: " + uri);
    }
    return of(uri.getScheme(), host, uri.getPort());
  }

  /**
   * {@code http/<host>:<port>} of a request to {@code host} on {@code port}
   * ({@code -1}: the scheme's default).
   */
  public static String of(String scheme, String host, int port) {
    Objects.requireNonNull(host, "host");
    if (port < 0) {
      String s = scheme == null ? "" : scheme.toLowerCase(Locale.ROOT);
      if (s.equals("http") || s.equals("ws")) port = 80;
      else if (s.equals("https") || s.equals("wss")) port = 443;
      else throw new IllegalArgumentException("no port, and no default port for scheme " + scheme);
    }
    return "http/" + host(host) + ":" + port;
  }

  /** The host as the name writes it. */
  static String host(String host) {
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (h.indexOf(':') >= 0) return "[" + shortestIpv6(h) + "]";
    return IDN.toASCII(h, IDN.ALLOW_UNASSIGNED).toLowerCase(Locale.ROOT);
  }

  /** RFC 5952: lowercase, leading zeros dropped, the longest run of two or more zero groups as ::. */
  private static String shortestIpv6(String literal) {
    byte[] b;
    try {
      // a literal (no name lookup is made for one with a colon)
      b = InetAddress.getByName("[" + literal + "]").getAddress();
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("not an IPv6 address: " + literal, e);
    }
    if (b.length != 16) return literal.toLowerCase(Locale.ROOT);
    int[] g = new int[8];
    for (int i = 0; i < 8; i++) g[i] = (b[2 * i] & 0xff) << 8 | (b[2 * i + 1] & 0xff);
    int bestStart = -1, bestLen = 0;
    for (int i = 0; i < 8; ) {
      if (g[i] != 0) {
        i++;
        continue;
      }
      int j = i;
      while (j < 8 && g[j] == 0) j++;
      if (j - i > bestLen && j - i >= 2) {
        bestStart = i;
        bestLen = j - i;
      }
      i = j;
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      if (i == bestStart) {
        sb.append("::");
        i += bestLen - 1;
        continue;
      }
      if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') sb.append(':');
      sb.append(Integer.toHexString(g[i]));
    }
    return sb.toString();
  }
}
