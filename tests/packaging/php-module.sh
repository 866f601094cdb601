#!/usr/bin/env bash
# The php-lazybreaker .deb, unpacked with the runtime package into a scratch
# root (dpkg -x): php loads the packaged extension, the packaged ini names
# it, and require_once 'LazyBreaker/autoload.php' (the packaged classes on
# include_path, as /usr/share/php is on Debian's) gives a breaker that
# trips and recovers. The extension must not link libphp (php and php-fpm
# provide zend_*).
#
#   php-module.sh PKGDIR WORK
set -euo pipefail
pkgdir=$(cd "${1:?usage: php-module.sh PKGDIR WORK}" && pwd)
work=${2:?}
fail() { echo "php-module: FAIL: $*" >&2; exit 1; }
shopt -s nullglob
php_debs=("$pkgdir"/php-lazybreaker_*.deb)
runtime_debs=("$pkgdir"/liblazybreaker[0-9]*_*.deb)
[ ${#php_debs[@]} -eq 1 ] || fail "no single php-lazybreaker .deb in $pkgdir"
[ ${#runtime_debs[@]} -eq 1 ] || fail "no single runtime .deb in $pkgdir"
rm -rf "$work"
mkdir -p "$work/root"
root=$(cd "$work/root" && pwd)
dpkg -x "${runtime_debs[0]}" "$root"
dpkg -x "${php_debs[0]}" "$root"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
so=$(find "$root/usr/lib/php" -name lazybreaker.so)
[ -n "$so" ] || fail "no lazybreaker.so under /usr/lib/php"
! readelf -d "$so" | grep -E 'NEEDED.*libphp' >/dev/null || fail "$so links libphp"
grep -qx 'extension=lazybreaker.so' "$root"/etc/php/*/mods-available/lazybreaker.ini || fail "the ini does not load lazybreaker.so"
LD_LIBRARY_PATH=$root/usr/lib/$multiarch php -n -d "extension=$so" -d "include_path=$root/usr/share/php" -r '
require_once "LazyBreaker/autoload.php";
use LazyBreaker\{Config, Registry, CircuitOpenException};
$r = Registry::manualClock();
$b = $r->getOrCreate("pkg", new Config(failureThreshold: 1, timeoutSeconds: 5));
try { $b->call(fn () => throw new RuntimeException("down")); } catch (RuntimeException) {}
try { $b->call(fn () => 1); exit(1); } catch (CircuitOpenException $e) { $e->retryAfter() === 5 || exit(1); }
$r->advance(5);
$b->call(fn () => "up") === "up" && $b->state() === "closed" || exit(1);
echo "php-module: ok ", PHP_VERSION, " ", (new ReflectionClass(Registry::class))->getFileName(), "\n";
' || fail "the packaged extension and classes do not work"
