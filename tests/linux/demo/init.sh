#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# init.sh - /init of `./vbts demo linux`'s initramfs (busybox sh): mounts /proc, runs a few
# ordinary commands, then /bin/crashme, which dies of SIGSEGV, and powers the guest off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
echo "demo: $(uname -sr), up $(cut -d' ' -f1 /proc/uptime) s, $(grep -c ^processor /proc/cpuinfo) cpu(s)"
echo "demo: ls /: $(ls / | tr "\n" " ")"
echo "demo: $(grep MemTotal /proc/meminfo)"
echo "demo: running crashme"
# A shell that says its pid, then becomes crashme (same pid), in the foreground.
sh -c 'echo "demo: crashme is pid $$"; exec crashme'
echo "demo: crashme exited with status $?"
poweroff -f
