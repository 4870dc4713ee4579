import LumenLanguage
import Widgets
import RunLog

/// The model host: the libraries that give a Lumen session its models (`load`, `generate`,
/// `batch`, `perplexity`, …), conversations, models served over HTTP (`connect`) and the run log
/// (`runs`, `replay`, `%log`), sharing one run recorder.
public enum ModelHost {
    /// The libraries of a session recording its runs in `runLog` (not at all when nil), run by
    /// `frontEnd` (`kernel`, `repl`, `run`) from `notebook` when known.
    public static func libraries(runLog: RunLog?, frontEnd: String, notebook: String? = nil) -> [any LumenLibrary] {
        let recorder = CellRecorder(runLog: runLog, frontEnd: frontEnd, notebook: notebook)
        return [ModelLibrary(recorder: recorder), ConversationLibrary(), RemoteLibrary(), RunLibrary(recorder: recorder), WidgetLibrary()]
    }
}
