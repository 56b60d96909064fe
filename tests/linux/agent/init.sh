#!/busybox sh
# SPDX-License-Identifier: GPL-2.0
# init.sh - /init of the agent test: measures the agent channel through /dev/port and through
# the transport the agent picks, starts the agent (uploads of at most 64 KiB: agentdemo and its
# library, not glibc) and waits until it has read /proc once, runs agentdemo (a PIE with a
# shared library, loaded through /ld-linux-x86-64.so.2) and waits until it has called into its
# library, then stops the agent (its last /proc scan and uploads, while agentdemo waits for
# /go) and powers off. With /agent-flood in the initramfs (the hostile test), that writer
# floods the agent channel from when the agent is ready until agentdemo has called into its
# library, and the agent is stopped only after it is done. No step depends on timing.
B=/busybox
$B mount -t proc proc /proc
echo "agent-test: $(/vbts-agent -t devport -r 16384)"
echo "agent-test: $(/vbts-agent -r 16384)"
$B mkfifo /agent-ready /demo-ready /go
/vbts-agent -m 65536 -w /agent-ready &
agent=$!
read r < /agent-ready
# Each FIFO is opened again when a child's exit interrupts the open (the writer waits).
flood=
if [ -x /agent-flood ]; then
	/agent-flood -s 7 -n 300 &
	flood=$!
fi
/agentdemo /demo-ready /go &
demo=$!
until read r < /demo-ready; do :; done
if [ -n "$flood" ]; then
	wait $flood
	echo "agent-test: agent-flood exited with status $?"
fi
$B kill -TERM $agent
wait $agent
echo "agent-test: agent exited with status $?"
echo go > /go
wait $demo
echo "agent-test: agentdemo exited with status $?"
$B poweroff -f
