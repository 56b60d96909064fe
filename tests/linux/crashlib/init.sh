#!/busybox sh
# SPDX-License-Identifier: GPL-2.0
# init.sh - /init of the crash test and of `./vbts demo linux`: crashlib (a PIE with its shared
# library libcrashlib.so) is started and says when its library is in use; one /proc scan of
# vbts-agent (-1) then reports its mappings with their build IDs and uploads both files (the
# agent exits once they are sent); crashlib goes on and dies of SIGSEGV in libcrashlib.so.
# Its core dump is kept small: core_pattern /core and coredump_filter 0x1 (private anonymous
# and written private memory only: the registers and notes, the stack, the loader's link map;
# no file contents, gdb reads those from the host's copies of the files), and printed on the
# console gzip'd in base64 between two marker lines, from which the host takes it. No step
# depends on timing.
B=/busybox
$B mount -t proc proc /proc
echo /core > /proc/sys/kernel/core_pattern
ulimit -c unlimited
echo 0x1 > /proc/self/coredump_filter
$B mkfifo /ready /go
/crashlib /ready /go &
pid=$!
echo "crash-test: crashlib is pid $pid"
read r < /ready
/vbts-agent -1 -m 262144
echo "crash-test: agent exited with status $?"
echo go > /go
wait $pid
echo "crash-test: crashlib exited with status $?"
if [ -f /core ]; then
	echo "crash-test: core of $($B wc -c < /core) bytes"
	echo "crash-test: core begin"
	$B gzip -c /core | $B base64
	echo "crash-test: core end"
else
	echo "crash-test: no core"
fi
$B poweroff -f
