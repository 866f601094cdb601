<?php
// The flaky upstream of the PHP-FPM test, served by `php -S` (one request
// at a time): the test writes its mode to $LB_FPM_DIR/mode ("fail" or
// "ok", then a delay in seconds), and counts its calls in
// $LB_FPM_DIR/upstream-hits (one line per call).
declare(strict_types=1);

$dir = getenv('LB_FPM_DIR');
[$mode, $delay] = explode(' ', trim((string) @file_get_contents("{$dir}/mode")) . ' 0');
file_put_contents("{$dir}/upstream-hits", "{$mode}\n", FILE_APPEND | LOCK_EX);
usleep((int) ((float) $delay * 1e6));
if ($mode === 'ok') {
    echo "upstream ok\n";
} else {
    http_response_code(500);
    echo "upstream failed\n";
}
