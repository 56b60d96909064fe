#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# panic.sh - /init of panic-check's initramfs (busybox sh): panics the kernel from a dd process
# through sysrq 'c', with no pvpanic driver loaded. Every user instruction is recorded, so the
# applets are named through busybox (no --install: it would make hundreds of links).
bb=/bin/busybox
$bb mount -t proc proc /proc
$bb ln -s busybox /bin/dd
# One child at a time: the kernel path of a new process to its first user instruction is
# stepped, and two such paths runnable at once (a pipeline's) can preempt each other for
# minutes when stepping is slow (see README, "Tracing one process").
echo c > /sysrq-c
echo "panic-check: panicking"
/bin/dd if=/sysrq-c of=/proc/sysrq-trigger 2>/dev/null
echo "panic-check: still alive after sysrq c"
$bb poweroff -f
