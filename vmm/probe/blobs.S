/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blobs.S - the probe guests' flat binaries, embedded (assembled with the build directory
 * holding the .bin files on the assembler's include path).
 */
	.section .rodata
	.irp	name, ring0, user, msr
	.balign	16
	.global	probe_blob_\name
probe_blob_\name:
	.incbin	"\name\().bin"
	.global	probe_blob_\name\()_end
probe_blob_\name\()_end:
	.endr

	.section .note.GNU-stack, "", @progbits
