#include "ProcessControl.h"

#ifdef __linux__
#include <sys/prctl.h>
#endif

int lumen_set_parent_death_signal(int signal) {
#ifdef __linux__
    return prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0);
#else
    (void)signal;
    return -1;
#endif
}
