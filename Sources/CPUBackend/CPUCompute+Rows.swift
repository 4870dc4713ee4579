import Foundation

/// The CPU's row and elementwise steps besides `Operations`': copies, gathers, gates, blends.
extension CPUCompute {
    package func addScaled(_ delta: UnsafeMutablePointer<Float>, by factor: Float, to x: UnsafeMutablePointer<Float>, thenScaleBy scale: Float,
                           count: Int) {
        for index in 0..<count { x[index] = (x[index] + delta[index] * factor) * scale }
    }

    package func sigmoidGate(_ x: UnsafeMutablePointer<Float>, by gates: UnsafeMutablePointer<Float>, count: Int) {
        for index in 0..<count { x[index] *= 1 / (1 + exp(-gates[index])) }
    }

    package func multiplyElementwise(_ a: UnsafeMutablePointer<Float>, stride aStride: Int, _ b: UnsafeMutablePointer<Float>, stride bStride: Int,
                                     into output: UnsafeMutablePointer<Float>, stride outputStride: Int, width: Int, count: Int) {
        for row in 0..<count {
            let a = a + row * aStride, b = b + row * bStride, output = output + row * outputStride
            for index in 0..<width { output[index] = a[index] * b[index] }
        }
    }

    package func copyRows(_ source: UnsafeMutablePointer<Float>, stride sourceStride: Int, into target: UnsafeMutablePointer<Float>,
                          stride targetStride: Int, width: Int, count: Int) {
        for row in 0..<count { (target + row * targetStride).update(from: source + row * sourceStride, count: width) }
    }

    package func gatherRows(_ source: UnsafeMutablePointer<Float>, rows: [Int], width: Int, into target: UnsafeMutablePointer<Float>) {
        for (index, row) in rows.enumerated() { (target + index * width).update(from: source + row * width, count: width) }
    }

    package func scatterRows(_ source: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, rows: [Int], width: Int) {
        for (index, row) in rows.enumerated() { (target + row * width).update(from: source + index * width, count: width) }
    }
}
