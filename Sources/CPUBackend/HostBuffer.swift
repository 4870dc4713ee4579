/// The CPU backend's buffers: ordinary heap memory, 64-byte aligned. One left unzeroed takes no
/// memory for pages never written (a KV cache grows with the positions used).
package final class HostBuffer: DeviceBuffer {
    package let contents: UnsafeMutableRawPointer
    package let byteCount: Int

    /// `byteCount` bytes (at least one), zeroed when `zeroed`.
    package init(byteCount: Int, zeroed: Bool) {
        self.byteCount = max(1, byteCount)
        contents = UnsafeMutableRawPointer.allocate(byteCount: self.byteCount, alignment: 64)
        if zeroed { contents.initializeMemory(as: UInt8.self, repeating: 0, count: self.byteCount) }
    }

    deinit { contents.deallocate() }
}
