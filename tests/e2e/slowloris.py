#!/usr/bin/env python3
"""Slow TLS clients against a loopback port, while probing /healthz.

Opens --count TLS connections (spread over --addresses source addresses
127.0.1.x, so a per-address limit does not refuse them all), sends a request
line and then one header byte per connection every second, as a slowloris
attacker does. Meanwhile it asks GET /healthz over a fresh TLS connection
from 127.0.0.1 every --probe-every seconds and records each latency. Bounded
in count and time: after --hold seconds it closes everything and prints one
JSON object of figures. Loopback only.
"""

import argparse
import json
import resource
import socket
import ssl
import threading
import time


def context():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def rss_kib(pid):
    if not pid:
        return 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Attack:
    def __init__(self, args):
        self.args = args
        self.conns = []
        self.opened = 0
        self.refused = 0  # connect, handshake or first write failed
        self.dropped = 0  # closed by the server while held
        self.held_max = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def open_one(self, ctx, i):
        src = f"127.0.1.{i % self.args.addresses + 1}"
        try:
            raw = socket.create_connection(
                ("127.0.0.1", self.args.port), timeout=3,
                source_address=(src, 0))
            tls = ctx.wrap_socket(raw, server_hostname="localhost")
            tls.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
            return tls
        except (OSError, ssl.SSLError):
            return None

    def run(self, deadline):
        ctx = context()
        for i in range(self.args.count):
            if time.monotonic() > deadline or self.stop.is_set():
                break
            c = self.open_one(ctx, i)
            with self.lock:
                if c is None:
                    self.refused += 1
                else:
                    self.opened += 1
                    self.conns.append(c)
        while time.monotonic() < deadline and not self.stop.is_set():
            kept = []
            for c in self.conns:
                try:
                    c.sendall(b"X")  # a header that never ends
                    kept.append(c)
                except (OSError, ssl.SSLError):
                    self.dropped += 1
                    c.close()
            with self.lock:
                self.conns = kept
                self.held_max = max(self.held_max, len(kept))
            self.stop.wait(1.0)
        for c in self.conns:
            c.close()


def probe(port, timeout):
    """Seconds one GET /healthz took, or None when it got no 200."""
    start = time.monotonic()
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        with context().wrap_socket(raw, server_hostname="localhost") as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n"
                      b"Connection: close\r\n\r\n")
            got = b""
            while b"\r\n\r\n" not in got:
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
        if not got.startswith(b"HTTP/1.1 200"):
            return None
    except (OSError, ssl.SSLError):
        return None
    return time.monotonic() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--addresses", type=int, default=20)
    p.add_argument("--hold", type=float, default=20.0)
    p.add_argument("--probe-every", type=float, default=0.5)
    p.add_argument("--probe-timeout", type=float, default=5.0)
    p.add_argument("--pid", type=int, default=0, help="server, for VmRSS")
    args = p.parse_args()
    args.count = min(args.count, 5000)
    args.hold = min(args.hold, 120.0)
    # Room for --count sockets even under a shell's soft limit of 1024.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    rss_before = rss_kib(args.pid)
    deadline = time.monotonic() + args.hold
    attack = Attack(args)
    t = threading.Thread(target=attack.run, args=(deadline,), daemon=True)
    t.start()
    latencies, failed, rss_max = [], 0, rss_before
    while time.monotonic() < deadline:
        took = probe(args.port, args.probe_timeout)
        if took is None:
            failed += 1
        else:
            latencies.append(took)
        rss_max = max(rss_max, rss_kib(args.pid))
        time.sleep(max(0.0, args.probe_every - (took or 0)))
    attack.stop.set()
    t.join(timeout=30)
    print(json.dumps({
        "opened": attack.opened,
        "refused": attack.refused,
        "dropped_by_server": attack.dropped,
        "held_max": attack.held_max,
        "probes": len(latencies) + failed,
        "probes_failed": failed,
        "probe_max_ms": round(max(latencies, default=0) * 1000, 1),
        "rss_before_kib": rss_before,
        "rss_max_kib": rss_max,
    }))


if __name__ == "__main__":
    main()
