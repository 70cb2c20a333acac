# SPDX-License-Identifier: MIT
"""A generated stream: regcmd buffer, memory images, expected outputs and the manifest."""
import json
import os
import struct
from dataclasses import dataclass, field

import numpy as np

import tasklist


@dataclass
class Stream:
    name: str
    producer: str
    sources: list
    soc: str
    description: str
    base: int
    words: list
    tasks: int                      # tasks the PC executes in total
    loads: list = field(default_factory=list)    # (file, addr, bytes)
    dumps: list = field(default_factory=list)    # (file, addr, expected bytes, mask bytes or None)
    task_list: list = None          # rknpu_task dicts
    submit: dict = None
    core_mask: str = None
    chains: list = field(default_factory=list)   # [{"core": c, "tasks": [i, ...], "first": addr}]
    assumptions: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    extra_files: dict = field(default_factory=dict)  # name -> text
    checks: dict = field(default_factory=dict)   # generator-side facts (ties, saturations, ...)

    def regcmd_bytes(self):
        return struct.pack(f"<{len(self.words)}Q", *self.words)


def as_bytes(a):
    return np.ascontiguousarray(a).tobytes()


def write(stream, out_dir):
    d = os.path.join(out_dir, stream.name)
    os.makedirs(d, exist_ok=True)
    files = {"regcmd.bin": stream.regcmd_bytes()}
    for fname, _, data in stream.loads:
        files[fname] = data
    dumps = []
    for fname, addr, expected, mask in stream.dumps:
        exp_name = f"expected_{fname}"
        files[exp_name] = expected
        entry = {"addr": f"0x{addr:08x}", "len": len(expected), "file": fname, "expected": exp_name, "mask": None}
        if mask is not None:
            assert len(mask) == len(expected)
            entry["mask"] = f"mask_{fname}"
            files[entry["mask"]] = mask
        dumps.append(entry)
    if stream.task_list is not None:
        files["tasks.bin"] = tasklist.pack(stream.task_list)
        files["tasks.json"] = tasklist.to_json(stream.task_list, stream.submit).encode()
    for fname, text in stream.extra_files.items():
        files[fname] = text.encode()
    for fname, data in files.items():
        with open(os.path.join(d, fname), "wb") as f:
            f.write(data)

    replay = ["regcmd.bin", "--base", f"0x{stream.base:08x}", "--mode", "full"]
    if stream.task_list is not None:
        replay += ["--task-list", "tasks.json"]
    if stream.core_mask is not None:
        replay += ["--core-mask", stream.core_mask]
    for fname, addr, _ in stream.loads:
        replay += ["--load", f"{fname}@0x{addr:08x}"]
    for e in dumps:
        replay += ["--dump", f"{e['addr']}:{e['len']}={e['file']}"]
    manifest = {
        "name": stream.name,
        "producer": stream.producer,
        "sources": stream.sources,
        "soc": stream.soc,
        "description": stream.description,
        "regcmd": {"file": "regcmd.bin", "base": f"0x{stream.base:08x}", "entries": len(stream.words)},
        "tasks": stream.tasks,
        "chains": stream.chains,
        "task_list": None if stream.task_list is None else {"json": "tasks.json", "bin": "tasks.bin"},
        "core_mask": stream.core_mask,
        "load": [{"file": f, "addr": f"0x{a:08x}", "len": len(b)} for f, a, b in stream.loads],
        "dump": dumps,
        "assumptions": stream.assumptions,
        "notes": stream.notes,
        "generator_checks": stream.checks,
        "commands": {
            "decode": ["decode", "regcmd.bin"],
            "lint": ["lint", "regcmd.bin", "--base", f"0x{stream.base:08x}"],
            "replay": ["replay"] + replay,
        },
    }
    if stream.task_list is not None and stream.core_mask in (None, "0"):
        # The same submit from the packed struct rknpu_task array (single core: no subcore split needed).
        manifest["commands"]["replay_bin"] = ["replay"] + [("tasks.bin" if a == "tasks.json" else a) for a in replay]
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    return d
