/* The loaded kernels' names by code address (code_names.h). */
#include "compiler/code_names.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    uint64_t va;
    char name[64];
} entry;

static entry *tab;
static size_t n, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void cc_code_name_add(uint64_t va, const char *name)
{
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < n && tab[i].va != va) i++;
    if (i == n && n == cap) {
        size_t c = cap ? 2 * cap : 32;
        entry *t = realloc(tab, c * sizeof *t);
        if (t) tab = t, cap = c;
    }
    if (i < cap) { /* (out of memory: the kernel just stays nameless) */
        tab[i].va = va;
        snprintf(tab[i].name, sizeof tab[i].name, "%s", name);
        if (i == n) n++;
    }
    pthread_mutex_unlock(&lock);
}

void cc_code_name_remove(uint64_t va)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; i++)
        if (tab[i].va == va) {
            tab[i] = tab[--n];
            break;
        }
    if (!n) {
        free(tab);
        tab = NULL;
        cap = 0;
    }
    pthread_mutex_unlock(&lock);
}

bool cc_code_name_find(uint64_t va, char *buf, size_t size)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n && !found; i++)
        if (tab[i].va == va) {
            snprintf(buf, size, "%s", tab[i].name);
            found = true;
        }
    pthread_mutex_unlock(&lock);
    return found;
}
