/// A binary max-heap: `pop` returns the greatest element.
struct PriorityQueue<Element: Comparable> {
    private var heap: [Element] = []

    var isEmpty: Bool { heap.isEmpty }

    /// Empties the queue, keeping its storage for reuse.
    mutating func removeAll() { heap.removeAll(keepingCapacity: true) }

    mutating func push(_ element: Element) {
        heap.append(element)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[parent] < heap[child] else { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    mutating func pop() -> Element? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var largest = parent
            if left < heap.count, heap[largest] < heap[left] { largest = left }
            if right < heap.count, heap[largest] < heap[right] { largest = right }
            guard largest != parent else { return top }
            heap.swapAt(parent, largest)
            parent = largest
        }
    }
}
