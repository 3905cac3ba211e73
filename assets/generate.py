#!/usr/bin/env python3
"""Draws the examples' sprites. Run from anywhere: `python3 assets/generate.py`.

Pure Python (zlib only), so the art is reproducible and made by the project:
- circle.png: a white disc with an anti-aliased edge, tinted by the examples' sprite colours.
- coin.png: a gold coin with a rim and a shine, for the gameplay example.
"""
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def write_png(path, size, pixel):
    rows = []
    for y in range(size):
        row = bytearray([0])
        for x in range(size):
            row.extend(pixel(x + 0.5 - size / 2, y + 0.5 - size / 2))
        rows.append(bytes(row))
    raw = b"".join(rows)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", header))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def coverage(distance, radius):
    """How much of a pixel at `distance` from the centre lies inside `radius`."""
    return max(0.0, min(1.0, radius - distance + 0.5))


def circle(x, y, size=128):
    alpha = coverage(math.hypot(x, y), size / 2 - 1)
    return (255, 255, 255, round(alpha * 255))


def coin(x, y, size=64):
    r = math.hypot(x, y)
    outer = size / 2 - 1
    alpha = coverage(r, outer)
    rim = 1.0 - coverage(r, outer - 5)
    shine = max(0.0, 1.0 - math.hypot(x + 8, y + 8) / 14) * (1 - rim)
    gold = (235, 180, 40)
    dark = (170, 110, 20)
    colour = [round(g * (1 - rim) + d * rim) for g, d in zip(gold, dark)]
    colour = [min(255, round(c + shine * 90)) for c in colour]
    return (*colour, round(alpha * 255))


if __name__ == "__main__":
    write_png(os.path.join(HERE, "circle.png"), 128, circle)
    write_png(os.path.join(HERE, "coin.png"), 64, lambda x, y: coin(x, y))
    print("wrote circle.png and coin.png")
