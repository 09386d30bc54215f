"""Prints a TCP port on 127.0.0.1 that is free now and that this script run
has not handed out before.

Usage: python3 free_port.py USED_FILE
USED_FILE lists the ports already given (one per line); the new one is added.
The kernel can give the same ephemeral port to two bind(0) calls in a row once
the first socket is closed, and a script that asks for several ports (etcd,
API server, scorer and its metrics...) must not get one twice.
"""
import fcntl
import socket
import sys


def main():
    used_path = sys.argv[1]
    with open(used_path, "a+") as used:
        fcntl.flock(used, fcntl.LOCK_EX)
        used.seek(0)
        taken = {line.strip() for line in used if line.strip()}
        held = []
        try:
            for _ in range(64):
                s = socket.socket()
                s.bind(("127.0.0.1", 0))
                held.append(s)
                port = str(s.getsockname()[1])
                if port not in taken:
                    used.write(port + "\n")
                    print(port)
                    return 0
        finally:
            for s in held:
                s.close()
    print("free_port: no new free port after 64 tries", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
