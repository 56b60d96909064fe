// SPDX-License-Identifier: GPL-2.0
/*
 * test-seal.c - sealed traces: the sealer (vmm/record/sealer.c) and its key
 * (vmm/record/seal-key.c) write, the verifier (format/seal-verify.c) names each change.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include <vbts/ring-format.h>
#include <vbts/seal-format.h>
#include <vbts/segment-format.h>

#include "check-main.h"
#include "ring-writer.h"
#include "seg-writer.h"
#include "seal-hash.h"
#include "seal-key.h"
#include "seal-verify.h"
#include "sealer.h"
#include "test-files.h"

/* A sealed trace made by the tests: DIR/keys/{seal,verify}.key and DIR/t. */
struct fixture {
	char root[512];
	char keys[600];
	char key[700];
	char trace[600];
	struct vbts_seal_vk vk;
};

static void key_new(struct fixture *f, uint32_t epoch_s, unsigned int log2, uint64_t back_s)
{
	char err[512];
	int ret;

	snprintf(f->keys, sizeof(f->keys), "%s/keys", f->root);
	snprintf(f->key, sizeof(f->key), "%s/seal.key", f->keys);
	ret = seal_key__generate(f->keys, epoch_s, log2, time(NULL) - back_s, &f->vk, err,
				 sizeof(err));
	ck_assert_msg(ret == 0, "keygen: %s", err);
}

/* A closed segment in its final form (zstd): a header and a payload unique to @salt. */
static void write_segment(const char *dir, unsigned int vcpu, uint64_t index, uint64_t first_seq,
			  uint64_t committed, uint64_t salt, bool final)
{
	uint8_t buf[VBTS_SEG_HEADER_SIZE + 64];
	struct vbts_seg_header *h = (void *)buf;
	char name[64];

	memset(buf, 0, sizeof(buf));
	h->magic = VBTS_SEG_MAGIC;
	h->version = VBTS_SEG_VERSION;
	h->header_size = VBTS_SEG_HEADER_SIZE;
	h->record_size = 24;
	h->encoding = final ? VBTS_SEG_ENC_ZSTD_DV1 : VBTS_SEG_ENC_RAW;
	h->vcpu_id = vcpu;
	h->flags = VBTS_SEG_F_CLOSED;
	h->index = index;
	h->vm_id = salt;
	h->committed = committed;
	h->first_seq = first_seq;
	h->capacity = final ? committed : committed + 1;
	h->payload_size = 64;
	for (int i = 0; i < 64; i++)
		buf[VBTS_SEG_HEADER_SIZE + i] = (uint8_t)(salt >> (i % 8)) ^ i;
	snprintf(name, sizeof(name), "vcpu%u.%08llu.vseg", vcpu, (unsigned long long)index);
	test__write_file(dir, name, buf, sizeof(buf));
}

static void append_text(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "a");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

static void move(const char *dir, const char *from, const char *to)
{
	char a[1024], b[1024];

	snprintf(a, sizeof(a), "%s/%s", dir, from);
	snprintf(b, sizeof(b), "%s/%s", dir, to);
	ck_assert_int_eq(rename(a, b), 0);
}

/* The trace as a run leaves it: sealed at the start, segments, a crash report, the end. */
static struct sealer *trace_start(struct fixture *f)
{
	uint64_t salt;
	char err[512], ring[4096];
	struct sealer *s;

	randombytes_buf(&salt, sizeof(salt));
	snprintf(f->trace, sizeof(f->trace), "%s/t", f->root);
	test__make_dir(f->root, "t");
	test__write_text(f->trace, "vm.json", "{\"mode\":\"stream\",\"vcpus\":2}\n");
	test__write_text(f->trace, "events.jsonl", "{\"event\":\"task\",\"pid\":1}\n");
	memset(ring, 0x5a, sizeof(ring));
	memcpy(ring, &salt, sizeof(salt));
	test__write_file(f->trace, "vcpu0.ring", ring, sizeof(ring));
	s = sealer__start(f->trace, f->key, 3600, err, sizeof(err));
	ck_assert_msg(s != NULL, "sealer__start: %s", err);
	for (unsigned int i = 0; i < 3; i++)
		write_segment(f->trace, 0, i, 10 * i, 10, salt + i, true);
	write_segment(f->trace, 1, 0, 0, 7, salt + 100, true);
	append_text(f->trace, "events.jsonl", "{\"event\":\"task\",\"pid\":2}\n");
	ck_assert_int_eq(sealer__checkpoint(s, VBTS_SEAL_REASON_SEGMENT), 0);
	test__write_text(f->trace, "crash.json", "{\"reason\":\"panic\",\"vcpu\":0}\n");
	ck_assert_int_eq(sealer__checkpoint(s, VBTS_SEAL_REASON_CRASH), 0);
	/* Files the run writes under a temporary name and renames or removes: not sealed. */
	test__write_text(f->trace, "crash.json.tmp.sym", "{\"reason\":\"panic\"}\n");
	test__write_text(f->trace, "vcpu0.ring.resize", "ring");
	test__make_dir(f->trace, "debuginfod");
	test__write_text(f->trace, "debuginfod/.executable.tmp", "ELF");
	ck_assert_int_eq(sealer__checkpoint(s, VBTS_SEAL_REASON_INTERVAL), 0);
	move(f->trace, "crash.json.tmp.sym", "crash.json");
	move(f->trace, "debuginfod/.executable.tmp", "debuginfod/executable");
	unlink(strcat(strcpy((char[1024]){ 0 }, f->trace), "/vcpu0.ring.resize"));
	write_segment(f->trace, 0, 3, 30, 10, salt + 3, true);
	append_text(f->trace, "events.jsonl", "{\"event\":\"exit\",\"pid\":2,\"code\":0}\n");
	return s;
}

static void fixture_new(struct fixture *f, const char *name)
{
	test__make_temp_dir(f->root, sizeof(f->root), name);
	key_new(f, 600, 4, 0);
	ck_assert_int_eq(sealer__finish(trace_start(f)), 0);
}

static struct seal_report *verify(const struct fixture *f, const struct vbts_seal_vk *vk)
{
	struct seal_report *r;
	char err[512];

	ck_assert_msg(seal_verify__dir(f->trace, vk, &r, err, sizeof(err)) == 0, "%s", err);
	return r;
}

static const struct seal_problem *find(const struct seal_report *r, const char *file, int kind)
{
	for (uint64_t i = 0; i < r->nr_problems && i < SEAL_VERIFY_MAX_PROBLEMS; i++)
		if (!strcmp(r->problems[i].file, file) && r->problems[i].kind == kind)
			return &r->problems[i];
	return NULL;
}

static void dump(const struct seal_report *r)
{
	for (uint64_t i = 0; i < r->nr_problems && i < SEAL_VERIFY_MAX_PROBLEMS; i++)
		fprintf(stderr, "  %s: %s: %s\n",
			r->problems[i].kind == SEAL_P_TAMPERED ? "tampered" : "unsealed",
			r->problems[i].file, r->problems[i].message);
}

/* Exactly one failure, on @file, naming a checkpoint when @cp. */
static void expect_tampered(const struct fixture *f, const char *file, const char *says)
{
	struct seal_report *r = verify(f, &f->vk);
	const struct seal_problem *p = find(r, file, SEAL_P_TAMPERED);

	if (!p || r->verdict != SEAL_FAILED || (says && !strstr(p->message, says)))
		dump(r);
	ck_assert_int_eq(r->verdict, SEAL_FAILED);
	ck_assert_ptr_nonnull(p);
	if (says)
		ck_assert_msg(strstr(p->message, says), "'%s' does not say '%s'", p->message, says);
	ck_assert_uint_eq(r->nr_tampered, 1);
	seal_report__free(r);
}

static void flip(const char *dir, const char *name, off_t off)
{
	char path[1024];
	uint8_t b;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, off), 1);
	b ^= 0x20;
	ck_assert_int_eq(pwrite(fd, &b, 1, off), 1);
	close(fd);
}


START_TEST(test_merkle)
{
	uint8_t leaves[40][VBTS_SEAL_HASH_SIZE], root[VBTS_SEAL_HASH_SIZE];
	uint8_t path[SEAL_MAX_PATH][VBTS_SEAL_HASH_SIZE];
	struct seal_range range = { 0 };

	ck_assert_int_eq(seal_hash__init(), 0);
	for (unsigned int n = 1; n <= 40; n++) {
		uint8_t d = n;

		seal_hash__two(leaves[n - 1], 9, &d, 1, NULL, 0);
		seal_range__append(&range, leaves[n - 1]);
		seal_range__root(&range, root);
		for (unsigned int m = 0; m < n; m++) {
			int len = seal_merkle__path((const void *)leaves, n, m, path);

			ck_assert_int_ge(len, 0);
			ck_assert_msg(
				seal_merkle__verify(leaves[m], m, n, (const void *)path, len, root),
				"leaf %u of %u", m, n);
			if (n > 1)
				ck_assert(!seal_merkle__verify(leaves[m],
							       (m ^ 1) < n ? m ^ 1 : m - 1, n,
							       (const void *)path, len, root));
			ck_assert(!seal_merkle__verify(leaves[(m + 1) % n], m, n,
						       (const void *)path, len, root) ||
				  n == 1);
		}
	}
}
END_TEST

START_TEST(test_vk_text)
{
	struct vbts_seal_vk vk = { .start_s = 1796000000, .epoch_s = 900, .log2_epochs = 16 }, back;
	char text[SEAL_VK_TEXT_SIZE];
	size_t n;

	memset(vk.root, 0xab, sizeof(vk.root));
	seal_vk__seal(&vk);
	seal_vk__format(&vk, text, sizeof(text));
	ck_assert_int_eq(seal_vk__parse(text, &back), 0);
	ck_assert(seal_vk__equal(&vk, &back));
	n = strlen(text);
	text[n - 20] = text[n - 20] == '0' ? '1' : '0'; /* a typo in the root */
	ck_assert_int_eq(seal_vk__parse(text, &back), -EBADMSG);
	ck_assert_int_eq(seal_vk__parse("vbts-vk1-xyz", &back), -EINVAL);
	ck_assert_int_eq(seal_vk__parse("", &back), -EINVAL);
}
END_TEST

START_TEST(test_intact)
{
	struct fixture f;
	struct seal_report *r;

	fixture_new(&f, "seal-intact");
	r = verify(&f, &f.vk);
	if (r->nr_problems)
		dump(r);
	ck_assert_int_eq(r->verdict, SEAL_VERIFIED);
	ck_assert_uint_eq(r->nr_problems, 0);
	ck_assert(r->ended && r->key_given);
	ck_assert_uint_ge(r->good, 4);
	ck_assert_uint_eq(r->good, r->checkpoints);
	/* vm.json events.jsonl vcpu0.ring crash.json debuginfod/executable, 5 segments */
	ck_assert_uint_eq(r->files, 10);
	ck_assert_uint_eq(r->head.reason, VBTS_SEAL_REASON_END);
	seal_report__free(r);
	/* Without a key: the same, against the key the trace names. */
	r = verify(&f, NULL);
	ck_assert_int_eq(r->verdict, SEAL_VERIFIED);
	ck_assert(!r->key_given);
	seal_report__free(r);
	/* An unsealed trace says so. */
	test__make_dir(f.root, "plain");
	snprintf(f.trace, sizeof(f.trace), "%s/plain", f.root);
	r = verify(&f, &f.vk);
	ck_assert_int_eq(r->verdict, SEAL_UNSEALED);
	seal_report__free(r);
	test__remove_tree(f.root);
}
END_TEST

/*
 * A collector's segments, told to the sealer as each is closed (as `vbts run` wires them)
 * while the run's checkpoints scan the same directory: each segment is sealed once, by one
 * leaf, and the trace verifies; names the sealer must not take are ignored.
 */
START_TEST(test_told_segments)
{
	struct seg_budget budget = { .limit = 1ULL << 30 };
	struct vbts_record recs[256];
	struct seg_writer_config sc = {
		.segment_records = 256,
		.budget = &budget,
		.on_full = SEG_ON_FULL_DROP,
		.start_time_ns = 1,
	};
	char err[512], longname[200];
	struct seal_report *r;
	struct ring_writer *w;
	struct fixture f;
	struct sealer *s;

	test__make_temp_dir(f.root, sizeof(f.root), "seal-told");
	key_new(&f, 600, 4, 0);
	snprintf(f.trace, sizeof(f.trace), "%s/t", f.root);
	test__make_dir(f.root, "t");
	sc.dir = f.trace;
	s = sealer__start(f.trace, f.key, 3600, err, sizeof(err));
	ck_assert_msg(s != NULL, "sealer__start: %s", err);
	w = ring_writer__create_stream(&sc);
	ck_assert_ptr_nonnull(w);
	seg_writer__set_on_closed(ring_writer__stream(w), sealer__segment_closed, s);
	memset(longname, 'v', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	sealer__segment_closed(s, longname);
	sealer__segment_closed(s, "vm.json");
	sealer__segment_closed(s, "vcpu0.99999999.vseg");
	for (unsigned int seg = 0; seg < 40; seg++) {
		for (unsigned int i = 0; i < 256; i++) {
			recs[i].from = 0x400000 + seg * 4096 + i;
			recs[i].to = 0x500000 + (seg ^ i) * 16;
			recs[i].flags = 0;
		}
		ring_writer__append_n(w, recs, 256);
		if (seg % 8 == 7) /* a checkpoint's scan amid the collector's work */
			ck_assert_int_eq(sealer__checkpoint(s, VBTS_SEAL_REASON_INTERVAL), 0);
	}
	ring_writer__close(w);
	ck_assert_int_eq(sealer__finish(s), 0);
	r = verify(&f, &f.vk);
	if (r->nr_problems)
		dump(r);
	ck_assert_int_eq(r->verdict, SEAL_VERIFIED);
	ck_assert_uint_ge(r->files, 40);
	ck_assert_uint_eq(r->leaves, r->files);
	seal_report__free(r);
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_flipped_segment)
{
	struct fixture f;

	fixture_new(&f, "seal-flip");
	flip(f.trace, "vcpu0.00000001.vseg", VBTS_SEG_HEADER_SIZE + 17);
	expect_tampered(&f, "vcpu0.00000001.vseg",
			"segment 1 of vCPU 0: differs from what "
			"checkpoint 1 sealed");
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_flipped_header_byte)
{
	struct fixture f;

	fixture_new(&f, "seal-flip-header");
	flip(f.trace, "vcpu1.00000000.vseg", 0x30); /* first_seq */
	expect_tampered(&f, "vcpu1.00000000.vseg", "differs");
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_dropped_segment)
{
	struct fixture f;

	fixture_new(&f, "seal-drop");
	move(f.trace, "vcpu0.00000002.vseg", "../dropped");
	expect_tampered(&f, "vcpu0.00000002.vseg", "missing (sealed by checkpoint 1)");
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_swapped_segments)
{
	struct fixture f;
	struct seal_report *r;

	fixture_new(&f, "seal-swap");
	move(f.trace, "vcpu0.00000000.vseg", "x");
	move(f.trace, "vcpu0.00000001.vseg", "vcpu0.00000000.vseg");
	move(f.trace, "x", "vcpu0.00000001.vseg");
	r = verify(&f, &f.vk);
	ck_assert_int_eq(r->verdict, SEAL_FAILED);
	ck_assert_ptr_nonnull(find(r, "vcpu0.00000000.vseg", SEAL_P_TAMPERED));
	ck_assert_ptr_nonnull(find(r, "vcpu0.00000001.vseg", SEAL_P_TAMPERED));
	ck_assert_uint_eq(r->nr_tampered, 2);
	seal_report__free(r);
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_replayed_segment)
{
	struct fixture f, other;
	char from[1024];

	fixture_new(&f, "seal-replay");
	/* Another run sealed with the same key: its segment 2 in this trace's place. */
	test__make_temp_dir(other.root, sizeof(other.root), "seal-replay-other");
	memcpy(other.keys, f.keys, sizeof(other.keys));
	memcpy(other.key, f.key, sizeof(other.key));
	other.vk = f.vk;
	ck_assert_int_eq(sealer__finish(trace_start(&other)), 0);
	snprintf(from, sizeof(from), "%s/vcpu0.00000002.vseg", other.trace);
	unlink(strcat(strcpy((char[1024]){ 0 }, f.trace), "/vcpu0.00000002.vseg"));
	test__copy_file(from, f.trace, "vcpu0.00000002.vseg");
	expect_tampered(&f, "vcpu0.00000002.vseg", "differs");
	/* And the other trace's seal.log over this one's: its leaves are another trace's. */
	snprintf(from, sizeof(from), "%s/seal.log", other.trace);
	unlink(strcat(strcpy((char[1024]){ 0 }, f.trace), "/seal.log"));
	test__copy_file(from, f.trace, "seal.log");
	{
		struct seal_report *r = verify(&f, &f.vk);

		ck_assert_int_eq(r->verdict, SEAL_FAILED);
		ck_assert_uint_ge(r->nr_tampered, 5);
		seal_report__free(r);
	}
	test__remove_tree(other.root);
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_edited_files)
{
	static const char *const names[] = { "events.jsonl", "vm.json", "crash.json" };

	for (unsigned int i = 0; i < 3; i++) {
		struct fixture f;

		fixture_new(&f, "seal-edit");
		flip(f.trace, names[i], 3);
		expect_tampered(&f, names[i],
				i ? "differs from what checkpoint" :
				    "bytes 0-25 differ from what checkpoint 0 sealed");
		test__remove_tree(f.root);
	}
}
END_TEST

START_TEST(test_added_and_appended)
{
	struct fixture f;

	fixture_new(&f, "seal-added");
	test__write_text(f.trace, "extra.json", "{}\n");
	expect_tampered(&f, "extra.json", "not sealed: added after the end of the run");
	unlink(strcat(strcpy((char[1024]){ 0 }, f.trace), "/extra.json"));
	append_text(f.trace, "events.jsonl", "{\"event\":\"forged\"}\n");
	expect_tampered(&f, "events.jsonl", "added after the end of the run");
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_wrong_key)
{
	struct fixture f, other;

	fixture_new(&f, "seal-wrong-key");
	test__make_temp_dir(other.root, sizeof(other.root), "seal-other-key");
	key_new(&other, 600, 4, 0);
	f.vk = other.vk;
	expect_tampered(&f, VBTS_SEAL_LOG_NAME, "another verification key");
	test__remove_tree(other.root);
	test__remove_tree(f.root);
}
END_TEST

/* The offsets of seal.log's checkpoints. */
static size_t checkpoints(const uint8_t *log, size_t len, size_t *off, size_t max)
{
	size_t n = 0;

	for (size_t o = sizeof(struct vbts_seal_log_header); o < len && n < max;) {
		const struct vbts_seal_rec *rec = (const void *)(log + o);

		if (rec->type == VBTS_SEAL_REC_CHECKPOINT)
			off[n++] = o;
		o += rec->size;
	}
	return n;
}

/*
 * Forward security: an intruder takes the sealing key as it is now (a later epoch than the
 * trace's first checkpoint) and re-signs that checkpoint. Whatever epoch it claims, verify
 * names it.
 */
START_TEST(test_stolen_later_key)
{
	uint8_t seed0[VBTS_SEAL_SEED_SIZE], sseed[crypto_sign_SEEDBYTES];
	uint8_t sk[crypto_sign_SECRETKEYBYTES], pk[VBTS_SEAL_PK_SIZE];
	uint8_t msg[sizeof(VBTS_SEAL_SIGN_DOMAIN) + VBTS_SEAL_SIGNED_SIZE];
	struct vbts_seal_key_header *h;
	struct vbts_seal_checkpoint *cp, orig;
	uint8_t(*pks)[VBTS_SEAL_PK_SIZE];
	uint8_t(*path)[VBTS_SEAL_HASH_SIZE];
	uint8_t *key, *log, *orig_log;
	size_t klen, llen, off[16];
	char logpath[1024], err[512];
	struct seal_report *r;
	struct fixture f;
	struct sealer *s;

	test__make_temp_dir(f.root, sizeof(f.root), "seal-stolen");
	/* 1-second epochs: the trace is sealed in an epoch, the key stolen two epochs later. */
	key_new(&f, 1, 6, 3);
	key = test__slurp(f.key, &klen);
	h = (void *)key;
	memcpy(seed0, h->seed, sizeof(seed0));
	free(key);
	s = trace_start(&f);
	ck_assert_int_eq(sealer__finish(s), 0);
	sleep(2);
	/* The key file as the intruder finds it: moved on to the epoch of now by a later run. */
	s = sealer__start(f.root, f.key, 3600, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	sealer__abort(s);
	key = test__slurp(f.key, &klen);
	h = (void *)key;
	pks = (void *)(key + sizeof(*h));
	/* The seed of epoch 0 is gone from the file. */
	ck_assert(!memmem(key, klen, seed0, sizeof(seed0)));

	snprintf(logpath, sizeof(logpath), "%s/seal.log", f.trace);
	log = test__slurp(logpath, &llen);
	ck_assert_uint_ge(checkpoints(log, llen, off, 16), 3);
	orig_log = malloc(llen);
	ck_assert_ptr_nonnull(orig_log);
	memcpy(orig_log, log, llen);
	cp = (void *)(log + off[0] + sizeof(struct vbts_seal_rec));
	path = (void *)(cp + 1);
	orig = *cp;
	ck_assert_uint_gt(h->epoch, orig.epoch);

	/* The thief's signing key: the current epoch's, from the stolen seed. */
	seal_hash__two(sseed, SEAL_D_SIGN_SEED, h->seed, VBTS_SEAL_SEED_SIZE, NULL, 0);
	crypto_sign_seed_keypair(pk, sk, sseed);
	ck_assert(!memcmp(pk, pks[h->epoch], sizeof(pk)));

	/* 1: claims the old epoch, carries the current key and its path. */
	memcpy(cp->pubkey, pk, sizeof(pk));
	ck_assert_int_eq(seal_keytree__path((const void *)pks, h->log2_epochs, h->epoch, path), 0);
	crypto_sign_detached(cp->sig, NULL, msg, seal_hash__sign_message(cp, msg), sk);
	test__write_file(f.trace, "seal.log", log, llen);
	r = verify(&f, &f.vk);
	ck_assert_int_eq(r->verdict, SEAL_FAILED);
	ck_assert_str_eq(r->problems[0].file, VBTS_SEAL_LOG_NAME);
	ck_assert_int_eq(r->problems[0].checkpoint, 0);
	ck_assert_msg(strstr(r->problems[0].message, "its public key is not its epoch's key"), "%s",
		      r->problems[0].message);
	seal_report__free(r);

	/* 2: claims the old epoch with the old epoch's public key (public): the signature. */
	memcpy(cp->pubkey, pks[orig.epoch], sizeof(pk));
	ck_assert_int_eq(seal_keytree__path((const void *)pks, h->log2_epochs, orig.epoch, path),
			 0);
	crypto_sign_detached(cp->sig, NULL, msg, seal_hash__sign_message(cp, msg), sk);
	test__write_file(f.trace, "seal.log", log, llen);
	r = verify(&f, &f.vk);
	ck_assert_int_eq(r->verdict, SEAL_FAILED);
	ck_assert_int_eq(r->problems[0].checkpoint, 0);
	ck_assert(strstr(r->problems[0].message, "its signature does not verify"));
	seal_report__free(r);

	/* 3: says what it is, the current epoch, at the old time. */
	cp->epoch = h->epoch;
	memcpy(cp->pubkey, pk, sizeof(pk));
	ck_assert_int_eq(seal_keytree__path((const void *)pks, h->log2_epochs, h->epoch, path), 0);
	crypto_sign_detached(cp->sig, NULL, msg, seal_hash__sign_message(cp, msg), sk);
	test__write_file(f.trace, "seal.log", log, llen);
	r = verify(&f, &f.vk);
	ck_assert_int_eq(r->verdict, SEAL_FAILED);
	ck_assert_int_eq(r->problems[0].checkpoint, 0);
	ck_assert_msg(strstr(r->problems[0].message, "its epoch is not the epoch of its time"),
		      "%s", r->problems[0].message);
	seal_report__free(r);

	/* 4: and at the current time: the checkpoints after it are older, and do not follow it. */
	cp->time_ns = (uint64_t)time(NULL) * 1000000000ULL;
	if (seal_vk__epoch_of(&f.vk, cp->time_ns) != cp->epoch)
		cp->time_ns = (f.vk.start_s + (uint64_t)cp->epoch * f.vk.epoch_s) * 1000000000ULL;
	crypto_sign_detached(cp->sig, NULL, msg, seal_hash__sign_message(cp, msg), sk);
	test__write_file(f.trace, "seal.log", log, llen);
	r = verify(&f, &f.vk);
	ck_assert_int_eq(r->verdict, SEAL_FAILED);
	ck_assert_int_eq(r->problems[0].checkpoint, 1);
	ck_assert_msg(strstr(r->problems[0].message, "does not follow"), "%s",
		      r->problems[0].message);
	seal_report__free(r);

	/*
	 * 5, 6: an earlier epoch's key (the seed of epoch 0, as a copy of the key file made then
	 * would hold, stepped to the epoch before the last checkpoint's) signs the last
	 * checkpoint, which claims its own later epoch: with that epoch's public key, or with its
	 * own key and path.
	 */
	memcpy(log, orig_log, llen);
	{
		size_t n = checkpoints(log, llen, off, 16);
		uint8_t seed[VBTS_SEAL_SEED_SIZE];

		cp = (void *)(log + off[n - 1] + sizeof(struct vbts_seal_rec));
		path = (void *)(cp + 1);
		ck_assert_uint_gt(cp->epoch, 0);
		memcpy(seed, seed0, sizeof(seed));
		for (uint32_t e = 0; e + 1 < cp->epoch; e++)
			seal_hash__two(seed, SEAL_D_SEED_STEP, seed, sizeof(seed), NULL, 0);
		seal_hash__two(sseed, SEAL_D_SIGN_SEED, seed, sizeof(seed), NULL, 0);
		crypto_sign_seed_keypair(pk, sk, sseed);
		ck_assert(!memcmp(pk, pks[cp->epoch - 1], sizeof(pk)));
		crypto_sign_detached(cp->sig, NULL, msg, seal_hash__sign_message(cp, msg), sk);
		test__write_file(f.trace, "seal.log", log, llen);
		r = verify(&f, &f.vk);
		ck_assert_int_eq(r->verdict, SEAL_FAILED);
		ck_assert_int_eq(r->problems[0].checkpoint, n - 1);
		ck_assert(strstr(r->problems[0].message, "its signature does not verify"));
		seal_report__free(r);
		memcpy(cp->pubkey, pk, sizeof(pk));
		ck_assert_int_eq(seal_keytree__path((const void *)pks, h->log2_epochs,
						    cp->epoch - 1, path), 0);
		crypto_sign_detached(cp->sig, NULL, msg, seal_hash__sign_message(cp, msg), sk);
		test__write_file(f.trace, "seal.log", log, llen);
		r = verify(&f, &f.vk);
		ck_assert_int_eq(r->verdict, SEAL_FAILED);
		ck_assert_int_eq(r->problems[0].checkpoint, n - 1);
		ck_assert(strstr(r->problems[0].message, "its public key is not its epoch's key"));
		seal_report__free(r);
	}

	sodium_memzero(sk, sizeof(sk));
	free(orig_log);
	free(log);
	free(key);
	test__remove_tree(f.root);
}
END_TEST

/* Every sealed file: its first, middle and last byte flipped, and cut by one byte. */
START_TEST(test_every_file)
{
	struct fixture f;
	struct dirent *de;
	unsigned int files = 0;
	DIR *d;

	fixture_new(&f, "seal-every-file");
	d = opendir(f.trace);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		char path[1024];
		size_t len;
		uint8_t *data;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, VBTS_SEAL_LOG_NAME) ||
		    de->d_type == DT_DIR)
			continue;
		snprintf(path, sizeof(path), "%s/%s", f.trace, de->d_name);
		data = test__slurp(path, &len);
		ck_assert_uint_gt(len, 1);
		for (size_t o = 0; o < 3; o++) {
			flip(f.trace, de->d_name, o * (len - 1) / 2);
			expect_tampered(&f, de->d_name, NULL);
			test__write_file(f.trace, de->d_name, data, len);
		}
		test__write_file(f.trace, de->d_name, data, len - 1);
		expect_tampered(&f, de->d_name, NULL);
		test__write_file(f.trace, de->d_name, data, len);
		free(data);
		files++;
	}
	closedir(d);
	ck_assert_uint_eq(files, 9);
	{
		struct seal_report *r = verify(&f, &f.vk);

		ck_assert_int_eq(r->verdict, SEAL_VERIFIED);
		seal_report__free(r);
	}
	test__remove_tree(f.root);
}
END_TEST

/* A checkpoint taken out of the middle of seal.log: the next one is named. */
START_TEST(test_dropped_checkpoint)
{
	char logpath[1024];
	struct seal_report *r;
	struct fixture f;
	size_t len, off[16], n, size;
	uint8_t *log;

	fixture_new(&f, "seal-drop-checkpoint");
	snprintf(logpath, sizeof(logpath), "%s/seal.log", f.trace);
	log = test__slurp(logpath, &len);
	n = checkpoints(log, len, off, 16);
	ck_assert_uint_ge(n, 3);
	size = ((struct vbts_seal_rec *)(log + off[1]))->size;
	memmove(log + off[1], log + off[1] + size, len - off[1] - size);
	test__write_file(f.trace, "seal.log", log, len - size);
	r = verify(&f, &f.vk);
	ck_assert_int_eq(r->verdict, SEAL_FAILED);
	ck_assert_str_eq(r->problems[0].file, VBTS_SEAL_LOG_NAME);
	ck_assert_int_eq(r->problems[0].checkpoint, 1);
	ck_assert_msg(strstr(r->problems[0].message, "checkpoint 1 (epoch"), "%s",
		      r->problems[0].message);
	seal_report__free(r);
	free(log);
	test__remove_tree(f.root);
}
END_TEST

/* A run killed with SIGKILL after a checkpoint: what it wrote afterwards is unsealed. */
/* The reasons of seal.log's checkpoints, in order; returns how many. */
static size_t checkpoint_reasons(const char *trace, uint32_t *reasons, size_t max)
{
	size_t len, off[64], n;
	char path[1024];
	uint8_t *log;

	snprintf(path, sizeof(path), "%s/%s", trace, VBTS_SEAL_LOG_NAME);
	log = test__slurp(path, &len);
	n = checkpoints(log, len, off, max < 64 ? max : 64);
	for (size_t i = 0; i < n; i++)
		reasons[i] = ((const struct vbts_seal_checkpoint *)(log + off[i] +
								    sizeof(struct vbts_seal_rec)))
				     ->reason;
	free(log);
	return n;
}

/*
 * Wrap mode: a ring frozen while the run goes on (an operator's freeze, a crash without a
 * report yet) is sealed by a checkpoint of its own, as final: a killed run's ring that differs
 * from it afterwards is tampered, not unsealed.
 */
START_TEST(test_frozen_ring)
{
	struct vbts_ring_header h;
	uint8_t ring[VBTS_RING_HEADER_SIZE + 4096];
	uint32_t reasons[64], flags = VBTS_RING_F_FROZEN;
	struct seal_report *r;
	struct fixture f;
	struct sealer *s;
	char err[512], path[1024];
	size_t n = 0;
	int fd;

	test__make_temp_dir(f.root, sizeof(f.root), "seal-frozen");
	key_new(&f, 600, 4, 0);
	snprintf(f.trace, sizeof(f.trace), "%s/t", f.root);
	test__make_dir(f.root, "t");
	test__write_text(f.trace, "vm.json", "{\"mode\":\"wrap\",\"vcpus\":1}\n");
	memset(&h, 0, sizeof(h));
	h.magic = VBTS_RING_MAGIC;
	h.version = VBTS_RING_VERSION;
	h.header_size = VBTS_RING_HEADER_SIZE;
	h.record_size = 24;
	h.capacity = 170;
	memset(ring, 0x3c, sizeof(ring));
	memcpy(ring, &h, sizeof(h));
	test__write_file(f.trace, "vcpu0.ring", ring, sizeof(ring));
	s = sealer__start(f.trace, f.key, 3600, err, sizeof(err));
	ck_assert_msg(s != NULL, "sealer__start: %s", err);
	/* The writer freezes the ring: the sealer's poll (every 200 ms) seals it. */
	snprintf(path, sizeof(path), "%s/vcpu0.ring", f.trace);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &flags, sizeof(flags),
				offsetof(struct vbts_ring_header, flags)),
			 sizeof(flags));
	close(fd);
	for (int i = 0; i < 50 && n < 2; i++) {
		usleep(100000);
		n = checkpoint_reasons(f.trace, reasons, 64);
	}
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(reasons[0], VBTS_SEAL_REASON_START);
	ck_assert_uint_eq(reasons[1], VBTS_SEAL_REASON_CRASH);
	/* The run goes on (no end checkpoint): the frozen ring verifies as sealed. */
	r = verify(&f, &f.vk);
	if (r->verdict != SEAL_VERIFIED && r->verdict != SEAL_PARTIAL)
		dump(r);
	ck_assert(r->verdict == SEAL_VERIFIED || r->verdict == SEAL_PARTIAL);
	ck_assert_uint_eq(r->nr_tampered, 0);
	ck_assert_ptr_null(find(r, "vcpu0.ring", SEAL_P_UNSEALED));
	seal_report__free(r);
	/* No second checkpoint for the same frozen ring. */
	usleep(500000);
	ck_assert_uint_eq(checkpoint_reasons(f.trace, reasons, 64), 2);
	/* A byte of it changed after the freeze is tampering even though the run did not end. */
	flip(f.trace, "vcpu0.ring", VBTS_RING_HEADER_SIZE + 100);
	expect_tampered(&f, "vcpu0.ring", NULL);
	sealer__abort(s);
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_killed_run)
{
	struct seal_report *r;
	struct fixture f;
	pid_t pid;
	int status;

	test__make_temp_dir(f.root, sizeof(f.root), "seal-killed");
	key_new(&f, 600, 4, 0);
	snprintf(f.trace, sizeof(f.trace), "%s/t", f.root);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		trace_start(&f);
		/* After the last checkpoint: an open segment not in its final form, events. */
		write_segment(f.trace, 0, 4, 40, 3, 77, false);
		append_text(f.trace, "events.jsonl", "{\"event\":\"late\"}\n");
		kill(getpid(), SIGKILL); /* no last checkpoint */
		_exit(1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	r = verify(&f, &f.vk);
	if (r->verdict != SEAL_PARTIAL)
		dump(r);
	ck_assert_int_eq(r->verdict, SEAL_PARTIAL);
	ck_assert_uint_eq(r->nr_tampered, 0);
	ck_assert(!r->ended);
	ck_assert_uint_eq(r->head.reason, VBTS_SEAL_REASON_INTERVAL);
	ck_assert_ptr_nonnull(find(r, "vcpu0.00000003.vseg", SEAL_P_UNSEALED));
	ck_assert_ptr_nonnull(find(r, "vcpu0.00000004.vseg", SEAL_P_UNSEALED));
	ck_assert_ptr_nonnull(find(r, "events.jsonl", SEAL_P_UNSEALED));
	seal_report__free(r);
	/* What the checkpoints sealed still fails when changed. */
	flip(f.trace, "vcpu0.00000000.vseg", VBTS_SEG_HEADER_SIZE + 1);
	r = verify(&f, &f.vk);
	ck_assert_int_eq(r->verdict, SEAL_FAILED);
	ck_assert_ptr_nonnull(find(r, "vcpu0.00000000.vseg", SEAL_P_TAMPERED));
	seal_report__free(r);
	test__remove_tree(f.root);
}
END_TEST

/* A seal.log cut after a checkpoint (in the middle of the next record): an unsealed tail. */
START_TEST(test_truncated_log)
{
	char logpath[1024];
	struct seal_report *r;
	struct fixture f;
	size_t len, off[16], n;
	uint8_t *log;

	fixture_new(&f, "seal-truncated");
	snprintf(logpath, sizeof(logpath), "%s/seal.log", f.trace);
	log = test__slurp(logpath, &len);
	n = checkpoints(log, len, off, 16);
	ck_assert_uint_ge(n, 3);
	/* Just after checkpoint 1, and 20 bytes of the record after it. */
	off[1] += ((struct vbts_seal_rec *)(log + off[1]))->size;
	test__write_file(f.trace, "seal.log", log, off[1] + 20);
	r = verify(&f, &f.vk);
	if (r->verdict != SEAL_PARTIAL)
		dump(r);
	ck_assert_int_eq(r->verdict, SEAL_PARTIAL);
	ck_assert_uint_eq(r->nr_tampered, 0);
	ck_assert_uint_eq(r->head.seq, 1);
	ck_assert_ptr_nonnull(find(r, VBTS_SEAL_LOG_NAME, SEAL_P_UNSEALED));
	ck_assert_ptr_nonnull(find(r, "crash.json", SEAL_P_UNSEALED));
	ck_assert_ptr_nonnull(find(r, "vcpu0.00000003.vseg", SEAL_P_UNSEALED));
	seal_report__free(r);
	free(log);
	test__remove_tree(f.root);
}
END_TEST

/* Every flipped byte of seal.log fails; every cut is unsealed or fails; none verifies. */
START_TEST(test_damaged_log)
{
	char logpath[1024];
	struct fixture f;
	size_t len;
	uint8_t *log;

	fixture_new(&f, "seal-damaged");
	snprintf(logpath, sizeof(logpath), "%s/seal.log", f.trace);
	log = test__slurp(logpath, &len);
	for (size_t o = 0; o < len; o += 1 + o % 5) {
		struct seal_report *r;

		log[o] ^= 0x01;
		test__write_file(f.trace, "seal.log", log, len);
		log[o] ^= 0x01;
		r = verify(&f, &f.vk);
		ck_assert_msg(r->verdict == SEAL_FAILED, "a flip at seal.log offset %zu: %d", o,
			      r->verdict);
		seal_report__free(r);
	}
	for (size_t cut = 0; cut < len; cut += 13) {
		struct seal_report *r;

		test__write_file(f.trace, "seal.log", log, cut);
		r = verify(&f, &f.vk);
		ck_assert_msg(r->verdict != SEAL_VERIFIED, "cut at %zu verifies", cut);
		seal_report__free(r);
	}
	free(log);
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_proof)
{
	char proof[1024], file[1024], other[1024], err[512];
	struct seal_proof_info info;
	struct fixture f, k2;

	fixture_new(&f, "seal-proof");
	snprintf(proof, sizeof(proof), "%s/crash.proof", f.root);
	snprintf(file, sizeof(file), "%s/crash.json", f.trace);
	snprintf(other, sizeof(other), "%s/vm.json", f.trace);
	ck_assert_msg(seal_verify__prove(f.trace, "crash.json", &f.vk, proof, err, sizeof(err)) ==
			      0,
		      "%s", err);
	/* Alone: the file moved out of its trace, the trace gone. */
	test__copy_file(file, f.root, "handed-over.json");
	snprintf(file, sizeof(file), "%s/handed-over.json", f.root);
	test__copy_file(other, f.root, "other.json");
	snprintf(other, sizeof(other), "%s/other.json", f.root);
	test__remove_tree(f.trace);
	ck_assert_msg(seal_verify__proof(proof, &f.vk, file, &info, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_str_eq(info.name, "crash.json");
	ck_assert(info.key_given);
	ck_assert_uint_eq(info.checkpoint.reason, VBTS_SEAL_REASON_END);
	/* Another file, a changed file, another key. */
	ck_assert_int_eq(seal_verify__proof(proof, &f.vk, other, &info, err, sizeof(err)), 1);
	flip(f.root, "handed-over.json", 2);
	ck_assert_int_eq(seal_verify__proof(proof, &f.vk, file, &info, err, sizeof(err)), 1);
	flip(f.root, "handed-over.json", 2);
	test__make_temp_dir(k2.root, sizeof(k2.root), "seal-proof-key");
	key_new(&k2, 600, 4, 0);
	ck_assert_int_eq(seal_verify__proof(proof, &k2.vk, file, &info, err, sizeof(err)), 1);
	ck_assert_int_eq(seal_verify__proof(proof, &f.vk, file, &info, err, sizeof(err)), 0);
	/* A damaged proof is bad input or not a proof, never a proof. */
	{
		size_t len;
		uint8_t *p = test__slurp(proof, &len);

		for (size_t o = 0; o < len; o += 3) {
			p[o] ^= 0x40;
			test__write_file(f.root, "damaged.proof", p, len);
			p[o] ^= 0x40;
			snprintf(other, sizeof(other), "%s/damaged.proof", f.root);
			ck_assert_msg(seal_verify__proof(other, &f.vk, file, &info, err,
							 sizeof(err)) != 0,
				      "flip at %zu", o);
		}
		free(p);
	}
	test__remove_tree(k2.root);
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_prove_refuses)
{
	char proof[1024], err[512];
	struct fixture f;

	fixture_new(&f, "seal-prove-refuses");
	snprintf(proof, sizeof(proof), "%s/p", f.root);
	flip(f.trace, "crash.json", 1);
	ck_assert_int_eq(seal_verify__prove(f.trace, "crash.json", &f.vk, proof, err, sizeof(err)),
			 -EBADMSG);
	ck_assert_int_eq(
		seal_verify__prove(f.trace, "nothing.json", &f.vk, proof, err, sizeof(err)),
		-ENOENT);
	ck_assert_int_eq(access(proof, F_OK), -1);
	test__remove_tree(f.root);
}
END_TEST

START_TEST(test_key_files)
{
	struct vbts_seal_vk vk;
	char path[1024], err[512];
	struct fixture f;
	struct stat st;

	test__make_temp_dir(f.root, sizeof(f.root), "seal-keys");
	key_new(&f, 600, 3, 0);
	ck_assert_int_eq(stat(f.key, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	/* Never overwritten. */
	ck_assert_int_eq(seal_key__generate(f.keys, 600, 3, time(NULL), &vk, err, sizeof(err)),
			 -EEXIST);
	/* The verification key file holds the key's line. */
	snprintf(path, sizeof(path), "%s/verify.key", f.keys);
	{
		char *text = test__slurp(path, NULL);

		ck_assert_int_eq(seal_vk__parse(text, &vk), 0);
		ck_assert(seal_vk__equal(&vk, &f.vk));
		free(text);
	}
	/* A key others can read is refused; an expired one too. */
	chmod(f.key, 0644);
	ck_assert_int_eq(sealer__check_key(f.key, err, sizeof(err)), -EACCES);
	chmod(f.key, 0600);
	ck_assert_int_eq(sealer__check_key(f.key, err, sizeof(err)), 0);
	test__remove_tree(f.root);
	test__make_temp_dir(f.root, sizeof(f.root), "seal-keys-expired");
	key_new(&f, 1, 1, 10);
	ck_assert_int_eq(sealer__check_key(f.key, err, sizeof(err)), -ERANGE);
	test__remove_tree(f.root);
}
END_TEST

/*
 * FIFOs where a hostile user can put them: a segment name, seal.log, a proof. Each is named as
 * what it is; none is waited on (alarm: an open(2) that blocks fails the test).
 */
START_TEST(test_fifos)
{
	char path[1024], proof[1024], err[512];
	struct seal_proof_info info;
	struct seal_report *r;
	struct fixture f;
	int ret;

	fixture_new(&f, "seal-fifos");
	alarm(20);
	snprintf(path, sizeof(path), "%s/vcpu0.00000009.vseg", f.trace);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	r = verify(&f, &f.vk);
	ck_assert_int_eq(r->verdict, SEAL_FAILED);
	ck_assert_ptr_nonnull(find(r, "vcpu0.00000009.vseg", SEAL_P_TAMPERED));
	seal_report__free(r);
	ck_assert_int_eq(unlink(path), 0);
	snprintf(proof, sizeof(proof), "%s/proof", f.root);
	ck_assert_int_eq(mkfifo(proof, 0600), 0);
	snprintf(path, sizeof(path), "%s/crash.json", f.trace);
	ret = seal_verify__proof(proof, &f.vk, path, &info, err, sizeof(err));
	ck_assert_int_lt(ret, 0);
	ck_assert_msg(strstr(err, "not a regular file"), "%s", err);
	snprintf(path, sizeof(path), "%s/seal.log", f.trace);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ret = seal_verify__dir(f.trace, &f.vk, &r, err, sizeof(err));
	if (!ret) {
		ck_assert_int_eq(r->verdict, SEAL_FAILED);
		seal_report__free(r);
	}
	alarm(0);
	test__remove_tree(f.root);
}
END_TEST

static Suite *seal_suite(void)
{
	Suite *s = suite_create("seal");
	TCase *tc = tcase_create("seal");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_merkle);
	tcase_add_test(tc, test_vk_text);
	tcase_add_test(tc, test_key_files);
	tcase_add_test(tc, test_intact);
	tcase_add_test(tc, test_flipped_segment);
	tcase_add_test(tc, test_flipped_header_byte);
	tcase_add_test(tc, test_dropped_segment);
	tcase_add_test(tc, test_swapped_segments);
	tcase_add_test(tc, test_replayed_segment);
	tcase_add_test(tc, test_edited_files);
	tcase_add_test(tc, test_added_and_appended);
	tcase_add_test(tc, test_wrong_key);
	tcase_add_test(tc, test_stolen_later_key);
	tcase_add_test(tc, test_every_file);
	tcase_add_test(tc, test_dropped_checkpoint);
	tcase_add_test(tc, test_killed_run);
	tcase_add_test(tc, test_frozen_ring);
	tcase_add_test(tc, test_told_segments);
	tcase_add_test(tc, test_truncated_log);
	tcase_add_test(tc, test_damaged_log);
	tcase_add_test(tc, test_proof);
	tcase_add_test(tc, test_prove_refuses);
	tcase_add_test(tc, test_fifos);
	suite_add_tcase(s, tc);
	return s;
}

VBTS_CHECK_MAIN(seal_suite)
