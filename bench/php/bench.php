<?php
// One process of bench/php: N protected calls through one breaker
// (breakers.php), and the time they took, as "ns_per_call queries".
//
//   php -d extension=lazybreaker.so bench.php none|lazybreaker|sqlite|redis N TARGET
//
// TARGET: the registry file (lazybreaker), the SQLite database (sqlite),
// or the Redis port (redis).
declare(strict_types=1);

require_once __DIR__ . '/breakers.php';
[, $mode, $n, $target] = $argv + [null, null, null, null];
$n = (int) $n;
[$one, $queries] = lb_bench_breaker((string) $mode, (string) $target);
for ($i = 0; $i < min(1000, $n); $i++) {
    $one(); // warm up
}
$t0 = hrtime(true);
for ($i = 0; $i < $n; $i++) {
    $one();
}
$elapsed = hrtime(true) - $t0;
printf("%.1f %d\n", $elapsed / $n, $queries);
