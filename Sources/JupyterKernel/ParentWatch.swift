import CProcessControl
import Foundation

/// Ends the kernel when the process that launched it ends, as ipykernel does: a kernel must never
/// outlive its client (a killed `jupyter_client` would otherwise leave it holding its model).
///
/// Jupyter's launchers name themselves in `JPY_PARENT_PID`. When that is this process's parent,
/// Linux is asked to send SIGTERM the moment it ends (`PR_SET_PDEATHSIG`), and a thread checks
/// once a second that the parent is still the same (ipykernel's `ParentPollerUnix`), which also
/// covers systems without that request. When the launcher is further up (a wrapper script in
/// between), the kernel ends when it is handed to init, as ipykernel's does.
enum ParentWatch {
    /// The launcher's process id from the environment, if it names one worth watching (init,
    /// pid 1, never ends).
    static func launcher(in environment: [String: String] = ProcessInfo.processInfo.environment) -> pid_t? {
        guard let text = environment["JPY_PARENT_PID"], let pid = pid_t(text), pid > 1 else { return nil }
        return pid
    }

    /// Starts watching `launcher`; `parentEnded` is called once, on the watch's own thread, when
    /// it has ended (at once if it already has).
    static func start(launcher: pid_t, parentEnded: @escaping @Sendable () -> Void) {
        let isParent = getppid() == launcher
        if isParent {
            _ = lumen_set_parent_death_signal(SIGTERM)
        }
        // Whether the parent has gone: the launcher replaced by whoever adopted this process, or
        // (with a process in between) this process handed to init.
        let gone: @Sendable () -> Bool = { isParent ? getppid() != launcher : getppid() == 1 }
        let thread = Thread {
            // The parent may have ended before the request above took effect.
            while !gone() {
                Thread.sleep(forTimeInterval: 1)
            }
            parentEnded()
        }
        thread.name = "lumen-parent-watch"
        thread.start()
    }
}
