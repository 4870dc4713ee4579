import Executors
import Foundation
import Tensors

/// The built-ins that compute with tensors, as NumPy's functions of those names: the math
/// functions (numbers and tensors alike), `softmax`/`logSoftmax`, reductions along axes,
/// `matmul`, `einsum`, shapes, `loadNumpy`. Each is a Tensor's method too (`t.softmax(axis: 0)`).
public enum TensorLibrary {
    static let all: [Builtin] = ElementwiseFunction.all.map(elementwise) + [
        tensor, pow, maximum, minimum, choose, softmax, logSoftmax, norm, variance, argmax, argmin, topk,
        matmul, dot, cosine, outer, einsum, reshape, transpose, squeeze, expandDims, stack, concat, loadNumpy, save,
    ]

    /// The built-ins a Tensor has as methods: these but the ones that make tensors, and the
    /// standard library's reductions.
    static let tensorMethods = all.filter { !["tensor", "stack", "concat", "loadNumpy", "einsum", "where"].contains($0.name) }
        + [StandardLibrary.sum, StandardLibrary.mean, StandardLibrary.maximum, StandardLibrary.minimum]

    /// `save`: a Tensor as .npy, a dictionary of them as .npz, and any `SavableHostObject` as it saves itself.
    public static let save = Builtin(
        name: "save",
        signature: "save(_ x: Tensor or Trace or [String: Tensor] or State, _ path: String)",
        summary: "Writes NumPy files: a Tensor as .npy; a Trace (its tensors and token ids) or a dictionary of Tensors as .npz, which numpy.load reads. A State goes to a file of its own, bound to its model file's SHA-256 (loadState reads it)."
    ) { arguments, context in
        let (value, location) = try arguments.requirePositional("x")
        let path = try arguments.string(try arguments.requirePositional("path"), "path")
        try arguments.finish()
        switch value {
        case .host(let object as SavableHostObject):
            try await object.save(to: path, context: context)
        case .host(let object as TensorObject):
            try await NumPyOutput.write([("arr_0", object.tensor.values, object.tensor.shape)], to: path, at: context.location)
        case .dictionary(let dictionary) where try NumPyOutput.isArchive(path, at: context.location):
            let arrays = try dictionary.pairs.map { pair throws(LumenError) in
                guard case .string(let name) = pair.key else { throw LumenError(.type, "an .npz's names are Strings, got \(pair.key.typeName)", at: location) }
                let made = try TensorObject.tensor(pair.value, at: location)
                return (name, made.values, made.shape)
            }
            try await NumPyOutput.write(arrays, to: path, at: context.location)
        default:
            throw LumenError(.type, "save() writes a Tensor (.npy), or a Trace or a dictionary of Tensors (.npz), not \(value.typeName) to \(path)", at: location)
        }
        return .null
    }

    /// Elements of more than this run on the tensor thread, off the cooperative pool.
    private static let inlineElements = 1 << 16

    /// `compute`'s tensor as a value, run on the tensor thread when `elements` is large, its
    /// error a `LumenError` at `location`.
    public static func computed(elements: Int, at location: SourceLocation, _ compute: @escaping @Sendable () throws(TensorError) -> Tensor) async throws(LumenError) -> Value {
        do {
            let result = elements <= inlineElements ? try compute() : try await TensorThread.shared.run(compute)
            return TensorObject.value(result)
        } catch {
            throw LumenError(.value, error.description, at: location)
        }
    }

    /// The next positional argument as a tensor.
    public static func tensorArgument(_ arguments: inout Arguments, _ name: String) throws(LumenError) -> Tensor {
        let (value, location) = try arguments.requirePositional(name)
        return try TensorObject.tensor(value, at: location)
    }

    /// `axis:` as a list of axes: an Int, an array of Ints, or nil when not given.
    static func axes(_ arguments: inout Arguments) throws(LumenError) -> [Int]? {
        guard let (value, location) = arguments.labelled("axis") else { return nil }
        switch value {
        case .integer(let axis): return [axis]
        case .array(let elements):
            return try elements.map { element throws(LumenError) in
                guard case .integer(let axis) = element else { throw LumenError(.type, "axis: takes Ints, not \(element.typeName)", at: location) }
                return axis
            }
        default: throw LumenError(.type, "axis: takes an Int or an array of Ints, not \(value.typeName)", at: location)
        }
    }

    /// `reduction` of the Tensor given as the first positional argument (or, when
    /// `convertingArrays`, of any array of numbers), over `axis:` (all axes when absent;
    /// `defaultAxis` otherwise) keeping them when `keepdims: true`; nil when the first argument
    /// is not one.
    static func reduced(_ arguments: inout Arguments, _ reduction: Reduction, defaultAxis: Int? = nil, convertingArrays: Bool = false,
                        at location: SourceLocation) async throws(LumenError) -> Value? {
        guard arguments.peekPositional()?.isTensor == true || convertingArrays else { return nil }
        let x = try tensorArgument(&arguments, "x")
        // A number has no axis to default to: its reduction is over all (none).
        let axes = try axes(&arguments) ?? (x.rank > 0 ? defaultAxis.map { [$0] } : nil)
        let keep = try arguments.labelledBool("keepdims") ?? false
        try arguments.finish()
        let value = try await computed(elements: x.count, at: location) { () throws(TensorError) in try x.reduced(reduction, axes: axes, keepingAxes: keep) }
        // An index of all elements is an Int, as NumPy's.
        if (reduction == .argmax || reduction == .argmin), case .double(let index) = value { return .integer(Int(index)) }
        return value
    }

    /// A math function of `function`'s, for numbers (Int in, Int out for `abs` and `round`) and
    /// elementwise for tensors.
    private static func elementwise(_ function: ElementwiseFunction) -> Builtin {
        Builtin(name: function.name, signature: "\(function.name)(_ x: Number or Tensor) -> Number or Tensor", summary: function.summary + " Elementwise for a Tensor.") { arguments, context in
            let argument = try arguments.requirePositional("x")
            try arguments.finish()
            switch argument.0 {
            case .integer(let number) where function.name == "abs" || function.name == "round":
                guard number != Int.min else { throw LumenError(.value, "integer overflow in \(function.name)(\(number))", at: argument.1) }
                return .integer(function.name == "abs" ? Swift.abs(number) : number)
            case .host(let object as TensorObject):
                let x = object.tensor
                return try await computed(elements: x.count, at: context.location) { x.mapped(function) }
            default:
                return .double(function.apply(try arguments.number(argument, "x")))
            }
        }
    }

    /// A built-in `name(a, b)` combining two numbers or tensors elementwise with broadcasting.
    private static func binary(_ name: String, _ signature: String, _ summary: String, _ operation: BinaryOperation) -> Builtin {
        Builtin(name: name, signature: signature, summary: summary) { arguments, context in
            let (a, b) = (try arguments.requirePositional("a"), try arguments.requirePositional("b"))
            try arguments.finish()
            if let x = Operators.number(a.0), let y = Operators.number(b.0), !(a.0.isTensor || b.0.isTensor) {
                return .double(Double(operation.apply(Float(x), Float(y))))
            }
            let (x, y) = (try TensorObject.tensor(a.0, at: a.1), try TensorObject.tensor(b.0, at: b.1))
            return try await computed(elements: Swift.max(x.count, y.count), at: context.location) { () throws(TensorError) in try x.combined(operation, y) }
        }
    }

    static let tensor = Builtin(
        name: "tensor",
        signature: "tensor(_ values: [Number] or [[Number]] …, axes: [String]? = nil, labels: [[String]?]? = nil) -> Tensor",
        summary: "A Tensor of nested arrays of numbers (all of one shape at each depth), its axes named by axes: and labelled by labels: (one array of labels or nil per axis), as heatmaps and tables show them."
    ) { arguments, context in
        let argument = try arguments.requirePositional("values")
        let names = try arguments.labelled("axes").map { value, location throws(LumenError) in try strings(value, "axes", at: location) }
        let labels = try arguments.labelled("labels").map { value, location throws(LumenError) -> [[String]?] in
            guard case .array(let perAxis) = value else { throw LumenError(.type, "labels: takes an array with an array of Strings or nil per axis", at: location) }
            return try perAxis.map { axis throws(LumenError) in axis.isNull ? nil : try strings(axis, "labels", at: location) }
        }
        try arguments.finish()
        let made = try TensorObject.tensor(argument.0, at: argument.1)
        guard made.rank > 0 else { throw LumenError(.type, "tensor() needs an array of numbers, got \(argument.0.typeName)", at: argument.1) }
        return .host(TensorObject(try TensorObject.checked(context.location) { () throws(TensorError) in try made.labelled(axes: names, labels: labels) }))
    }

    /// An array of Strings, or an error naming `name`.
    private static func strings(_ value: Value, _ name: String, at location: SourceLocation) throws(LumenError) -> [String] {
        guard case .array(let elements) = value else { throw LumenError(.type, "\(name): takes an array of Strings, not \(value.typeName)", at: location) }
        return try elements.map { element throws(LumenError) in
            guard case .string(let text) = element else { throw LumenError(.type, "\(name): takes Strings, not \(element.typeName)", at: location) }
            return text
        }
    }

    static let pow = binary("pow", "pow(_ base: Number or Tensor, _ exponent: Number or Tensor) -> Double or Tensor", "`base` raised to `exponent`, elementwise with broadcasting for Tensors.", .power)
    static let maximum = binary("maximum", "maximum(_ a: Tensor, _ b: Tensor or Number) -> Tensor", "The larger of each pair of elements, with broadcasting (NumPy's maximum; NaN wins).", .maximum)
    static let minimum = binary("minimum", "minimum(_ a: Tensor, _ b: Tensor or Number) -> Tensor", "The smaller of each pair of elements, with broadcasting (NumPy's minimum; NaN wins).", .minimum)

    static let choose = Builtin(
        name: "where",
        signature: "where(_ condition: Tensor, _ x: Tensor or Number, _ y: Tensor or Number) -> Tensor",
        summary: "x's element where condition's is non-zero (a mask such as t > 0), else y's, the three broadcast together (NumPy's where)."
    ) { arguments, context in
        let condition = try tensorArgument(&arguments, "condition"), x = try tensorArgument(&arguments, "x"), y = try tensorArgument(&arguments, "y")
        try arguments.finish()
        return try await computed(elements: Swift.max(condition.count, x.count, y.count), at: context.location) { () throws(TensorError) in try Tensor.choosing(condition, x, y) }
    }

    static let softmax = normalised("softmax", logarithmic: false, "The probabilities of logits along axis: (the last by default): exp(x - max) normalised to sum to 1.")
    static let logSoftmax = normalised("logSoftmax", logarithmic: true, "The log-probabilities of logits along axis: (the last by default): x - max - log(sum(exp(x - max))).")

    private static func normalised(_ name: String, logarithmic: Bool, _ summary: String) -> Builtin {
        Builtin(name: name, signature: "\(name)(_ x: Tensor, axis: Int = -1) -> Tensor", summary: summary) { arguments, context in
            let x = try tensorArgument(&arguments, "x")
            let axis = try arguments.labelledInteger("axis") ?? -1
            try arguments.finish()
            return try await computed(elements: x.count, at: context.location) { () throws(TensorError) in try x.softmax(axis: axis, logarithmic: logarithmic) }
        }
    }

    static let norm = reduction(.norm, defaultAxis: -1, "The Euclidean norm along axis: (the last by default; an array of axes for several), keepdims: true keeping them with length 1.")
    static let variance = reduction(.variance, "The variance (mean squared deviation, NumPy's var) over axis: (all axes by default).")
    static let argmax = reduction(.argmax, "The index of the largest element along axis:, or of all elements flattened when absent (an Int); the first among equals.")
    static let argmin = reduction(.argmin, "The index of the smallest element along axis:, or of all elements flattened when absent (an Int); the first among equals.")

    private static func reduction(_ reduction: Reduction, defaultAxis: Int? = nil, _ summary: String) -> Builtin {
        let name = reduction.rawValue
        return Builtin(name: name, signature: "\(name)(_ x: Tensor, axis: Int or [Int]? = nil, keepdims: Bool = false) -> Tensor or Number", summary: summary) { arguments, context in
            try await reduced(&arguments, reduction, defaultAxis: defaultAxis, convertingArrays: true, at: context.location) ?? .null
        }
    }

    static let topk = Builtin(
        name: "topk",
        signature: "topk(_ x: Tensor, _ k: Int = 10, axis: Int? = nil) -> [\"indices\": …, \"values\": …, \"labels\": [String]]",
        summary: "The k largest elements, largest first: of a Tensor of one axis, their indices, values and labels (the tokens, for logits); along axis: of any Tensor, Tensors of values and indices with that axis k long."
    ) { arguments, context in
        let x = try tensorArgument(&arguments, "x")
        let k = try arguments.nextPositional().map { argument throws(LumenError) in try arguments.integer(argument, "k") } ?? 10
        let axis = try arguments.labelledInteger("axis")
        try arguments.finish()
        guard x.rank == 1 || axis != nil else {
            throw LumenError(.value, "topk() of a Tensor \(x.shapeText) needs axis: (or index it to one axis first: x[0])", at: context.location)
        }
        let top: (values: Tensor, indices: Tensor)
        do throws(TensorError) {
            top = try x.top(axis == nil ? Swift.min(k, x.count) : k, axis: axis ?? 0)
        } catch {
            throw LumenError(.value, error.description, at: context.location)
        }
        guard axis == nil else {
            return .dictionary(LumenDictionary([("values", .host(TensorObject(top.values))), ("indices", .host(TensorObject(top.indices)))]))
        }
        let indices = top.indices.values.map { Int($0) }
        return .dictionary(LumenDictionary([
            ("indices", .array(indices.map(Value.integer))),
            ("values", .array(top.values.values.map { .double(Double($0)) })),
            ("labels", .array(indices.map { .string(x.label(axis: 0, index: $0)) })),
        ]))
    }

    static let matmul = contraction("matmul", "matmul(_ a: Tensor, _ b: Tensor) -> Tensor",
                                    "NumPy's matmul: the matrix product over the last two axes, the leading ones broadcast as a batch; a Tensor of one axis is a row (a) or a column (b).", Tensor.matmul)
    static let dot = contraction("dot", "dot(_ a: Tensor, _ b: Tensor) -> Tensor or Double",
                                 "The dot product over the last axis, the leading axes broadcast (NumPy's vecdot; matmul for matrix products).", Tensor.dot)
    static let cosine = contraction("cosine", "cosine(_ a: Tensor, _ b: Tensor) -> Tensor or Double", "The cosine similarity over the last axis, broadcast as dot.", Tensor.cosine)
    static let outer = contraction("outer", "outer(_ a: Tensor, _ b: Tensor) -> Tensor", "Every element of a times every element of b (NumPy's outer): [len(a)][len(b)].", Tensor.outer)

    private static func contraction(_ name: String, _ signature: String, _ summary: String, _ combine: @escaping @Sendable (Tensor, Tensor) throws(TensorError) -> Tensor) -> Builtin {
        Builtin(name: name, signature: signature, summary: summary) { arguments, context in
            let (a, b) = (try tensorArgument(&arguments, "a"), try tensorArgument(&arguments, "b"))
            try arguments.finish()
            // Contractions always leave the cooperative pool: their cost grows faster than their size.
            return try await computed(elements: .max, at: context.location) { () throws(TensorError) in try combine(a, b) }
        }
    }

    static let einsum = Builtin(
        name: "einsum",
        signature: "einsum(_ subscripts: String, _ operands: Tensor...) -> Tensor",
        summary: "NumPy's einsum for one or two operands: \"ld,vd->lv\" (every position against every unembedding row), \"bhqk,bkhd->bqhd\", \"ii->i\"; letters in no output are summed."
    ) { arguments, context in
        let subscripts = try arguments.string(try arguments.requirePositional("subscripts"), "subscripts")
        let operands = try arguments.remainingPositional().map { value, location throws(LumenError) in try TensorObject.tensor(value, at: location) }
        try arguments.finish()
        return try await computed(elements: .max, at: context.location) { () throws(TensorError) in try Tensor.einsum(subscripts, operands) }
    }

    static let reshape = Builtin(
        name: "reshape",
        signature: "reshape(_ x: Tensor, _ shape: [Int]) -> Tensor",
        summary: "The same elements in another shape (one length may be -1, inferred), as NumPy's reshape."
    ) { arguments, context in
        let x = try tensorArgument(&arguments, "x")
        let shape = try integers(try arguments.requirePositional("shape"), "shape")
        try arguments.finish()
        return .host(TensorObject(try TensorObject.checked(context.location) { () throws(TensorError) in try x.reshaped(shape) }))
    }

    static let transpose = Builtin(
        name: "transpose",
        signature: "transpose(_ x: Tensor, _ axes: [Int]? = nil) -> Tensor",
        summary: "The axes in the order given (reversed when absent), as NumPy's transpose; the axes keep their names and labels."
    ) { arguments, context in
        let x = try tensorArgument(&arguments, "x")
        let order = try arguments.nextPositional().map { argument throws(LumenError) in try integers(argument, "axes") }
        try arguments.finish()
        return try await computed(elements: x.count, at: context.location) { () throws(TensorError) in try x.transposing(order) }
    }

    static let squeeze = Builtin(
        name: "squeeze",
        signature: "squeeze(_ x: Tensor, axis: Int or [Int]? = nil) -> Tensor",
        summary: "Without the axes of length 1 (only those of axis: when given; an error if one is longer), as NumPy's squeeze."
    ) { arguments, context in
        let x = try tensorArgument(&arguments, "x")
        let chosen = try axes(&arguments)
        try arguments.finish()
        return TensorObject.value(try TensorObject.checked(context.location) { () throws(TensorError) in try x.squeezed(axes: chosen) })
    }

    static let expandDims = Builtin(
        name: "expandDims",
        signature: "expandDims(_ x: Tensor, axis: Int) -> Tensor",
        summary: "With a new axis of length 1 at axis:, as NumPy's expand_dims (for broadcasting: a[.., None] is expandDims(a, axis: -1))."
    ) { arguments, context in
        let x = try tensorArgument(&arguments, "x")
        let axis = try arguments.integer(try arguments.requireLabelled("axis"), "axis")
        try arguments.finish()
        return .host(TensorObject(try TensorObject.checked(context.location) { () throws(TensorError) in try x.expanded(axis: axis) }))
    }

    static let stack = joining("stack", "Tensors of one shape along a new axis at axis: (0 by default), as NumPy's stack.", Tensor.stacked)
    static let concat = joining("concat", "Tensors joined along axis: (0 by default), their other lengths equal, as NumPy's concatenate.", Tensor.concatenated)

    private static func joining(_ name: String, _ summary: String, _ join: @escaping @Sendable ([Tensor], Int) throws(TensorError) -> Tensor) -> Builtin {
        Builtin(name: name, signature: "\(name)(_ tensors: [Tensor], axis: Int = 0) -> Tensor", summary: summary) { arguments, context in
            let (value, location) = try arguments.requirePositional("tensors")
            let axis = try arguments.labelledInteger("axis") ?? 0
            try arguments.finish()
            guard case .array(let elements) = value else { throw LumenError(.type, "\(name)() takes an array of Tensors, not \(value.typeName)", at: location) }
            let tensors = try elements.map { element throws(LumenError) in try TensorObject.tensor(element, at: location) }
            return try await computed(elements: tensors.reduce(0) { $0 + $1.count }, at: context.location) { () throws(TensorError) in try join(tensors, axis) }
        }
    }

    static let loadNumpy = Builtin(
        name: "loadNumpy",
        signature: "loadNumpy(_ path: String) -> Tensor or [String: Tensor]",
        summary: "Reads what numpy.save wrote (.npy: a Tensor) or numpy.savez (.npz: a dictionary of Tensors by name); float, integer and bool elements become float32."
    ) { arguments, context in
        let path = try arguments.string(try arguments.requirePositional("path"), "path")
        try arguments.finish()
        // Reading and decoding are blocking work: on a thread of their own.
        let outcome = await DedicatedThread.run(name: "lumen-load-numpy") { () -> Result<[(name: String, values: [Float], shape: [Int])], LumenError> in
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                if path.hasSuffix(".npz") { return .success(try NumPyArchive.decode(data)) }
                let array = try NumPyFile.decode(data)
                return .success([("", array.values, array.shape)])
            } catch let error as NumPyFile.FormatError {
                return .failure(LumenError(.value, "\(path): \(error.description)", at: context.location))
            } catch {
                return .failure(LumenError(.value, "cannot read \(path): \(error.localizedDescription)", at: context.location))
            }
        }
        let arrays = try outcome.get()
        let tensors = arrays.map { Tensor($0.values, shape: $0.shape) }
        guard path.hasSuffix(".npz") else { return TensorObject.value(tensors[0]) }
        return .dictionary(LumenDictionary(zip(arrays, tensors).map { ($0.0.name, TensorObject.value($0.1)) }))
    }

    /// An array of Ints, or an error naming `name`.
    private static func integers(_ argument: (Value, SourceLocation), _ name: String) throws(LumenError) -> [Int] {
        guard case .array(let elements) = argument.0 else { throw LumenError(.type, "\(name) must be an array of Ints, not \(argument.0.typeName)", at: argument.1) }
        return try elements.map { element throws(LumenError) in
            guard case .integer(let number) = element else { throw LumenError(.type, "\(name) holds Ints, not \(element.typeName)", at: argument.1) }
            return number
        }
    }
}

extension Value {
    /// Whether the value is a Tensor.
    var isTensor: Bool {
        if case .host(let object) = self { return object is TensorObject }
        return false
    }
}
