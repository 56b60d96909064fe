// SPDX-License-Identifier: GPL-2.0
/*
 * libvirt-domain.c - a libvirt domain's QEMU pid and crash events, through libvirt's API
 * (libvirt and libvirt-qemu; without libvirt-dev at build time every call says so).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#ifdef VBTS_HAVE_LIBVIRT
#include <libvirt/libvirt.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>
#endif

#include "errmsg.h"
#include "escape.h"
#include "libvirt-domain.h"

#define PID_FILE_MAX 32
#define REPLY_MAX (1U << 20)

int libvirt_domain__parse_pid_file(const char *buf, size_t len, int *pid)
{
	long v = 0;

	if (len && buf[len - 1] == '\n')
		len--;
	if (!len || len > 10 || buf[0] == '0')
		return -EPROTO;
	for (size_t i = 0; i < len; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -EPROTO;
		v = v * 10 + (buf[i] - '0');
	}
	if (v > INT_MAX)
		return -EPROTO;
	*pid = (int)v;
	return 0;
}

int libvirt_domain__parse_cpus_tid(const char *reply, int *tid)
{
	json_t *root, *ret, *t;
	json_error_t jerr;
	int r = -EPROTO;

	if (strnlen(reply, REPLY_MAX + 1) > REPLY_MAX)
		return -EPROTO;
	root = json_loads(reply, JSON_REJECT_DUPLICATES, &jerr);
	ret = json_object_get(root, "return");
	if (json_is_array(ret) && json_array_size(ret) > 0) {
		t = json_object_get(json_array_get(ret, 0), "thread-id");
		if (json_is_integer(t) && json_integer_value(t) > 0 &&
		    json_integer_value(t) <= INT_MAX) {
			*tid = (int)json_integer_value(t);
			r = 0;
		}
	}
	json_decref(root);
	return r;
}

#ifdef VBTS_HAVE_LIBVIRT

/**
 * struct libvirt_domain - one domain.
 * @conn:     the connection
 * @dom:      the domain
 * @name:     its name as given
 * @crash_fd: eventfd written by the event thread when the domain crashed
 * @cb_id:    the lifecycle callback's id, -1 when none
 * @thread:   runs libvirt's event loop
 * @running:  the thread runs
 * @quit:     tells it to end
 */
struct libvirt_domain {
	virConnectPtr conn;
	virDomainPtr dom;
	char *name;
	int crash_fd;
	int cb_id;
	pthread_t thread;
	bool running;
	volatile int quit;
};

static const char *last_error(void)
{
	virErrorPtr e = virGetLastError();

	return e && e->message ? e->message : "unknown error";
}

static void quiet_errors(void *opaque, virErrorPtr e)
{
	(void)opaque;
	(void)e;
}

struct libvirt_domain *libvirt_domain__open(const char *uri, const char *name, char *err,
					    size_t errlen)
{
	char esc[256], msg[256];
	struct libvirt_domain *d;

	d = calloc(1, sizeof(*d));
	if (!d || !(d->name = strdup(name))) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	d->crash_fd = -1;
	d->cb_id = -1;
	virSetErrorFunc(NULL, quiet_errors);
	/* Events need the default loop registered before the connection is opened. */
	if (virEventRegisterDefaultImpl() < 0) {
		errmsg__set(err, errlen, "libvirt: cannot set up its event loop: %s",
			escape__str(msg, sizeof(msg), last_error()));
		goto err_free;
	}
	d->conn = virConnectOpen(uri);
	if (!d->conn) {
		errmsg__set(err, errlen, "cannot connect to libvirt%s%s: %s", uri ? " at " : "",
			uri ? escape__str(esc, sizeof(esc), uri) : "",
			escape__str(msg, sizeof(msg), last_error()));
		errno = ECONNREFUSED;
		goto err_free_keep;
	}
	d->dom = virDomainLookupByName(d->conn, name);
	if (!d->dom) {
		errmsg__set(err, errlen, "libvirt has no domain %s",
			escape__str(esc, sizeof(esc), name));
		virConnectClose(d->conn);
		errno = ENOENT;
		goto err_free_keep;
	}
	return d;

err_free:
	errno = EIO;
err_free_keep:
	free(d->name);
	free(d);
	return NULL;
}

/* The thread group of thread @tid, from /proc/TID/status; 0 or -errno. */
static int tgid_of(int tid, int *pid)
{
	char path[64], line[128];
	FILE *f;
	int ret = -EPROTO;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", pid) == 1 && *pid > 0) {
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

static int pid_from_file(const char *name, int *pid)
{
	char path[PATH_MAX], buf[PID_FILE_MAX];
	ssize_t n;
	int fd;

	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", name) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	return libvirt_domain__parse_pid_file(buf, (size_t)n, pid);
}

int libvirt_domain__pid(struct libvirt_domain *d, int *pid, char *err, size_t errlen)
{
	char esc[256], *reply = NULL;
	int tid, ret;

	if (virDomainIsActive(d->dom) != 1) {
		errmsg__set(err, errlen, "domain %s is not running",
			escape__str(esc, sizeof(esc), d->name));
		return -ESRCH;
	}
	if (virDomainQemuMonitorCommand(d->dom, "{\"execute\": \"query-cpus-fast\"}", &reply,
					0) == 0) {
		ret = libvirt_domain__parse_cpus_tid(reply, &tid);
		free(reply);
		if (!ret && !tgid_of(tid, pid))
			return 0;
	}
	ret = pid_from_file(d->name, pid);
	if (ret < 0) {
		errmsg__set(err, errlen,
			"cannot find the QEMU process of domain %s (neither QMP query-cpus-fast "
			"through libvirt nor /run/libvirt/qemu/NAME.pid: %s)",
			escape__str(esc, sizeof(esc), d->name), strerror(-ret));
		return ret == -EPROTO ? ret : -ESRCH;
	}
	return 0;
}

int libvirt_domain__start_paused(struct libvirt_domain *d, char *err, size_t errlen)
{
	char esc[256], msg[256];

	if (virDomainIsActive(d->dom) != 0) {
		errmsg__set(err, errlen, "domain %s is running (or its state is unknown): --start "
			"needs a defined, inactive domain", escape__str(esc, sizeof(esc), d->name));
		return -EBUSY;
	}
	if (virDomainCreateWithFlags(d->dom, VIR_DOMAIN_START_PAUSED) < 0) {
		errmsg__set(err, errlen, "libvirt cannot start domain %s: %s",
			escape__str(esc, sizeof(esc), d->name),
			escape__str(msg, sizeof(msg), last_error()));
		return -EIO;
	}
	return 0;
}

int libvirt_domain__resume(struct libvirt_domain *d, char *err, size_t errlen)
{
	char esc[256], msg[256];

	if (virDomainResume(d->dom) < 0) {
		errmsg__set(err, errlen, "libvirt cannot resume domain %s: %s",
			escape__str(esc, sizeof(esc), d->name),
			escape__str(msg, sizeof(msg), last_error()));
		return -EIO;
	}
	return 0;
}

void libvirt_domain__destroy(struct libvirt_domain *d)
{
	virDomainDestroy(d->dom);
}

static void lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail,
		      void *opaque)
{
	struct libvirt_domain *d = opaque;
	uint64_t one = 1;

	(void)conn;
	(void)dom;
	(void)detail;
	if (event == VIR_DOMAIN_EVENT_CRASHED && write(d->crash_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow from one crash per event; nothing to do */
	}
}

static void *event_thread(void *arg)
{
	struct libvirt_domain *d = arg;

	while (!d->quit)
		if (virEventRunDefaultImpl() < 0)
			break;
	return NULL;
}

static void wake(int timer, void *opaque)
{
	(void)opaque;
	virEventRemoveTimeout(timer);
}

int libvirt_domain__watch_crash(struct libvirt_domain *d, char *err, size_t errlen)
{
	char msg[256];
	int ret;

	d->crash_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->crash_fd < 0)
		return -errno;
	d->cb_id = virConnectDomainEventRegisterAny(d->conn, d->dom,
						    VIR_DOMAIN_EVENT_ID_LIFECYCLE,
						    VIR_DOMAIN_EVENT_CALLBACK(lifecycle), d, NULL);
	if (d->cb_id < 0) {
		errmsg__set(err, errlen, "libvirt: cannot follow the domain's events: %s",
			escape__str(msg, sizeof(msg), last_error()));
		return -EIO;
	}
	ret = pthread_create(&d->thread, NULL, event_thread, d);
	if (ret) {
		errmsg__set(err, errlen, "cannot start libvirt's event thread: %s", strerror(ret));
		return -ret;
	}
	d->running = true;
	return 0;
}

int libvirt_domain__crash_fd(const struct libvirt_domain *d)
{
	return d->crash_fd;
}

bool libvirt_domain__crashed(struct libvirt_domain *d)
{
	uint64_t n = 0;

	return d->crash_fd >= 0 && read(d->crash_fd, &n, sizeof(n)) == sizeof(n) && n;
}

void libvirt_domain__close(struct libvirt_domain *d)
{
	if (!d)
		return;
	if (d->cb_id >= 0)
		virConnectDomainEventDeregisterAny(d->conn, d->cb_id);
	if (d->running) {
		d->quit = 1;
		/* A timer due at once makes the event loop return. */
		virEventAddTimeout(0, wake, NULL, NULL);
		pthread_join(d->thread, NULL);
	}
	if (d->crash_fd >= 0)
		close(d->crash_fd);
	virDomainFree(d->dom);
	virConnectClose(d->conn);
	free(d->name);
	free(d);
}

#else /* !VBTS_HAVE_LIBVIRT */

struct libvirt_domain *libvirt_domain__open(const char *uri, const char *name, char *err,
					    size_t errlen)
{
	(void)uri;
	(void)name;
	errmsg__set(err, errlen, "--domain: this vbts was built without libvirt (libvirt-dev)");
	errno = ENOTSUP;
	return NULL;
}

int libvirt_domain__pid(struct libvirt_domain *d, int *pid, char *err, size_t errlen)
{
	(void)d;
	(void)pid;
	errmsg__set(err, errlen, "--domain: this vbts was built without libvirt (libvirt-dev)");
	return -ENOTSUP;
}

int libvirt_domain__start_paused(struct libvirt_domain *d, char *err, size_t errlen)
{
	(void)d;
	errmsg__set(err, errlen, "--domain: this vbts was built without libvirt (libvirt-dev)");
	return -ENOTSUP;
}

int libvirt_domain__resume(struct libvirt_domain *d, char *err, size_t errlen)
{
	(void)d;
	errmsg__set(err, errlen, "--domain: this vbts was built without libvirt (libvirt-dev)");
	return -ENOTSUP;
}

void libvirt_domain__destroy(struct libvirt_domain *d)
{
	(void)d;
}

int libvirt_domain__watch_crash(struct libvirt_domain *d, char *err, size_t errlen)
{
	(void)d;
	errmsg__set(err, errlen, "--domain: this vbts was built without libvirt (libvirt-dev)");
	return -ENOTSUP;
}

int libvirt_domain__crash_fd(const struct libvirt_domain *d)
{
	(void)d;
	return -1;
}

bool libvirt_domain__crashed(struct libvirt_domain *d)
{
	(void)d;
	return false;
}

void libvirt_domain__close(struct libvirt_domain *d)
{
	(void)d;
}

#endif /* VBTS_HAVE_LIBVIRT */
