<?php
// A must-use plugin of the test blog: while the file rest-off sits beside it, the REST API
// answers every request 401, as on a site that turned it off for visitors.
add_filter('rest_authentication_errors', function ($result) {
    if (file_exists(__DIR__ . '/rest-off')) {
        return new WP_Error('rest_disabled', 'The REST API is off on this site.', ['status' => 401]);
    }
    return $result;
});
add_filter('pre_wp_mail', '__return_false');
