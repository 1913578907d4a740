/*
 * The control socket's commands as operators see them: name, usage and summary. One table for
 * the daemon's `help` command and for xlbctl, which answers `help` by itself, so that help
 * works without a running xlbd and the two can never disagree.
 */
#ifndef XLB_COMMAND_HELP_H
#define XLB_COMMAND_HELP_H

struct xlb_command_help {
    const char *name;    /* the protocol's command name, e.g. "flows_flush" */
    const char *usage;   /* as typed after xlbctl, e.g. "flows flush --endpoint ADDR[:PORT]" */
    const char *summary; /* one line */
};

/* Every command, in the order help lists them; ends with an entry whose name is NULL. */
extern const struct xlb_command_help xlb_command_help[];

/* The entry of a command name, or NULL. */
const struct xlb_command_help *xlb_command_help_find(const char *name);

#endif
