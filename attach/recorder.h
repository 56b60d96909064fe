/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recorder.h - the per-domain flight recorder's glue with libvirt and systemd: which libvirt
 * hook calls start `vbts-attach@DOMAIN.service`, the unit's instance name for a domain
 * (systemd's escaping, as `systemd-escape` does it), and whether a domain is configured
 * (/etc/vbts/attach.d/DOMAIN.conf). Used by the hook, /usr/libexec/vbts/libvirt-hook.
 */
#ifndef VBTS_ATTACH_RECORDER_H
#define VBTS_ATTACH_RECORDER_H

#include <stdbool.h>
#include <stddef.h>

/* Where the recorder's settings are. */
#define RECORDER_CONF_DIR "/etc/vbts/attach.d"
/* A unit name's most bytes (systemd's UNIT_NAME_MAX). */
#define RECORDER_UNIT_MAX 256

/* enum recorder_action: what a libvirt hook call asks of the recorder. */
enum recorder_action {
	RECORDER_NONE = 0,    /* nothing */
	RECORDER_RESTART = 1, /* a new QEMU runs the domain: a new recorder */
	RECORDER_START = 2,   /* libvirtd found the domain running: a recorder, if none */
};

/**
 * recorder__action() - what libvirt's qemu hook call (`DOMAIN OPERATION SUBOPERATION`) asks.
 * @operation: its second argument ("started", "reconnect", "stopped", ...)
 *
 * Return: RECORDER_RESTART for "started" (the domain's QEMU was just started, also after a
 * restore or an incoming migration), RECORDER_START for "reconnect" (libvirtd restarted and
 * found it running), RECORDER_NONE otherwise (the recorder ends by itself with its QEMU).
 */
enum recorder_action recorder__action(const char *operation);

/**
 * recorder__valid_domain() - whether @name is a libvirt domain name the recorder takes:
 * 1 to 200 bytes, no '/', no control character, not "." or "..", not starting with '.'.
 * @name: the name
 *
 * Return: true when valid.
 */
bool recorder__valid_domain(const char *name);

/**
 * recorder__unit_name() - the unit `vbts-attach@INSTANCE.service` of domain @name, its
 * instance escaped as `systemd-escape` does (the unit reads the name back with %I).
 * @name: a valid domain name
 * @buf:  receives the unit name
 * @len:  its size
 *
 * Return: 0, or -EINVAL (an invalid name), -ENAMETOOLONG (beyond RECORDER_UNIT_MAX or @len).
 */
int recorder__unit_name(const char *name, char *buf, size_t len);

/**
 * recorder__configured() - whether domain @name has a recorder: @dir/@name.conf is a regular
 * file.
 * @dir:  the settings directory (RECORDER_CONF_DIR)
 * @name: a valid domain name
 *
 * Return: true when it has.
 */
bool recorder__configured(const char *dir, const char *name);

#endif /* VBTS_ATTACH_RECORDER_H */
