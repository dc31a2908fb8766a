<?php
// The test blog's configuration (tests/wordpress.py fills in the paths).
define('DB_NAME', 'wordpress');
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', 'localhost:@SOCKET@');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
$table_prefix = 'wp_';
foreach (['AUTH', 'SECURE_AUTH', 'LOGGED_IN', 'NONCE'] as $name) {
    define("{$name}_KEY", "test $name key");
    define("{$name}_SALT", "test $name salt");
}
define('WP_CONTENT_DIR', __DIR__ . '/wp-content');
define('DISABLE_WP_CRON', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_DEBUG', false);
defined('ABSPATH') || define('ABSPATH', __DIR__ . '/');
require_once ABSPATH . 'wp-settings.php';
