#!/usr/bin/env python3
"""A stand-in upload-pack for the tests: speaks protocol v0 well enough to be believed, then
serves a given pack as it is (mode `good`) or breaks the protocol in one way.

    bad_upload_pack.py <mode> <pack file> <commit id> [<repository>]

modes: good (the pack as it is), corrupt (pack bytes flipped), truncated (the stream ends inside the pack), bad-pktline,
bad-ref (a ref named refs/heads/../x), missing (a valid pack without the wanted commit),
silent (advertises, then says nothing), band3 (a fatal error on band 3), stall (sends half the
pack, then nothing: for a client to be interrupted while receiving).
"""

import os
import sys
import time


def pkt(data):
    if isinstance(data, str):
        data = data.encode()
    sys.stdout.buffer.write(b"%04x" % (len(data) + 4) + data)


def flush():
    sys.stdout.buffer.write(b"0000")
    sys.stdout.buffer.flush()


def read_request():
    """Reads packets until `done` (or the end of input), answering each round of haves with
    NAK, as a server that has none of them."""
    stdin = sys.stdin.buffer
    haves = False
    while True:
        head = stdin.read(4)
        if len(head) < 4:
            return
        length = int(head, 16)
        if length == 0:
            if haves:
                pkt("NAK\n")
                sys.stdout.buffer.flush()
            continue
        line = stdin.read(length - 4).strip()
        if line == b"done":
            return
        haves = haves or line.startswith(b"have ")


def main():
    mode, pack_path, commit = sys.argv[1:4]
    pack = open(pack_path, "rb").read()
    caps = "multi_ack_detailed side-band-64k ofs-delta shallow no-progress include-tag"
    name = "refs/heads/../x" if mode == "bad-ref" else "refs/heads/main"
    pkt(f"{commit} HEAD\0{caps} symref=HEAD:refs/heads/main\n")
    pkt(f"{commit} {name}\n")
    flush()
    if mode == "silent":
        # Let go of the client's stderr, which the test waits on: only the client's own
        # timeout may end this.
        os.close(2)
        time.sleep(60)
        return
    read_request()
    if mode == "bad-pktline":
        sys.stdout.buffer.write(b"zzzzgarbage")
        sys.stdout.buffer.flush()
        return
    pkt("NAK\n")
    if mode == "band3":
        pkt(b"\x03upload-pack: the disk caught fire")
        flush()
        return
    if mode == "corrupt":
        middle = len(pack) // 2
        pack = pack[:middle] + bytes(b ^ 0x55 for b in pack[middle:middle + 64]) + pack[middle + 64:]
    if mode in ("truncated", "stall"):
        pack = pack[: len(pack) // 2]
    for start in range(0, len(pack), 65000):
        pkt(b"\x01" + pack[start:start + 65000])
    if mode == "stall":
        sys.stdout.buffer.flush()
        os.close(2)
        time.sleep(60)
        return
    if mode != "truncated":
        flush()
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
