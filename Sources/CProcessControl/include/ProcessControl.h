#ifndef LUMEN_PROCESS_CONTROL_H
#define LUMEN_PROCESS_CONTROL_H

/// Non-variadic wrappers around the process calls Swift cannot call directly (prctl is variadic).

/// Asks the operating system to send `signal` to this process when its parent ends (Linux's
/// PR_SET_PDEATHSIG). Returns 0 on success, -1 where the system has no such request.
int lumen_set_parent_death_signal(int signal);

#endif
