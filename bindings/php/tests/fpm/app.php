<?php
// The app of the PHP-FPM test, served by php-fpm's workers behind nginx:
// one breaker in the shared file $LB_FPM_FILE guards the upstream
// $LB_FPM_UPSTREAM. Admitted: the upstream's answer (500 from it is a
// failure: 502 here); rejected: 503 with Retry-After, the upstream not
// called. Every answer says which worker (X-Worker-Pid) and the breaker's
// state (X-Breaker-State). ?hold=S keeps the worker busy S seconds after
// answering's decision, so that parallel requests reach distinct workers.
declare(strict_types=1);

require_once getenv('LB_PHP_CLASSES') . '/autoload.php';

use LazyBreaker\{CircuitOpenException, Config, Registry};

$registry = Registry::open(['path' => getenv('LB_FPM_FILE'), 'create' => true]);
$breaker = $registry->getOrCreate('upstream', new Config(failureThreshold: 3, timeoutSeconds: (float) getenv('LB_FPM_OPEN_SECONDS')));
header('X-Worker-Pid: ' . getmypid());
try {
    $body = $breaker->call(static function (): string {
        $ctx = stream_context_create(['http' => ['timeout' => 5, 'ignore_errors' => true]]);
        $body = file_get_contents(getenv('LB_FPM_UPSTREAM'), false, $ctx);
        $status = (int) explode(' ', $http_response_header[0] ?? 'HTTP/1.0 599')[1];
        if ($body === false || $status >= 500) {
            throw new RuntimeException("upstream answered {$status}");
        }
        return $body;
    });
    $status = 200;
} catch (CircuitOpenException $e) {
    $status = 503;
    header('Retry-After: ' . ($e->retryAfter() ?? 3600));
    $body = "circuit open\n";
} catch (RuntimeException $e) {
    $status = 502;
    $body = $e->getMessage() . "\n";
}
header('X-Breaker-State: ' . $breaker->state());
http_response_code($status);
usleep((int) ((float) ($_GET['hold'] ?? 0) * 1e6));
echo $body;
