/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tty-input.h - console input: a thread (named "console") that reads a terminal and hands the
 * bytes to a receiver, with the terminal in non-canonical mode without echo (the guest echoes)
 * while it runs. Signals (Ctrl-C) stay with the terminal: they stop the VMM as before.
 */
#ifndef VBTS_VMM_DEVICES_TTY_INPUT_H
#define VBTS_VMM_DEVICES_TTY_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct tty_input;

/*
 * Receives bytes in the console thread; returns how many it took (0 when its buffer is
 * full: the rest is offered again a little later).
 */
typedef size_t (*tty_input_fn)(void *opaque, const uint8_t *buf, size_t n);

/**
 * tty_input__start() - start reading @fd if it is a terminal.
 * @fd:     the terminal (standard input)
 * @fn:     receiver
 * @opaque: its first argument
 *
 * Return: the reader, or NULL with errno ENOTTY when @fd is not a terminal, or another errno.
 */
struct tty_input *tty_input__start(int fd, tty_input_fn fn, void *opaque);

/**
 * tty_input__stop() - end the thread and restore the terminal's mode.
 * @t: may be NULL
 */
void tty_input__stop(struct tty_input *t);

#endif /* VBTS_VMM_DEVICES_TTY_INPUT_H */
