<?php
// The PHP half of tests/cross_language, run as its own process by CTest
// (cross_language.php_sees_the_c_trip): the registry file a C program made
// and tripped "payments" in is opened here, "payments" is open and
// rejects, and "tripped-by-php" is tripped for the C program to see. The
// configuration equals the C program's field for field, or getOrCreate
// would throw CB_EEXIST.
declare(strict_types=1);

require_once __DIR__ . '/../src/autoload.php';

use LazyBreaker\{CircuitOpenException, Config, Registry};

$file = getenv('LB_CROSS_LANGUAGE_FILE') ?: throw new RuntimeException('run by tests/cross_language/check.sh');
$language = getenv('LB_CROSS_LANGUAGE') ?: throw new RuntimeException('run by tests/cross_language/check.sh');
$config = new Config(failureThreshold: 1, timeoutSeconds: 300);

$shared = Registry::open(['path' => $file, 'manualClock' => true]);
$payments = $shared->getOrCreate('payments', $config);
$payments->state() === 'open' || throw new RuntimeException('payments: ' . $payments->state());
$payments->tryAcquire() === null || throw new RuntimeException('payments admitted a call');
try {
    $payments->call(fn () => throw new LogicException('ran on an open breaker'));
    throw new RuntimeException('call was admitted');
} catch (CircuitOpenException $e) {
    printf("%s: payments rejects, retry after %d s\n", $language, $e->retryAfter());
}

$name = "tripped-by-{$language}";
$mine = $shared->getOrCreate($name, $config);
$mine->tryAcquire()->failure();
$mine->state() === 'open' || throw new RuntimeException("{$name}: " . $mine->state());
$shared->close();
