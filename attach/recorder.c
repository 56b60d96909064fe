// SPDX-License-Identifier: GPL-2.0
/*
 * recorder.c - the per-domain recorder's libvirt hook decisions and systemd unit names
 * (recorder.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "recorder.h"

enum recorder_action recorder__action(const char *operation)
{
	if (!strcmp(operation, "started"))
		return RECORDER_RESTART;
	if (!strcmp(operation, "reconnect"))
		return RECORDER_START;
	return RECORDER_NONE;
}

bool recorder__valid_domain(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > 200 || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)name[i];

		if (ch == '/' || ch < 0x20 || ch == 0x7f)
			return false;
	}
	return true;
}

/* systemd's unit_name_escape(): [A-Za-z0-9:_.] stay, '/' is '-', the rest \xNN. */
int recorder__unit_name(const char *name, char *buf, size_t len)
{
	static const char prefix[] = "vbts-attach@", suffix[] = ".service";
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!recorder__valid_domain(name))
		return -EINVAL;
	if (len > RECORDER_UNIT_MAX)
		len = RECORDER_UNIT_MAX;
	if (len < sizeof(prefix))
		return -ENAMETOOLONG;
	memcpy(buf, prefix, sizeof(prefix) - 1);
	o = sizeof(prefix) - 1;
	for (size_t i = 0; name[i]; i++) {
		unsigned char ch = (unsigned char)name[i];
		bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9') || ch == ':' || ch == '_' ||
			     (ch == '.' && i > 0);

		if (o + 4 + sizeof(suffix) > len)
			return -ENAMETOOLONG;
		if (plain) {
			buf[o++] = (char)ch;
		} else {
			buf[o++] = '\\';
			buf[o++] = 'x';
			buf[o++] = hex[ch >> 4];
			buf[o++] = hex[ch & 15];
		}
	}
	memcpy(buf + o, suffix, sizeof(suffix));
	return 0;
}

bool recorder__configured(const char *dir, const char *name)
{
	char path[512];
	struct stat st;
	int n;

	if (!recorder__valid_domain(name))
		return false;
	n = snprintf(path, sizeof(path), "%s/%s.conf", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
