#!/busybox sh
# SPDX-License-Identifier: GPL-2.0
# init.sh - /init of the guest-BTS Linux test: loads msr.ko, makes /dev/cpu/0/msr, runs /gbts
# (tests/linux/guest-bts/gbts.c) and powers off.
B=/busybox
$B mount -t proc proc /proc
$B insmod /msr.ko || echo "gbts-init: insmod msr.ko failed"
$B mkdir -p /dev/cpu/0
[ -e /dev/cpu/0/msr ] || $B mknod /dev/cpu/0/msr c 202 0
/gbts
echo "gbts-init: gbts exited with status $?"
$B poweroff -f
