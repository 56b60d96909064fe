/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hello.S - the smallest multiboot v1 guest: checks the boot protocol, prints "hello" on the
 * 8250 (polling LSR.THRE), sends agent lines (one good, one over-long, one hostile), touches an
 * unclaimed port, and exits through the debug-exit port with 0x21 (status 67).
 * Exits with 0x7 (status 15) when EAX or the multiboot information is not as expected.
 */
#define UART 0x3f8
#define AGENT 0x700
#define DEBUG_EXIT 0xf4
#define MB_FLAGS (1 << 1) /* memory information wanted */

	.section .multiboot, "a"
	.balign	4
	.long	0x1badb002
	.long	MB_FLAGS
	.long	-(0x1badb002 + MB_FLAGS)

	.text
	.code32
	.global	_start
_start:
	cmpl	$0x2badb002, %eax
	jne	bad
	testl	$1, (%ebx)		/* mem_lower/mem_upper valid */
	jz	bad
	testl	$(1 << 6), (%ebx)	/* memory map valid */
	jz	bad
	movl	$0x80000, %esp

	movl	$msg, %esi
	call	puts_uart

	movl	$agent_good, %esi
	call	puts_agent
	movl	$600, %ecx		/* an over-long line: dropped and counted */
1:	movb	$'x', %al
	movw	$AGENT, %dx
	outb	%al, %dx
	decl	%ecx
	jnz	1b
	movb	$'\n', %al
	outb	%al, %dx
	movl	$agent_bad, %esi
	call	puts_agent

	movb	$1, %al
	outb	%al, $0x80		/* nobody claims it: counted */

	movb	$0x21, %al
	outb	%al, $DEBUG_EXIT
	hlt

bad:
	movb	$0x7, %al
	outb	%al, $DEBUG_EXIT
	hlt

puts_uart:
	movb	(%esi), %al
	testb	%al, %al
	jz	3f
	movw	$UART + 5, %dx
2:	inb	%dx, %al
	testb	$0x20, %al
	jz	2b
	movb	(%esi), %al
	movw	$UART, %dx
	outb	%al, %dx
	incl	%esi
	jmp	puts_uart
3:	ret

puts_agent:
	movw	$AGENT, %dx
4:	movb	(%esi), %al
	testb	%al, %al
	jz	5f
	outb	%al, %dx
	incl	%esi
	jmp	4b
5:	ret

	.section .rodata
msg:	.asciz	"hello\n"
agent_good:
	.asciz	"{\"event\":\"task\",\"pid\":1,\"name\":\"hello\",\"cr3\":\"0x0\",\"evil\":[1,2]}\n"
agent_bad:
	.asciz	"{\"event\":42,\"time\":0}\n"
