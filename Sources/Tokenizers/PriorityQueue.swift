/// A binary max-heap: `pop` returns the greatest element.
///
/// Sifting moves a hole instead of swapping, and works on the storage's buffer: a tokenizer
/// pushes and pops one element per merge of a whole text, so this is its hottest loop.
struct PriorityQueue<Element: Comparable> {
    private var heap: [Element] = []

    var isEmpty: Bool { heap.isEmpty }

    /// Empties the queue, keeping its storage for reuse.
    mutating func removeAll() { heap.removeAll(keepingCapacity: true) }

    mutating func push(_ element: Element) {
        heap.append(element)
        heap.withUnsafeMutableBufferPointer { heap in
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[parent] < element else { break }
                heap[child] = heap[parent]
                child = parent
            }
            heap[child] = element
        }
    }

    mutating func pop() -> Element? {
        guard let last = heap.popLast() else { return nil }
        guard !heap.isEmpty else { return last }
        return heap.withUnsafeMutableBufferPointer { heap in
            let top = heap[0]
            let count = heap.count
            var parent = 0
            while true {
                let left = 2 * parent + 1
                guard left < count else { break }
                let right = left + 1
                let larger = right < count && heap[left] < heap[right] ? right : left
                guard last < heap[larger] else { break }
                heap[parent] = heap[larger]
                parent = larger
            }
            heap[parent] = last
            return top
        }
    }
}
