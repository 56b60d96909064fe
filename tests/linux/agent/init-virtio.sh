#!/busybox sh
# SPDX-License-Identifier: GPL-2.0
# init-virtio.sh - /init of the agent's virtio-serial tests (a QEMU guest): makes
# /dev/virtio-ports/NAME as udev would, starts the agent (it picks the port org.vbts.agent.0),
# lets agentdemo run until it has called into its library while the agent reports it and
# uploads its files, stops the agent, and powers off.
# With /start-trace in the initramfs (attach-check, `vbts attach --start-at start-trace`):
# start-trace runs and waits before agentdemo is let go (once the collector has seen it loaded,
# it records branches, which steps the whole guest: before, nothing was stepped), so that
# agentdemo's return into main and its exit are recorded. The host says when the collector
# records through the port org.vbts.go (one line), when there is one; else 2 s are given.
B=/busybox
$B mount -t proc proc /proc
$B mkdir -p /sys
$B mount -t sysfs sysfs /sys
$B mount -t devtmpfs devtmpfs /dev
$B mkdir -p /dev/virtio-ports
for p in /sys/class/virtio-ports/*; do
	[ -e "$p/name" ] && $B ln -s "/dev/${p##*/}" "/dev/virtio-ports/$($B cat "$p/name")"
done
echo "agent-test: ports: $($B ls /dev/virtio-ports)"
$B mkfifo /agent-ready /demo-ready /go
/vbts-agent -m 65536 -w /agent-ready &
agent=$!
read r < /agent-ready
# With /start-trace, agentdemo spins 20 ms in user mode once let go (agentdemo.c).
spin=
[ -x /start-trace ] && spin=spin
/agentdemo /demo-ready /go $spin &
demo=$!
read r < /demo-ready
$B kill -TERM $agent
wait $agent
echo "agent-test: agent exited with status $?"
if [ -x /start-trace ]; then
	$B mkfifo /start-go
	/start-trace /start-go &
	start=$!
	# The collector sees start-trace loaded when it copies the rings: wait for it.
	if [ -e /dev/virtio-ports/org.vbts.go ]; then
		# Kept open: a port reads as at its end while the host is not connected, and
		# closing it drops what came meanwhile.
		exec 3< /dev/virtio-ports/org.vbts.go
		r=
		until [ "$r" = go ]; do
			read r <&3 || $B sleep 0.2
		done
		exec 3<&-
	else
		$B sleep 2
	fi
fi
echo go > /go
wait $demo
echo "agent-test: agentdemo exited with status $?"
if [ -x /start-trace ]; then
	echo go > /start-go
	wait $start
	echo "agent-test: start-trace exited with status $?"
fi
$B poweroff -f
