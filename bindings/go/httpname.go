package lazybreaker

import (
	"net"
	"net/url"
	"strings"
	"unicode/utf8"
)

// BreakerName is the name every language's HTTP integration gives the
// breaker of an upstream (docs/http.md): "http/<host>:<port>", the host
// lowercased and in its ASCII form (each non-ASCII label punycode-encoded
// with the "xn--" prefix, as IDNA's ToASCII), an IPv6 address in brackets
// in its shortest form,
// and the port always written, 80 or 443 from the scheme when the URL has
// none. So a Go client, PHP workers and a Node process on one host, sharing
// a registry file, share one breaker per upstream.
func BreakerName(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.IndexByte(host, ':') >= 0 {
		if ip := net.ParseIP(host); ip != nil {
			host = ip.String() // the shortest form
		}
		host = "[" + host + "]"
	} else {
		host = asciiHost(host)
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	return "http/" + host + ":" + port
}

func defaultPort(scheme string) string {
	switch strings.ToLower(scheme) {
	case "https", "wss":
		return "443"
	default:
		return "80"
	}
}

// asciiHost encodes each non-ASCII label of a lowercased host name.
func asciiHost(host string) string {
	if isASCII(host) || net.ParseIP(host) != nil {
		return host
	}
	labels := strings.Split(host, ".")
	for i, label := range labels {
		if !isASCII(label) {
			labels[i] = "xn--" + punycode(label)
		}
	}
	return strings.Join(labels, ".")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// punycode is RFC 3492's encoding of one label.
func punycode(label string) string {
	const (
		base, tMin, tMax, skew, damp = 36, 1, 26, 38, 700
		initialBias, initialN        = 72, 128
	)
	runes := []rune(label)
	var out strings.Builder
	for _, r := range runes {
		if r < utf8.RuneSelf {
			out.WriteRune(r)
		}
	}
	basic := out.Len()
	if basic > 0 {
		out.WriteByte('-')
	}
	digit := func(d int) byte {
		if d < 26 {
			return byte('a' + d)
		}
		return byte('0' + d - 26)
	}
	adapt := func(delta, points int, first bool) int {
		if first {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / points
		k := 0
		for delta > ((base-tMin)*tMax)/2 {
			delta /= base - tMin
			k += base
		}
		return k + (base-tMin+1)*delta/(delta+skew)
	}
	n, delta, bias, handled := initialN, 0, initialBias, basic
	for handled < len(runes) {
		m := int(^uint(0) >> 1)
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		delta += (m - n) * (handled + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				delta++
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := base; ; k += base {
				t := k - bias
				if t < tMin {
					t = tMin
				} else if t > tMax {
					t = tMax
				}
				if q < t {
					break
				}
				out.WriteByte(digit(t + (q-t)%(base-t)))
				q = (q - t) / (base - t)
			}
			out.WriteByte(digit(q))
			bias = adapt(delta, handled+1, handled == basic)
			delta = 0
			handled++
		}
		delta++
		n++
	}
	return out.String()
}
