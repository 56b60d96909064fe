#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# panic.sh - /init of panic-check's initramfs (busybox sh): panics the kernel from a dd process
# through sysrq 'c', with no pvpanic driver loaded.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
echo "panic-check: panicking"
(sleep 1; echo c) | dd of=/proc/sysrq-trigger 2>/dev/null
echo "panic-check: still alive after sysrq c"
poweroff -f
