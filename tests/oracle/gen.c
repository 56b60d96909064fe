// SPDX-License-Identifier: GPL-2.0
/*
 * gen.c - QEMU run, log parse and the per-image cache of branch lists.
 *
 * Cache files are written under a temporary name and renamed, so concurrent generators of the
 * same image (parallel tests) never see a partial list.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"
#include "qemu-log.h"

struct image_info {
	uint64_t entry;
	uint64_t lo; /* lowest loaded address */
	uint64_t hi; /* first address past the highest loaded byte */
};

int oracle__cache_key(const char *path, char *key, size_t keylen)
{
	uint64_t h = 0xcbf29ce484222325ULL, size = 0;
	unsigned char buf[65536];
	size_t n, i;
	FILE *f;
	int ret = 0;

	f = fopen(path, "rb");
	if (!f)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ULL;
		}
		size += n;
	}
	if (ferror(f))
		ret = -EIO;
	fclose(f);
	if (!ret)
		snprintf(key, keylen, "v%d-%016" PRIx64 "-%" PRIu64, ORACLE_LIST_VERSION, h, size);
	return ret;
}

static int read_image(const char *path, struct image_info *info)
{
	GElf_Ehdr ehdr;
	GElf_Phdr ph;
	size_t i, n;
	int fd, ret = -ENOEXEC;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !gelf_getehdr(elf, &ehdr) || !ehdr.e_entry || elf_getphdrnum(elf, &n))
		goto out;
	info->entry = ehdr.e_entry;
	info->lo = UINT64_MAX;
	info->hi = 0;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_memsz)
			continue;
		if (ph.p_paddr < info->lo)
			info->lo = ph.p_paddr;
		if (ph.p_paddr + ph.p_memsz > info->hi)
			info->hi = ph.p_paddr + ph.p_memsz;
	}
	if (info->hi > info->lo)
		ret = 0;
out:
	elf_end(elf);
	close(fd);
	return ret;
}

static int in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];
	const char *p, *e;

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	for (p = path ? path : "/usr/bin:/bin"; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(e - p), p, prog);
		if (access(buf, X_OK) == 0)
			return 1;
	}
	return 0;
}

/* Runs QEMU; returns its wait status in *status, or -errno / -ETIMEDOUT. */
static int run_qemu(const struct gen_opts *o, const char *image, const struct image_info *info,
		    const char *log, int *status)
{
	char dfilter[64];
	const char *argv[32];
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	unsigned long waited_ms = 0;
	int argc = 0, fd;
	pid_t pid, w;

	argv[argc++] = o->qemu;
	argv[argc++] = "-accel";
	argv[argc++] = "tcg";
	argv[argc++] = "-cpu";
	argv[argc++] = "max";
	argv[argc++] = "-singlestep";
	argv[argc++] = "-d";
	argv[argc++] = "in_asm,exec,nochain";
	if (o->dfilter) {
		snprintf(dfilter, sizeof(dfilter), "0x%" PRIx64 "+0x%" PRIx64, info->lo,
			 info->hi - info->lo);
		argv[argc++] = "-dfilter";
		argv[argc++] = dfilter;
	}
	argv[argc++] = "-D";
	argv[argc++] = log;
	argv[argc++] = "-kernel";
	argv[argc++] = image;
	argv[argc++] = "-display";
	argv[argc++] = "none";
	argv[argc++] = "-serial";
	argv[argc++] = "none";
	argv[argc++] = "-nodefaults";
	argv[argc++] = "-device";
	argv[argc++] = "isa-debug-exit,iobase=0xf4,iosize=4";
	argv[argc++] = "-no-reboot";
	argv[argc] = NULL;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (;;) {
		w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (waited_ms >= o->timeout_s * 1000UL) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return -ETIMEDOUT;
		}
		nanosleep(&ts, NULL);
		waited_ms += 50;
	}
}

static int write_branch(void *ctx, const struct oracle_branch *b)
{
	FILE *out = ctx;

	if (fprintf(out, "{\"from\":\"0x%" PRIx64 "\",\"to\":\"0x%" PRIx64 "\",\"cpl\":%d}\n",
		    b->from, b->to, b->cpl) < 0)
		return -EIO;
	return 0;
}

static int parse_log(const char *log_path, uint64_t entry, const char *out_path, char *err,
		     size_t errlen)
{
	struct qemu_log *log;
	FILE *in, *out;
	int ret;

	in = fopen(log_path, "r");
	if (!in) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", log_path, strerror(errno));
		return ret;
	}
	out = fopen(out_path, "w");
	if (!out) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", out_path, strerror(errno));
		goto out_close_in;
	}
	log = qemu_log__new(entry, write_branch, out);
	if (!log) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out_close_out;
	}
	ret = qemu_log__parse_file(log, in);
	if (ret == -ENOENT || ret == -EPROTO) {
		snprintf(err, errlen, "%s: %s", log_path, ret == -ENOENT ?
			 "the guest never reached its entry point" :
			 "a traced block was never disassembled (log incomplete?)");
		ret = -EPROTO;
	} else if (ret) {
		snprintf(err, errlen, "%s: %s", log_path, strerror(-ret));
	}
	qemu_log__delete(log);
out_close_out:
	if (fclose(out) && !ret) {
		ret = -EIO;
		snprintf(err, errlen, "%s: write error", out_path);
	}
out_close_in:
	fclose(in);
	return ret;
}

int oracle__generate(const char *image, const struct gen_opts *o, char *out, size_t outlen,
		     char *err, size_t errlen)
{
	char key[64], log[4096], tmp[4096];
	struct image_info info = { 0 };
	int ret, status;

	ret = oracle__cache_key(image, key, sizeof(key));
	if (ret) {
		snprintf(err, errlen, "%s: %s", image, strerror(-ret));
		return ret;
	}
	snprintf(out, outlen, "%s/%s.jsonl", o->cache_dir, key);
	if (access(out, R_OK) == 0)
		return 0;

	ret = read_image(image, &info);
	if (ret) {
		snprintf(err, errlen, "%s: %s", image, ret == -ENOEXEC ?
			 "not an ELF image with an entry point and loadable segments" :
			 strerror(-ret));
		return ret;
	}
	if (!in_path(o->qemu)) {
		snprintf(err, errlen, "%s not found", o->qemu);
		return -ENOENT;
	}
	if (mkdir(o->cache_dir, 0755) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", o->cache_dir, strerror(errno));
		return ret;
	}
	snprintf(log, sizeof(log), "%s/%s.log.%d", o->cache_dir, key, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s/%s.jsonl.%d", o->cache_dir, key, (int)getpid());
	ret = run_qemu(o, image, &info, log, &status);
	if (ret) {
		snprintf(err, errlen, "%s: %s", o->qemu, ret == -ETIMEDOUT ?
			 "timed out" : strerror(-ret));
		goto out_unlink;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 127) {
		snprintf(err, errlen, "%s did not run to the guest's exit (wait status 0x%x)",
			 o->qemu, status);
		ret = -EPROTO;
		goto out_unlink;
	}
	ret = parse_log(log, info.entry, tmp, err, errlen);
	if (ret)
		goto out_unlink;
	if (rename(tmp, out)) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", out, strerror(errno));
		goto out_unlink;
	}
	if (o->keep_log) {
		snprintf(tmp, sizeof(tmp), "%s/%s.log", o->cache_dir, key);
		if (!rename(log, tmp))
			return 0;
	}
out_unlink:
	unlink(tmp);
	unlink(log);
	return ret;
}
