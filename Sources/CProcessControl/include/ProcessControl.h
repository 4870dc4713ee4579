#ifndef LUMEN_PROCESS_CONTROL_H
#define LUMEN_PROCESS_CONTROL_H

/// What Swift cannot call or emit directly: non-variadic wrappers around process calls (prctl is
/// variadic), and the CPU's spin-wait hint.

/// Asks the operating system to send `signal` to this process when its parent ends (Linux's
/// PR_SET_PDEATHSIG). Returns 0 on success, -1 where the system has no such request.
int lumen_set_parent_death_signal(int signal);

/// Tells the CPU this thread is spinning (x86 `pause`, Arm `yield`): the sibling hardware thread
/// gets the core's resources and the spin draws less power; a no-op elsewhere.
static inline void lumen_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

#endif
