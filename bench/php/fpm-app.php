<?php
// bench/php under php-fpm: one protected call per request through the
// breaker ?mode= names (breakers.php), on the target the pool's env gives.
declare(strict_types=1);

require_once __DIR__ . '/breakers.php';
$mode = $_GET['mode'] ?? 'none';
$target = match ($mode) {
    'lazybreaker' => getenv('LB_BENCH_FILE'),
    'sqlite' => getenv('LB_BENCH_SQLITE'),
    'redis' => getenv('LB_BENCH_REDIS_PORT'),
    default => '',
};
[$one] = lb_bench_breaker($mode, (string) $target, true);
$one();
echo "ok\n";
