#!/busybox sh
# SPDX-License-Identifier: GPL-2.0
# init-virtio.sh - /init of the agent's virtio-serial test (a QEMU guest): makes
# /dev/virtio-ports/NAME as udev would, starts the agent (it picks the port org.vbts.agent.0),
# runs agentdemo until it has called into its library, stops the agent and powers off.
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
/agentdemo /demo-ready /go &
demo=$!
read r < /demo-ready
$B kill -TERM $agent
wait $agent
echo "agent-test: agent exited with status $?"
echo go > /go
wait $demo
$B poweroff -f
