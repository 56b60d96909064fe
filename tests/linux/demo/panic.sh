#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# panic.sh - /init of panic-check's initramfs (busybox sh): panics the kernel from a dd process
# through sysrq 'c', with no pvpanic driver loaded. Every user instruction is recorded, so the
# applets are named through busybox (no --install: it would make hundreds of links).
bb=/bin/busybox
$bb mount -t proc proc /proc
$bb ln -s busybox /bin/dd
# A pipeline: two new processes at once, whose kernel paths to user mode the kernel tracer
# runs unstepped (they were stepped once, and then preempted each other for minutes).
echo "panic-check: panicking"
(echo c) | /bin/dd of=/proc/sysrq-trigger 2>/dev/null
echo "panic-check: still alive after sysrq c"
$bb poweroff -f
