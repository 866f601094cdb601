"""The Python client of one_upstream.py: httpx with lazybreaker's
Transport over the registry file. Without httpx: exit 77 (skipped).

    python3 client.py REGISTRY_FILE URL
"""

import sys

try:
    import httpx
except ImportError:
    print("python: httpx is not installed (Debian: python3-httpx)", file=sys.stderr)
    sys.exit(77)

import lazybreaker
import lazybreaker.httpx

file, url = sys.argv[-2:]
registry = lazybreaker.Registry.open(file, create=True)
transport = lazybreaker.httpx.Transport(registry=registry,
                                        config=lazybreaker.Config(failure_threshold=1, open_duration=2))
with httpx.Client(transport=transport) as client:
    print("ready", flush=True)
    for _ in sys.stdin:
        try:
            print(f"sent {client.get(url).status_code}", flush=True)
        except lazybreaker.CircuitOpenError:
            print("rejected", flush=True)
registry.close()
