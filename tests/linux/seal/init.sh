#!/busybox sh
# SPDX-License-Identifier: GPL-2.0
# init.sh - /init of the sealed Linux trace test (seal-check). Under `vbts run` (the default):
# crashlib (a PIE with its shared library) starts and says when its library is in use, one
# /proc scan of vbts-agent (-1) reports its mappings and uploads both files (the build-ID
# store), then crashlib goes on and dies of SIGSEGV in libcrashlib.so: a crash report. With
# "vbts_seal=attach" on the kernel command line (the guest `vbts attach` traces, without an
# agent channel) it only says so, sleeps 3 s and powers off. No step depends on timing.
B=/busybox
$B mount -t proc proc /proc
case " $($B cat /proc/cmdline) " in
*" vbts_seal=attach "*)
	echo "seal-test: attached guest up"
	# A process runs a while: vbts attach writes the kernel's symbols once one has run.
	$B sleep 3
	$B poweroff -f
	;;
esac
$B mkfifo /ready /go
/crashlib /ready /go &
pid=$!
echo "seal-test: crashlib is pid $pid"
read r < /ready
/vbts-agent -1 -m 262144
echo "seal-test: agent exited with status $?"
echo go > /go
wait $pid
echo "seal-test: crashlib exited with status $?"
$B poweroff -f
