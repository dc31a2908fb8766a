<?php
// Installs the test blog and writes its posts, through WordPress's own PHP API, in one run:
// php populate.php DOCROOT HOME_URL. Deterministic: the same blog every time (but for dates,
// counted back from now).
define('WP_INSTALLING', true);
$_SERVER['HTTP_HOST'] = parse_url($argv[2], PHP_URL_HOST);
require $argv[1] . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';

wp_install('Test Press', 'admin', 'admin@example.com', true, '', 'password');
update_option('siteurl', $argv[2]);
update_option('home', $argv[2]);
update_option('timezone_string', 'Asia/Shanghai');
update_option('posts_per_page', 10);
update_option('default_comment_status', 'open');
global $wp_rewrite;
$wp_rewrite->set_permalink_structure('/%year%/%monthnum%/%postname%/');
delete_option('rewrite_rules');  // made again by the first request, once every taxonomy has its rules
wp_update_user(['ID' => 1, 'display_name' => 'Site Admin']);
wp_delete_post(1, true);  // WordPress's own "Hello world!" and sample page
wp_delete_post(2, true);
wp_delete_post(3, true);

mt_srand(36);
$authors = [1];
foreach ([['alice', 'Alice Liddell'], ['bob', '王小波'], ['carol', 'Carol Danvers']] as [$login, $name]) {
    $id = wp_create_user($login, 'password', "$login@example.com");
    wp_update_user(['ID' => $id, 'display_name' => $name, 'role' => 'author']);
    $authors[] = $id;
}
$categories = [];
foreach (['Notes', 'Travel', '技术', 'Reading'] as $name) {
    $categories[] = wp_insert_term($name, 'category')['term_id'];
}
$tags = ['python', 'sqlite', '旅行', '读书', 'web', 'life', '数据库', 'music'];
$images = [];
foreach (['red' => [200, 40, 40], 'green' => [40, 160, 60], 'blue' => [40, 60, 200]] as $name => [$r, $g, $b]) {
    $img = imagecreatetruecolor(64, 48);
    imagefill($img, 0, 0, imagecolorallocate($img, $r, $g, $b));
    ob_start();
    imagepng($img);
    $upload = wp_upload_bits("$name.png", null, ob_get_clean());
    $id = wp_insert_attachment(['post_title' => $name, 'post_mime_type' => 'image/png', 'post_status' => 'inherit'],
                               $upload['file']);
    $images[] = wp_get_attachment_url($id);
}

$en = ['archive', 'crawler', 'river', 'lantern', 'garden', 'harbour', 'signal', 'window', 'morning', 'engine',
       'letter', 'mountain', 'station', 'pocket', 'compass', 'orchard', 'thunder', 'market', 'ladder', 'meadow'];
$zh = ['今天', '我们', '讨论', '数据', '旅行', '城市', '读书', '程序', '天气', '朋友', '记录', '时间', '山路', '咖啡'];
function words(array $pool, int $n, string $sep): string {
    $out = [];
    for ($i = 0; $i < $n; $i++) {
        $out[] = $pool[mt_rand(0, count($pool) - 1)];
    }
    return implode($sep, $out);
}
$now = time();
$made = 0;
for ($i = 0; $i < 210; $i++) {
    $chinese = $i % 3 === 0;
    $gmt = $now - 86400 - $i * 302400 - mt_rand(0, 80000);  // every three and a half days, back from yesterday
    $paragraphs = [];
    for ($p = 0; $p < 4; $p++) {
        $paragraphs[] = $chinese
            ? "第{$i}篇文章的第{$p}段：" . words($zh, 40, '') . '。'
            : "Post $i, paragraph $p: " . ucfirst(words($en, 45, ' ')) . '.';
    }
    if ($i % 9 === 4) {
        array_splice($paragraphs, 1, 0, ['<img src="' . $images[$i % 3] . '" alt="figure ' . $i . '" width="64" height="48">']);
    }
    $title = $chinese ? "第{$i}篇：" . words($zh, 3, '') : "Note $i on the " . words($en, 2, ' and the ');
    $id = wp_insert_post([
        'post_title' => $title,
        'post_content' => implode("\n\n", $paragraphs),
        'post_status' => 'publish',
        'post_author' => $authors[$i % 4],
        'post_date_gmt' => gmdate('Y-m-d H:i:s', $gmt),
        'post_date' => get_date_from_gmt(gmdate('Y-m-d H:i:s', $gmt)),
        'post_category' => array_slice([$categories[$i % 4], $categories[($i + 1) % 4]], 0, 1 + $i % 2),
        'tags_input' => array_slice([$tags[$i % 8], $tags[($i * 3 + 1) % 8], $tags[($i * 5 + 2) % 8]], 0, $i % 4),
    ], true);
    if (is_wp_error($id)) {
        fwrite(STDERR, $id->get_error_message() . "\n");
        exit(1);
    }
    if ($i % 3 === 1) {  // comments, the latest of them well after the post
        for ($c = 0; $c < 1 + $i % 4; $c++) {
            $when = min($gmt + 86400 * (3 + 20 * $c) + 3600 * $c, $now - 60);
            wp_insert_comment([
                'comment_post_ID' => $id,
                'comment_author' => "Reader $c",
                'comment_author_email' => "reader$c@example.com",
                'comment_content' => "Comment $c on post $i: " . words($en, 12, ' '),
                'comment_date_gmt' => gmdate('Y-m-d H:i:s', $when),
                'comment_date' => get_date_from_gmt(gmdate('Y-m-d H:i:s', $when)),
                'comment_approved' => 1,
            ]);
        }
    }
    if ($i === 100) {
        stick_post($id);
    }
    $made++;
}
$hidden = [
    ['post_title' => 'Locked away', 'post_password' => 'secret', 'post_status' => 'publish',
     'post_content' => 'The words behind the password: do not archive them.'],
    ['post_title' => 'Private thoughts', 'post_status' => 'private',
     'post_content' => 'A private post: only its author reads it.'],
    ['post_title' => 'A draft', 'post_status' => 'draft', 'post_content' => 'Not written yet.'],
    ['post_title' => 'Scheduled news', 'post_status' => 'future',
     'post_date_gmt' => gmdate('Y-m-d H:i:s', $now + 30 * 86400),
     'post_date' => get_date_from_gmt(gmdate('Y-m-d H:i:s', $now + 30 * 86400)),
     'post_content' => 'Tomorrow\'s post, published next month.'],
];
foreach ($hidden as $i => $post) {
    $gmt = gmdate('Y-m-d H:i:s', $now - 40 * 86400 - $i * 3600);
    wp_insert_post($post + ['post_author' => 2, 'post_date_gmt' => $gmt, 'post_date' => get_date_from_gmt($gmt)]);
}
foreach (['About' => 'This blog is a test of an archiver, written by a script.',
          '关于本站' => '这个博客是一个测试。它的文章都是脚本写的。'] as $title => $content) {
    wp_insert_post(['post_title' => $title, 'post_content' => $content, 'post_status' => 'publish', 'post_type' => 'page']);
}
echo "$made posts\n";
