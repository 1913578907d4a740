/* Human-readable output of command results; anything without a renderer prints as JSON. */
#ifndef XLBCTL_RENDER_H
#define XLBCTL_RENDER_H

#include <stdio.h>

#include <cjson/cJSON.h>

void xlbctl_render(const char *command, const cJSON *result, FILE *out);

#endif
