// SPDX-License-Identifier: GPL-2.0
/*
 * test-vmm-fds.c - the VM and vCPU fds of a VMM from /proc/PID/fd links: the link names KVM
 * gives, and hostile or malformed trees (a fake proc root of symbolic links, whose text can be
 * anything), and a real process that is no VMM.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-files.h"
#include "tests.h"
#include "vmm-fds.h"

static const struct {
	const char *link;
	enum vmm_fd_kind kind;
	unsigned int vcpu;
} classify_cases[] = {
	{ "anon_inode:kvm-vm", VMM_FD_VM, 0 },
	{ "anon_inode:kvm-vcpu:0", VMM_FD_VCPU, 0 },
	{ "anon_inode:kvm-vcpu:7", VMM_FD_VCPU, 7 },
	{ "anon_inode:kvm-vcpu:16383", VMM_FD_VCPU, 16383 },
	{ "anon_inode:kvm-vcpu:16384", VMM_FD_BAD, 0 },
	{ "anon_inode:kvm-vcpu:99999999999999999999", VMM_FD_BAD, 0 },
	{ "anon_inode:kvm-vcpu:-1", VMM_FD_BAD, 0 },
	{ "anon_inode:kvm-vcpu:+1", VMM_FD_BAD, 0 },
	{ "anon_inode:kvm-vcpu:01", VMM_FD_BAD, 0 },
	{ "anon_inode:kvm-vcpu:1 ", VMM_FD_BAD, 0 },
	{ "anon_inode:kvm-vcpu:", VMM_FD_BAD, 0 },
	{ "anon_inode:kvm-vcpu:0x1", VMM_FD_BAD, 0 },
	{ "anon_inode:kvm-vm-stats", VMM_FD_OTHER, 0 },
	{ "anon_inode:kvm-vcpu-stats", VMM_FD_OTHER, 0 },
	{ "anon_inode:kvm-vm ", VMM_FD_OTHER, 0 },
	{ "anon_inode:kvm-v", VMM_FD_OTHER, 0 },
	{ "/dev/kvm", VMM_FD_OTHER, 0 },
	{ "socket:[1234]", VMM_FD_OTHER, 0 },
	{ "", VMM_FD_OTHER, 0 },
};

START_TEST(test_classify)
{
	unsigned int vcpu = 12345;
	const char *l = classify_cases[_i].link;

	ck_assert_msg(vmm_fds__classify(l, strlen(l), &vcpu) == classify_cases[_i].kind,
		      "%s", l);
	if (classify_cases[_i].kind == VMM_FD_VCPU)
		ck_assert_uint_eq(vcpu, classify_cases[_i].vcpu);
}
END_TEST

/* A NUL inside the text (readlink returns bytes, not a string) is not KVM's name. */
START_TEST(test_classify_nul)
{
	static const char l[] = "anon_inode:kvm-vcpu:1\0";
	unsigned int vcpu;

	ck_assert_int_eq(vmm_fds__classify(l, sizeof(l) - 1, &vcpu), VMM_FD_BAD);
}
END_TEST

/* A fake proc root: ROOT/PID/fd/N -> text. */
struct fake {
	char root[64];
	char fd[128];
};

static void fake_init(struct fake *f, int pid)
{
	strcpy(f->root, "/tmp/check-attach-proc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->root));
	snprintf(f->fd, sizeof(f->fd), "%s/%d", f->root, pid);
	ck_assert_int_eq(mkdir(f->fd, 0700), 0);
	strcat(f->fd, "/fd");
	ck_assert_int_eq(mkdir(f->fd, 0700), 0);
}

static void fake_link(struct fake *f, const char *name, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", f->fd, name);
	ck_assert_int_eq(symlink(text, path), 0);
}

static void fake_fini(struct fake *f)
{
	ck_assert_int_eq(test__remove_tree(f->root), 0);
}

START_TEST(test_scan_qemu_like)
{
	struct vmm_fds *v = malloc(sizeof(*v));
	struct fake f;
	char err[256] = "";

	fake_init(&f, 42);
	fake_link(&f, "0", "/dev/null");
	fake_link(&f, "3", "/dev/kvm");
	fake_link(&f, "9", "anon_inode:kvm-vm");
	fake_link(&f, "10", "anon_inode:kvm-vm-stats");
	fake_link(&f, "14", "anon_inode:kvm-vcpu:2");
	fake_link(&f, "12", "anon_inode:kvm-vcpu:0");
	fake_link(&f, "13", "anon_inode:kvm-vcpu:1");
	fake_link(&f, "15", "anon_inode:kvm-vcpu-stats");
	fake_link(&f, "not-an-fd", "anon_inode:kvm-vm");
	ck_assert_int_eq(vmm_fds__scan(f.root, 42, v, err, sizeof(err)), 0);
	ck_assert_int_eq(v->pid, 42);
	ck_assert_int_eq(v->vm_fd, 9);
	ck_assert_uint_eq(v->nr_vcpus, 3);
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_uint_eq(v->vcpu_id[i], i);
		ck_assert_int_eq(v->vcpu_fd[i], 12 + (int)i);
	}
	fake_fini(&f);
	free(v);
}
END_TEST

/* The trees that are refused, and the words of their one error line. */
static const struct {
	const char *links[6][2];
	int ret;
	const char *words;
} bad_trees[] = {
	{ { { "0", "/dev/null" }, { "1", "socket:[7]" } }, -ENOENT, "no KVM VM" },
	{ { { "3", "anon_inode:kvm-vm" }, { "4", "anon_inode:kvm-vm" }, { "5", "anon_inode:kvm-vcpu:0" } },
	  -ENOTUNIQ, "more than one KVM VM" },
	{ { { "3", "anon_inode:kvm-vm" } }, -EPROTO, "no vCPU" },
	{ { { "3", "anon_inode:kvm-vm" }, { "4", "anon_inode:kvm-vcpu:0" }, { "5", "anon_inode:kvm-vcpu:0" } },
	  -EPROTO, "vCPU 0 twice" },
	{ { { "3", "anon_inode:kvm-vm" }, { "4", "anon_inode:kvm-vcpu:1x" } }, -EPROTO, "malformed" },
	{ { { "3", "anon_inode:kvm-vm" }, { "4", "anon_inode:kvm-vcpu:\033[2J" } }, -EPROTO,
	  "malformed" },
};

START_TEST(test_scan_bad)
{
	struct vmm_fds *v = malloc(sizeof(*v));
	struct fake f;
	char err[256] = "";

	fake_init(&f, 7);
	for (unsigned int i = 0; i < 6 && bad_trees[_i].links[i][0]; i++)
		fake_link(&f, bad_trees[_i].links[i][0], bad_trees[_i].links[i][1]);
	ck_assert_int_eq(vmm_fds__scan(f.root, 7, v, err, sizeof(err)), bad_trees[_i].ret);
	ck_assert_msg(strstr(err, bad_trees[_i].words), "%s", err);
	ck_assert_ptr_null(strchr(err, '\033'));
	ck_assert_ptr_null(strchr(err, '\n'));
	fake_fini(&f);
	free(v);
}
END_TEST

/* The vCPU ids are kept sorted and duplicates found wherever they come in the directory. */
START_TEST(test_scan_many_vcpus)
{
	struct vmm_fds *v = malloc(sizeof(*v));
	char name[16], text[64], err[256] = "";
	struct fake f;

	fake_init(&f, 5);
	fake_link(&f, "3", "anon_inode:kvm-vm");
	for (unsigned int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "%u", 100 + i);
		snprintf(text, sizeof(text), "anon_inode:kvm-vcpu:%u", (i * 37) % 100);
		fake_link(&f, name, text);
	}
	ck_assert_int_eq(vmm_fds__scan(f.root, 5, v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v->nr_vcpus, 100);
	for (unsigned int i = 0; i < 100; i++)
		ck_assert_uint_eq(v->vcpu_id[i], i);
	fake_link(&f, "999", "anon_inode:kvm-vcpu:63");
	ck_assert_int_eq(vmm_fds__scan(f.root, 5, v, err, sizeof(err)), -EPROTO);
	ck_assert_msg(strstr(err, "vCPU 63 twice"), "%s", err);
	fake_fini(&f);
	free(v);
}
END_TEST

START_TEST(test_scan_no_process)
{
	struct vmm_fds *v = malloc(sizeof(*v));
	char err[256] = "";
	struct fake f;

	fake_init(&f, 5);
	ck_assert_int_eq(vmm_fds__scan(f.root, 6, v, err, sizeof(err)), -ESRCH);
	ck_assert_msg(strstr(err, "no process 6"), "%s", err);
	ck_assert_int_eq(vmm_fds__scan(f.root, 0, v, err, sizeof(err)), -ESRCH);
	ck_assert_int_eq(vmm_fds__scan(f.root, -3, v, err, sizeof(err)), -ESRCH);
	fake_fini(&f);
	free(v);
}
END_TEST

/* This very test process, in the real /proc: a process, but no KVM VMM. */
START_TEST(test_scan_real_not_vmm)
{
	struct vmm_fds *v = malloc(sizeof(*v));
	char err[256] = "";

	ck_assert_int_eq(vmm_fds__scan("/proc", getpid(), v, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "not a KVM VMM"), "%s", err);
	free(v);
}
END_TEST

Suite *vmm_fds_suite(void)
{
	Suite *s = suite_create("vmm-fds");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_classify, 0,
			    sizeof(classify_cases) / sizeof(classify_cases[0]));
	tcase_add_test(tc, test_classify_nul);
	tcase_add_test(tc, test_scan_qemu_like);
	tcase_add_loop_test(tc, test_scan_bad, 0, sizeof(bad_trees) / sizeof(bad_trees[0]));
	tcase_add_test(tc, test_scan_many_vcpus);
	tcase_add_test(tc, test_scan_no_process);
	tcase_add_test(tc, test_scan_real_not_vmm);
	suite_add_tcase(s, tc);
	return s;
}
