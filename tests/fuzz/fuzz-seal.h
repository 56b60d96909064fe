/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz-seal.h - the fixed files of fuzz-seal's trace directory, which make-corpus seals for
 * its seeds: a seed's leaves then match them, and the fuzzer starts from a trace that verifies.
 */
#ifndef VBTS_TESTS_FUZZ_SEAL_H
#define VBTS_TESTS_FUZZ_SEAL_H

#define FUZZ_SEAL_VM_JSON "{\"mode\":\"stream\"}\n"
#define FUZZ_SEAL_EVENTS "{\"event\":\"task\",\"pid\":1}\n"

#endif /* VBTS_TESTS_FUZZ_SEAL_H */
