<?php
// PHP's built-in server in front of WordPress: files as they are, every other path to index.php
// (the rewrite rules of WordPress's .htaccess, for its pretty permalinks). Each request is logged
// with its status to $WP_REQUEST_LOG: the tests count what a crawl asked for.
$path = urldecode(parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH));
register_shutdown_function(function () {
    file_put_contents(getenv('WP_REQUEST_LOG'), http_response_code() . ' ' . $_SERVER['REQUEST_METHOD'] . ' '
                      . $_SERVER['REQUEST_URI'] . "\n", FILE_APPEND | LOCK_EX);
});
if ($path !== '/' && is_file($_SERVER['DOCUMENT_ROOT'] . $path)) {
    return false;
}
$_SERVER['SCRIPT_NAME'] = '/index.php';
$_SERVER['SCRIPT_FILENAME'] = $_SERVER['DOCUMENT_ROOT'] . '/index.php';
require $_SERVER['DOCUMENT_ROOT'] . '/index.php';
