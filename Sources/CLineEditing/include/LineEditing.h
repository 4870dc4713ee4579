#ifndef LUMEN_LINE_EDITING_H
#define LUMEN_LINE_EDITING_H

#include <histedit.h>
#include <wchar.h>

/// Non-variadic wrappers around libedit's variadic el_set, el_get and history calls, which
/// Swift cannot call directly. Each returns libedit's own result (0 on success).

/// The prompt is asked for through `prompt` each time the line is drawn.
int lumen_el_set_prompt(EditLine *editor, char *(*prompt)(EditLine *));
/// Characters are read through `read_character` instead of libedit's own read(2) loop.
int lumen_el_set_read_character(EditLine *editor, int (*read_character)(EditLine *, wchar_t *));
/// An opaque pointer the callbacks get back with lumen_el_client_data.
int lumen_el_set_client_data(EditLine *editor, void *data);
/// The pointer given to lumen_el_set_client_data.
void *lumen_el_client_data(EditLine *editor);
/// Adds a named editor command implemented by `function`.
int lumen_el_add_function(EditLine *editor, const char *name, const char *help,
                          unsigned char (*function)(EditLine *, int));
/// Binds `key` (libedit's notation, e.g. "^I" or "\\e[H") to the command `command`.
int lumen_el_bind(EditLine *editor, const char *key, const char *command);
/// "emacs" or "vi".
int lumen_el_set_editor(EditLine *editor, const char *name);
/// Uses `history` for the history commands (arrows, searches).
int lumen_el_set_history(EditLine *editor, History *entries);
/// Redraws the prompt and the line from the cursor's line (after other output was written).
int lumen_el_refresh(EditLine *editor);
/// Opens an empty history that keeps at most `size` entries, without consecutive duplicates.
History *lumen_history_open(int size);
/// Appends an entry (which may span several lines).
int lumen_history_enter(History *entries, const char *entry);

#endif
