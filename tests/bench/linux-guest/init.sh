#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# init.sh - /init of the Linux benchmarks' initramfs (busybox sh): says when user space began
# ("bench: user space after S s"), starts bench-idle, runs bench-cpu once for each count in
# bench.iters=N[,N...] and bench-work once for each MODE:N in bench.work=MODE:N[,MODE:N...] on
# the kernel command line, and powers the guest off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
read -r up _ < /proc/uptime
echo "bench: user space after $up s"
iters=
work=
for w in $(cat /proc/cmdline); do
	case $w in
	bench.iters=*) iters=${w#bench.iters=} ;;
	bench.work=*) work=${w#bench.work=} ;;
	esac
done
bench-idle &
for n in $(echo "$iters" | tr , ' '); do
	bench-cpu "$n"
done
for m in $(echo "$work" | tr , ' '); do
	bench-work "${m%%:*}" "${m#*:}"
done
poweroff -f
