import GGUF
import GenerationTypes
import Inference
import LumenLanguage

extension ModelLibrary {
    /// The speculative decoding a call's `lookup:` (an n-gram length: prompt lookup), `draft:` (a
    /// loaded model of the same vocabulary) and `draftMax:` ask for, checked here: nil and nil
    /// when it asks for none. A served model decodes as its server does, so it refuses them.
    static func speculation(_ arguments: inout Arguments, model: any GenerativeModel) throws(LumenError) -> (Speculation?, LanguageModel?) {
        let lookup = arguments.labelled("lookup")
        let draft = arguments.labelled("draft")
        let draftMax = try arguments.labelledInteger("draftMax")
        guard lookup != nil || draft != nil else {
            if draftMax != nil { throw LumenError(.value, "draftMax: needs lookup: or draft: (what drafts)", at: arguments.callLocation) }
            return (nil, nil)
        }
        if let (_, location) = draft, lookup != nil {
            throw LumenError(.value, "lookup: and draft: each draft the tokens to verify: give one", at: location)
        }
        let target: LoadedModel
        do {
            target = try model.loaded(for: "speculative decoding (lookup:, draft:)")
        } catch {
            throw LumenError(.type, error.description, at: arguments.callLocation)
        }
        var speculation = Speculation()
        if let draftMax {
            guard draftMax >= 1 else { throw LumenError(.value, "draftMax must be 1 or more, got \(draftMax)", at: arguments.callLocation) }
            speculation.draftMax = draftMax
        }
        if let (value, location) = lookup {
            guard case .integer(let ngram) = value, ngram >= 1 else {
                throw LumenError(.type, "lookup: needs the length of the n-gram to look up, an Int of 1 or more, got \(value.printed)", at: location)
            }
            speculation.lookupNgram = ngram
            return (speculation, nil)
        }
        guard let (value, location) = draft, case .host(let object) = value, let drafter = object as? LoadedModel else {
            throw LumenError(.type, "draft: needs a model loaded with load(), got \(draft?.0.typeName ?? "nothing")", at: draft?.1 ?? arguments.callLocation)
        }
        return (speculation, try modelCall(at: location) { () throws(ModelError) in
            let draftModel = try drafter.model()
            try GenerationPipeline.checkDraft(draftModel, for: try target.model())
            return draftModel
        })
    }
}
