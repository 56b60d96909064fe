// SPDX-License-Identifier: GPL-2.0
/*
 * plt-prog.c - a program whose calls into the C library go through its PLT: linked by the
 * test build as a PIE with lazy and immediate binding, with and without IBT's .plt.sec, and
 * as a shared object (-DPLT_LIB), for the PLT names of the symbol tables (test-plt.c). Never
 * run; __cxa_finalize of the C runtime has a .plt.got entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PLT_LIB
int plt_lib_entry(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
	printf("%d\n", argc);
	puts(argv[0]);
	return (int)strlen(argv[0]) + abs(argc);
}
