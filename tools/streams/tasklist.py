# SPDX-License-Identifier: MIT
"""struct rknpu_task arrays (packed, 40 bytes) and their JSON form, with the submit fields the
vendor kernel reads (docs/rknpu-register-semantics.md section 5; rockchip-linux/kernel:
drivers/rknpu/include/rknpu_ioctl.h)."""
import json
import struct

TASK_FMT = "<IIIIIIIIQ"  # flags, op_idx, enable_mask, int_mask, int_clear, int_status,
#                          regcfg_amount, regcfg_offset, regcmd_addr
assert struct.calcsize(TASK_FMT) == 40

RKNPU_JOB_PC, RKNPU_JOB_NONBLOCK, RKNPU_JOB_PINGPONG = 1, 2, 4
INT_CLEAR_ALL = 0x1FFFF
INT_DPU = 0x300


def task(enable_mask, regcfg_amount, regcmd_addr, int_mask=INT_DPU, op_idx=0):
    return dict(flags=0, op_idx=op_idx, enable_mask=enable_mask, int_mask=int_mask, int_clear=INT_CLEAR_ALL,
                int_status=0, regcfg_amount=regcfg_amount, regcfg_offset=0, regcmd_addr=regcmd_addr)


def pack(tasks):
    return b"".join(struct.pack(TASK_FMT, t["flags"], t["op_idx"], t["enable_mask"], t["int_mask"],
                                t["int_clear"], t["int_status"], t["regcfg_amount"], t["regcfg_offset"],
                                t["regcmd_addr"]) for t in tasks)


def unpack(blob):
    names = ["flags", "op_idx", "enable_mask", "int_mask", "int_clear", "int_status", "regcfg_amount",
             "regcfg_offset", "regcmd_addr"]
    return [dict(zip(names, struct.unpack_from(TASK_FMT, blob, i))) for i in range(0, len(blob), 40)]


def submit(task_number, core_mask, subcore_task, flags=RKNPU_JOB_PC | RKNPU_JOB_PINGPONG, timeout=6000):
    st = [list(x) for x in subcore_task] + [[0, 0]] * (5 - len(subcore_task))
    return dict(flags=flags, timeout=timeout, task_start=0, task_number=task_number, task_counter=0,
                priority=0, core_mask=core_mask, task_base_addr=0, subcore_task=st)


def to_json(tasks, sub):
    doc = {
        "uapi": "rknpu: struct rknpu_task (40 B packed) and struct rknpu_submit, "
                "rockchip-linux/kernel drivers/rknpu/include/rknpu_ioctl.h",
        "submit": sub,
        "tasks": [dict(t, regcmd_addr=f"0x{t['regcmd_addr']:08x}") for t in tasks],
    }
    return json.dumps(doc, indent=1) + "\n"
