"""A static folder served on 127.0.0.1 for the benchmark: ThreadingHTTPServer, HTTP/1.1 keep-alive, no log.

``python -m bench.server FOLDER [PORT]`` binds PORT (default: a free one) and prints it on one line.
Like a static host it answers ``If-Modified-Since`` with 304 (SimpleHTTPRequestHandler).
"""

import functools
import http.server
import sys


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    handler = functools.partial(QuietHandler, directory=sys.argv[1])
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as httpd:
        print(httpd.server_address[1], flush=True)
        httpd.serve_forever()


if __name__ == "__main__":
    main()
