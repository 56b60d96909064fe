/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace-keys.h - the names of a trace directory's JSON files and of their members: vm.json
 * (written by vmm/record/trace.c, read by decoder/trace-dir.c), events.jsonl (written by
 * vmm/record/guest-tasks.c and vmm/record/agent.c, read by format/events.c and its users) and
 * the crash reports (written by vmm/record/crash-report.c, read by format/crash-file.c).
 * The writers and the readers spell every key through these names, so the two sides cannot
 * drift; doc/formats.md says what each member holds.
 */
#ifndef VBTS_FORMAT_TRACE_KEYS_H
#define VBTS_FORMAT_TRACE_KEYS_H

/* ---- vm.json: the run, replaced whole when a member is added ---- */
#define VM_JSON_FILE            "vm.json"
#define VM_KEY_VERSION          "version"         /* 1 */
#define VM_KEY_VM_ID            "vm_id"           /* the run's id, hex, as in every ring */
#define VM_KEY_KERNEL           "kernel"          /* a Linux kernel's image path */
#define VM_KEY_IMAGE            "image"           /* any other guest image's path */
#define VM_KEY_BUILD_ID         "build_id"        /* the image's GNU build ID, or null */
#define VM_KEY_VCPUS            "vcpus"
#define VM_KEY_MEMORY_MIB       "memory_mib"
#define VM_KEY_BACKEND          "backend"         /* "step", "kvm" */
#define VM_KEY_CPL              "cpl"             /* "all", "user", "kernel" */
#define VM_KEY_RING_RECORDS     "ring_records"
#define VM_KEY_START_TIME_NS    "start_time_ns"
#define VM_KEY_MODE             "mode"            /* VM_MODE_STREAM, absent for wrap */
#define VM_MODE_STREAM          "stream"
#define VM_KEY_SEGMENT_RECORDS  "segment_records"
#define VM_KEY_SYSTEM_MAP       "system_map"
#define VM_KEY_VMLINUX          "vmlinux"
#define VM_KEY_KASLR_SLIDE      "kaslr_slide"
#define VM_KEY_ATTACHED         "attached"        /* vbts attach: an object of these: */
#define VM_KEY_ATTACHED_PID     "pid"
#define VM_KEY_ATTACHED_VIA     "via"             /* "pid", "qemu", "libvirt" */
#define VM_KEY_ATTACHED_DOMAIN  "domain"
#define VM_KEY_KVM_TRACER       "kvm_tracer"      /* the kvm backend's counters */

/* ---- events.jsonl: one JSON object a line ---- */
#define EVENTS_FILE             "events.jsonl"
#define EVENTS_KEY_EVENT        "event"           /* one of the EVENT_* names, or the agent's */
#define EVENTS_KEY_TIME         "time"            /* ns since the trace started */
#define EVENTS_KEY_VCPU         "vcpu"
#define EVENTS_KEY_PID          "pid"
#define EVENTS_KEY_TGID         "tgid"
#define EVENTS_KEY_PPID         "ppid"            /* the creator's tgid (optional) */
#define EVENTS_KEY_NAME         "name"
#define EVENTS_KEY_CR3          "cr3"             /* "0x...": the address space */
#define EVENTS_KEY_CODE         "code"            /* exit: the exit status */
#define EVENTS_KEY_BUILD_ID     "build_id"
#define EVENTS_KEY_EXE          "exe"
#define EVENTS_KEY_LOAD_BASE    "load_base"
#define EVENTS_KEY_PATH         "path"
#define EVENTS_KEY_START        "start"           /* agent-map: "0x..." */
#define EVENTS_KEY_END          "end"
#define EVENTS_KEY_OFFSET       "offset"
#define EVENTS_KEY_SIZE         "size"            /* agent-elf: bytes stored */

#define EVENT_TASK              "task"
#define EVENT_EXEC              "exec"
#define EVENT_EXIT              "exit"
#define EVENT_THREAD            "thread"
#define EVENT_AGENT_MAP         "agent-map"
#define EVENT_AGENT_ELF         "agent-elf"

/* ---- crash.json, crash-1.json, ...: a crash report each ---- */
#define CRASH_JSON_FILE         "crash.json"
#define CRASH_JSON_FILE_N       "crash-%u.json"   /* the Nth report after the first */
#define CRASH_KEY_VERSION       "version"         /* 1 */
#define CRASH_KEY_REASON        "reason"          /* CRASH_REASON_PROCESS, "panic", ... */
#define CRASH_REASON_PROCESS    "process-crash"
#define CRASH_KEY_SIGNAL        "signal"          /* process-crash: "SIGSEGV", or null */
#define CRASH_KEY_SIGNO         "signo"
#define CRASH_KEY_TIME          "time"            /* ns since the trace started */
#define CRASH_KEY_VCPU          "vcpu"
#define CRASH_KEY_CR3           "cr3"             /* "0x...", or null */
#define CRASH_KEY_PROCESS       "process"         /* an object of these, or null: */
#define CRASH_KEY_PROCESS_PID   "pid"
#define CRASH_KEY_PROCESS_TGID  "tgid"
#define CRASH_KEY_PROCESS_COMM  "comm"
#define CRASH_KEY_REGISTERS     "registers"       /* "rip": "0x...", ..., or null */
#define CRASH_KEY_REGISTERS_NOTE "registers_note" /* why there are none */
#define CRASH_KEY_RING_SEQ      "ring_seq"
#define CRASH_KEY_BRANCHES_REQUESTED "branches_requested"
#define CRASH_KEY_BRANCHES      "branches"        /* oldest first, objects of these: */
#define CRASH_KEY_FROM          "from"            /* "0x..." */
#define CRASH_KEY_TO            "to"
#define CRASH_KEY_FLAGS         "flags"           /* a record's flags word, "0x..." */
#define CRASH_KEY_FROM_SYMBOL   "from_symbol"     /* decoder/crash-symbols.c: objects of these: */
#define CRASH_KEY_TO_SYMBOL     "to_symbol"
#define CRASH_KEY_SYM_FUNCTION  "function"
#define CRASH_KEY_SYM_OFFSET    "offset"          /* "0x..." */
#define CRASH_KEY_SYM_FILE      "file"
#define CRASH_KEY_SYM_LINE      "line"
#define CRASH_KEY_SYM_MODULE    "module"
#define CRASH_KEY_SYMBOLS_NOTE  "symbols_note"    /* why the oldest branches have none */

#endif /* VBTS_FORMAT_TRACE_KEYS_H */
