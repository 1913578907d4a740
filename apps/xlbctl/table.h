/* Plain-text tables for xlbctl's human output: columns sized to their widest cell. */
#ifndef XLBCTL_TABLE_H
#define XLBCTL_TABLE_H

#include <stdio.h>

#define XLBCTL_TABLE_COLUMNS 20

struct xlbctl_table;

struct xlbctl_table *xlbctl_table_new(unsigned n_columns, const char *const *headers);
/* Add a row of n_columns cells; each cell is copied. */
void xlbctl_table_row(struct xlbctl_table *t, const char *const *cells);
/* Print and free. */
void xlbctl_table_print(struct xlbctl_table *t, FILE *out);

#endif
