# SPDX-License-Identifier: MIT
# Toolchain file for the HiSpark MCU firmware: Debian's riscv64-unknown-elf-gcc + picolibc, RV32IMFC
# code (no vendor xlinx/xhimideer extensions). docs/mcu-targets.md 7.3: `-misa-spec=2.2` makes Zicsr/
# Zifencei implied so GCC 12 picks the rv32imafc/ilp32f multilib (an explicit _zicsr_zifencei selects
# the rv64 default multilib and the link fails). We use rv32imafc for the multilib; the firmware emits no
# A instructions (no atomics in the code, picolibc's single-thread build), so it runs on RV32IMFC.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(MK_ARCH_FLAGS "-misa-spec=2.2 -march=rv32imafc -mabi=ilp32f")
set(CMAKE_C_FLAGS_INIT "${MK_ARCH_FLAGS} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${MK_ARCH_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--oslib=semihost --crt0=semihost -Wl,--gc-sections")
