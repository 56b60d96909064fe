/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libvirt-domain.h - a libvirt domain's QEMU process, found through libvirt's own API, and
 * libvirt's report that the domain crashed (VIR_DOMAIN_EVENT_CRASHED: pvpanic in QEMU).
 *
 * Locking: the domain's functions belong to the main thread; a thread of this module runs
 * libvirt's event loop and only writes the eventfd of libvirt_domain__crash_fd().
 */
#ifndef VBTS_ATTACH_LIBVIRT_DOMAIN_H
#define VBTS_ATTACH_LIBVIRT_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>

struct libvirt_domain;

/**
 * libvirt_domain__open() - connect to libvirt and look the domain up by name.
 * @uri:    libvirt's URI, NULL for its default
 * @name:   the domain's name
 * @err:    receives one line on failure (names escaped)
 * @errlen: its size
 *
 * Return: the domain, or NULL with errno set: ENOTSUP when vbts was built without libvirt,
 * ECONNREFUSED when libvirt cannot be reached, ENOENT for no such domain.
 */
struct libvirt_domain *libvirt_domain__open(const char *uri, const char *name, char *err,
					    size_t errlen);

/**
 * libvirt_domain__pid() - the pid of the domain's QEMU: the thread group of its vCPU threads
 * (QMP query-cpus-fast through virDomainQemuMonitorCommand()), else libvirt's pid file
 * (/run/libvirt/qemu/NAME.pid).
 * @d:      domain
 * @pid:    receives the pid
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0, -ESRCH when the domain does not run, -EPROTO for answers that are not a pid.
 */
int libvirt_domain__pid(struct libvirt_domain *d, int *pid, char *err, size_t errlen);

/**
 * libvirt_domain__start_paused() - start a defined, inactive domain with its vCPUs stopped
 * (virDomainCreateWithFlags(VIR_DOMAIN_START_PAUSED)): nothing of the guest has run yet.
 * @d:      domain
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0, -EBUSY when the domain already runs, -EIO when libvirt cannot start it.
 */
int libvirt_domain__start_paused(struct libvirt_domain *d, char *err, size_t errlen);

/**
 * libvirt_domain__resume() - let a paused domain's vCPUs run (virDomainResume()).
 * @d:      domain
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0 or -EIO.
 */
int libvirt_domain__resume(struct libvirt_domain *d, char *err, size_t errlen);

/**
 * libvirt_domain__destroy() - stop the domain at once (virDomainDestroy()); errors ignored.
 * @d: domain
 */
void libvirt_domain__destroy(struct libvirt_domain *d);

/**
 * libvirt_domain__watch_crash() - follow the domain's lifecycle events in a thread of ours.
 * @d:      domain
 * @err:    receives one line on failure
 * @errlen: its size
 *
 * Return: 0 or -errno.
 */
int libvirt_domain__watch_crash(struct libvirt_domain *d, char *err, size_t errlen);

/**
 * libvirt_domain__crash_fd() - readable once libvirt reported the domain crashed.
 * @d: domain
 *
 * Return: the fd, -1 when not watching.
 */
int libvirt_domain__crash_fd(const struct libvirt_domain *d);

/**
 * libvirt_domain__crashed() - consume the crash notification.
 * @d: domain
 *
 * Return: true when libvirt reported a crash since the last call.
 */
bool libvirt_domain__crashed(struct libvirt_domain *d);

/**
 * libvirt_domain__parse_cpus_tid() - the first vCPU thread id in a query-cpus-fast reply.
 * @reply: the reply's JSON text, from libvirt (untrusted)
 * @tid:   receives the thread id
 *
 * Return: 0, -EPROTO when the reply has no "return" array whose first element has a positive
 * integer "thread-id".
 */
int libvirt_domain__parse_cpus_tid(const char *reply, int *tid);

/**
 * libvirt_domain__parse_pid_file() - a pid file's content: a decimal pid, optionally ended
 * by a newline.
 * @buf: the bytes read
 * @len: how many
 * @pid: receives the pid
 *
 * Return: 0 or -EPROTO.
 */
int libvirt_domain__parse_pid_file(const char *buf, size_t len, int *pid);

/**
 * libvirt_domain__close() - stop watching, disconnect; frees @d.
 * @d: may be NULL
 */
void libvirt_domain__close(struct libvirt_domain *d);

#endif /* VBTS_ATTACH_LIBVIRT_DOMAIN_H */
