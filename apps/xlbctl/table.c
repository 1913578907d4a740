#include "table.h"

#include <stdlib.h>
#include <string.h>

struct xlbctl_table {
    unsigned n_columns, n_rows, capacity;
    char **cells; /* row-major, header row first */
};

static void add_row(struct xlbctl_table *t, const char *const *cells)
{
    if (t->n_rows == t->capacity) {
        unsigned capacity = t->capacity ? t->capacity * 2 : 16;
        char **grown = realloc(t->cells, (size_t)capacity * t->n_columns * sizeof(char *));
        if (grown == NULL)
            return;
        t->cells = grown;
        t->capacity = capacity;
    }
    for (unsigned c = 0; c < t->n_columns; c++)
        t->cells[t->n_rows * t->n_columns + c] = strdup(cells[c] ? cells[c] : "-");
    t->n_rows++;
}

struct xlbctl_table *xlbctl_table_new(unsigned n_columns, const char *const *headers)
{
    struct xlbctl_table *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    t->n_columns = n_columns > XLBCTL_TABLE_COLUMNS ? XLBCTL_TABLE_COLUMNS : n_columns;
    add_row(t, headers);
    return t;
}

void xlbctl_table_row(struct xlbctl_table *t, const char *const *cells)
{
    if (t != NULL)
        add_row(t, cells);
}

void xlbctl_table_print(struct xlbctl_table *t, FILE *out)
{
    if (t == NULL)
        return;
    size_t width[XLBCTL_TABLE_COLUMNS] = {0};
    for (unsigned r = 0; r < t->n_rows; r++)
        for (unsigned c = 0; c < t->n_columns; c++) {
            const char *cell = t->cells[r * t->n_columns + c];
            size_t len = cell ? strlen(cell) : 0;
            if (len > width[c])
                width[c] = len;
        }
    for (unsigned r = 0; r < t->n_rows; r++) {
        for (unsigned c = 0; c < t->n_columns; c++) {
            const char *cell = t->cells[r * t->n_columns + c];
            if (c + 1 == t->n_columns)
                fputs(cell, out); /* no trailing padding */
            else
                fprintf(out, "%-*s  ", (int)width[c], cell);
        }
        fputc('\n', out);
    }
    for (unsigned i = 0; i < t->n_rows * t->n_columns; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}
