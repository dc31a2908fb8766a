"""Run ``scrapy ARGS`` with a name resolver and a network that the test controls.

``CONTROLLED_DNS`` (JSON ``{"host": ["203.0.113.7", "127.0.0.1"]}``): each lookup of a
listed host, by ``getaddrinfo`` or ``gethostbyname``, takes the next answer (the last one
repeats), as a rebinding DNS server would give them. ``CONTROLLED_CONNECTS`` names a file
where every connection to an address outside 127.0.0.0/8 is listed, one per line: such a
connection fails at once (ECONNREFUSED) and no packet leaves the machine.
"""

import errno
import ipaddress
import json
import os
import socket
import sys

PLAN = json.loads(os.environ["CONTROLLED_DNS"])
CONNECTS = os.environ["CONTROLLED_CONNECTS"]
asked = {host: 0 for host in PLAN}
real_getaddrinfo, real_gethostbyname, RealSocket = socket.getaddrinfo, socket.gethostbyname, socket.socket


def answer(host):
    answers = PLAN[host]
    asked[host] += 1
    return answers[min(asked[host], len(answers)) - 1]


def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
    name = host.decode() if isinstance(host, bytes) else host
    if name in PLAN:
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (answer(name), port or 0))]
    return real_getaddrinfo(host, port, family, type, proto, flags)


def gethostbyname(host):
    return answer(host) if host in PLAN else real_gethostbyname(host)


class LoopbackOnly(RealSocket):
    def connect_ex(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not ipaddress.ip_address(address[0]).is_loopback:
            with open(CONNECTS, "a") as log:
                log.write(f"{address[0]}:{address[1]}\n")
            return errno.ECONNREFUSED
        return super().connect_ex(address)

    def connect(self, address):
        code = self.connect_ex(address)
        if code and code != errno.EINPROGRESS:
            raise OSError(code, os.strerror(code))


socket.getaddrinfo, socket.gethostbyname, socket.socket = getaddrinfo, gethostbyname, LoopbackOnly

if __name__ == "__main__":
    from scrapy.cmdline import execute

    sys.argv = ["scrapy", *sys.argv[1:]]
    execute()
