/* See xlb_route_table.h. */
#include "xlb_route_table.h"

#include <stdlib.h>

/* A failed JIT is not an error: pcre2_match falls back to the interpreter for that code. */
static void jit(pcre2_code *code)
{
    if (code != NULL)
        (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
}

void xlb_route_table_jit(struct xlb_route_table *table)
{
    for (uint32_t i = 0; i < table->n_routes; i++)
        jit(table->routes[i].re);
    for (uint32_t i = 0; i < table->n_headers; i++)
        jit(table->headers[i].re);
}

void xlb_route_table_free(struct xlb_route_table *table)
{
    if (table == NULL)
        return;
    for (uint32_t i = 0; i < table->n_domains; i++)
        free(table->domains[i].pattern);
    for (uint32_t i = 0; i < table->n_routes; i++) {
        free(table->routes[i].path);
        pcre2_code_free(table->routes[i].re);
        xlb_wchoice_free(table->routes[i].choice);
    }
    for (uint32_t i = 0; i < table->n_headers; i++) {
        free(table->headers[i].name);
        free(table->headers[i].value);
        pcre2_code_free(table->headers[i].re);
    }
    for (uint32_t i = 0; i < table->n_clusters; i++)
        free(table->cluster_names[i]);
    free(table->entry_clusters);
    free(table->vhosts);
    free(table->domains);
    free(table->routes);
    free(table->headers);
    free(table->cluster_names);
    free(table);
}
