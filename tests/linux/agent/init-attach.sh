#!/busybox sh
# SPDX-License-Identifier: GPL-2.0
# init-attach.sh - /init of the agent's test under `vbts attach --start-at start-trace` (a QEMU
# guest): as init-virtio.sh, the agent reports agentdemo and uploads its files while agentdemo
# waits, and exits; then /start-trace runs and waits (once the collector has seen it loaded, it
# records branches, which steps the whole guest: before, nothing was stepped), and agentdemo is
# let go: its return into main and its exit are recorded. Then it powers off.
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
$B mkfifo /start-go
/start-trace /start-go &
start=$!
# The collector sees start-trace loaded when it copies the rings: give it time.
$B sleep 2
echo go > /go
wait $demo
echo "agent-test: agentdemo exited with status $?"
echo go > /start-go
wait $start
echo "agent-test: start-trace exited with status $?"
$B poweroff -f
