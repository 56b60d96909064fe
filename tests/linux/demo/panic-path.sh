#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# panic-path.sh - /init of panic-path-check's initramfs (busybox sh): panics the kernel from
# sysrq-crash (static, run SCHED_FIFO by fifo-exec) writing 'c' to /proc/sysrq-trigger, with no
# pvpanic driver loaded.
bb=/bin/busybox
$bb mount -t proc proc /proc
echo "panic-path-check: panicking"
/bin/fifo-exec /bin/sysrq-crash
echo "panic-path-check: still alive after sysrq c"
$bb poweroff -f
