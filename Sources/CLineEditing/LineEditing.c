#include "LineEditing.h"
#include <stddef.h>

int lumen_el_set_prompt(EditLine *editor, char *(*prompt)(EditLine *)) {
    return el_set(editor, EL_PROMPT, prompt);
}

int lumen_el_set_read_character(EditLine *editor, int (*read_character)(EditLine *, wchar_t *)) {
    return el_set(editor, EL_GETCFN, read_character);
}

int lumen_el_set_client_data(EditLine *editor, void *data) {
    return el_set(editor, EL_CLIENTDATA, data);
}

void *lumen_el_client_data(EditLine *editor) {
    void *data = NULL;
    el_get(editor, EL_CLIENTDATA, &data);
    return data;
}

int lumen_el_add_function(EditLine *editor, const char *name, const char *help,
                          unsigned char (*function)(EditLine *, int)) {
    return el_set(editor, EL_ADDFN, name, help, function);
}

int lumen_el_bind(EditLine *editor, const char *key, const char *command) {
    return el_set(editor, EL_BIND, key, command, NULL);
}

int lumen_el_set_editor(EditLine *editor, const char *name) {
    return el_set(editor, EL_EDITOR, name);
}

int lumen_el_set_history(EditLine *editor, History *entries) {
    return el_set(editor, EL_HIST, history, entries);
}

int lumen_el_refresh(EditLine *editor) {
    return el_set(editor, EL_REFRESH);
}

History *lumen_history_open(int size) {
    History *entries = history_init();
    if (entries == NULL) return NULL;
    HistEvent event;
    history(entries, &event, H_SETSIZE, size);
    history(entries, &event, H_SETUNIQUE, 1);
    return entries;
}

int lumen_history_enter(History *entries, const char *entry) {
    HistEvent event;
    return history(entries, &event, H_ENTER, entry);
}
