#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write RKNPU command streams exactly as silicon producers write them, with their memory images,
an independently computed expected output and a manifest per stream.

    /usr/bin/python3 tools/streams/make_streams.py OUT_DIR [--only NAME ...]
    /usr/bin/python3 tools/streams/make_streams.py --selfcheck
    /usr/bin/python3 tools/streams/make_streams.py --list

Needs numpy (Debian python3-numpy). Deterministic: the same command writes the same bytes.
See docs/rknpu-register-semantics.md (section 15) for what each stream follows.
"""
import argparse
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import stream as S  # noqa: E402
import streams_mesa  # noqa: E402
import streams_vendor  # noqa: E402

STREAMS = {
    "mesa_conv_int8": streams_mesa.mesa_conv_int8,
    "mesa_conv_split": streams_mesa.mesa_conv_split,
    "mtx_matmul_int8": streams_vendor.mtx_matmul_int8,
    "mtx_matmul_fp16": streams_vendor.mtx_matmul_fp16,
    "mesa_image_conv": streams_mesa.mesa_image_conv,
    "vendor_dpu_add_fp16": streams_vendor.vendor_dpu_add_fp16,
    "dpu_transpose_int8": streams_vendor.dpu_transpose_int8,
    "vendor_3core_conv": streams_mesa.vendor_3core_conv,
    "vendor_matmul_fp16": streams_vendor.vendor_matmul_fp16,
}


def build(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return STREAMS[name](rng)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--only", action="append", default=[], help="stream name (repeatable)")
    ap.add_argument("--selfcheck", action="store_true", help="check the generator against brute-force references")
    ap.add_argument("--list", action="store_true", help="print the stream names")
    a = ap.parse_args(argv)
    if a.list:
        print("\n".join(STREAMS))
        return 0
    if a.selfcheck:
        import selfcheck
        return selfcheck.run(build, STREAMS)
    if not a.out_dir:
        ap.error("OUT_DIR is required (or --selfcheck / --list)")
    names = a.only or list(STREAMS)
    for n in names:
        if n not in STREAMS:
            print(f"make_streams: error: unknown stream '{n}' (known: {', '.join(STREAMS)})", file=sys.stderr)
            return 2
    for n in names:
        d = S.write(build(n), a.out_dir)
        print(f"{n}: {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
