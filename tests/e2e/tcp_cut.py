#!/usr/bin/env python3
"""A TCP forwarder whose connections can be cut: the network between a
client and a server, for the fault suite (tests/e2e/faults.sh).

Usage: tcp_cut.py LISTEN_PORT TARGET_HOST:TARGET_PORT
Listens on 127.0.0.1:LISTEN_PORT and forwards each connection to the
target, bytes untouched (TLS passes through). SIGUSR1 resets every open
connection (both sides see it break, as when a network path fails) and
refuses new ones until SIGUSR2.
"""
import asyncio
import signal
import socket
import struct
import sys


async def main():
    port = int(sys.argv[1])
    host, target_port = sys.argv[2].rsplit(":", 1)
    open_conns = set()
    blocked = False

    def unblock():
        nonlocal blocked
        blocked = False
        print("accepting connections again", flush=True)

    def cut():
        nonlocal blocked
        blocked = True
        for w in list(open_conns):
            sock = w.get_extra_info("socket")
            if sock is not None:
                # SO_LINGER 0: close with a RST, not an orderly FIN.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                struct.pack("ii", 1, 0))
            w.close()
        print(f"cut {len(open_conns)} connection(s)", flush=True)
        open_conns.clear()

    async def pipe(reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
            open_conns.discard(writer)

    async def handle(cr, cw):
        if blocked:
            sock = cw.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                            struct.pack("ii", 1, 0))
            cw.close()
            return
        try:
            sr, sw = await asyncio.open_connection(host, int(target_port))
        except OSError:
            cw.close()
            return
        open_conns.update((cw, sw))
        await asyncio.gather(pipe(cr, sw), pipe(sr, cw))

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, cut)
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR2, unblock)
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


asyncio.run(main())
