// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz-seal.c - libFuzzer target: the parsers of sealed traces (format/seal-verify.c). The
 * first input byte chooses: even, the rest is a trace directory's seal.log, verified with the
 * key it names over a directory of fixed files (FUZZ_SEAL_FILES, as make-corpus seals them);
 * odd, the rest is an inclusion proof, checked against the fixed file vm.json.
 *
 * Beyond the sanitizers it checks what seal-verify.h promises: a directory is always reported
 * (never bad input), with a known verdict, as many failures as it says, each naming a file;
 * a proof is proved, not proved or bad input, with a reason unless proved.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <vbts/seal-format.h>

#include "fuzz-seal.h"
#include "fuzz.h"
#include "seal-verify.h"

static char dir[PATH_MAX];

static void put_path(const char *path, const void *data, size_t len)
{
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(fuzz_write_all(fd, data, len) == 0);
	close(fd);
}

static void put(const char *name, const void *data, size_t len)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	put_path(path, data, len);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/vbts-fuzz-seal-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	put("vm.json", FUZZ_SEAL_VM_JSON, strlen(FUZZ_SEAL_VM_JSON));
	put("events.jsonl", FUZZ_SEAL_EVENTS, strlen(FUZZ_SEAL_EVENTS));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], path[PATH_MAX + 32];

	if (!size)
		return 0;
	if (!(data[0] & 1)) {
		struct seal_report *r = NULL;
		uint64_t tampered = 0;

		put(VBTS_SEAL_LOG_NAME, data + 1, size - 1);
		FUZZ_ASSERT(seal_verify__dir(dir, NULL, &r, err, sizeof(err)) == 0);
		FUZZ_ASSERT(r->verdict >= SEAL_VERIFIED && r->verdict <= SEAL_UNSEALED);
		FUZZ_ASSERT(r->verdict != SEAL_UNSEALED);
		for (uint64_t i = 0; i < r->nr_problems && i < SEAL_VERIFY_MAX_PROBLEMS; i++) {
			FUZZ_ASSERT(r->problems[i].file[0]);
			FUZZ_ASSERT(r->problems[i].message[0]);
			tampered += r->problems[i].kind == SEAL_P_TAMPERED;
		}
		if (r->nr_problems <= SEAL_VERIFY_MAX_PROBLEMS)
			FUZZ_ASSERT(tampered == r->nr_tampered);
		FUZZ_ASSERT((r->verdict == SEAL_FAILED) == (r->nr_tampered > 0));
		FUZZ_ASSERT(r->verdict != SEAL_VERIFIED || (r->ended && !r->nr_problems));
		seal_report__free(r);
	} else {
		struct seal_proof_info info;
		int ret;

		/* Beside the directory, not in it: the next seal.log finds it as it was. */
		snprintf(path, sizeof(path), "%s.proof", dir);
		put_path(path, data + 1, size - 1);
		err[0] = 0;
		{
			char file[PATH_MAX + 32];

			snprintf(file, sizeof(file), "%s/vm.json", dir);
			ret = seal_verify__proof(path, NULL, file, &info, err, sizeof(err));
		}
		FUZZ_ASSERT(ret <= 1);
		FUZZ_ASSERT(ret == 0 || err[0]);
		FUZZ_ASSERT(ret != 0 || info.size == strlen(FUZZ_SEAL_VM_JSON));
	}
	return 0;
}
