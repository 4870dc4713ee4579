import Testing
@testable import Tensors

/// Each misfit operation is an error naming the shapes, axis or index: never a crash or a
/// silently clamped result. (The numbers themselves are checked against NumPy by
/// Tests/integration/test_tensors.py.)
@Suite struct TensorErrorTests {
    let a = Tensor((0..<24).map(Float.init), shape: [2, 3, 4])

    @Test func shapesThatDoNotBroadcastAreNamed() {
        #expect(throws: TensorError.notBroadcastable([2, 3, 4], [3, 5])) { try a.combined(.add, Tensor([Float](repeating: 0, count: 15), shape: [3, 5])) }
    }

    @Test func axisAndIndexOutOfRangeAreNamed() throws {
        #expect(throws: TensorError.axisOutOfRange(3, of: a)) { try a.reduced(.sum, axes: [3]) }
        let error = #expect(throws: TensorError.self) { try a.indexed([.index(0), .index(-4)]) }
        #expect(error?.description == "index -4 is out of bounds for axis 1 (axis1) of length 3 of a Tensor [2 × 3 × 4]")
        #expect(throws: TensorError.self) { try a.indexed([.range(lower: 0, upper: 3, step: 1)]) }
        #expect(throws: TensorError.self) { try a.indexed([.list([0]), .list([1])]) }
    }

    @Test func contractionsCheckTheirLengths() {
        let error = #expect(throws: TensorError.self) { try Tensor.matmul(a, a) }
        #expect(error?.description.contains("(4) must equal the second-to-last axis") == true)
        #expect(throws: TensorError.self) { try Tensor.einsum("ij,jk->ik", [a, a]) }
        #expect(throws: TensorError.self) { try Tensor.einsum("ijk,kl->ijm", [a, Tensor([Float](repeating: 1, count: 8), shape: [4, 2])]) }
    }

    @Test func negativeIndicesAndStepsSelectAsNumPy() throws {
        let last = try a.indexed([.index(-1), .range(lower: nil, upper: nil, step: -1), .list([3, 0])])
        #expect(last.shape == [3, 2])
        #expect(Array(last.values) == [23, 20, 19, 16, 15, 12])
    }

    @Test func labelsFollowTheElementsTheyName() throws {
        let labelled = try a.labelled(axes: ["block", "position", "width"], labels: [nil, ["a", "b", "c"], nil])
        let picked = try labelled.indexed([.index(0), .list([2, 0])])
        #expect(picked.axes == ["position", "width"])
        #expect(picked.labels[0] == ["c", "a"])
        #expect(throws: TensorError.self) { try a.labelled(axes: nil, labels: [nil, ["a"], nil]) }
    }
}
