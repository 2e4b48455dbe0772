#!/usr/bin/env python3
"""Makes the objects of the Python runtime's snapshot immortal, in place in the component.

    python3 immortalize.py python.wasm

`app.py` ends by recording, behind a marker, the address and type address of every object the
snapshot keeps. This script finds that record in the snapshot's memory image (the active data
segments of the component's first core module, which defines the linear memory), sets each
recorded object's reference count to CPython's immortal value, and then zeroes the record.

Why: CPython 3.14 does not touch the reference count of an immortal object. Without this,
every `Py_INCREF` a run makes on a module, function, type or constant of the snapshot writes
to that object's page, so a trivial run dirtied about 300 scattered pages, each copied back
from the image by the host after the run. Immortal objects are never freed, which costs
nothing here: each run starts from the snapshot again.

Only objects that still look alive are patched: the word at the recorded address must be a
plausible reference count (1 up to 2^20) and the next word the recorded type. Anything else
(an object freed after the record was made, its memory now a free-list link) is left alone
and counted. The data segments keep their sizes; only bytes inside them change. (The
snapshot leaves runs of zeros out of its segments, so the image is read whole, zeros filled
in, and written through the segments.)

CPython 3.14, 32-bit (`wasm32`) layout: `ob_refcnt` is the object's first word, `ob_type` the
second; `_Py_IMMORTAL_INITIAL_REFCNT` is `5 << 28`, and any count of at least `1 << 30` is
immortal.
"""

import bisect
import struct
import sys

MARKER = b"grpo-immortal-v1"
IMMORTAL_REFCNT = 5 << 28
IMMORTAL_MINIMUM = 1 << 30
PLAUSIBLE_REFCNT = 1 << 20


def leb(data, pos, signed=False):
    """LEB128 at `pos` (unsigned, or signed 32-bit): (value, next position)."""
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            if signed:
                if byte & 0x40:
                    result -= 1 << shift
                result &= 0xFFFFFFFF
            return result, pos


def first_core_module(blob):
    """(start, end) in `blob` of the component's first core module."""
    if blob[:4] != b"\0asm" or blob[4:8] != b"\x0d\x00\x01\x00":
        raise SystemExit("not a component")
    pos = 8
    while pos < len(blob):
        section, pos = blob[pos], pos + 1
        size, pos = leb(blob, pos)
        if section == 1:  # core module
            return pos, pos + size
        pos += size
    raise SystemExit("the component has no core module")


def data_segments(blob, start, end):
    """The module's active data segments as (memory address, file offset, length); checks
    that the module defines its memory (so addresses are the snapshot's)."""
    if blob[start:start + 8] != b"\0asm\x01\x00\x00\x00":
        raise SystemExit("the first core module is not a wasm module")
    pos = start + 8
    segments = []
    defines_memory = False
    while pos < end:
        section, pos = blob[pos], pos + 1
        size, pos = leb(blob, pos)
        body_end = pos + size
        if section == 5:
            defines_memory = True
        if section == 11:
            count, p = leb(blob, pos)
            for _ in range(count):
                flags, p = leb(blob, p)
                if flags == 1:  # passive: not part of the initial image
                    length, p = leb(blob, p)
                    p += length
                    continue
                if flags == 2:
                    memory, p = leb(blob, p)
                    if memory != 0:
                        raise SystemExit("a data segment for another memory")
                elif flags != 0:
                    raise SystemExit(f"unknown data segment flags {flags}")
                if blob[p] != 0x41:  # i32.const
                    raise SystemExit("a data segment with a non-constant offset")
                address, p = leb(blob, p + 1, signed=True)
                if blob[p] != 0x0B:
                    raise SystemExit("a data segment offset that is not one i32.const")
                length, p = leb(blob, p + 1)
                segments.append((address, p, length))
                p += length
        pos = body_end
    if not defines_memory:
        raise SystemExit("the first core module does not define the memory")
    segments.sort()
    return segments


class Image:
    """The linear memory's initial image: read whole (bytes outside every segment are zero),
    written through the segments."""

    def __init__(self, blob, segments):
        self.blob = blob
        self.segments = segments
        self.starts = [address for address, _, _ in segments]
        top = max(address + length for address, _, length in segments)
        self.memory = bytearray(top)
        for address, file_offset, length in segments:
            self.memory[address:address + length] = blob[file_offset:file_offset + length]

    def offset(self, address, length):
        """File offset of `length` bytes at `address`, or None when not all in one segment."""
        i = bisect.bisect_right(self.starts, address) - 1
        if i < 0:
            return None
        seg_address, file_offset, seg_length = self.segments[i]
        if address + length > seg_address + seg_length:
            return None
        return file_offset + (address - seg_address)

    def word(self, address):
        if address + 4 > len(self.memory):
            return None
        return struct.unpack_from("<I", self.memory, address)[0]

    def set_word(self, address, value):
        """Writes one word; False when it is not inside one data segment."""
        at = self.offset(address, 4)
        if at is None:
            return False
        struct.pack_into("<I", self.blob, at, value)
        struct.pack_into("<I", self.memory, address, value)
        return True

    def zero(self, address, length):
        """Zeroes `length` bytes from `address` wherever the segments hold them."""
        for seg_address, file_offset, seg_length in self.segments:
            lo, hi = max(address, seg_address), min(address + length, seg_address + seg_length)
            if lo < hi:
                at = file_offset + (lo - seg_address)
                self.blob[at:at + (hi - lo)] = bytes(hi - lo)


def main():
    path = sys.argv[1]
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    start, end = first_core_module(blob)
    image = Image(blob, data_segments(blob, start, end))

    # Stale copies of the marker may linger in freed memory: the record is the one copy
    # followed by a count, that many (address, type) pairs and their sum modulo 2^32.
    records = []
    at = image.memory.find(MARKER)
    while at >= 0:
        count = image.word(at + len(MARKER)) or 0
        pairs_at = at + len(MARKER) + 4
        if 0 < count and pairs_at + 8 * count + 4 <= len(image.memory):
            pairs = struct.unpack_from("<%dI" % (2 * count), image.memory, pairs_at)
            if sum(pairs) & 0xFFFFFFFF == image.word(pairs_at + 8 * count):
                records.append((at, count, pairs_at, pairs))
        at = image.memory.find(MARKER, at + 1)
    if len(records) != 1:
        raise SystemExit(f"expected one record of the snapshot's objects, found {len(records)}")
    record, count, pairs_at, pairs = records[0]

    patched = already = skipped = 0
    for i in range(count):
        address, type_address = pairs[2 * i], pairs[2 * i + 1]
        refcnt, ob_type = image.word(address), image.word(address + 4)
        if refcnt is None or ob_type is None:
            skipped += 1
        elif refcnt >= IMMORTAL_MINIMUM:
            already += 1
        elif 1 <= refcnt < PLAUSIBLE_REFCNT and ob_type == type_address:
            if image.set_word(address, IMMORTAL_REFCNT):
                patched += 1
            else:
                skipped += 1
        else:
            skipped += 1
    # The record has done its job; zeroed, it compresses to nothing.
    image.zero(record, pairs_at + 8 * count + 4 - record)

    with open(path, "wb") as f:
        f.write(blob)
    print(f"immortalize: {count} objects recorded: {patched} made immortal, "
          f"{already} immortal already, {skipped} skipped")
    if patched < count // 2:
        raise SystemExit("immortalize: fewer than half the objects could be patched")


if __name__ == "__main__":
    main()
