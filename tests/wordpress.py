"""A real WordPress for the tests: Debian's ``wordpress`` package, MariaDB and PHP's built-in server.

Everything lives in one temporary folder: MariaDB's data directory and socket (no TCP port), a
document root of the package's files with its own ``wp-config.php`` and ``wp-content``, and the
server's log of requests. Nothing is installed or started system-wide, and ``stop`` ends both
servers. The blog is installed and populated through WordPress's own PHP API
(``tests/wordpress_php/populate.php``); ``php`` runs more PHP against it (edits between crawls).
"""

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

PACKAGE = Path("/usr/share/wordpress")  # Debian's wordpress package
PHP_FILES = Path(__file__).with_name("wordpress_php")
NEEDED = ("php", "mariadbd", "mariadb-install-db")


def missing() -> str | None:
    """Why the real WordPress cannot run here (the Debian packages that are absent), or None."""
    absent = [c for c in NEEDED if shutil.which(c) is None and not Path("/usr/sbin", c).exists()]
    if absent or not (PACKAGE / "wp-settings.php").exists():
        return ("Debian's wordpress, mariadb-server, php-cli and php-mysql are not all installed "
                f"({', '.join(absent) or PACKAGE} missing; .ci/run installs them)")
    return None


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


class WordPress:
    """One WordPress blog on 127.0.0.1:``port``, in ``root``."""

    def __init__(self, root: Path, port: int):
        self.root = root
        self.port = port
        self.home = f"http://127.0.0.1:{port}/"
        self.docroot = root / "www"
        self.socket = root / "db.sock"
        self.log = root / "requests.log"
        self.procs: list[subprocess.Popen] = []

    def start(self) -> "WordPress":
        self._start_database()
        self._write_docroot()
        out = subprocess.run(["php", str(PHP_FILES / "populate.php"), str(self.docroot), self.home.rstrip("/")],
                             capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise RuntimeError(f"populating WordPress failed:\n{out.stdout}\n{out.stderr}")
        self._start_server()
        return self

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        self.procs.clear()

    def __enter__(self) -> "WordPress":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, args: list[str], log: Path) -> subprocess.Popen:
        env = {**os.environ, "PHP_CLI_SERVER_WORKERS": "4", "WP_REQUEST_LOG": str(self.log)}
        with log.open("ab") as out:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=env)
        self.procs.append(proc)
        return proc

    def _start_database(self) -> None:
        data = self.root / "mysql"
        subprocess.run([_tool("mariadb-install-db"), "--no-defaults", f"--datadir={data}", "--user=root",
                        "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"],
                       check=True, capture_output=True, timeout=120)
        proc = self._spawn([_tool("mariadbd"), "--no-defaults", f"--datadir={data}", f"--socket={self.socket}",
                            "--skip-networking", "--user=root", f"--pid-file={self.root / 'db.pid'}",
                            "--skip-log-bin", "--innodb-flush-log-at-trx-commit=0", "--innodb-buffer-pool-size=32M",
                            "--skip-innodb-doublewrite"], self.root / "mariadb.log")
        _wait(lambda: self.socket.exists(), proc, "MariaDB")
        subprocess.run([_tool("mariadb"), "--no-defaults", f"--socket={self.socket}", "-uroot",
                        "-e", "create database wordpress character set utf8mb4"], check=True, timeout=30)

    def _write_docroot(self) -> None:
        """The package's files, but for its wp-config.php (which reads /etc/wordpress) and wp-content:
        the top-level scripts copied (WordPress finds its configuration beside wp-load.php, symlinks
        resolved), wp-admin and wp-includes linked, the themes linked, the rest of wp-content ours."""
        self.docroot.mkdir()
        for path in PACKAGE.iterdir():
            if path.name in ("wp-config.php", "wp-content", ".htaccess"):
                continue
            if path.is_dir():
                (self.docroot / path.name).symlink_to(path)
            else:
                shutil.copy(path, self.docroot / path.name)
        config = (PHP_FILES / "wp-config.php").read_text().replace("@SOCKET@", str(self.socket))
        (self.docroot / "wp-config.php").write_text(config)
        content = self.docroot / "wp-content"
        for folder in ("plugins", "uploads", "mu-plugins"):
            (content / folder).mkdir(parents=True)
        (content / "themes").symlink_to(PACKAGE / "wp-content" / "themes")
        shutil.copy(PHP_FILES / "rest-switch.php", content / "mu-plugins" / "rest-switch.php")

    def _start_server(self) -> None:
        # PHP's server is its command line: OPcache, off there by default, keeps WordPress's scripts
        # compiled between requests (a sixth less CPU for each page)
        proc = self._spawn(["php", "-d", "opcache.enable_cli=1", "-S", f"127.0.0.1:{self.port}",
                            "-t", str(self.docroot), str(PHP_FILES / "router.php")], self.root / "php-server.log")

        def answers() -> bool:
            try:
                urllib.request.urlopen(self.home + "robots.txt", timeout=5)
                return True
            except OSError:
                return False
        _wait(answers, proc, "PHP's server")
        self.requests()

    def php(self, code: str) -> str:
        """Run ``code`` (PHP, without ``<?php``) with WordPress loaded; its output."""
        script = self.root / "run.php"
        script.write_text(f"<?php\n$_SERVER['HTTP_HOST'] = '127.0.0.1';\nrequire '{self.docroot}/wp-load.php';\n{code}\n")
        out = subprocess.run(["php", str(script)], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"PHP failed:\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def published(self) -> dict[str, dict]:
        """Every public post as WordPress holds it, by permalink: id, title, dates (UTC), author, terms."""
        return {p["url"]: p for p in json.loads(self.php("""
            $out = [];
            foreach (get_posts(['numberposts' => -1, 'post_status' => 'publish', 'has_password' => false]) as $p) {
                $out[] = ['id' => $p->ID, 'url' => get_permalink($p), 'slug' => $p->post_name,
                          'title' => html_entity_decode(get_the_title($p), ENT_QUOTES, 'UTF-8'),
                          'published' => str_replace(' ', 'T', $p->post_date_gmt) . 'Z',
                          'updated' => str_replace(' ', 'T', $p->post_modified_gmt) . 'Z',
                          'author' => get_the_author_meta('display_name', $p->post_author),
                          'categories' => wp_get_post_categories($p->ID, ['fields' => 'names']),
                          'tags' => wp_get_post_tags($p->ID, ['fields' => 'names'])];
            }
            echo json_encode($out);
        """))}

    def change(self, truth: dict[str, dict]) -> dict:
        """Ten edits (half of them to posts older than 90 days), five deletions, two posts trashed,
        five new posts, a slug and a title changed; the posts of ``truth`` (``published``) each
        change touched, and ``after``: the public posts then."""
        by_date = sorted(truth.values(), key=lambda p: p["published"], reverse=True)
        old = datetime.now(timezone.utc) - timedelta(days=90)
        young = [p for p in by_date if datetime.fromisoformat(p["published"]) > old]
        aged = [p for p in by_date if datetime.fromisoformat(p["published"]) < old - timedelta(days=10)]
        plan = {"edited": young[1:6] + aged[0:5], "deleted": aged[10:15], "trashed": [young[7], aged[20]],
                "slug": aged[30], "title": aged[40]}
        ids = {k: [p["id"] for p in v] if isinstance(v, list) else v["id"] for k, v in plan.items()}
        self.php(f"""
            foreach ({ids['edited']} as $id) {{
                $post = get_post($id);
                wp_update_post(['ID' => $id, 'post_content' => $post->post_content . "\\n\\nA paragraph added to post $id, later."]);
            }}
            foreach ({ids['deleted']} as $id) {{ wp_delete_post($id, true); }}
            foreach ({ids['trashed']} as $id) {{ wp_trash_post($id); }}
            wp_update_post(['ID' => {ids['slug']}, 'post_name' => 'moved']);
            wp_update_post(['ID' => {ids['title']}, 'post_title' => 'A title changed afterwards']);
            for ($i = 0; $i < 5; $i++) {{
                $gmt = gmdate('Y-m-d H:i:s', time() - 3600 * ($i + 1));
                wp_insert_post(['post_title' => "Fresh post $i", 'post_status' => 'publish', 'post_author' => 2,
                                'post_date_gmt' => $gmt, 'post_date' => get_date_from_gmt($gmt),
                                'post_content' => "A new post, number $i, written between two crawls. " . str_repeat("Its words. ", 40),
                                'tags_input' => ['python', 'new']]);
            }}
        """)
        return {**plan, "after": self.published()}

    def requests(self) -> list[str]:
        """The requests the server answered since the last call, as ``STATUS METHOD PATH``."""
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        self.log.write_text("")
        return lines

    def rest(self, on: bool) -> None:
        """Turn the REST API on, or off (every request answered 401)."""
        flag = self.docroot / "wp-content" / "mu-plugins" / "rest-off"
        if on:
            flag.unlink(missing_ok=True)
        else:
            flag.touch()


def _wait(ready, proc: subprocess.Popen, name: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{name} did not start")
        time.sleep(0.1)
